import type { Row } from '../schema/declaration.js'
import type { ResolvedResource } from '../schema/resolved.js'

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
}

/** The key of a resource in {@link ResultSet.linkage}. */
export function resourceKey (type: string, id: string): string {
  return `${type}:${id}`
}
