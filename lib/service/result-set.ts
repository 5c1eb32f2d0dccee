import type { Row } from '../schema/declaration.js'
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
  /** The number of rows of the collection, for counted collection reads. */
  readonly count?: number
  /** For uncounted collection reads: whether rows follow this page. */
  readonly hasMore?: boolean
  /** For cursor pages (the cursor pagination profile): the positions of its rows and of its `prev` and `next`. */
  readonly cursor?: CursorResult
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
