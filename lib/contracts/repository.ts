import type { Kysely } from 'kysely'
import type { DatabaseFault } from '../errors/database-faults.js'
import type { Row } from '../schema/fields.js'
import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'
import type { SortNode } from '../query/query-tree.js'
import type { AggregateTerm, FilterNode } from '../schema/filter-nodes.js'

/** A row read for a related resource, with the id of the owner it belongs to. */
export interface RelatedRow {
  readonly ownerId: string
  readonly row: Row
  /**
   * For a per-owner page (`findRelated` of a layer with a `page`): the number of related rows of this row's owner
   * that match the layer's `where`, the page's window ignored.
   */
  readonly total?: number
}

/** A window of rows: rows to skip and rows to return (no limit when undefined). */
export interface PageWindow {
  readonly offset: number
  readonly limit: number | undefined
}

/**
 * A position in a layer's order (cursor pagination): the text of each key of `keysetKeys(layer.sort)` as the database
 * prints it (`null` for NULL; the id last), and whether the bound includes the row itself: rows after a position
 * that is `inclusive` start at its row, rows before an `inclusive` one end at it.
 */
export interface KeysetBound {
  readonly values: readonly (string | null)[]
  readonly inclusive: boolean
}

/** A keyset window of a layer: its rows after one bound and/or before another, read from either end. */
export interface KeysetWindow {
  /** Only rows after this bound. */
  readonly after?: KeysetBound
  /** Only rows before this bound. */
  readonly before?: KeysetBound
  /** The most rows to read. */
  readonly limit: number
  /** Read the rows closest to `before` (the end of the window), not those closest to its start. */
  readonly fromEnd: boolean
}

/** A keyset page: its rows and their positions, and whether rows lie beyond the window's bounds. */
export interface KeysetPage {
  /** The rows, in the layer's order (also when read from the end). */
  readonly rows: Row[]
  /** Each row's position: the text of its keys (see {@link KeysetBound}), in the order of `rows`. */
  readonly positions: ReadonlyArray<readonly (string | null)[]>
  /** Whether a row (matching the layer) lies at or before `after`, earlier than the window; false without `after`. */
  readonly earlier: boolean
  /** Whether a row (matching the layer) lies at or after `before`, later than the window; false without `before`. */
  readonly later: boolean
}

/**
 * What to read of one resource type, composed by the service from the request's query tree and context: the
 * condition (the client's filter ANDed with the type's scope, and the scope of every type the condition reaches),
 * the order, the window, the columns and the includes below. A repository runs it as it is: everything a request
 * may see is already in `where`.
 */
export interface QueryLayer {
  readonly resource: ResolvedResource
  /** The rows to read; every row when undefined. */
  readonly where: FilterNode | undefined
  /** The order; the id is always the last key, so pages never overlap. */
  readonly sort: readonly SortNode[]
  /**
   * The window; undefined: every matching row, in no particular order. In an include step (`IncludeLayer`), the
   * window of each owner's related rows (see `Repository.findRelated`).
   */
  readonly page: PageWindow | undefined
  /**
   * Columns to select besides the id (which is always selected); a name of a computed attribute's value (see
   * `ResolvedResource.computedSelects`) selects its expression under that name.
   */
  readonly columns: readonly string[]
  /** Aggregates to select, each under the name of its attribute's value (`selectedAs`); none when undefined. */
  readonly aggregates?: readonly SelectedAggregate[]
  /**
   * The read rules of the attributes the rows render: each selects, under `ruleSelectedAs(attribute)`, 1 on the rows
   * where its condition holds and 0 elsewhere (the writer leaves the attribute out there, and wherever a rule of it is
   * not selected: a rule that is false for the whole request is not). None when undefined.
   */
  readonly rules?: readonly SelectedRule[]
  /** The relationships to include below these rows, each with the layer of its related type. */
  readonly include: readonly IncludeLayer[]
}

/** An aggregate attribute a layer selects: its value, computed within the scopes it reaches, under `selectedAs(attribute)`. */
export interface SelectedAggregate {
  readonly attribute: ResolvedAttribute
  readonly term: AggregateTerm
}

/** A read rule a layer selects: whether the request may read `attribute` on each row, under `ruleSelectedAs(attribute)`. */
export interface SelectedRule {
  readonly attribute: ResolvedAttribute
  readonly where: FilterNode
}

/** Whether a layer selects aggregates (each a subquery with the scopes it reaches). */
export function selectsAggregates (layer: QueryLayer): boolean {
  return layer.aggregates !== undefined && layer.aggregates.length > 0
}

/** Whether a layer selects read rules. */
export function selectsRules (layer: QueryLayer): boolean {
  return layer.rules !== undefined && layer.rules.length > 0
}

/** One include step: the relationship followed and what to read of its related rows (their `where` is their scope). */
export interface IncludeLayer {
  readonly relationship: ResolvedRelationship
  readonly layer: QueryLayer
}

/** A row a write addresses: the resource, its id, and the scope the row must be in to be written. */
export interface WriteTarget {
  readonly resource: ResolvedResource
  readonly id: string
  readonly scope: FilterNode | undefined
}

/** Rows a link change addresses: only rows within `scope` are linked or unlinked. */
export interface LinkTargets {
  readonly resource: ResolvedResource
  readonly ids: readonly string[]
  readonly scope: FilterNode | undefined
}

/** A row that must exist (within its scope) for a guarded write to happen (the target of a foreign key being written). */
export interface RequiredRow {
  readonly resource: ResolvedResource
  readonly id: string
  readonly scope: FilterNode | undefined
}

/** Column name → value bound in SQL. */
export type ColumnValues = Readonly<Record<string, unknown>>

/**
 * The storage seam. The service speaks JSON:API; a repository only stores and reads rows, as the service composed
 * them ({@link QueryLayer}, {@link WriteTarget}): it never decides what a request may see. Ids cross this interface
 * as strings. Every method of a repository obtained from {@link Repository.transaction} runs in that transaction.
 *
 * Implementations translate their driver's constraint errors into {@link StorageError}s.
 */
export interface Repository {
  /** The rows of a layer, in its order and window; each row has the id column. */
  findMany(layer: QueryLayer): Promise<Row[]>
  /** The number of rows that match the layer's `where` (its window ignored). */
  count(layer: QueryLayer): Promise<number>
  /**
   * An estimate of the number of rows that match the layer's `where` (its window ignored), without reading them: a
   * non-negative integer (PostgreSQL: the planner's row estimate of the SELECT, from the table's statistics). For
   * resources with `count: 'estimated'`. Optional: without it, such resources are counted exactly (`count`).
   */
  estimateCount?(layer: QueryLayer): Promise<number>
  /**
   * A keyset page of a layer (cursor pagination), its window ignored: the rows of `window` in the layer's order
   * (the keys of `keysetKeys(layer.sort)`, NULLs last ascending and first descending), with the text of their keys,
   * and whether rows lie beyond each bound: one statement, whatever the depth of the page. Optional: without it,
   * cursor pagination is refused (400).
   */
  findKeyset?(layer: QueryLayer, window: KeysetWindow): Promise<KeysetPage>
  /**
   * The related rows (of `layer.resource`, matching `layer.where`) of every owner in `ownerIds` (one query, whatever
   * their number), ordered by the related id. The owners were read within their own scope. With a `layer.page` (an
   * include step of a to-many relationship), that window applies to each owner's rows apart — in the related id
   * order, at most `page.limit` rows per owner after its first `page.offset` — and each row carries its owner's
   * `total`; still one query. Without one, every related row.
   */
  findRelated(owner: ResolvedResource, relationship: ResolvedRelationship, ownerIds: readonly string[], layer: QueryLayer): Promise<RelatedRow[]>
  /**
   * Inserts a row and returns it as stored (defaults included): the id and `columns`. `id` is a client-generated id,
   * when given. When a row of `requires` does not exist (within its scope), nothing is inserted and the result is
   * undefined — in the same statement, so no other transaction can slip in between the check and the write.
   */
  insert(resource: ResolvedResource, values: ColumnValues, id: string | undefined, columns: readonly string[], requires?: readonly RequiredRow[]): Promise<Row | undefined>
  /**
   * Updates the target row (when it is within its scope) and returns it as stored (the id and `columns`), or
   * undefined when it does not exist or a row of `requires` does not. An empty `values` only reads it.
   */
  update(target: WriteTarget, values: ColumnValues, columns: readonly string[], requires?: readonly RequiredRow[]): Promise<Row | undefined>
  /** Deletes the target row (when it is within its scope); false when there is none. */
  delete(target: WriteTarget): Promise<boolean>
  /**
   * Replaces the links of a relationship: afterwards exactly `targets.ids` are linked to the owner, and links to rows
   * outside `targets.scope` are left as they are.
   */
  replaceLinks(owner: WriteTarget, relationship: ResolvedRelationship, targets: LinkTargets): Promise<void>
  /** Links `targets.ids` to the owner in addition to the present links (to-many). */
  addLinks(owner: WriteTarget, relationship: ResolvedRelationship, targets: LinkTargets): Promise<void>
  /** Unlinks `targets.ids` from the owner (to-many). */
  removeLinks(owner: WriteTarget, relationship: ResolvedRelationship, targets: LinkTargets): Promise<void>
  /**
   * Locks the target row (when it is within its scope) until the end of the transaction: `SELECT … FOR UPDATE`.
   * False when there is none. Optional: without it, a write's `If-Match` is compared without a lock, and two
   * concurrent writes with the same tag may both succeed unless the transaction isolation prevents it.
   */
  lock?(target: WriteTarget): Promise<boolean>
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (repository: Repository) => Promise<T>): Promise<T>
  /**
   * Runs `work` in one read-only snapshot (a `REPEATABLE READ` transaction) with a repository bound to it and a
   * function that reads the rows of a layer (its window ignored: every row, in its order) in batches of `size`
   * through a server-side cursor, so that a read of every row (`page[size]=0`) never holds more than one batch.
   * Optional: without it, such reads load every row at once.
   */
  scan?<T>(work: (repository: Repository, batches: (layer: QueryLayer, size: number) => AsyncIterable<Row[]>) => Promise<T>): Promise<T>
  /**
   * The Kysely instance (inside a transaction: the transaction) this repository runs on, handed to write hooks as
   * `event.db` so that what they write commits or rolls back with the write. Optional for other repositories.
   */
  readonly kysely?: Kysely<any>
  /**
   * What kind of database fault an error is — one this repository threw, or one of its driver that reached the
   * service another way (a write hook's statement on `event.db`, a transaction that could not begin) — looking
   * through its `cause` chain; undefined for anything else. A fault is a 503 (`conflict`: after the retries). Optional:
   * without it, only {@link StorageError}s of kind `unavailable`, `timeout` and `conflict` are faults.
   */
  faultOf?(error: unknown): DatabaseFault | undefined
}

/**
 * The kinds of failure a repository reports: a constraint or a value the storage refused (the client's 4xx), or a
 * fault of the storage itself (a 503 with `Retry-After`): `unavailable` (unreachable, connection lost, too many
 * connections), `timeout` (statement or lock timeout) and `conflict` (a serialization failure or deadlock: the
 * transaction was rolled back and is retried).
 */
export type StorageErrorKind =
  | 'unique' | 'foreign-key' | 'not-null' | 'check' | 'invalid-value' | 'out-of-range' | 'too-long'
  | 'unavailable' | 'timeout' | 'conflict'

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

/** The fault a {@link StorageError} in an error's `cause` chain reports (kind `unavailable`, `timeout` or `conflict`). */
export function storageFault (error: unknown): DatabaseFault | undefined {
  const seen = new Set<unknown>()
  for (let current = error; typeof current === 'object' && current !== null && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current)
    if (current instanceof StorageError) {
      const kind = current.kind
      if (kind === 'unavailable' || kind === 'timeout' || kind === 'conflict') return kind
    }
  }
  return undefined
}

/** The fault an error is for a repository: its own `faultOf`, or {@link storageFault}. */
export function faultOf (repository: Repository, error: unknown): DatabaseFault | undefined {
  return repository.faultOf === undefined ? storageFault(error) : repository.faultOf(error)
}
