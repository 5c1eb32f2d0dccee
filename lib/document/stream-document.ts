import type { QueryTree } from '../query/query-tree.js'
import type { ResourceRow, ResultSet } from '../contracts/result-set.js'
import type { RequestLocation } from '../contracts/request-location.js'
import type { CursorCodec } from '../query/cursors.js'
import { ResourceWriter } from './resource-object.js'
import { documentJson } from './json-text.js'
import { paginationLinks } from './pagination-links.js'
import { JSONAPI_OBJECT } from './write-document.js'

/**
 * A collection document of every row (`page[size]=0`) written in pieces as its batches are read: `data`, then
 * `included` when any resource is included, then `links`, `meta.count` and `jsonapi` — the members, in the order, of
 * a collection document of the same rows. Resource objects are written by {@link ResourceWriter}, the closing
 * members by `documentJson`, as in every other document; the route only sends the pieces.
 */
export class StreamedCollectionWriter {
  readonly #query: QueryTree
  readonly #location: RequestLocation
  readonly #codec: CursorCodec | undefined
  #rows = 0
  #included = 0

  /** @param codec signs the cursors of the `next` links of included to-many pages */
  constructor (query: QueryTree, location: RequestLocation, codec?: CursorCodec) {
    this.#query = query
    this.#location = location
    this.#codec = codec
  }

  /** The primary rows written so far. */
  get rows (): number {
    return this.#rows
  }

  /** What the document starts with. */
  head (): string {
    return '{"data":['
  }

  /** A batch of primary rows (the batch holds the linkage of their includes). */
  data (batch: ResultSet): string {
    const objects = this.#objects(batch, batch.primary)
    const text = this.#rows === 0 ? objects : `,${objects}`
    this.#rows += batch.primary.length
    return text
  }

  /** Included resources not written before (`batch` holds their linkage). */
  included (batch: ResultSet, items: readonly ResourceRow[]): string {
    const objects = this.#objects(batch, items)
    const text = this.#included === 0 ? `],"included":[${objects}` : `,${objects}`
    this.#included += items.length
    return text
  }

  /** What closes the document: its links (and `meta.count`, when the collection's size is known) and `jsonapi`. */
  tail (count: number | undefined): string {
    const members: Record<string, unknown> = { links: paginationLinks(this.#location, this.#query.page, { count }) }
    if (count !== undefined) members.meta = { count }
    members.jsonapi = JSONAPI_OBJECT
    return `],${documentJson(members).slice(1)}`
  }

  #objects (batch: ResultSet, items: readonly ResourceRow[]): string {
    const writer = new ResourceWriter(this.#location.baseUrl, this.#query, batch, undefined, this.#codec)
    return items.map((item) => writer.json(item).json).join(',')
  }
}
