import type { Repository } from '../contracts/repository.js'
import type { ResultSet, ResourceRow } from '../contracts/result-set.js'
import type { QueryTree } from '../query/query-tree.js'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { ErrorSource, JsonApiError } from '../errors/json-api-error.js'
import type { QueryComposer } from './query-composer.js'

/**
 * What every part of the resource service works with, for one request: the resource graph, the repository (the
 * registration's, or a transaction's), the request's composer (its context and scopes) and how database faults are
 * met. A write in a transaction works with a scope whose repository is the transaction's and which is `nested`.
 */
export interface ServiceScope {
  readonly graph: ResourceGraph
  readonly repository: Repository
  readonly composer: QueryComposer
  readonly database: DatabaseSettings
  /** Whether the scope runs inside a transaction (of an outer write): it is retried as a whole, never in part. */
  readonly nested: boolean
}

/** How a service meets faults of the database. */
export interface DatabaseSettings {
  /** How many times a transaction that failed with a serialization failure or deadlock runs again. */
  readonly retries: number
  /** The `Retry-After` (seconds) of a 503. */
  readonly retryAfter: number
}

export const NO_RETRIES: DatabaseSettings = { retries: 0, retryAfter: 1 }

/**
 * What a write answers, made from its result set before the write is over: the routes render their document here,
 * so that a failure while rendering (a derived attribute's `compute` that throws) rolls the write back with the
 * rest of its transaction.
 */
export type Finish<T> = (result: ResultSet) => T

/** The default {@link Finish}: the result set itself. */
export const ANSWER_AS_IS: Finish<ResultSet> = (result) => result

/**
 * A client's `If-Match` on a write of an existing resource: the write happens only while the resource, read under a
 * row lock inside the write's transaction, still has a representation the client named. Of two concurrent writes
 * sent with the same tag, the second waits for the first's lock, then sees the new representation: a 412.
 */
export interface Precondition {
  /** `*` (any existing resource), or whether the representation (read with `query`) has one of the tags sent. */
  readonly matches: '*' | ((result: ResultSet) => boolean)
  /** The query of the representation the tags are of (`GET /<type>/<id>`). */
  readonly query: QueryTree
  /** Where the tags came from, for the 412: the `If-Match` header, or an operation's member. */
  readonly source: ErrorSource
}

/** Where a streamed collection goes, batch by batch (see `streamCollection`). */
export interface CollectionSink {
  /**
   * Before any row: the number of rows (when counted exactly); `tally` when the resource's count is estimated: the
   * number of rows written is then the collection's exact count (a streamed collection holds every row), to report
   * once they are written.
   */
  start(count: number | undefined, tally?: boolean): Promise<void>
  /** A batch of primary rows, with the linkage of their includes. */
  data(batch: ResultSet): Promise<void>
  /** Included resources not written before (`batch` holds their linkage). */
  included(batch: ResultSet, rows: readonly ResourceRow[]): Promise<void>
}

/** The 404 of a resource that does not exist, or that the request may not see. */
export function notFound (resource: ResolvedResource, id: string): JsonApiError {
  return jsonApiError('FJA_RESOURCE_NOT_FOUND', { detail: `no '${resource.type}' with id '${id}'` })
}
