import type { CompiledQuery, Expression, Kysely, RawBuilder, SqlBool } from 'kysely'
import type { EngineName, Row } from '../../schema/fields.js'
import type { ResolvedAttribute, ResourceGraph } from '../../schema/resolved.js'
import type { DatabaseFault } from '../../errors/database-faults.js'
import type { EnforcedForeignKeys } from './enforced-foreign-keys.js'
import type { IntegerRanges } from './integer-ranges.js'
import type { OrderedKeys } from './ordered-keys.js'


/** The pattern operators of the filter language, as SQL writes them. */
export type LikeOperator = 'like' | 'not like' | 'ilike' | 'not ilike'

/**
 * What differs between the database engines under the Kysely repository: everything else it writes is Kysely's
 * portable query builder. The repository finds its engine from the Kysely instance it is given (see `engineOf`) and
 * never names an engine itself; the filter compiler, the statement keys, the keyset pages and the catalog reads ask
 * the engine for the pieces that are not the same everywhere.
 *
 * An engine is a value without state: one object per engine, shared by every registration.
 */
export interface SqlEngine {
  /** The engine, as custom filter operators are told. */
  readonly id: EngineName
  /** The engine's name, as messages name it. */
  readonly name: string

  /**
   * A filter's value (of `eq`, `in_`, `between` …) of `attribute` as the engine binds it: as the engine stores it
   * (SQLite and MariaDB have no booleans and no time zones: see `converts`).
   */
  readonly bind: (value: unknown, attribute: ResolvedAttribute) => unknown
  /** The value a pattern operator binds for `pattern` (see {@link like}). */
  readonly likePattern: (operator: LikeOperator, pattern: string) => unknown
  /** The value `match` binds for a query (see {@link match}). */
  readonly matchQuery: (query: string) => unknown

  /**
   * How a list of values is bound: as one array parameter (`= any($1)`: the statement's text does not depend on how
   * many values there are), or one parameter per value (`in (?, ?, ?)`: a statement key must count them).
   */
  readonly listParameters: 'array' | 'each'
  /** `column = any(values)` (or `in`), or `column <> all(values)` (`not in`) when `negated`; at least one value. */
  readonly inList: (column: Expression<unknown>, negated: boolean, values: readonly unknown[]) => Expression<SqlBool>
  /**
   * `column like pattern` and its variants: `%` and `_` are the only wildcards (`\` escapes them); `like` and `not like`
   * are case-sensitive and `ilike` and `not ilike` case-insensitive, whatever the column's collation.
   */
  readonly like: (column: Expression<unknown>, operator: LikeOperator, pattern: unknown) => Expression<SqlBool>
  /**
   * The value of `column` matches a web search query (`match`), bound as {@link matchQuery} made it: the engine's
   * full-text search or its nearest equivalent.
   */
  readonly match: (column: Expression<unknown>, query: unknown) => Expression<SqlBool>

  /**
   * A key of `ORDER BY`, with NULLs where PostgreSQL puts them whatever the engine: after every value ascending,
   * before every value descending (`asc nulls last` on SQLite, whose default is the reverse; `e is null, e asc` on
   * MariaDB/MySQL, which have no `nulls last`).
   */
  readonly orderKey: (expression: Expression<unknown>, descending: boolean) => RawBuilder<unknown>
  /** The text of a key's value, as the engine prints it: a cursor holds it, and the engine reads it back as the same value. */
  readonly asText: (value: Expression<unknown>) => RawBuilder<unknown>
  /**
   * How the text of a key's value is bound where the key is a number computed by an expression (an aggregate, a
   * computed attribute), which has no column type to read the text as: SQLite compares a number with a text as
   * unequal, so it reads the text as a number there (`cast(… as numeric)`); elsewhere the text itself.
   */
  readonly numericKeyValue?: (text: string) => Expression<unknown>
  /**
   * How the columns an `UPDATE … RETURNING` of the table aliased `alias` returns are qualified: with the alias, or
   * not at all (`''`: SQLite's RETURNING names no table).
   */
  readonly returningAlias: (alias: string) => string
  /**
   * Whether an `UPDATE` returns the row it wrote (`RETURNING`); where it does not (MariaDB/MySQL), the repository
   * reads the row back by its id after an `UPDATE` that matched it, in the same transaction.
   */
  readonly updateReturns: boolean
  /** How an `INSERT` of a row of defaults only is written: `default values`, or `() values ()` (MariaDB/MySQL). */
  readonly emptyInsert: 'default values' | 'empty values'
  /**
   * The alias a `DELETE` (and the conditions of its `WHERE`) names its table by: `alias`, or the table itself where
   * a single-table `DELETE` takes no alias (MariaDB).
   */
  readonly deleteAlias: (table: string, alias: string) => string
  /**
   * A parenthesized SELECT (its own `ORDER BY` and `LIMIT`) as an arm of a `UNION ALL`: as it is on PostgreSQL; on
   * SQLite, which takes no parenthesized arm, `select * from (…)`.
   */
  readonly unionArm: (select: RawBuilder<unknown>) => RawBuilder<unknown>
  /** What ends a SELECT of the rows aliased `alias` so that they stay locked until the transaction ends. */
  readonly lockRows: (alias: string) => RawBuilder<unknown>

  /**
   * The rows of a SELECT in batches of `size`, read within the transaction `db`: an unpaged read holds one batch at a
   * time, and other statements may run between two batches. `select` compiles the SELECT, with a window when the
   * engine reads it window by window (PostgreSQL reads it once, through a server-side cursor named `name`). Stopped
   * early, it releases what it holds.
   */
  readonly batches: (db: Kysely<any>, select: (window?: { readonly limit: number, readonly offset: number }) => CompiledQuery, size: number, name: string) => AsyncIterable<Row[]>

  /**
   * The attributes whose values the engine stores in another form than the driver gives and takes them (SQLite:
   * booleans as 0 and 1, JSON and arrays as text), or none: the repository converts them in the rows it reads and
   * the values it writes, so that every engine hands the service what PostgreSQL would.
   */
  readonly converts: (attribute: ResolvedAttribute) => boolean
  /** Whether {@link converts} holds for any attribute at all (PostgreSQL: none, and nothing is looked at). */
  readonly convertsValues: boolean
  /** A stored value of an attribute that {@link converts}, as PostgreSQL's driver would give it. */
  readonly readStored: (attribute: ResolvedAttribute, value: unknown) => unknown
  /** A value of an attribute that {@link converts}, as the engine stores it. */
  readonly toStored: (attribute: ResolvedAttribute, value: unknown) => unknown
  /** The statement that estimates the rows of a SELECT without reading them (PostgreSQL: `EXPLAIN (FORMAT JSON)`). */
  readonly estimate: (select: CompiledQuery) => CompiledQuery<Record<string, unknown>>
  /** The number of rows an {@link estimate} statement's rows expect. */
  readonly estimatedRows: (rows: ReadonlyArray<Record<string, unknown>>) => number

  /**
   * A failed statement's error as the repository reports it: a `StorageError` for a constraint, a value the database
   * refused or a fault; any other error unchanged.
   */
  readonly storageError: (error: unknown) => unknown
  /**
   * Completes a {@link storageError} of a write into `table` from the catalog, where the engine's message leaves out
   * what the client is told (MariaDB names the index of a unique violation, not its columns); most engines: none.
   */
  readonly completeError?: (db: Kysely<any>, error: unknown, table: string) => Promise<unknown>
  /** The fault (`unavailable`, `timeout`, `conflict`) an error of the engine's driver is, if any. */
  readonly fault: (error: unknown) => DatabaseFault | undefined

  /** Reads from the catalog which relationships stored in a row the database's foreign keys enforce. */
  readonly readForeignKeys: (db: Kysely<any>, graph: ResourceGraph) => Promise<EnforcedForeignKeys>
  /**
   * Reads the integer columns of the graph's tables and their ranges, where the engine compares a filter value its
   * column cannot hold without an error (see `IntegerRanges`); PostgreSQL refuses such a value itself: none.
   */
  readonly readIntegerRanges?: (db: Kysely<any>, graph: ResourceGraph) => Promise<IntegerRanges>
  /**
   * The to-many relationships whose related rows have an index in owner, then id order, read from the catalog with the
   * foreign keys: each owner's page of an include of theirs is then read by `LATERAL … LIMIT` (see `OrderedKeys`).
   * An engine without it (or without `LATERAL`) ranks the related rows by window functions.
   */
  readonly readOrderedKeys?: (db: Kysely<any>, graph: ResourceGraph) => Promise<OrderedKeys>
  /** Checks that every table and column the declarations need exists (throws `DatabaseSchemaError`). */
  readonly checkSchema: (db: Kysely<any>, graph: ResourceGraph) => Promise<void>
}
