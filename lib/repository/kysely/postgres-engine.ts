import { CompiledQuery, expressionBuilder, sql, type Kysely } from 'kysely'
import type { Row } from '../../schema/fields.js'
import type { SqlEngine } from './sql-engine.js'
import { postgresFault } from './postgres-faults.js'
import { storageErrorFromPostgres } from './storage-error-from-postgres.js'
import { readEnforcedForeignKeys } from './enforced-foreign-keys.js'
import { readOrderedKeys } from './ordered-keys.js'
import { checkDatabaseSchema } from './check-database-schema.js'

/**
 * How many characters of a value `match` searches. PostgreSQL refuses to build a \`tsvector\` over 1 MB (SQLSTATE
 * 54000), which one stored value of distinct words can reach: every \`match\` over its row then failed, for every
 * client. 100,000 characters (at most 50,000 words) stay below it whatever the words.
 */
export const MATCH_TEXT_LENGTH = 100_000

const EB = expressionBuilder<any, any>()

/** The rows the top node of an `EXPLAIN (FORMAT JSON)` expects (`Plan Rows`), a non-negative integer. */
function plannedRows (rows: ReadonlyArray<Record<string, unknown>>): number {
  const value = rows[0]?.['QUERY PLAN']
  // node-postgres and PGlite parse the json column; a driver that does not gives its text.
  const explained = (typeof value === 'string' ? JSON.parse(value) : value) as Array<{ Plan?: Record<string, unknown> }> | undefined
  const planned = Array.isArray(explained) ? explained[0]?.Plan?.['Plan Rows'] : undefined
  if (typeof planned !== 'number' || !Number.isFinite(planned)) throw new Error('fastify-jsonapi: EXPLAIN gave no row estimate (`Plan Rows`)')
  return Math.max(0, Math.round(planned))
}

/** The rows of a SELECT through a server-side cursor of the transaction, `size` at a time. */
async function * cursorBatches (db: Kysely<any>, select: () => CompiledQuery, size: number, name: string): AsyncIterable<Row[]> {
  const query = select()
  await db.executeQuery(CompiledQuery.raw(`declare ${name} no scroll cursor for ${query.sql}`, [...query.parameters]))
  let open = true
  try {
    while (open) {
      const { rows } = await db.executeQuery<Row>(CompiledQuery.raw(`fetch forward ${size} from ${name}`))
      open = rows.length === size
      if (rows.length > 0) yield rows
    }
  } finally {
    // A scan stopped early (the client went away) closes its cursor; a finished one closes with its transaction.
    if (open) await db.executeQuery(CompiledQuery.raw(`close ${name}`)).catch(() => {})
  }
}

/**
 * PostgreSQL (and PGlite): lists bound as one array (`= any($1)`), `ilike`, full-text search with `websearch_to_tsquery`,
 * `FOR UPDATE OF`, server-side cursors, the planner's estimates, SQLSTATE codes, the `pg_catalog`.
 */
function same<T> (value: T): T {
  return value
}

export const POSTGRES: SqlEngine = Object.freeze<SqlEngine>({
  id: 'postgres',
  name: 'PostgreSQL',
  bind: (value) => value,
  likePattern: (_operator, pattern) => pattern,
  matchQuery: same,
  listParameters: 'array',
  inList: (column, negated, values) => negated
    ? EB(column, '<>', sql`all(${sql.val(values)})`)
    : EB(column, '=', sql`any(${sql.val(values)})`),
  like: (column, operator, pattern) => EB(column, operator, pattern),
  match: (column, query) =>
    sql<boolean>`to_tsvector('simple', left(${column}, ${sql.lit(MATCH_TEXT_LENGTH)})) @@ websearch_to_tsquery('simple', ${query})`,
  orderKey: (expression, descending) => descending ? sql`${expression} desc` : sql`${expression} asc`,
  asText: (value) => sql`${value}::text`,
  returningAlias: (alias) => alias,
  emptyInsert: 'default values',
  updateReturns: true,
  deleteAlias: (_table, alias) => alias,
  unionArm: (select) => select,
  lockRows: (alias) => sql`for update of ${sql.raw(alias)}`,
  batches: cursorBatches,
  estimate: (select) => CompiledQuery.raw(`explain (format json) ${select.sql}`, [...select.parameters]) as CompiledQuery<Record<string, unknown>>,
  estimatedRows: plannedRows,
  converts: () => false,
  convertsValues: false,
  readStored: (_attribute, value) => value,
  toStored: (_attribute, value) => value,
  storageError: storageErrorFromPostgres,
  fault: postgresFault,
  readForeignKeys: readEnforcedForeignKeys,
  readOrderedKeys,
  checkSchema: checkDatabaseSchema,
})
