import { expressionBuilder, sql, type Kysely } from 'kysely'
import type { ResourceGraph } from '../../schema/resolved.js'
import { StorageError } from '../../contracts/repository.js'
import type { SqlEngine } from './sql-engine.js'
import { EnforcedForeignKeys, enforcedLinks, storedLinks } from './enforced-foreign-keys.js'
import { checkDatabaseSchemaWith } from './check-database-schema.js'
import { mysqlFault, storageErrorFromMysql } from './mysql-errors.js'
import { bindAsStored, readTextStored, storedAsText, toTextStored } from './text-stored-values.js'
import { countEstimate, countedRows, matchWords, windowBatches } from './emulated-sql.js'
import { INTEGER_TYPES, IntegerRanges, unsignedRange, type IntegerRange } from './integer-ranges.js'

const EB = expressionBuilder<any, any>()

/** A table as the declarations name it (`table` or `database.table`): its database (the connection's when none) and name. */
function splitTable (table: string): readonly [string | null, string] {
  const dot = table.lastIndexOf('.')
  return dot < 0 ? [null, table] : [table.slice(0, dot), table.slice(dot + 1)]
}

/** The columns (and their types) of those tables that exist, from `information_schema.columns`, in one query. */
async function readColumns (db: Kysely<any>, tables: readonly string[]): Promise<Map<string, Map<string, string>>> {
  const found = new Map<string, Map<string, string>>()
  if (tables.length === 0) return found
  const wanted = tables.map(splitTable)
  const { rows } = await sql<{ fja_schema: string, fja_table: string, fja_column: string, fja_type: string, fja_current: string }>`
    select table_schema as fja_schema, table_name as fja_table, column_name as fja_column, data_type as fja_type, database() as fja_current
    from information_schema.columns
    where ${sql.join(wanted.map(([schema, name]) => sql`(table_schema = ${schema ?? sql`database()`} and table_name = ${name})`), sql` or `)}
  `.execute(db)
  for (const row of rows) {
    const table = tables.find((item, at) => wanted[at][1] === row.fja_table && (wanted[at][0] ?? row.fja_current) === row.fja_schema)
    if (table === undefined) continue
    let columns = found.get(table)
    if (columns === undefined) found.set(table, columns = new Map())
    columns.set(row.fja_column, String(row.fja_type).toLowerCase())
  }
  return found
}

/**
 * The relationships stored in a row whose foreign key constraint enforces them: a single-column constraint of the
 * owner's table to the target's id column (InnoDB checks every statement; constraints cannot be deferred).
 */
async function readForeignKeys (db: Kysely<any>, graph: ResourceGraph): Promise<EnforcedForeignKeys> {
  const links = storedLinks(graph)
  if (links.length === 0) return new EnforcedForeignKeys(new Map(), 0)
  const { rows } = await sql<{ fja_schema: string, fja_table: string, fja_column: string, fja_target_schema: string, fja_target: string, fja_target_column: string, fja_constraint: string, fja_current: string }>`
    select k.table_schema as fja_schema, k.table_name as fja_table, k.column_name as fja_column,
      k.referenced_table_schema as fja_target_schema, k.referenced_table_name as fja_target, k.referenced_column_name as fja_target_column,
      k.constraint_name as fja_constraint, database() as fja_current
    from information_schema.key_column_usage k
    where k.referenced_table_name is not null
      and ${sql.join(links.map((link) => sql`(k.table_name = ${splitTable(link.table)[1]} and k.column_name = ${link.column})`), sql` or `)}
      and (select count(*) from information_schema.key_column_usage c
           where c.constraint_schema = k.constraint_schema and c.table_name = k.table_name and c.constraint_name = k.constraint_name) = 1
  `.execute(db)
  const found: Array<readonly [number, string]> = []
  links.forEach((link, at) => {
    const [schema, table] = splitTable(link.table)
    const [targetSchema, target] = splitTable(link.targetTable)
    for (const row of rows) {
      if (row.fja_table === table && row.fja_column === link.column && row.fja_schema === (schema ?? row.fja_current) &&
        row.fja_target === target && row.fja_target_column === link.targetColumn && row.fja_target_schema === (targetSchema ?? row.fja_current)) {
        found.push([at, row.fja_constraint])
      }
    }
  })
  return enforcedLinks(links, found)
}

/** The integer columns of the graph's tables (`information_schema.columns`) and the values each holds. */
async function readIntegerRanges (db: Kysely<any>, graph: ResourceGraph): Promise<IntegerRanges> {
  const tables = [...new Set(graph.resources.map((resource) => resource.table))]
  const columns = new Map<string, Map<string, IntegerRange>>()
  if (tables.length === 0) return new IntegerRanges(columns)
  const wanted = tables.map(splitTable)
  const { rows } = await sql<{ fja_schema: string, fja_table: string, fja_column: string, fja_type: string, fja_column_type: string, fja_current: string }>`
    select table_schema as fja_schema, table_name as fja_table, column_name as fja_column, data_type as fja_type,
      column_type as fja_column_type, database() as fja_current
    from information_schema.columns
    where data_type in ('tinyint', 'smallint', 'mediumint', 'int', 'bigint')
      and (${sql.join(wanted.map(([schema, name]) => sql`(table_schema = ${schema ?? sql`database()`} and table_name = ${name})`), sql` or `)})
  `.execute(db)
  for (const row of rows) {
    const table = tables.find((item, at) => wanted[at][1] === row.fja_table && (wanted[at][0] ?? row.fja_current) === row.fja_schema)
    const signed = INTEGER_TYPES[String(row.fja_type).toLowerCase()]
    if (table === undefined || signed === undefined) continue
    let ranges = columns.get(table)
    if (ranges === undefined) columns.set(table, ranges = new Map())
    ranges.set(row.fja_column, /unsigned/i.test(String(row.fja_column_type)) ? unsignedRange(signed) : signed)
  }
  return new IntegerRanges(columns)
}

/**
 * A unique violation completed from the catalog: MariaDB names only the index (`Duplicate entry '1' for key
 * 'user_id'`), and the columns (the member a client is pointed at) are those of that index of the written table.
 */
async function completeError (db: Kysely<any>, error: unknown, table: string): Promise<unknown> {
  if (!(error instanceof StorageError) || error.kind !== 'unique' || error.columns.length > 0 || error.constraint === undefined) return error
  const [schema, name] = splitTable(table)
  try {
    const { rows } = await sql<{ fja_column: string }>`
      select column_name as fja_column from information_schema.statistics
      where table_schema = ${schema ?? sql`database()`} and table_name = ${name} and index_name = ${error.constraint}
      order by seq_in_index
    `.execute(db)
    if (rows.length === 0) return error
    return new StorageError('unique', error.message, { table: name, constraint: error.constraint, columns: rows.map((row) => row.fja_column), cause: error.cause })
  } catch {
    return error
  }
}

/**
 * MariaDB (10.6 or newer) and MySQL through `mysql2`: lists bound one parameter per value (`in (?, ?)`), `like`
 * case-sensitive and `ilike` case-insensitive whatever the column's collation (`utf8mb4_bin` comparisons), `match` as
 * "contains every word" (`JSON_TABLE`), NULLs ordered as PostgreSQL orders them (`e is null, e`), `FOR UPDATE`, no
 * `RETURNING` on `UPDATE` (the row is read back), unpaged reads window by window, exact counts where PostgreSQL
 * estimates, booleans, arrays and JSON converted, `information_schema` for the catalog.
 */
export const MYSQL: SqlEngine = Object.freeze<SqlEngine>({
  id: 'mysql',
  name: 'MariaDB/MySQL',
  bind: (value, attribute) => bindAsStored('mysql', value, attribute),
  likePattern: (_operator, pattern) => pattern,
  matchQuery: matchWords,
  listParameters: 'each',
  inList: (column, negated, values) => EB(column, negated ? 'not in' : 'in', [...values]),
  like: (column, operator, pattern) => {
    switch (operator) {
      case 'like': return sql<boolean>`${column} like (${pattern} collate utf8mb4_bin)`
      case 'not like': return sql<boolean>`${column} not like (${pattern} collate utf8mb4_bin)`
      case 'ilike': return sql<boolean>`lower(${column}) like (lower(${pattern}) collate utf8mb4_bin)`
      case 'not ilike': return sql<boolean>`lower(${column}) not like (lower(${pattern}) collate utf8mb4_bin)`
    }
  },
  // Every word of the query in the value, case-insensitively; no word: nothing matches, as on PostgreSQL.
  match: (column, words) =>
    sql<boolean>`(select min(instr(lower(${column}), w.fja_word collate utf8mb4_bin) > 0) from json_table(${words}, '$[*]' columns (fja_word varchar(1000) character set utf8mb4 path '$')) as w) = 1`,
  orderKey: (expression, descending) => descending
    ? sql`${expression} is null desc, ${expression} desc`
    : sql`${expression} is null, ${expression} asc`,
  asText: (value) => sql`cast(${value} as char)`,
  returningAlias: (alias) => alias,
  emptyInsert: 'empty values',
  updateReturns: false,
  // A single-table DELETE names its table by name: MariaDB takes no alias there.
  deleteAlias: (table) => table,
  unionArm: (select) => select,
  lockRows: () => sql`for update`,
  batches: (db, select, size) => windowBatches(db, select, size),
  estimate: countEstimate,
  estimatedRows: countedRows,
  converts: storedAsText,
  convertsValues: true,
  readStored: readTextStored,
  toStored: (attribute, value) => toTextStored('mysql', attribute, value),
  storageError: storageErrorFromMysql,
  completeError,
  fault: mysqlFault,
  readForeignKeys,
  readIntegerRanges,
  checkSchema: (db, graph) => checkDatabaseSchemaWith(db, graph, {
    readColumns,
    path: async (db) => String((await sql<{ fja_database: string }>`select database() as fja_database`.execute(db)).rows[0]?.fja_database ?? ''),
    types: false,
  }),
})
