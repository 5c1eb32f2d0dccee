import { expressionBuilder, sql, type Kysely } from 'kysely'
import type { ResourceGraph } from '../../schema/resolved.js'
import type { LikeOperator, SqlEngine } from './sql-engine.js'
import { EnforcedForeignKeys } from './enforced-foreign-keys.js'
import { checkDatabaseSchemaWith } from './check-database-schema.js'
import { sqliteFault, storageErrorFromSqlite } from './sqlite-errors.js'
import { bindAsStored, readTextStored, storedAsText, toTextStored } from './text-stored-values.js'
import { countEstimate, countedRows, matchWords, windowBatches } from './emulated-sql.js'
import { INTEGER_TYPES, IntegerRanges, type IntegerRange } from './integer-ranges.js'

const EB = expressionBuilder<any, any>()

/**
 * A LIKE pattern (`%`, `_`, `\` escapes) as a GLOB pattern, which SQLite matches case-sensitively: `*` and `?` for the
 * wildcards, the characters GLOB reads as its own (`*`, `?`, `[`) in brackets.
 */
export function globOf (pattern: string): string {
  let glob = ''
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]
    if (char === '\\' && index + 1 < pattern.length) {
      const next = pattern[++index]
      glob += next === '*' || next === '?' || next === '[' ? `[${next}]` : next
    } else if (char === '%') glob += '*'
    else if (char === '_') glob += '?'
    else if (char === '*' || char === '?' || char === '[') glob += `[${char}]`
    else glob += char
  }
  return glob
}

/** A column of a table as `pragma_table_info` describes it. */
interface ColumnInfo {
  readonly type: string
  /** Whether it is (part of) the primary key: an `integer primary key` is the row's 64-bit rowid. */
  readonly key: boolean
}

/**
 * The columns of the tables (their declared types, lowercased) from `pragma_table_info`, in one statement; a table of
 * an attached database is named `schema.table`; a table without columns is missing.
 */
async function readColumnInfo (db: Kysely<any>, tables: readonly string[]): Promise<Map<string, Map<string, ColumnInfo>>> {
  const found = new Map<string, Map<string, ColumnInfo>>()
  if (tables.length === 0) return found
  const parts = tables.map((table, at) => {
    const dot = table.lastIndexOf('.')
    const [schema, name] = dot < 0 ? [null, table] : [table.slice(0, dot), table.slice(dot + 1)]
    return sql`select ${sql.lit(at)} as fja_at, name, type, pk from pragma_table_info(${name}, ${schema})`
  })
  const { rows } = await sql<{ fja_at: number, name: string, type: string, pk: number }>`${sql.join(parts, sql` union all `)}`.execute(db)
  for (const row of rows) {
    const table = tables[Number(row.fja_at)]
    let columns = found.get(table)
    if (columns === undefined) found.set(table, columns = new Map())
    columns.set(row.name, { type: String(row.type).toLowerCase(), key: Number(row.pk) > 0 })
  }
  return found
}

/** The columns (and their declared types) of the tables, for the schema check. */
async function readColumns (db: Kysely<any>, tables: readonly string[]): Promise<Map<string, Map<string, string>>> {
  const found = await readColumnInfo(db, tables)
  return new Map([...found].map(([table, columns]) => [table, new Map([...columns].map(([name, info]) => [name, info.type]))]))
}

/**
 * The columns of INTEGER affinity (a declared type that contains `INT`) of the graph's tables, with the range their
 * declared type has on PostgreSQL and MariaDB (`integer`: 32 bits, `bigint` and any other: 64), so that a schema
 * written once for every engine refuses the same filter values on each (SQLite itself stores 64 bits in any of them).
 */
async function readIntegerRanges (db: Kysely<any>, graph: ResourceGraph): Promise<IntegerRanges> {
  const found = await readColumnInfo(db, [...new Set(graph.resources.map((resource) => resource.table))])
  const columns = new Map<string, Map<string, IntegerRange>>()
  for (const [table, infos] of found) {
    const ranges = new Map<string, IntegerRange>()
    for (const [column, { type, key }] of infos) {
      if (!type.includes('int')) continue
      // An `integer primary key` is the rowid: 64 bits, whatever PostgreSQL's `integer` is.
      ranges.set(column, key ? INTEGER_TYPES.bigint : INTEGER_TYPES[type.replace(/\(.*$/, '').trim()] ?? INTEGER_TYPES.bigint)
    }
    if (ranges.size > 0) columns.set(table, ranges)
  }
  return new IntegerRanges(columns)
}

/**
 * SQLite (through `better-sqlite3`): lists bound one parameter per value (`in (?, ?)`), `like` as a case-sensitive
 * GLOB, `ilike` as SQLite's `like` (case-insensitive for ASCII letters), `match` as "contains every word", no row
 * locks (a write transaction holds the database), unpaged reads window by window, exact counts where PostgreSQL
 * estimates, booleans, arrays and JSON converted.
 */
export const SQLITE: SqlEngine = Object.freeze<SqlEngine>({
  id: 'sqlite',
  name: 'SQLite',
  bind: (value, attribute) => bindAsStored('sqlite', value, attribute),
  likePattern: (operator: LikeOperator, pattern: string) => operator === 'like' || operator === 'not like' ? globOf(pattern) : pattern,
  matchQuery: matchWords,
  listParameters: 'each',
  inList: (column, negated, values) => EB(column, negated ? 'not in' : 'in', [...values]),
  like: (column, operator, pattern) => {
    switch (operator) {
      case 'like': return sql<boolean>`${column} glob ${pattern}`
      case 'not like': return sql<boolean>`${column} not glob ${pattern}`
      case 'ilike': return sql<boolean>`${column} like ${pattern} escape '\\'`
      case 'not ilike': return sql<boolean>`${column} not like ${pattern} escape '\\'`
    }
  },
  // Every word of the query in the value, case-insensitively (ASCII); no word: nothing matches, as on PostgreSQL.
  match: (column, words) =>
    sql<boolean>`(select min(instr(lower(${column}), w.value) > 0) from json_each(${words}) as w) = 1`,
  orderKey: (expression, descending) => descending ? sql`${expression} desc nulls first` : sql`${expression} asc nulls last`,
  asText: (value) => sql`cast(${value} as text)`,
  numericKeyValue: (text) => sql`cast(${text} as numeric)`,
  returningAlias: () => '',
  emptyInsert: 'default values',
  updateReturns: true,
  deleteAlias: (_table, alias) => alias,
  unionArm: (select) => sql`select * from ${select}`,
  lockRows: () => sql``,
  batches: (db, select, size) => windowBatches(db, select, size),
  estimate: countEstimate,
  estimatedRows: countedRows,
  converts: storedAsText,
  convertsValues: true,
  readStored: readTextStored,
  toStored: (attribute, value) => toTextStored('sqlite', attribute, value),
  storageError: storageErrorFromSqlite,
  fault: sqliteFault,
  // SQLite names no constraint in its errors: every write that links to rows checks them in its own statement.
  readForeignKeys: async (_db: Kysely<any>, _graph: ResourceGraph) => new EnforcedForeignKeys(new Map(), 0),
  readIntegerRanges,
  checkSchema: (db, graph) => checkDatabaseSchemaWith(db, graph, { readColumns, path: 'main', types: false }),
})
