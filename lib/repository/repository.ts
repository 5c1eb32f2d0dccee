import type { Row } from '../schema/declaration.js'
import type { ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'
import type { SortNode } from '../query/query-tree.js'
import type { FilterNode } from '../query/filter-nodes.js'

/** A row read for a related resource, with the id of the owner it belongs to. */
export interface RelatedRow {
  readonly ownerId: string
  readonly row: Row
}

/** What to read of many rows. */
export interface FindManyQuery {
  /** Columns to select besides the id (which is always selected). */
  readonly columns: readonly string[]
  /** The rows to return; every row when undefined. */
  readonly filter: FilterNode | undefined
  /** The order; the id is always the last key, so pages never overlap. */
  readonly sort: readonly SortNode[]
  /** Rows to skip and rows to return; no limit when undefined. */
  readonly offset: number
  readonly limit: number | undefined
}

/** A row that must exist for a guarded write to happen (the target of a foreign key being written). */
export interface RequiredRow {
  readonly resource: ResolvedResource
  readonly id: string
}

/** Column name → value bound in SQL. */
export type ColumnValues = Readonly<Record<string, unknown>>

/**
 * The storage seam. The service speaks JSON:API; a repository only stores and reads rows. Ids cross this
 * interface as strings. Every method of a repository obtained from {@link Repository.transaction} runs in that
 * transaction.
 *
 * Implementations translate their driver's constraint errors into {@link StorageError}s.
 */
export interface Repository {
  /** Rows of a resource in the given order and window; each row has the id column. */
  findMany(resource: ResolvedResource, query: FindManyQuery): Promise<Row[]>
  /** The number of rows of a resource that match the filter. */
  count(resource: ResolvedResource, filter: FilterNode | undefined): Promise<number>
  /** One row by id, or undefined. */
  findById(resource: ResolvedResource, id: string, columns: readonly string[]): Promise<Row | undefined>
  /** The subset of `ids` that exist. */
  existingIds(resource: ResolvedResource, ids: readonly string[]): Promise<Set<string>>
  /**
   * The related rows of every owner in `ownerIds` (one query, whatever their number), ordered by the related id.
   * `columns` are columns of the related resource's table.
   */
  findRelated(
    owner: ResolvedResource,
    relationship: ResolvedRelationship,
    target: ResolvedResource,
    ownerIds: readonly string[],
    columns: readonly string[],
  ): Promise<RelatedRow[]>
  /**
   * Inserts a row and returns it as stored (defaults included): the id and `columns`. `id` is a client-generated id,
   * when given. When a row of `requires` does not exist, nothing is inserted and the result is undefined — in the
   * same statement, so no other transaction can slip in between the check and the write.
   */
  insert(resource: ResolvedResource, values: ColumnValues, id: string | undefined, columns: readonly string[], requires?: readonly RequiredRow[]): Promise<Row | undefined>
  /**
   * Updates a row and returns it as stored (the id and `columns`), or undefined when it does not exist or a row of
   * `requires` does not. An empty `values` only reads it.
   */
  update(resource: ResolvedResource, id: string, values: ColumnValues, columns: readonly string[], requires?: readonly RequiredRow[]): Promise<Row | undefined>
  /** Deletes a row; false when it does not exist. */
  delete(resource: ResolvedResource, id: string): Promise<boolean>
  /**
   * Replaces the links of a relationship stored outside the owner's row (inverse foreign key or join table):
   * afterwards exactly `targetIds` are linked to the owner.
   */
  replaceLinks(owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource, ownerId: string, targetIds: readonly string[]): Promise<void>
  /** Links `targetIds` to the owner in addition to the present links (to-many). */
  addLinks(owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource, ownerId: string, targetIds: readonly string[]): Promise<void>
  /** Unlinks `targetIds` from the owner (to-many). */
  removeLinks(owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource, ownerId: string, targetIds: readonly string[]): Promise<void>
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (repository: Repository) => Promise<T>): Promise<T>
}

/** The kinds of constraint failure a repository reports. */
export type StorageErrorKind = 'unique' | 'foreign-key' | 'not-null' | 'check' | 'invalid-value' | 'out-of-range' | 'too-long' | 'conflict'

/** A storage failure the service can explain to the client. */
export class StorageError extends Error {
  readonly kind: StorageErrorKind
  /** The table and columns involved, when the storage reports them. */
  readonly table: string | undefined
  readonly columns: readonly string[]
  readonly constraint: string | undefined

  constructor (kind: StorageErrorKind, message: string, details: { table?: string; columns?: readonly string[]; constraint?: string; cause?: unknown } = {}) {
    super(message, { cause: details.cause })
    this.name = 'StorageError'
    this.kind = kind
    this.table = details.table
    this.columns = details.columns ?? []
    this.constraint = details.constraint
  }
}
