import type { Row } from '../schema/fields.js'
import type { ResolvedResource } from '../schema/resolved.js'
import type { CursorPosition } from '../query/query-tree.js'

/** A row with the resource it belongs to. */
export interface ResourceRow {
  readonly resource: ResolvedResource
  readonly id: string
  readonly row: Row
}

/**
 * What the service found for a request, ready for the document writer: the primary rows, the rows to include
 * (each at most once, never a primary one), and the linkage of every relationship on an include path.
 */
export interface ResultSet {
  readonly primary: readonly ResourceRow[]
  readonly included: readonly ResourceRow[]
  /** `type:id` → relationship name → related ids (to-one: zero or one). */
  readonly linkage: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>
  /**
   * `type:id` → relationship name → what the linkage of an included to-many relationship is a page of (its ids in
   * {@link ResultSet.linkage} are the first of that owner's related resources, by id). Absent when none is paged.
   */
  readonly pages?: ReadonlyMap<string, ReadonlyMap<string, IncludedPage>>
  /** The number of rows of the collection, for counted collection reads: exact (a `last` link follows from it). */
  readonly count?: number
  /**
   * The planner's estimate of the number of rows of the collection (a resource with `count: 'estimated'`), when the
   * page does not show the exact number; `count` is then undefined. Never a base for a `last` link.
   */
  readonly estimatedCount?: number
  /** For collection reads without an exact count: whether rows follow this page. */
  readonly hasMore?: boolean
  /** For cursor pages (the cursor pagination profile): the positions of its rows and of its `prev` and `next`. */
  readonly cursor?: CursorResult
}

/** An owner's page of an included to-many relationship: how many related resources the request may see, and its size. */
export interface IncludedPage {
  /** The related type. */
  readonly related: ResolvedResource
  /** The related resources of the owner the request may see (its scopes applied). */
  readonly count: number
  /** The most the page holds: the size of a page of the rest, too. */
  readonly size: number
}

/** What a cursor page found: where each row lies, and where the pages before and after it start. */
export interface CursorResult {
  /** The position of each primary row (`on` it), in order: the cursor of each resource object. */
  readonly positions: readonly CursorPosition[]
  /** The `page[before]` of the previous page; undefined when no row lies before this page. */
  readonly prev: CursorPosition | undefined
  /** The `page[after]` of the next page; undefined when no row lies after this page. */
  readonly next: CursorPosition | undefined
  /** A range (`page[after]` and `page[before]`) that held more rows than the page: the first ones were returned. */
  readonly rangeTruncated: boolean
}

/** The key of a resource in {@link ResultSet.linkage}. */
export function resourceKey (type: string, id: string): string {
  return `${type}:${id}`
}

/**
 * The members of a collection document's `meta` that tell its size: `count` (exact), or `count` with
 * `countEstimated: true` (the planner's estimate); nothing for an uncounted collection.
 */
export function countMeta (totals: Pick<ResultSet, 'count' | 'estimatedCount'>): { count?: number; countEstimated?: true } {
  if (totals.count !== undefined) return { count: totals.count }
  if (totals.estimatedCount !== undefined) return { count: totals.estimatedCount, countEstimated: true }
  return {}
}
