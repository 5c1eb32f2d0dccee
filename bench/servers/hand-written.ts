/**
 * The baseline: the benchmark's five endpoints written by hand with Fastify 5 and Kysely, serving the same JSON:API
 * documents as the example application (fastify-jsonapi) does — same members, same links, same `display_name`,
 * dates as `YYYY-MM-DD` — with the same SQL shape: one query for the row or page, `count(*)` beside the page, one
 * query for the included computers (each user's first 10 by id, and their count: window functions). Nothing of fastify-jsonapi is imported.
 *
 * One file for every engine, on the database `BENCH_DATABASE_URL` names (`serve.ts`: Kysely's `PostgresDialect`,
 * `MysqlDialect` or `SqliteDialect`), with what a good hand-written route sends on each:
 *
 * - PostgreSQL: the included computers by `owner_id = any($1)`; a create reads its row back with a second statement
 *   (this server is the reference before plain `pg`, and stays as it was measured).
 * - MariaDB and SQLite (where this server is the reference): ids bound as numbers, the included computers by
 *   `owner_id in (?, ?, …)`, a create is one `INSERT … RETURNING` (MariaDB has it, but Kysely's `MysqlDialect` drops
 *   the rows a builder's `execute()` gets back, so the compiled statement runs through `executeQuery`). `users.words`
 *   is JSON text on SQLite, parsed into its array; on MariaDB it is a `json` column, which `mysql2` parses itself
 *   (the route parses it when it comes as text).
 *   A missing owner is a 404 from the foreign key violation on every engine.
 *
 * Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import { sql } from 'kysely'
import {
  DEFAULT_PAGE_SIZE, INCLUDE_PAGE_SIZE, INTEGER_ID, JSONAPI, MAX_PAGE_SIZE, MEDIA_TYPE, USER_COLUMNS, computerObject, computersOf, handWrittenApp,
  includesComputers, pageParameter, readNewComputer, sendError, userDocument, usersDocument, type Computers, type Query, type Row,
} from './documents.js'
import { benchDatabaseUrl, engineOfUrl, openDatabase, serve } from './serve.js'

// --- the application -------------------------------------------------------------------------------------------

const engine = engineOfUrl(benchDatabaseUrl())
const postgres = engine === 'postgres'
const db = await openDatabase()
const app = handWrittenApp()

/**
 * A user row of MariaDB or SQLite as the documents take it: `words` as its array. SQLite gives JSON text; `mysql2`
 * parses MariaDB's `json` column itself (unless its pool says `jsonStrings`).
 */
function parseWords (row: Row): Row {
  if (typeof row.words === 'string') row.words = JSON.parse(row.words)
  return row
}

/**
 * The computers of some users, as resource objects and as a page of linkage per user id: each user's first computers
 * by id, ranked and counted per owner in one statement.
 */
async function loadComputers (userIds: readonly string[]): Promise<Computers> {
  const ranked = db.selectFrom('computers')
    .select((eb) => [
      'id', 'serial', 'name', 'owner_id',
      eb.fn.agg<number>('row_number').over((over) => over.partitionBy('owner_id').orderBy('id')).as('rank'),
      eb.fn.countAll().over((over) => over.partitionBy('owner_id')).as('total'),
    ])
    .where('owner_id', postgres ? '=' : 'in', postgres ? sql<number>`any(${sql.val(userIds)})` : userIds.map(Number))
  const rows = await db.selectFrom(ranked.as('p'))
    .select(['p.id', 'p.serial', 'p.name', 'p.owner_id', 'p.total'])
    .where('p.rank', '<=', INCLUDE_PAGE_SIZE)
    .orderBy('p.id')
    .execute()
  return computersOf(userIds, rows)
}

/** A new computer, its row read back as the document needs it (`id`, `serial`, `name`). */
async function insertComputer (values: Row): Promise<Row> {
  if (postgres) {
    const inserted = await db.insertInto('computers').values(values).returning('id').executeTakeFirstOrThrow()
    return await db.selectFrom('computers').select(['id', 'serial', 'name']).where('id', '=', inserted.id).executeTakeFirstOrThrow()
  }
  const ownerId = values.owner_id as string | null
  const query = db.insertInto('computers').values({ ...values, owner_id: ownerId === null ? null : Number(ownerId) }).returning(['id', 'serial', 'name'])
  const { rows } = await db.executeQuery<Row>(query.compile())
  return rows[0]
}

/** Whether an insert failed on the owner's foreign key: the owner does not exist. */
function missingOwner (error: unknown): boolean {
  const code = (error as { code?: string }).code
  return engine === 'mysql' ? code === 'ER_NO_REFERENCED_ROW_2' : engine === 'sqlite' ? code === 'SQLITE_CONSTRAINT_FOREIGNKEY' : code === '23503'
}

app.get('/users/:id', async (request, reply) => {
  const { id } = request.params as { id: string }
  const include = includesComputers(request.query as Query)
  if (!INTEGER_ID.test(id) || Number(id) > 2147483647) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const row = await db.selectFrom('users').select(USER_COLUMNS).where('id', '=', postgres ? id : Number(id)).executeTakeFirst()
  if (row === undefined) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const document = userDocument(postgres ? row : parseWords(row), include ? await loadComputers([String(row.id)]) : undefined)
  return reply.type(MEDIA_TYPE).send(document)
})

app.get('/users', async (request, reply) => {
  const query = request.query as Query
  const include = includesComputers(query)
  const size = pageParameter(query, 'page[size]', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
  const number = pageParameter(query, 'page[number]', 1, 999999999)
  const [rows, total] = await Promise.all([
    (number > 1
      ? db.selectFrom('users').select(USER_COLUMNS).orderBy('id').limit(size).offset((number - 1) * size)
      : db.selectFrom('users').select(USER_COLUMNS).orderBy('id').limit(size)).execute(),
    db.selectFrom('users').select(sql<string>`count(*)`.as('count')).executeTakeFirstOrThrow(),
  ])
  const count = Number(total.count)
  const path = request.url.split('?')[0]
  const document = usersDocument(path, query, { number, size, count }, postgres ? rows : rows.map(parseWords), include ? await loadComputers(rows.map((row: Row) => String(row.id))) : undefined)
  return reply.type(MEDIA_TYPE).send(document)
})

app.post('/computers', async (request, reply) => {
  const values = readNewComputer(request.body)
  let row: Row
  try {
    row = await insertComputer(values)
  } catch (error) {
    if (missingOwner(error)) return sendError(reply, 404, 'Not found', `no 'user' with id '${values.owner_id}'`)
    throw error
  }
  const resource = computerObject(row)
  const self = `/computers/${row.id}`
  return reply.code(201).header('location', self).type(MEDIA_TYPE).send({ data: resource, links: { self }, jsonapi: JSONAPI })
})

try {
  await serve(app, () => db.destroy())
} catch (error) {
  console.error(error)
  await db.destroy().catch(() => {})
  process.exit(1)
}
