/**
 * The reference: the benchmark's five endpoints written by hand with Fastify 5 on plain `pg` — literal SQL strings
 * with parameters through `pool.query`, no query builder, the document built as an object and sent as the string of
 * `JSON.stringify` — serving the same documents as the example application (fastify-jsonapi), byte for byte. It is the
 * practical limit for generic code: what a developer writes for one endpoint when speed is all that matters.
 *
 * The statements are the library's in number and shape: one for the row, the page ∥ `count(*)`, one per included
 * relationship (`owner_id = any($1)`, each owner's first 10 by `row_number()`, counted by `count(*) over`), and one `INSERT … RETURNING` for a create (a missing owner is a 404 from the
 * foreign key violation). Nothing of fastify-jsonapi is imported.
 *
 * Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import type { FastifyReply } from 'fastify'
import {
  DEFAULT_PAGE_SIZE, INCLUDE_PAGE_SIZE, INTEGER_ID, JSONAPI, MAX_PAGE_SIZE, MEDIA_TYPE, computerObject, computersOf, handWrittenApp,
  includesComputers, pageParameter, readNewComputer, sendError, userDocument, usersDocument, type Computers, type Query,
  type Row,
} from './documents.js'
import { openPool, serve } from './serve.js'

const USER_SELECT = 'select "id", "name", "first_name", "last_name", "email", "age", "status", "birth_date", "gender", "words", "date_create" from "users"'
const READ_USER = `${USER_SELECT} where "id" = $1`
const FIRST_PAGE = `${USER_SELECT} order by "id" limit $1`
const LATER_PAGE = `${USER_SELECT} order by "id" limit $1 offset $2`
const COUNT_USERS = 'select count(*) as "count" from "users"'
// Each user's first computers by id, and how many the user has: ranked and counted per owner in one statement.
const COMPUTERS_OF = 'select "id", "serial", "name", "owner_id", "total" from (' +
  'select "id", "serial", "name", "owner_id", row_number() over (partition by "owner_id" order by "id") as "rank", ' +
  'count(*) over (partition by "owner_id") as "total" from "computers" where "owner_id" = any($1)' +
  ') as "p" where "rank" <= $2 order by "id"'
const CREATE_COMPUTER = 'insert into "computers" ("owner_id", "serial", "name") values ($1, $2, $3) returning "id", "serial", "name"'

const pool = openPool()
const app = handWrittenApp()

function send (reply: FastifyReply, document: Record<string, unknown>): FastifyReply {
  return reply.type(MEDIA_TYPE).send(JSON.stringify(document))
}

/** The computers of some users, as resource objects and as linkage per user id. */
async function loadComputers (userIds: readonly string[]): Promise<Computers> {
  const { rows } = await pool.query(COMPUTERS_OF, [userIds, INCLUDE_PAGE_SIZE])
  return computersOf(userIds, rows)
}

app.get('/users/:id', async (request, reply) => {
  const { id } = request.params as { id: string }
  const include = includesComputers(request.query as Query)
  if (!INTEGER_ID.test(id) || Number(id) > 2147483647) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const { rows } = await pool.query(READ_USER, [id])
  const row: Row | undefined = rows[0]
  if (row === undefined) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const document = userDocument(row, include ? await loadComputers([String(row.id)]) : undefined)
  return send(reply, document)
})

app.get('/users', async (request, reply) => {
  const query = request.query as Query
  const include = includesComputers(query)
  const size = pageParameter(query, 'page[size]', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
  const number = pageParameter(query, 'page[number]', 1, 999999999)
  const [page, total] = await Promise.all([
    number > 1 ? pool.query(LATER_PAGE, [size, (number - 1) * size]) : pool.query(FIRST_PAGE, [size]),
    pool.query(COUNT_USERS),
  ])
  const rows: Row[] = page.rows
  const count = Number(total.rows[0].count)
  const path = request.url.split('?')[0]
  const document = usersDocument(path, query, { number, size, count }, rows, include ? await loadComputers(rows.map((row: Row) => String(row.id))) : undefined)
  return send(reply, document)
})

app.post('/computers', async (request, reply) => {
  const values = readNewComputer(request.body)
  let row: Row
  try {
    ({ rows: [row] } = await pool.query(CREATE_COMPUTER, [values.owner_id, values.serial ?? null, values.name ?? null]))
  } catch (error) {
    // 23503: the owner does not exist.
    if ((error as { code?: string }).code === '23503') return sendError(reply, 404, 'Not found', `no 'user' with id '${values.owner_id}'`)
    throw error
  }
  const self = `/computers/${row.id}`
  return reply.code(201).header('location', self).type(MEDIA_TYPE).send(JSON.stringify({ data: computerObject(row), links: { self }, jsonapi: JSONAPI }))
})

try {
  await serve(app, () => pool.end())
} catch (error) {
  console.error(error)
  await pool.end().catch(() => {})
  process.exit(1)
}
