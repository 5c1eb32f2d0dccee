/**
 * What the hand-written benchmark servers share: the documents they render (the same members, links,
 * `display_name` and `YYYY-MM-DD` dates as the example application), their query-parameter checks and their error
 * documents. Nothing of fastify-jsonapi is imported.
 */
import { createHmac } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'

export const MEDIA_TYPE = 'application/vnd.api+json'
export const JSONAPI = { version: '1.0' }
export const USER_COLUMNS = ['id', 'name', 'first_name', 'last_name', 'email', 'age', 'status', 'birth_date', 'gender', 'words', 'date_create']
export const USER_RELATIONSHIPS = ['computers', 'group', 'bio', 'posts', 'workplace', 'notes']
export const COMPUTER_RELATIONSHIPS = ['owner', 'user']
export const DEFAULT_PAGE_SIZE = 30
export const MAX_PAGE_SIZE = 1000
export const INTEGER_ID = /^(?:0|[1-9]\d{0,9})$/
/** The most computers of one user in an include (the library's default `include.pageSize`). */
export const INCLUDE_PAGE_SIZE = 10
/** The secret every benchmark server signs cursors with (the library's `pagination.cursorSecret`). */
export const BENCH_CURSOR_SECRET = 'fastify-jsonapi benchmark: the cursors of every server alike'

export type Row = Record<string, any>
export type Query = Record<string, string | string[] | undefined>

// --- rendering -------------------------------------------------------------------------------------------------

export function pad (value: number, length = 2): string {
  return String(value).padStart(length, '0')
}

/**
 * A `date` as `YYYY-MM-DD`. `pg` reads one as local midnight: print it back in local time. MariaDB (`mysql2` with
 * `dateStrings: ['DATE']`) and SQLite (text) read it as that text already.
 */
export function formatDate (value: Date | string | null): string | null {
  if (value === null || typeof value === 'string') return value
  return `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`
}

export function present (value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

/** First and last name when both are set, the one that is set, else `name` (as in examples/app/resources.ts). */
export function displayName (row: Row): string {
  const parts = [row.first_name, row.last_name].filter(present)
  if (parts.length > 0) return parts.join(' ')
  return row.name == null ? '' : String(row.name)
}

/** The relationship objects of a resource; `included` holds the page of each included relationship. */
export function relationshipLinks (self: string, names: readonly string[], included?: Record<string, IncludedPage>): Record<string, unknown> {
  const relationships: Record<string, unknown> = {}
  for (const name of names) {
    const links: Record<string, string> = { self: `${self}/relationships/${name}`, related: `${self}/${name}` }
    const entry: Record<string, unknown> = { links }
    const page = included?.[name]
    if (page !== undefined) {
      if (page.next !== undefined) links.next = `${self}/relationships/${name}?page%5Bsize%5D=${INCLUDE_PAGE_SIZE}&page%5Bafter%5D=${page.next}`
      entry.data = page.data
      entry.meta = { count: page.count }
    }
    relationships[name] = entry
  }
  return relationships
}

/** An included to-many relationship of one owner: its page of linkage, its count, the cursor after its page. */
export interface IncludedPage {
  readonly data: ReadonlyArray<{ type: string; id: string }>
  readonly count: number
  readonly next?: string
}

/**
 * The cursor of the relationship route's page after a related id (the cursor pagination profile, as the library
 * writes it): `base64url(JSON [[id]]) "." base64url(HMAC-SHA256(secret, purpose \n context \n payload))`, the context
 * being the route's collection, its order (`id`) and no filter.
 */
export function cursorAfter (collection: string, id: string): string {
  const payload = Buffer.from(JSON.stringify([[id]]), 'utf8').toString('base64url')
  const context = JSON.stringify([collection, 'id', null])
  const mac = createHmac('sha256', BENCH_CURSOR_SECRET).update(`fastify-jsonapi cursor v1\n${context}\n${payload}`).digest('base64url')
  return `${payload}.${mac}`
}

/** A user resource object; `computers` is its page of linkage when computers are included. */
export function userObject (row: Row, computers?: ComputersPage): Record<string, unknown> {
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
      : {
          computers: {
            data: computers.ids.map((computerId) => ({ type: 'computer', id: computerId })),
            count: computers.count,
            ...(computers.count > computers.ids.length ? { next: cursorAfter(`user/${id}/relationships/computers`, computers.ids[computers.ids.length - 1]) } : {}),
          },
        }),
  }
}

export function computerObject (row: Row): Record<string, unknown> {
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

export function encode (value: string): string {
  return encodeURIComponent(value).replace(/%2C/g, ',')
}

/** A page link: every other query parameter kept, `page[...]` last, `page[number]` only past the first page. */
export function pageLink (path: string, query: Query, number: number): string {
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

export function paginationLinks (path: string, query: Query, number: number, size: number, count: number): Record<string, string> {
  const last = Math.max(1, Math.ceil(count / size))
  const links: Record<string, string> = { self: pageLink(path, query, number), first: pageLink(path, query, 1) }
  if (number > 1) links.prev = pageLink(path, query, Math.min(number - 1, last))
  if (number < last) links.next = pageLink(path, query, number + 1)
  links.last = pageLink(path, query, last)
  return links
}

export function sendError (reply: FastifyReply, status: number, title: string, detail: string, source?: Record<string, string>): FastifyReply {
  return reply.code(status).type(MEDIA_TYPE).send({
    errors: [{ status: String(status), title, detail, ...(source === undefined ? {} : { source }) }],
    jsonapi: JSONAPI,
  })
}

export class BadRequest extends Error {
  constructor (readonly parameter: string, message: string) {
    super(message)
  }
}

export function single (query: Query, name: string): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) throw new BadRequest(name, `'${name}' may be given only once`)
  return value
}

/** `include` is empty or `computers` (the one relationship this baseline serves). */
export function includesComputers (query: Query): boolean {
  const include = single(query, 'include')
  if (include === undefined || include === '') return false
  if (include === 'computers') return true
  throw new BadRequest('include', `'${include}' cannot be included here`)
}

export function pageParameter (query: Query, name: string, fallback: number, max: number): number {
  const value = single(query, name)
  if (value === undefined) return fallback
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > max) throw new BadRequest(name, `'${value}' is out of range`)
  return Number(value)
}

/** A client error in a request body: the status, title and detail of its error document. */
export class DocumentError extends Error {
  constructor (readonly status: number, readonly title: string, detail: string) {
    super(detail)
  }
}

export function isObject (value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function nullableString (value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === 'string'
}

/** The columns of a new computer from a `POST /computers` body; throws a {@link DocumentError} when it is invalid. */
export function readNewComputer (body: unknown): Row {
  const data = isObject(body) ? body.data : undefined
  if (!isObject(data)) throw new DocumentError(400, 'Invalid document', 'the body must be a document with a resource object in `data`')
  if (data.type !== 'computer') throw new DocumentError(409, 'Type conflict', 'the type must be \'computer\'')
  const attributes = data.attributes ?? {}
  if (!isObject(attributes)) throw new DocumentError(400, 'Invalid document', '`attributes` must be an object')
  for (const name of Object.keys(attributes)) {
    if (name !== 'serial' && name !== 'name') throw new DocumentError(422, 'Unknown field', `'${name}' is not an attribute of 'computer'`)
    if (!nullableString(attributes[name])) throw new DocumentError(422, 'Invalid value', `'${name}' must be a string or null`)
  }
  const relationships = data.relationships ?? {}
  if (!isObject(relationships)) throw new DocumentError(400, 'Invalid document', '`relationships` must be an object')
  let ownerId: string | null = null
  for (const name of Object.keys(relationships)) {
    const linkage = relationships[name]?.data
    if (name !== 'owner' && name !== 'user') throw new DocumentError(422, 'Unknown field', `'${name}' is not a relationship of 'computer'`)
    if (linkage === null) continue
    if (!isObject(linkage) || linkage.type !== 'user' || typeof linkage.id !== 'string') {
      throw new DocumentError(400, 'Invalid document', `'${name}' must be null or a 'user' identifier`)
    }
    if (!INTEGER_ID.test(linkage.id)) throw new DocumentError(404, 'Not found', `no 'user' with id '${linkage.id}'`)
    ownerId = linkage.id
  }
  const values: Row = { owner_id: ownerId }
  if ('serial' in attributes) values.serial = attributes.serial
  if ('name' in attributes) values.name = attributes.name
  return values
}

/** A Fastify app that parses JSON:API bodies and answers thrown client errors with JSON:API error documents. */
export function handWrittenApp (): FastifyInstance {
  const app = Fastify({ logger: false })
  app.addContentTypeParser(MEDIA_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof DocumentError) return sendError(reply, error.status, error.title, error.message)
    if (error instanceof BadRequest) return sendError(reply, 400, 'Invalid query parameter', error.message, { parameter: error.parameter })
    const status = (error as { statusCode?: number }).statusCode
    if (typeof status === 'number' && status >= 400 && status < 500) return sendError(reply, status, 'Bad request', (error as Error).message)
    reply.log.error(error)
    return sendError(reply, 500, 'Internal server error', 'the server failed to handle the request')
  })
  return app
}

/** One user's page of included computers: their ids (the first by id) and how many the user has. */
export interface ComputersPage {
  readonly ids: string[]
  count: number
}

/** Included computers: their resource objects, and each user's page of them. */
export interface Computers {
  readonly included: Record<string, unknown>[]
  readonly linkage: Map<string, ComputersPage>
}

/**
 * The computers of some users (each user's first {@link INCLUDE_PAGE_SIZE} by id, rows with `owner_id` and the
 * user's `total`), as resource objects and as a page of linkage per user id.
 */
export function computersOf (userIds: readonly string[], rows: readonly Row[]): Computers {
  const linkage = new Map<string, ComputersPage>(userIds.map((id) => [id, { ids: [], count: 0 }]))
  const included = rows.map((row) => {
    const page = linkage.get(String(row.owner_id))
    if (page !== undefined) {
      page.ids.push(String(row.id))
      page.count = Number(row.total)
    }
    return computerObject(row)
  })
  return { included, linkage }
}

/** The document of one user, with its computers when they are included. */
export function userDocument (row: Row, computers?: Computers): Record<string, unknown> {
  const document: Record<string, unknown> = {
    data: userObject(row, computers?.linkage.get(String(row.id))),
    links: { self: `/users/${row.id}` },
    jsonapi: JSONAPI,
  }
  if (computers !== undefined && computers.included.length > 0) document.included = computers.included
  return document
}

/** The document of a page of users, with their computers when they are included. */
export function usersDocument (path: string, query: Query, page: { number: number; size: number; count: number }, rows: readonly Row[], computers?: Computers): Record<string, unknown> {
  const document: Record<string, unknown> = {
    data: rows.map((row) => userObject(row, computers?.linkage.get(String(row.id)))),
    links: paginationLinks(path, query, page.number, page.size, page.count),
    jsonapi: JSONAPI,
    meta: { count: page.count },
  }
  if (computers !== undefined && computers.included.length > 0) document.included = computers.included
  return document
}
