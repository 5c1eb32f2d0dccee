import { CompiledQuery, sql, type AliasedRawBuilder, type Expression, type Kysely, type QueryResult, type SqlBool } from 'kysely'
import type { Row } from '../../schema/fields.js'
import { NUMERIC_KINDS, ruleSelectedAs, selectedAs, type RelationshipStorage, type ResolvedAttribute, type ResolvedRelationship, type ResolvedResource, type ResourceGraph } from '../../schema/resolved.js'
import {
  StorageError, type ColumnValues, type KeysetPage, type KeysetWindow, type LinkTargets, type PageWindow, type QueryLayer, type RelatedRow,
  type Repository, type RequiredRow, type WriteTarget,
} from '../../contracts/repository.js'
import type { FilterNode } from '../../schema/filter-nodes.js'
import { keysetKeys } from '../../query/query-tree.js'
import type { DatabaseFault } from '../../errors/database-faults.js'
import { AliasCounter, EB, FilterCompiler, ROOT, columnOf, rootOf, selectsSubqueries } from './compile-filter.js'
import type { SqlEngine } from './sql-engine.js'
import { engineOf } from './engine-of.js'
import { compileSort } from './compile-sort.js'
import { keysetBranches, type KeysetKey, type SidedBound } from './compile-keyset.js'
import { StatementCache, countShape, guardedInsertShape, insertShape, relatedShape, selectShape } from './statement-cache.js'
import type { EnforcedForeignKeys } from './enforced-foreign-keys.js'
import type { IntegerRanges } from './integer-ranges.js'
import { ownerOrderOf, type OrderedKeys } from './ordered-keys.js'
import { statementRunnerOf, type StatementRunner } from '../../database/statement-runner.js'

const OWNER = '__owner'
/** The storages of to-many relationships whose pages per owner may be read by `LATERAL`. */
type OwnerPagedStorage = Exclude<RelationshipStorage, { kind: 'foreign-key' }>

/** The columns of a per-owner page (see `#selectRelated`): each row's rank within its owner, and its owner's total. */
const RANK = '__rank'
const TOTAL = '__total'

/** `table as alias`, or the table alone. */
function tableAs (table: string, alias: string): string {
  return alias === '' ? table : `${table} as ${alias}`
}

/** Adds `scope` over the row `alias` of `resource` to a statement's WHERE (nothing when there is no scope). */
function within<B extends { where: (condition: Expression<SqlBool>) => B }> (
  filters: FilterCompiler, builder: B, resource: ResolvedResource, alias: string, scope: FilterNode | undefined, aliases: AliasCounter,
): B {
  return scope === undefined ? builder : builder.where(filters.filter(scope, resource, alias, aliases))
}

/** The related id column of a row of a join table or an inverse key's table is within the targets' scope. */
function targetWithin (filters: FilterCompiler, targets: LinkTargets, idRef: string, aliases: AliasCounter): Expression<SqlBool> {
  const { resource, scope } = targets
  if (scope === undefined) return sql<boolean>`true`
  const alias = aliases.take()
  return EB.exists(EB.selectFrom(`${resource.table} as ${alias}`)
    .select(sql.lit(1).as('one'))
    .where(sql.ref(`${alias}.${resource.idColumn}`), '=', sql.ref(idRef))
    .where(filters.filter(scope, resource, alias, aliases)))
}

function rowsOf<R> (result: QueryResult<R>): R[] {
  return result.rows
}

/** `count(*)` as a number. */
function countOf (rows: ReadonlyArray<{ count: string }>): number {
  return Number(rows[0].count)
}

/** Related rows with their owner's id (the owner column stays in the row: nothing reads it but this). */
function relatedRows (rows: readonly Row[]): RelatedRow[] {
  return rows.map((row) => ({ ownerId: stringId(row[OWNER]), row }))
}

/** The rows of per-owner pages: each with its owner's id and total (a string on PostgreSQL and MariaDB: a bigint). */
function pagedRelatedRows (rows: readonly Row[]): RelatedRow[] {
  return rows.map((row) => ({ ownerId: stringId(row[OWNER]), row, total: Number(row[TOTAL]) }))
}

/** What a select list may hold: a column (qualified), or an expression under a name. */
type SelectItem = string | AliasedRawBuilder<unknown, string>

/** The names a layer's rows carry, as an outer SELECT names them: the id, the columns, the aggregates' and the rules' names. */
function selectedNames (layer: QueryLayer): string[] {
  const names = [...new Set([layer.resource.idColumn, ...layer.columns])]
  for (const { attribute } of layer.aggregates ?? []) names.push(selectedAs(attribute))
  for (const { attribute } of layer.rules ?? []) names.push(ruleSelectedAs(attribute))
  return names
}

/** A write that requires no rows: no constraint to rely on, none it must check itself. */
const NO_CONSTRAINTS: ReadonlySet<string> = new Set()

/**
 * Whether a failed write into `resource`'s table is the refusal of one of `constraints`, a missing target (and not
 * that of a constraint of the same name on another table, reached by a trigger, say).
 */
function refusedTarget (error: unknown, resource: ResolvedResource, constraints: ReadonlySet<string>): boolean {
  if (!(error instanceof StorageError) || error.kind !== 'foreign-key' || error.constraint === undefined || !constraints.has(error.constraint)) return false
  const table = error.table
  return table === undefined || resource.table === table || resource.table.endsWith(`.${table}`)
}

function firstRow (rows: readonly Row[]): Row | undefined {
  return rows[0]
}

/** The id column, then `columns` without it and without repeats: kept with the resource by the columns asked for. */
function returnedColumns (resource: ResolvedResource, columns: readonly string[]): readonly string[] {
  return resource.memo.get('returned-columns', columns.join(','), () => Object.freeze([...new Set([resource.idColumn, ...columns])]))
}

/** The columns of a resource whose values the engine stores otherwise (see `SqlEngine.converts`), kept with it. */
function storedColumns (engine: SqlEngine, resource: ResolvedResource): ReadonlyArray<readonly [string, ResolvedAttribute]> {
  return resource.memo.get('stored-columns', engine.id, () => Object.freeze([...resource.attributes.values()]
    .filter((attribute) => attribute.column !== undefined && attribute.derived === undefined && engine.converts(attribute))
    .map((attribute) => [attribute.column as string, attribute] as const)))
}

/** Rows as PostgreSQL's driver would give them: the engine's stored forms converted, in place. */
function readRows<R extends Row | undefined> (engine: SqlEngine, resource: ResolvedResource, rows: R[]): R[] {
  const columns = storedColumns(engine, resource)
  if (columns.length === 0) return rows
  for (const row of rows) {
    if (row === undefined) continue
    for (const [column, attribute] of columns) {
      if (Object.prototype.hasOwnProperty.call(row, column)) (row as Record<string, unknown>)[column] = engine.readStored(attribute, row[column])
    }
  }
  return rows
}

/** Values to write, in the engine's stored forms. */
function storedValues (engine: SqlEngine, resource: ResolvedResource, values: ColumnValues): ColumnValues {
  const columns = storedColumns(engine, resource)
  if (columns.length === 0) return values
  const stored: Record<string, unknown> = { ...values }
  for (const [column, attribute] of columns) {
    if (Object.prototype.hasOwnProperty.call(stored, column)) stored[column] = engine.toStored(attribute, stored[column])
  }
  return stored
}

function stringId (value: unknown): string {
  return String(value)
}

/**
 * The default repository: PostgreSQL or SQLite through the application's own Kysely instance (its engine, see
 * `SqlEngine`, read from the instance's adapter). It runs what the service composed: every condition of a layer or a
 * write target is compiled into the one statement that reads or writes. Identifiers come only from the resource
 * graph; every value is a bound parameter.
 */
export class KyselyRepository implements Repository {
  readonly #db: Kysely<any>
  /**
   * The SQL of the statements compiled so far, by shape, shared with the repositories of its transactions. None when
   * the Kysely instance has plugins: a plugin may rewrite each query or its result as it pleases.
   */
  #statements: StatementCache | undefined
  /**
   * How a single statement runs when the Kysely instance's dialect offers it (the library's `JsonApiPostgresDialect`;
   * never on a transaction or an instance with plugins): through the same driver without Kysely's executor (see
   * `statementRunnerOf`). Otherwise Kysely's executor.
   */
  readonly #runner: StatementRunner | undefined
  /**
   * The foreign key constraints that enforce the relationships stored in a row (`readForeignKeys`): with them, a
   * create or an update outside a transaction that links only to targets without a scope does not check them in its
   * statement (a plain `INSERT … VALUES`, an `UPDATE` without `EXISTS`). Never set on a transaction's repository: a
   * statement that fails there aborts the transaction, so its writes check their targets in the statement.
   */
  #foreignKeys: EnforcedForeignKeys | undefined
  /**
   * The integer columns and their ranges, where the engine compares a value its column cannot hold without an error
   * (`SqlEngine.readIntegerRanges`, read with the foreign keys): a read whose filter holds one fails before its
   * statement, as on PostgreSQL. Shared with the repositories of its transactions.
   */
  #ranges: IntegerRanges | undefined
  /**
   * The to-many relationships whose related rows have an index in owner, then id order (`SqlEngine.readOrderedKeys`,
   * read with the foreign keys): each owner's page of theirs is read by `LATERAL … LIMIT`. Shared with the
   * repositories of its transactions.
   */
  #ordered: OrderedKeys | undefined
  /** The database engine below the Kysely instance (see `engineOf`): what its SQL, errors and catalog are. */
  readonly #engine: SqlEngine
  /** Compiles filters for the engine; shared with the repositories of its transactions. */
  #filters: FilterCompiler

  /**
   * `options.cacheStatements` (default true): reuse the SQL of a statement whose shape was compiled before (see
   * `StatementCache`); off, every statement is built and compiled by Kysely. Always off when the Kysely instance has
   * plugins.
   */
  constructor (db: Kysely<any>, options: { readonly cacheStatements?: boolean } = {}) {
    this.#db = db
    this.#statements = options.cacheStatements !== false && db.getExecutor().plugins.length === 0 ? new StatementCache() : undefined
    this.#runner = statementRunnerOf(db)
    this.#engine = engineOf(db)
    this.#filters = new FilterCompiler(this.#engine)
  }

  /** A repository on a transaction of this one's database, sharing its statements. */
  #within (trx: Kysely<any>): KyselyRepository {
    const repository = new KyselyRepository(trx, { cacheStatements: false })
    repository.#statements = this.#statements
    repository.#filters = this.#filters
    repository.#ranges = this.#ranges
    repository.#ordered = this.#ordered
    return repository
  }

  /**
   * Runs a statement: its SQL from the cache when its shape is known, else compiled by Kysely; an error of the
   * database comes out as a `StorageError` (see `SqlEngine.storageError`).
   */
  #execute<R> (shape: ReturnType<typeof selectShape>, compile: () => CompiledQuery<R>): Promise<R[]> {
    let query: CompiledQuery<R>
    try {
      const statements = this.#statements
      query = statements === undefined ? compile() : statements.query(shape, compile) as CompiledQuery<R>
    } catch (error) {
      return Promise.reject(this.#engine.storageError(error))
    }
    // Not an async function: the statement's own promise is the answer (its failure already a StorageError).
    const runner = this.#runner
    const storageError = this.#engine.storageError
    if (runner !== undefined) return runner(query, storageError) as Promise<R[]>
    return this.#db.executeQuery<R>(query).then(rowsOf, (error: unknown) => { throw storageError(error) })
  }

  /**
   * Reads from the catalog which relationships stored in a row the database's foreign key constraints enforce (one
   * statement; and, on the engines that need them, the ranges of the integer columns: one more; on the engines with
   * `LATERAL`, the to-many relationships indexed in owner, then id order: one more), adding them to those read before:
   * the plugin runs it at `ready` for each registration that uses this repository. Until it has run, and when it
   * fails, every create that links to existing rows checks them in its own statement (and no filter value is refused
   * before its statement, and included pages rank every related row).
   *
   * @internal
   */
  async readForeignKeys (graph: ResourceGraph): Promise<EnforcedForeignKeys> {
    const readRanges = this.#engine.readIntegerRanges
    if (readRanges !== undefined) {
      const ranges = await readRanges(this.#db, graph)
      this.#ranges = this.#ranges === undefined ? ranges : this.#ranges.with(ranges)
    }
    const readOrdered = this.#engine.readOrderedKeys
    if (readOrdered !== undefined) {
      const ordered = await readOrdered(this.#db, graph)
      this.#ordered = this.#ordered === undefined ? ordered : this.#ordered.with(ordered)
    }
    const read = await this.#engine.readForeignKeys(this.#db, graph)
    this.#foreignKeys = this.#foreignKeys === undefined ? read : this.#foreignKeys.with(read)
    return read
  }

  /**
   * The foreign key constraints that check every row a write requires (the empty set when it requires none), or
   * undefined when the write must check them in its statement.
   */
  #enforcing (resource: ResolvedResource, row: ColumnValues, names: readonly string[], requires: readonly RequiredRow[]): ReadonlySet<string> | undefined {
    return requires.length === 0 ? NO_CONSTRAINTS : this.#foreignKeys?.enforcing(resource, row, names, requires)
  }

  /** The failure of a read whose filter holds a value beyond its integer column's range (see `#ranges`), if any. */
  #refused (layer: QueryLayer): Promise<never> | undefined {
    const refusal = this.#ranges?.refusal(layer.where, layer.resource)
    return refusal === undefined ? undefined : Promise.reject(refusal)
  }

  /** The Kysely instance (or transaction) this repository runs on. */
  get kysely (): Kysely<any> {
    return this.#db
  }

  async #run<T> (work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw this.#engine.storageError(error)
    }
  }

  /**
   * The id and `columns` of the row aliased `alias`, qualified: a computed attribute's name (see
   * `ResolvedResource.computedSelects`) selects its expression under that name.
   */
  #columns (resource: ResolvedResource, columns: readonly string[], alias: string): SelectItem[] {
    const computed = resource.computedSelects
    return [...new Set([resource.idColumn, ...columns])].map((column) => {
      const attribute = computed.size === 0 ? undefined : computed.get(column)
      return attribute === undefined ? columnOf(alias, column) : this.#filters.computed(attribute, alias).as(column)
    })
  }

  /** What an `INSERT … RETURNING` returns of `columns` (see `#columns`; the same list when no attribute is computed). */
  #returned (resource: ResolvedResource, columns: readonly string[]): readonly SelectItem[] {
    return resource.computedSelects.size === 0 ? columns : this.#columns(resource, columns, '')
  }

  /**
   * What a layer selects of its rows (aliased `alias`): the id, its columns, its aggregates (see `#columns`), and
   * its read rules' decisions (1 or 0), in that order (the statement cache's shapes bind their values in it).
   */
  #selected (layer: QueryLayer, alias: string, aliases: AliasCounter): SelectItem[] {
    const columns = this.#columns(layer.resource, layer.columns, alias)
    const { aggregates, rules, resource } = layer
    if ((aggregates === undefined || aggregates.length === 0) && (rules === undefined || rules.length === 0)) return columns
    return [
      ...columns,
      ...(aggregates ?? []).map(({ attribute, term }) => this.#filters.aggregate(term, resource, alias, aliases).as(selectedAs(attribute))),
      ...(rules ?? []).map(({ attribute, where }) => sql`case when ${this.#filters.filter(where, resource, alias, aliases)} then 1 else 0 end`.as(ruleSelectedAs(attribute))),
    ]
  }

  /** The rows of a layer's table (aliased `root`) within its `where`. */
  #where (layer: QueryLayer, aliases: AliasCounter, root: string) {
    const builder = this.#db.selectFrom(tableAs(layer.resource.table, root))
    const where = layer.where
    return where === undefined ? builder : builder.where(this.#filters.filter(where, layer.resource, root, aliases))
  }

  /** The SELECT of a layer: its rows in its order, within its window. */
  #selectMany (layer: QueryLayer) {
    const { resource, page } = layer
    const aliases = new AliasCounter()
    const root = rootOf(layer.where, layer.sort, selectsSubqueries(layer))
    let builder = this.#where(layer, aliases, root).select(this.#selected(layer, root, aliases))
    if (page !== undefined || layer.sort.length > 0) {
      for (const key of layer.sort) builder = builder.orderBy(this.#engine.orderKey(compileSort(this.#filters, key, resource, root, aliases), key.descending))
      if (!layer.sort.some((key) => key.path.length === 0 && key.attribute === resource.idAttribute)) {
        builder = builder.orderBy(columnOf(root, resource.idColumn), 'asc')
      }
    }
    if (page?.limit !== undefined) builder = builder.limit(page.limit)
    if (page !== undefined && page.offset > 0) builder = builder.offset(page.offset)
    return builder
  }

  findMany (layer: QueryLayer): Promise<Row[]> {
    const refused = this.#refused(layer)
    if (refused !== undefined) return refused
    return this.#read(layer.resource, this.#execute(this.#statements && selectShape(this.#engine, layer), () => this.#selectMany(layer).compile() as CompiledQuery<Row>))
  }

  /** A written row as it is read (see {@link readRows}). */
  #readOne (resource: ResolvedResource, row: Row | undefined): Row | undefined {
    return row === undefined ? row : readRows(this.#engine, resource, [row])[0]
  }

  /** Rows read, as PostgreSQL's driver would give them (see `SqlEngine.converts`): as they are on PostgreSQL. */
  #read<R extends Row | undefined> (resource: ResolvedResource, rows: Promise<R[]>): Promise<R[]> {
    const engine = this.#engine
    return engine.convertsValues ? rows.then((read) => readRows(engine, resource, read)) : rows
  }

  scan<T> (work: (repository: Repository, batches: (layer: QueryLayer, size: number) => AsyncIterable<Row[]>) => Promise<T>): Promise<T> {
    const run = (repository: KyselyRepository): Promise<T> => {
      let cursors = 0
      return work(repository, (layer, size) => repository.#cursor(layer, size, `fja_scan_${++cursors}`))
    }
    if (this.#db.isTransaction) return run(this)
    return this.#run(() => this.#db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only')
      .execute((trx) => run(this.#within(trx))))
  }

  /** The rows of a layer (every row, in its order) in batches, through a server-side cursor of the transaction. */
  async * #cursor (layer: QueryLayer, size: number, name: string): AsyncIterable<Row[]> {
    const select = (window?: { readonly limit: number, readonly offset: number }): CompiledQuery =>
      this.#selectMany({ ...layer, page: { offset: window?.offset ?? 0, limit: window?.limit } }).compile()
    const engine = this.#engine
    const refusal = this.#ranges?.refusal(layer.where, layer.resource)
    if (refusal !== undefined) throw refusal
    try {
      if (!engine.convertsValues) yield * engine.batches(this.#db, select, size, name)
      else for await (const rows of engine.batches(this.#db, select, size, name)) yield readRows(engine, layer.resource, rows)
    } catch (error) {
      throw this.#engine.storageError(error)
    }
  }


  /**
   * A keyset page in one statement: the window's rows (read from the bound they are closest to, in the keyset order
   * or its reverse, `limit` rows), and for each bound one row beyond it (`limit 1`, read away from the bound: there
   * is one exactly when rows lie there), as the parts of a `union all` sorted by part and key. Each part starts at
   * its bound in an index on its first key (see `keysetBranches`: a column key reads its values and its NULLs as two
   * branches, merged within the part). The keys are selected as columns (`__fja_k<n>`) to order the parts, and as
   * text (`__fja_c<n>`), as PostgreSQL prints them, for the cursors: a value read back from its text is the same
   * value (to the microsecond, every digit), whatever its type.
   */
  findKeyset (layer: QueryLayer, window: KeysetWindow): Promise<KeysetPage> {
    const refused = this.#refused(layer)
    if (refused !== undefined) return refused
    const { resource } = layer
    const nodes = keysetKeys(layer.sort, resource)
    const key = (index: number): string => `__fja_k${index}`
    const orderOf = (reverse: boolean, alias?: string) => sql.join(nodes.map((node, index) =>
      this.#engine.orderKey(sql.ref(alias === undefined ? key(index) : `${alias}.${key(index)}`), node.descending !== reverse)))
    // A column first (not the id): its values and its NULLs are read as two branches, each from its index range.
    const first = nodes[0]
    const indexed = first.path.length === 0 && first.attribute !== resource.idAttribute && first.attribute.column !== undefined && first.guard === undefined
    // A number the database computes (an aggregate, a computed attribute) is read from its text as a number.
    const numeric = this.#engine.numericKeyValue
    const binds = nodes.map((node) => numeric !== undefined && node.attribute.column === undefined && NUMERIC_KINDS.has(node.attribute.valueKind) ? numeric : undefined)
    const part = (number: number, bounds: readonly SidedBound[], reverse: boolean, limit: number) => {
      const branch = (conditions: ReadonlyArray<Expression<SqlBool>>, aliases: AliasCounter, keys: readonly KeysetKey[]) => {
        let builder = this.#where(layer, aliases, ROOT)
          .select(this.#selected(layer, ROOT, aliases))
          .select(keys.map((item, index) => item.expression.as(key(index))))
          .select(sql.lit(number).as('__fja_part'))
        for (const condition of conditions) builder = builder.where(condition)
        return sql`${builder.orderBy(orderOf(reverse)).limit(limit)}`
      }
      const compile = (aliases: AliasCounter): KeysetKey[] => nodes.map((node, index) => ({
        expression: compileSort(this.#filters, node, resource, ROOT, aliases),
        descending: node.descending,
        nullable: node.path.length > 0 || node.attribute !== resource.idAttribute,
        bind: binds[index],
      }))
      // Each branch compiles its keys and conditions with its own aliases (one counter per statement of a branch).
      const count = keysetBranches(compile(new AliasCounter()), bounds, indexed).length
      const branches = Array.from({ length: count }, (_, at) => {
        const aliases = new AliasCounter()
        const keys = compile(aliases)
        return branch(keysetBranches(keys, bounds, indexed)[at], aliases, keys)
      })
      if (branches.length === 1) return branches[0]
      return sql`(select * from (${sql.join(branches.map(this.#engine.unionArm), sql` union all `)}) as b order by ${orderOf(reverse, 'b')} limit ${sql.lit(limit)})`
    }
    const { after, before } = window
    const parts = [part(0, [...(after === undefined ? [] : [[after, 'after'] as const]), ...(before === undefined ? [] : [[before, 'before'] as const])], window.fromEnd, window.limit)]
    // Rows at or before `after` (not after it), nearest first; rows at or after `before`.
    if (after !== undefined) parts.push(part(1, [[{ values: after.values, inclusive: !after.inclusive }, 'before']], true, 1))
    if (before !== undefined) parts.push(part(2, [[{ values: before.values, inclusive: !before.inclusive }, 'after']], false, 1))
    const texts = nodes.map((_, index) => `__fja_c${index}`)
    const selected = [
      ...selectedNames(layer).map((column) => sql.ref(`p.${column}`)),
      sql.ref('p.__fja_part'),
      ...texts.map((text, index) => sql`${this.#engine.asText(sql.ref(`p.${key(index)}`))} as ${sql.id(text)}`),
    ]
    const statement = sql<Row>`select ${sql.join(selected)} from (${sql.join(parts.map(this.#engine.unionArm), sql` union all `)}) as p order by p.__fja_part, ${orderOf(false, 'p')}`
    return this.#run(async () => {
      const { rows } = await statement.execute(this.#db)
      const page: Row[] = []
      const positions: Array<Array<string | null>> = []
      let earlier = false
      let later = false
      for (const row of rows) {
        const number = Number(row.__fja_part)
        if (number === 1) earlier = true
        if (number === 2) later = true
        if (number !== 0) continue
        positions.push(texts.map((text) => row[text] as string | null))
        // `__fja_part` and the keys' texts stay in the row: nothing reads them but this.
        page.push(row)
      }
      return { rows: this.#engine.convertsValues ? readRows(this.#engine, resource, page) : page, positions, earlier, later }
    })
  }

  count (layer: QueryLayer): Promise<number> {
    const refused = this.#refused(layer)
    if (refused !== undefined) return refused
    return this.#execute(this.#statements && countShape(this.#engine, layer), () => this.#where(layer, new AliasCounter(), rootOf(layer.where))
      .select(sql<string>`count(*)`.as('count'))
      .compile() as CompiledQuery<{ count: string }>).then(countOf)
  }

  /**
   * The planner's estimate of the rows of a layer: `EXPLAIN (FORMAT JSON)` of the SELECT of its rows (its `where`,
   * with every scope, its values bound; no order, no window), whose top node's `Plan Rows` is the number of rows the
   * planner expects that statement to return. A plan, not a scan: its cost does not grow with the table. It is as good
   * as the table's statistics (`ANALYZE`, autovacuum), and the planner never expects fewer than one row.
   */
  estimateCount (layer: QueryLayer): Promise<number> {
    const refused = this.#refused(layer)
    if (refused !== undefined) return refused
    return this.#run(async () => {
      const rows = await this.#execute(this.#statements && countShape(this.#engine, layer, 'estimate'), () =>
        this.#engine.estimate(this.#where(layer, new AliasCounter(), rootOf(layer.where)).select(sql.lit(1).as('one')).compile()))
      return this.#engine.estimatedRows(rows)
    })
  }

  findRelated (owner: ResolvedResource, relationship: ResolvedRelationship, ownerIds: readonly string[], layer: QueryLayer): Promise<RelatedRow[]> {
    if (ownerIds.length === 0) return Promise.resolve([])
    const refused = this.#refused(layer)
    if (refused !== undefined) return refused
    const lateral = layer.page !== undefined && this.#lateral(relationship.storage, layer.resource)
    const rows = this.#read(layer.resource, this.#execute(this.#statements && relatedShape(this.#engine, owner, relationship, ownerIds, layer, lateral),
      () => lateral ? this.#selectOwnerPages(owner, relationship.storage as OwnerPagedStorage, ownerIds, layer, layer.page as PageWindow) : this.#selectRelated(owner, relationship, ownerIds, layer)))
    return rows.then(layer.page === undefined ? relatedRows : pagedRelatedRows)
  }

  /** Whether each owner's page of a relationship stored so is read by `LATERAL` (see {@link OrderedKeys}). */
  #lateral (storage: RelationshipStorage, target: ResolvedResource): boolean {
    const ordered = this.#ordered
    if (ordered === undefined) return false
    const order = ownerOrderOf(storage, target)
    return order !== undefined && ordered.has(order)
  }

  /**
   * The related rows of some owners, each with its owner's id (`__owner`), in the related id order. With a window
   * (`layer.page`), each owner's page of them, in one statement whatever the number of owners: the rows ranked within
   * their owner by id (`row_number() over (partition by <owner key> order by <id>)`) and counted
   * (`count(*) over (partition by <owner key>)`) in a subquery, of which only the ranks of the window are kept. (Where
   * an index orders the related rows by owner and id, `#selectOwnerPages` reads only the pages.)
   */
  #selectRelated (owner: ResolvedResource, relationship: ResolvedRelationship, ownerIds: readonly string[], layer: QueryLayer): CompiledQuery<Row> {
    const storage = relationship.storage
    const target = layer.resource
    const where = layer.where
    // Only the related rows of an inverse foreign key are read from their table alone (the others join another).
    const root = storage.kind === 'inverse' ? rootOf(where, [], selectsSubqueries(layer)) : ROOT
    const aliases = new AliasCounter()
    const selected = this.#selected(layer, root, aliases)
    let builder
    let ownerKey: string
    if (storage.kind === 'foreign-key') {
      ownerKey = `o.${owner.idColumn}`
      builder = this.#db.selectFrom(`${owner.table} as o`)
        .innerJoin(`${target.table} as ${ROOT}`, `${ROOT}.${target.idColumn}`, `o.${storage.column}`)
        .where(this.#filters.idIn(ownerKey, ownerIds))
    } else if (storage.kind === 'inverse') {
      ownerKey = columnOf(root, storage.column)
      builder = this.#db.selectFrom(tableAs(target.table, root))
        .where(this.#filters.idIn(ownerKey, ownerIds))
    } else {
      ownerKey = `j.${storage.sourceKey}`
      builder = this.#db.selectFrom(`${storage.table} as j`)
        .innerJoin(`${target.table} as ${ROOT}`, `${ROOT}.${target.idColumn}`, `j.${storage.targetKey}`)
        .where(this.#filters.idIn(ownerKey, ownerIds))
    }
    if (where !== undefined) builder = builder.where(this.#filters.filter(where, target, root, aliases))
    const id = columnOf(root, target.idColumn)
    const page = layer.page
    if (page === undefined) return builder.select([...selected, `${ownerKey} as ${OWNER}`]).orderBy(id).compile() as CompiledQuery<Row>
    const ranked = builder.select((eb) => [
      ...selected,
      eb.ref(ownerKey).as(OWNER),
      eb.fn.agg<number>('row_number').over((over) => over.partitionBy(ownerKey as never).orderBy(id as never)).as(RANK),
      eb.fn.countAll().over((over) => over.partitionBy(ownerKey as never)).as(TOTAL),
    ])
    const names = selectedNames(layer)
    let paged = this.#db.selectFrom(ranked.as('p'))
      .select([...names.map((name) => `p.${name}`), `p.${OWNER}`, `p.${TOTAL}`])
    if (page.offset > 0) paged = paged.where(`p.${RANK}`, '>', page.offset)
    if (page.limit !== undefined) paged = paged.where(`p.${RANK}`, '<=', page.offset + page.limit)
    return paged.orderBy(`p.${target.idColumn}`).compile() as CompiledQuery<Row>
  }

  /**
   * Each owner's page of related rows and its total by `LATERAL` subqueries, where an index orders the related rows by
   * owner, then id (see {@link OrderedKeys}): for each owner `o` (its id, as `__owner`), one that counts its related
   * rows (`__total`: that index's range, index-only where the visibility map allows) and one that reads its page in id
   * order and stops there (an index range scan with `limit`/`offset`), so that what a page costs does not grow with
   * the rows beyond it.
   */
  #selectOwnerPages (owner: ResolvedResource, storage: OwnerPagedStorage, ownerIds: readonly string[], layer: QueryLayer, page: PageWindow): CompiledQuery<Row> {
    const target = layer.resource
    const where = layer.where
    const ownerKey = `o.${OWNER}`
    // The related rows of owner `o`, the target's row aliased `ROOT`, within the layer's `where`.
    const linked = (aliases: AliasCounter) => {
      const builder = storage.kind === 'inverse'
        ? this.#db.selectFrom(`${target.table} as ${ROOT}`).whereRef(`${ROOT}.${storage.column}`, '=', ownerKey)
        : this.#db.selectFrom(`${storage.table} as j`)
          .innerJoin(`${target.table} as ${ROOT}`, `${ROOT}.${target.idColumn}`, `j.${storage.targetKey}`)
          .whereRef(`j.${storage.sourceKey}`, '=', ownerKey)
      return where === undefined ? builder : builder.where(this.#filters.filter(where, target, ROOT, aliases))
    }
    // In the order of the index: the join table's related column, or the related id.
    const order = storage.kind === 'inverse' ? `${ROOT}.${target.idColumn}` : `j.${storage.targetKey}`
    const aliases = new AliasCounter()
    let rows = linked(aliases).select(this.#selected(layer, ROOT, aliases)).orderBy(order)
    if (page.limit !== undefined) rows = rows.limit(page.limit)
    if (page.offset > 0) rows = rows.offset(page.offset)
    const owners = this.#db.selectFrom(`${owner.table} as o`)
      .select(`o.${owner.idColumn} as ${OWNER}`)
      .where(this.#filters.idIn(`o.${owner.idColumn}`, ownerIds))
    const names = selectedNames(layer)
    return this.#db.selectFrom(owners.as('o'))
      .crossJoinLateral(linked(new AliasCounter()).select((eb) => eb.fn.countAll().as(TOTAL)).as('t'))
      .crossJoinLateral(rows.as('p'))
      .select([...names.map((name) => `p.${name}`), ownerKey, `t.${TOTAL}`])
      .orderBy(`p.${target.idColumn}`)
      .compile() as CompiledQuery<Row>
  }

  insert (resource: ResolvedResource, values: ColumnValues, id: string | undefined, columns: readonly string[], requires: readonly RequiredRow[] = []): Promise<Row | undefined> {
    if (!this.#engine.convertsValues) return this.#insert(resource, values, id, columns, requires)
    return this.#completed(this.#insert(resource, storedValues(this.#engine, resource, values), id, columns, requires), resource.table)
      .then((row) => this.#readOne(resource, row))
  }

  /** A write into `table`, its failure completed from the catalog where the engine needs it (see `SqlEngine.completeError`). */
  #completed<T> (write: Promise<T>, table: string): Promise<T> {
    const complete = this.#engine.completeError
    if (complete === undefined) return write
    return write.catch(async (error: unknown) => { throw await complete(this.#db, error, table) })
  }

  #insert (resource: ResolvedResource, values: ColumnValues, id: string | undefined, columns: readonly string[], requires: readonly RequiredRow[]): Promise<Row | undefined> {
    const row = id === undefined ? values : { ...values, [resource.idColumn]: id }
    const names = Object.keys(row)
    const returning = returnedColumns(resource, columns)
    if (names.length === 0) {
      // Run as a compiled query: Kysely's builder keeps RETURNING rows only where its adapter says it has RETURNING.
      const empty = this.#db.insertInto(resource.table)
      const defaults = this.#engine.emptyInsert === 'default values' ? empty.defaultValues() : empty.values({})
      return this.#execute(undefined, () => defaults.returning(this.#returned(resource, returning)).compile() as CompiledQuery<Row>).then(firstRow)
    }
    const enforcing = this.#enforcing(resource, row, names, requires)
    if (enforcing !== undefined) {
      // The foreign keys refuse a missing target: no row, as the guarded statement answers (the service then names it).
      const plain = (): CompiledQuery<Row> => this.#db.insertInto(resource.table).values(row).returning(this.#returned(resource, returning)).compile() as CompiledQuery<Row>
      return this.#execute(this.#statements && insertShape(this.#engine, resource, row, names, returning), plain).then(firstRow, (error: unknown) => {
        if (refusedTarget(error, resource, enforcing)) return undefined
        throw error
      })
    }
    // INSERT … SELECT <values> WHERE EXISTS …: PostgreSQL types the parameters from the target columns.
    const guarded = (): CompiledQuery<Row> => this.#db.insertInto(resource.table)
      .columns(names)
      .expression(this.#db.selectNoFrom(names.map((name) => sql.val(row[name]).as(name))).where(this.#filters.required(requires, new AliasCounter())))
      .returning(this.#returned(resource, returning))
      .compile() as CompiledQuery<Row>
    return this.#execute(this.#statements && guardedInsertShape(this.#engine, resource, row, names, returning, requires), guarded).then(firstRow)
  }

  update (target: WriteTarget, values: ColumnValues, columns: readonly string[], requires: readonly RequiredRow[] = []): Promise<Row | undefined> {
    if (!this.#engine.convertsValues) return this.#update(target, values, columns, requires)
    return this.#completed(this.#update(target, storedValues(this.#engine, target.resource, values), columns, requires), target.resource.table)
      .then((row) => this.#readOne(target.resource, row))
  }

  #update (target: WriteTarget, values: ColumnValues, columns: readonly string[], requires: readonly RequiredRow[]): Promise<Row | undefined> {
    const { resource, id, scope } = target
    const returning = this.#columns(resource, columns, this.#engine.returningAlias(ROOT))
    const aliases = new AliasCounter()
    const names = Object.keys(values)
    if (names.length === 0) {
      const read = this.#db.selectFrom(`${resource.table} as ${ROOT}`)
        .select(returning)
        .where(`${ROOT}.${resource.idColumn}`, '=', id)
      return this.#run(() => within(this.#filters, read, resource, ROOT, scope, aliases).executeTakeFirst())
    }
    // As a create: targets the foreign keys enforce are not checked again in the statement (see `insert`).
    const enforcing = this.#enforcing(resource, values, names, requires)
    // Without RETURNING, the row is read back in the UPDATE's transaction, which holds its lock: the answer is the row
    // as this statement wrote it, as RETURNING gives it, whatever else is written at the same time.
    // The foreign keys still stand in for the statement's checks there: these engines go on with a transaction after
    // a statement that failed (PostgreSQL aborts it, which is why a transaction's repository has none of its own).
    if (!this.#engine.updateReturns && !this.#db.isTransaction) {
      return this.#run(() => this.#db.transaction().execute((trx) => {
        const inner = this.#within(trx)
        inner.#foreignKeys = this.#foreignKeys
        return inner.#update(target, values, columns, requires)
      }))
    }
    return this.#run(async () => {
      let builder = within(this.#filters, this.#db.updateTable(`${resource.table} as ${ROOT}`)
        .set(values)
        .where(`${ROOT}.${resource.idColumn}`, '=', id), resource, ROOT, scope, aliases)
      if (enforcing === undefined) builder = builder.where(this.#filters.required(requires, aliases))
      try {
        if (this.#engine.updateReturns) return await builder.returning(returning).executeTakeFirst()
        // No RETURNING: the row the UPDATE matched (counted as matched, not as changed: `mysql2`'s FOUND_ROWS) is
        // read back by its id, whether or not the scope still holds for it, as RETURNING would give it.
        const { numUpdatedRows } = await builder.executeTakeFirst()
        if (numUpdatedRows === 0n) return undefined
        return await this.#db.selectFrom(`${resource.table} as ${ROOT}`)
          .select(returning)
          .where(`${ROOT}.${resource.idColumn}`, '=', id)
          .executeTakeFirst()
      } catch (error) {
        if (enforcing !== undefined && refusedTarget(this.#engine.storageError(error), resource, enforcing)) return undefined
        throw error
      }
    })
  }

  delete (target: WriteTarget): Promise<boolean> {
    const { resource, id, scope } = target
    const alias = this.#engine.deleteAlias(resource.table, ROOT)
    return this.#run(async () => {
      const builder = within(this.#filters, this.#db.deleteFrom(tableAs(resource.table, alias === resource.table ? '' : alias))
        .where(`${alias}.${resource.idColumn}`, '=', id), resource, alias, scope, new AliasCounter())
      const result = await builder.executeTakeFirst()
      return result.numDeletedRows > 0n
    })
  }

  lock (target: WriteTarget): Promise<boolean> {
    const { resource, id, scope } = target
    return this.#run(async () => {
      const builder = within(this.#filters, this.#db.selectFrom(`${resource.table} as ${ROOT}`)
        .select(sql.lit(1).as('one'))
        .where(`${ROOT}.${resource.idColumn}`, '=', id), resource, ROOT, scope, new AliasCounter())
        .modifyEnd(this.#engine.lockRows(ROOT))
      return (await builder.execute()).length > 0
    })
  }

  /** Sets the owner's foreign key column, when the owner is within its scope. */
  async #setForeignKey (owner: WriteTarget, column: string, value: string | null, only?: readonly string[]): Promise<void> {
    const aliases = new AliasCounter()
    let builder = within(this.#filters, this.#db.updateTable(`${owner.resource.table} as ${ROOT}`)
      .set({ [column]: value })
      .where(`${ROOT}.${owner.resource.idColumn}`, '=', owner.id), owner.resource, ROOT, owner.scope, aliases)
    if (only !== undefined) builder = builder.where(this.#filters.idIn(`${ROOT}.${column}`, only))
    await builder.execute()
  }

  replaceLinks (owner: WriteTarget, relationship: ResolvedRelationship, targets: LinkTargets): Promise<void> {
    return this.#run(async () => {
      const storage = relationship.storage
      const keep = targets.ids
      if (storage.kind === 'foreign-key') {
        await this.#setForeignKey(owner, storage.column, keep[0] ?? null)
        return
      }
      const aliases = new AliasCounter()
      if (storage.kind === 'inverse') {
        const target = targets.resource
        let unlink = within(this.#filters, this.#db.updateTable(`${target.table} as ${ROOT}`)
          .set({ [storage.column]: null })
          .where(`${ROOT}.${storage.column}`, '=', owner.id), target, ROOT, targets.scope, aliases)
        if (keep.length > 0) unlink = unlink.where(this.#engine.inList(sql.ref(`${ROOT}.${target.idColumn}`), true, [...keep]))
        await unlink.execute()
      } else {
        const j = this.#engine.deleteAlias(storage.table, 'j')
        let unlink = this.#db.deleteFrom(tableAs(storage.table, j === storage.table ? '' : j))
          .where(`${j}.${storage.sourceKey}`, '=', owner.id)
        if (targets.scope !== undefined) unlink = unlink.where(targetWithin(this.#filters, targets, `${j}.${storage.targetKey}`, aliases))
        if (keep.length > 0) unlink = unlink.where(this.#engine.inList(sql.ref(`${j}.${storage.targetKey}`), true, [...keep]))
        await unlink.execute()
      }
      await this.addLinks(owner, relationship, targets)
    })
  }

  addLinks (owner: WriteTarget, relationship: ResolvedRelationship, targets: LinkTargets): Promise<void> {
    if (targets.ids.length === 0) return Promise.resolve()
    return this.#run(async () => {
      const storage = relationship.storage
      const target = targets.resource
      if (storage.kind === 'foreign-key') {
        await this.#setForeignKey(owner, storage.column, targets.ids[0])
      } else if (storage.kind === 'inverse') {
        await within(this.#filters, this.#db.updateTable(`${target.table} as ${ROOT}`)
          .set({ [storage.column]: owner.id })
          .where(this.#filters.idIn(`${ROOT}.${target.idColumn}`, targets.ids)), target, ROOT, targets.scope, new AliasCounter())
          .execute()
      } else {
        const present = await this.#db.selectFrom(storage.table)
          .select(storage.targetKey)
          .where(storage.sourceKey, '=', owner.id)
          .where(this.#filters.idIn(storage.targetKey, targets.ids))
          .execute()
        const linked = new Set(present.map((row) => stringId(row[storage.targetKey])))
        const missing = [...new Set(targets.ids)].filter((targetId) => !linked.has(targetId))
        if (missing.length === 0) return
        await this.#db.insertInto(storage.table)
          .values(missing.map((targetId) => ({ ...storage.values, [storage.sourceKey]: owner.id, [storage.targetKey]: targetId })))
          .execute()
      }
    })
  }

  removeLinks (owner: WriteTarget, relationship: ResolvedRelationship, targets: LinkTargets): Promise<void> {
    if (targets.ids.length === 0) return Promise.resolve()
    return this.#run(async () => {
      const storage = relationship.storage
      const target = targets.resource
      const aliases = new AliasCounter()
      if (storage.kind === 'foreign-key') {
        await this.#setForeignKey(owner, storage.column, null, targets.ids)
      } else if (storage.kind === 'inverse') {
        await within(this.#filters, this.#db.updateTable(`${target.table} as ${ROOT}`)
          .set({ [storage.column]: null })
          .where(`${ROOT}.${storage.column}`, '=', owner.id)
          .where(this.#filters.idIn(`${ROOT}.${target.idColumn}`, targets.ids)), target, ROOT, targets.scope, aliases)
          .execute()
      } else {
        const j = this.#engine.deleteAlias(storage.table, 'j')
        let unlink = this.#db.deleteFrom(tableAs(storage.table, j === storage.table ? '' : j))
          .where(`${j}.${storage.sourceKey}`, '=', owner.id)
          .where(this.#filters.idIn(`${j}.${storage.targetKey}`, targets.ids))
        if (targets.scope !== undefined) unlink = unlink.where(targetWithin(this.#filters, targets, `${j}.${storage.targetKey}`, aliases))
        await unlink.execute()
      }
    })
  }

  transaction<T> (work: (repository: Repository) => Promise<T>): Promise<T> {
    if (this.#db.isTransaction) return work(this)
    return this.#db.transaction().execute((trx) => work(this.#within(trx)))
  }

  /** Faults of PostgreSQL, node-postgres, pg-pool, Kysely and sockets, by SQLSTATE, code and message. */
  faultOf (error: unknown): DatabaseFault | undefined {
    return this.#engine.fault(error)
  }
}
