/**
 * The baseline: the benchmark's five endpoints written by hand with Fastify 5 and Kysely, serving the same JSON:API
 * documents as the example application (fastify-jsonapi) does — same members, same links, same `display_name`,
 * dates as `YYYY-MM-DD` — with the same SQL shape: one query for the row or page, `count(*)` beside the page, one
 * query for the included computers (`owner_id = any($1)`). Nothing of fastify-jsonapi is imported.
 *
 * Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import { sql } from 'kysely'
import {
  DEFAULT_PAGE_SIZE, INTEGER_ID, JSONAPI, MAX_PAGE_SIZE, MEDIA_TYPE, USER_COLUMNS, computerObject, computersOf, handWrittenApp,
  includesComputers, pageParameter, readNewComputer, sendError, userDocument, usersDocument, type Computers, type Query, type Row,
} from './documents.js'
import { openDatabase, serve } from './serve.js'

// --- the application -------------------------------------------------------------------------------------------

const db = openDatabase()
const app = handWrittenApp()

/** The computers of some users, as resource objects and as linkage per user id. */
async function loadComputers (userIds: readonly string[]): Promise<Computers> {
  const rows = await db.selectFrom('computers')
    .select(['id', 'serial', 'name', 'owner_id'])
    .where('owner_id', '=', sql<number>`any(${sql.val(userIds)})`)
    .orderBy('id')
    .execute()
  return computersOf(userIds, rows)
}

app.get('/users/:id', async (request, reply) => {
  const { id } = request.params as { id: string }
  const include = includesComputers(request.query as Query)
  if (!INTEGER_ID.test(id) || Number(id) > 2147483647) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const row = await db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst()
  if (row === undefined) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const document = userDocument(row, include ? await loadComputers([String(row.id)]) : undefined)
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
  const document = usersDocument(path, query, { number, size, count }, rows, include ? await loadComputers(rows.map((row: Row) => String(row.id))) : undefined)
  return reply.type(MEDIA_TYPE).send(document)
})

app.post('/computers', async (request, reply) => {
  const values = readNewComputer(request.body)
  const ownerId = values.owner_id as string | null
  let inserted: Row
  try {
    inserted = await db.insertInto('computers').values(values).returning('id').executeTakeFirstOrThrow()
  } catch (error) {
    // 23503: the owner does not exist.
    if ((error as { code?: string }).code === '23503') return sendError(reply, 404, 'Not found', `no 'user' with id '${ownerId}'`)
    throw error
  }
  const row = await db.selectFrom('computers').select(['id', 'serial', 'name']).where('id', '=', inserted.id).executeTakeFirstOrThrow()
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
