/**
 * The baseline: the benchmark's five endpoints written by hand with Fastify 5 and Kysely, serving the same JSON:API
 * documents as the example application (fastify-jsonapi) does — same members, same links, same `display_name`,
 * dates as `YYYY-MM-DD` — with the same SQL shape: one query for the row or page, `count(*)` beside the page, one
 * query for the included computers (`owner_id = any($1)`). Nothing of fastify-jsonapi is imported.
 *
 * Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import Fastify, { type FastifyReply } from 'fastify'
import { sql } from 'kysely'
import { openDatabase, serve } from './serve.js'

const MEDIA_TYPE = 'application/vnd.api+json'
const JSONAPI = { version: '1.0' }
const USER_COLUMNS = ['id', 'name', 'first_name', 'last_name', 'email', 'age', 'status', 'birth_date', 'gender', 'words', 'date_create']
const USER_RELATIONSHIPS = ['computers', 'group', 'bio', 'posts', 'workplace', 'notes']
const COMPUTER_RELATIONSHIPS = ['owner', 'user']
const DEFAULT_PAGE_SIZE = 30
const MAX_PAGE_SIZE = 1000
const INTEGER_ID = /^(?:0|[1-9]\d{0,9})$/

type Row = Record<string, any>
type Query = Record<string, string | string[] | undefined>

// --- rendering -------------------------------------------------------------------------------------------------

function pad (value: number, length = 2): string {
  return String(value).padStart(length, '0')
}

/** `pg` reads a `date` as local midnight: print it back in local time. */
function formatDate (value: Date | null): string | null {
  if (value === null) return null
  return `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`
}

function present (value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

/** First and last name when both are set, the one that is set, else `name` (as in examples/app/resources.ts). */
function displayName (row: Row): string {
  const parts = [row.first_name, row.last_name].filter(present)
  if (parts.length > 0) return parts.join(' ')
  return row.name == null ? '' : String(row.name)
}

function relationshipLinks (self: string, names: readonly string[], data?: Record<string, unknown>): Record<string, unknown> {
  const relationships: Record<string, unknown> = {}
  for (const name of names) {
    const entry: Record<string, unknown> = { links: { self: `${self}/relationships/${name}`, related: `${self}/${name}` } }
    if (data !== undefined && name in data) entry.data = data[name]
    relationships[name] = entry
  }
  return relationships
}

/** A user resource object; `computers` is the linkage when computers are included. */
function userObject (row: Row, computers?: readonly string[]): Record<string, unknown> {
  const id = String(row.id)
  const self = `/users/${id}`
  return {
    type: 'user',
    id,
    attributes: {
      name: row.name,
      first_name: row.first_name,
      last_name: row.last_name,
      display_name: displayName(row),
      email: row.email,
      age: row.age,
      status: row.status,
      birth_date: formatDate(row.birth_date),
      gender: row.gender,
      words: row.words,
      date_create: formatDate(row.date_create),
    },
    links: { self },
    relationships: relationshipLinks(self, USER_RELATIONSHIPS, computers === undefined
      ? undefined
      : { computers: computers.map((computerId) => ({ type: 'computer', id: computerId })) }),
  }
}

function computerObject (row: Row): Record<string, unknown> {
  const id = String(row.id)
  const self = `/computers/${id}`
  return {
    type: 'computer',
    id,
    attributes: { serial: row.serial, name: row.name },
    links: { self },
    relationships: relationshipLinks(self, COMPUTER_RELATIONSHIPS),
  }
}

function encode (value: string): string {
  return encodeURIComponent(value).replace(/%2C/g, ',')
}

/** A page link: every other query parameter kept, `page[...]` last, `page[number]` only past the first page. */
function pageLink (path: string, query: Query, number: number): string {
  const parts: string[] = []
  const page: string[] = []
  for (const [name, value] of Object.entries(query)) {
    if (name === 'page[number]' || value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) (name.startsWith('page[') ? page : parts).push(`${encode(name)}=${encode(item)}`)
  }
  if (number > 1) page.push(`page%5Bnumber%5D=${number}`)
  parts.push(...page)
  return parts.length === 0 ? path : `${path}?${parts.join('&')}`
}

function paginationLinks (path: string, query: Query, number: number, size: number, count: number): Record<string, string> {
  const last = Math.max(1, Math.ceil(count / size))
  const links: Record<string, string> = { self: pageLink(path, query, number), first: pageLink(path, query, 1) }
  if (number > 1) links.prev = pageLink(path, query, Math.min(number - 1, last))
  if (number < last) links.next = pageLink(path, query, number + 1)
  links.last = pageLink(path, query, last)
  return links
}

function sendError (reply: FastifyReply, status: number, title: string, detail: string, source?: Record<string, string>): FastifyReply {
  return reply.code(status).type(MEDIA_TYPE).send({
    errors: [{ status: String(status), title, detail, ...(source === undefined ? {} : { source }) }],
    jsonapi: JSONAPI,
  })
}

class BadRequest extends Error {
  constructor (readonly parameter: string, message: string) {
    super(message)
  }
}

function single (query: Query, name: string): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) throw new BadRequest(name, `'${name}' may be given only once`)
  return value
}

/** `include` is empty or `computers` (the one relationship this baseline serves). */
function includesComputers (query: Query): boolean {
  const include = single(query, 'include')
  if (include === undefined || include === '') return false
  if (include === 'computers') return true
  throw new BadRequest('include', `'${include}' cannot be included here`)
}

function pageParameter (query: Query, name: string, fallback: number, max: number): number {
  const value = single(query, name)
  if (value === undefined) return fallback
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > max) throw new BadRequest(name, `'${value}' is out of range`)
  return Number(value)
}

// --- the application -------------------------------------------------------------------------------------------

const db = openDatabase()
const app = Fastify({ logger: false })
app.addContentTypeParser(MEDIA_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))
app.setErrorHandler((error, _request, reply) => {
  if (error instanceof BadRequest) return sendError(reply, 400, 'Invalid query parameter', error.message, { parameter: error.parameter })
  const status = (error as { statusCode?: number }).statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) return sendError(reply, status, 'Bad request', (error as Error).message)
  reply.log.error(error)
  return sendError(reply, 500, 'Internal server error', 'the server failed to handle the request')
})

/** The computers of some users, as resource objects and as linkage per user id. */
async function loadComputers (userIds: readonly string[]): Promise<{ included: Record<string, unknown>[]; linkage: Map<string, string[]> }> {
  const rows = await db.selectFrom('computers')
    .select(['id', 'serial', 'name', 'owner_id'])
    .where('owner_id', '=', sql<number>`any(${sql.val(userIds)})`)
    .orderBy('id')
    .execute()
  const linkage = new Map<string, string[]>(userIds.map((id) => [id, []]))
  const included = rows.map((row) => {
    linkage.get(String(row.owner_id))?.push(String(row.id))
    return computerObject(row)
  })
  return { included, linkage }
}

app.get('/users/:id', async (request, reply) => {
  const { id } = request.params as { id: string }
  const include = includesComputers(request.query as Query)
  if (!INTEGER_ID.test(id) || Number(id) > 2147483647) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const row = await db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst()
  if (row === undefined) return sendError(reply, 404, 'Not found', `no 'user' with id '${id}'`)
  const self = `/users/${row.id}`
  if (!include) return reply.type(MEDIA_TYPE).send({ data: userObject(row), links: { self }, jsonapi: JSONAPI })
  const { included, linkage } = await loadComputers([String(row.id)])
  const document: Record<string, unknown> = { data: userObject(row, linkage.get(String(row.id))), links: { self }, jsonapi: JSONAPI }
  if (included.length > 0) document.included = included
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
  let data: Record<string, unknown>[]
  let included: Record<string, unknown>[] = []
  if (include) {
    const computers = await loadComputers(rows.map((row) => String(row.id)))
    data = rows.map((row) => userObject(row, computers.linkage.get(String(row.id))))
    included = computers.included
  } else {
    data = rows.map((row) => userObject(row))
  }
  const document: Record<string, unknown> = {
    data,
    links: paginationLinks(path, query, number, size, count),
    jsonapi: JSONAPI,
    meta: { count },
  }
  if (included.length > 0) document.included = included
  return reply.type(MEDIA_TYPE).send(document)
})

function isObject (value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function nullableString (value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === 'string'
}

app.post('/computers', async (request, reply) => {
  const body = request.body
  const data = isObject(body) ? body.data : undefined
  if (!isObject(data)) return sendError(reply, 400, 'Invalid document', 'the body must be a document with a resource object in `data`')
  if (data.type !== 'computer') return sendError(reply, 409, 'Type conflict', 'the type must be \'computer\'')
  const attributes = data.attributes ?? {}
  if (!isObject(attributes)) return sendError(reply, 400, 'Invalid document', '`attributes` must be an object')
  for (const name of Object.keys(attributes)) {
    if (name !== 'serial' && name !== 'name') return sendError(reply, 422, 'Unknown field', `'${name}' is not an attribute of 'computer'`)
    if (!nullableString(attributes[name])) return sendError(reply, 422, 'Invalid value', `'${name}' must be a string or null`)
  }
  const relationships = data.relationships ?? {}
  if (!isObject(relationships)) return sendError(reply, 400, 'Invalid document', '`relationships` must be an object')
  let ownerId: string | null = null
  for (const name of Object.keys(relationships)) {
    const linkage = relationships[name]?.data
    if (name !== 'owner' && name !== 'user') return sendError(reply, 422, 'Unknown field', `'${name}' is not a relationship of 'computer'`)
    if (linkage === null) continue
    if (!isObject(linkage) || linkage.type !== 'user' || typeof linkage.id !== 'string') {
      return sendError(reply, 400, 'Invalid document', `'${name}' must be null or a 'user' identifier`)
    }
    if (!INTEGER_ID.test(linkage.id)) return sendError(reply, 404, 'Not found', `no 'user' with id '${linkage.id}'`)
    ownerId = linkage.id
  }
  const values: Row = { owner_id: ownerId }
  if ('serial' in attributes) values.serial = attributes.serial
  if ('name' in attributes) values.name = attributes.name
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
  await serve(app, db)
} catch (error) {
  console.error(error)
  await db.destroy().catch(() => {})
  process.exit(1)
}
