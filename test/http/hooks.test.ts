// Resource hooks on an application of their own: what each hook receives, what it may change, how it refuses (and
// where its error points, also inside operations), that `after*` hooks run inside the write's transaction, and that
// the context is derived once per request and once per operations batch.
import t, { type Test } from 'tap'
import type { InjectOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { defineResourceFor, jsonApi, JsonApiError } from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError, type ExpectedError } from '../helpers/assert-errors.js'
import { emptyTables as emptyTablesOf, testEngine } from '../helpers/engine.js'

const database = await openTestDatabase()
t.teardown(() => database.close())
const db = database.db

const engine = testEngine()

/** A new table; on MariaDB in `utf8mb4` compared by code point. */
function tableOf (name: string) {
  return engine === 'mysql' ? db.schema.createTable(name).modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : db.schema.createTable(name)
}

/** A table with its `id` column as each engine assigns ids: `serial`, `integer auto_increment`, `integer primary key autoincrement`. */
function createTable (name: string) {
  const table = tableOf(name)
  return engine === 'postgres'
    ? table.addColumn('id', 'serial', (col) => col.primaryKey())
    : table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
}

await createTable('h_authors').addColumn('name', 'text', (col) => col.notNull()).execute()
await createTable('h_books')
  .addColumn('title', 'text', (col) => col.notNull())
  .addColumn('pages', 'integer')
  .addColumn('slug', 'text', (col) => col.notNull())
  .addColumn('secret', 'text')
  .addColumn('author_id', 'integer', (col) => col.references('h_authors.id').onDelete('set null'))
  .execute()
await createTable('h_shelves').addColumn('name', 'text', (col) => col.notNull()).execute()
await tableOf('h_shelf_books')
  .addColumn('book_id', 'integer', (col) => col.notNull().references('h_books.id').onDelete('cascade'))
  .addColumn('shelf_id', 'integer', (col) => col.notNull().references('h_shelves.id').onDelete('cascade'))
  .addPrimaryKeyConstraint('h_shelf_books_pkey', ['book_id', 'shelf_id'])
  .execute()
await createTable('h_audit').addColumn('entry', 'text', (col) => col.notNull()).execute()
/** The tables, those that others point at last. */
const TABLES = ['h_shelf_books', 'h_audit', 'h_books', 'h_shelves', 'h_authors']

interface Context { readonly actor: string }
const define = defineResourceFor<Context>()

/** What the hooks saw, in order. */
const calls: unknown[][] = []
let contexts = 0

function slugOf (title: string): string {
  return title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
}

const author = define({
  type: 'author',
  path: '/authors',
  table: 'h_authors',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { books: { kind: 'to-many', type: 'book', inverse: 'author' } },
})

const book = define({
  type: 'book',
  path: '/books',
  table: 'h_books',
  attributes: {
    title: { schema: Type.String({ minLength: 1 }), required: true },
    pages: { schema: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]) },
    slug: { schema: Type.String(), readOnly: true },
    secret: { schema: Type.Union([Type.String(), Type.Null()]), hidden: true, readOnly: true },
  },
  relationships: {
    author: { kind: 'to-one', type: 'author', foreignKey: 'author_id' },
    shelves: { kind: 'to-many', type: 'shelf', through: { table: 'h_shelf_books', sourceKey: 'book_id', targetKey: 'shelf_id' } },
  },
  hooks: {
    beforeCreate (input, event) {
      calls.push(['beforeCreate', event.context.actor, structuredClone(input)])
      if (input.attributes.title === 'refuse') {
        throw new JsonApiError({ status: 422, code: 'APP_TITLE', detail: 'no such title', source: { pointer: '/data/attributes/title' } })
      }
      if (input.attributes.title === 'plain') {
        // an error of another library (http-errors, @fastify/sensible): a status and a code, no JSON:API members
        throw Object.assign(new Error('plain titles are refused'), { statusCode: 403, code: 'APP_PLAIN' })
      }
      if (input.attributes.title === 'wrong name') return { ...input, attributes: { ...input.attributes, colour: 'red' } as never }
      if (input.attributes.title === 'wrong value') return { ...input, attributes: { ...input.attributes, pages: 'many' as never } }
      if (input.attributes.title === 'replace') {
        return { id: undefined, attributes: { title: 'replaced', slug: 'replaced', secret: null }, relationships: { author: '2' } }
      }
      input.attributes.slug = slugOf(input.attributes.title ?? '')
      input.attributes.secret = `by ${event.context.actor}`
      input.relationships.author ??= '1'
    },
    async beforeUpdate (input, event) {
      const current = await event.current()
      calls.push(['beforeUpdate', event.context.actor, event.id, structuredClone(input), current])
      if (current.attributes.title === 'locked') {
        throw new JsonApiError({ status: 403, code: 'APP_LOCKED', detail: 'this book is locked', source: { pointer: '/data' } })
      }
      if (input.attributes.title !== undefined) input.attributes.slug = slugOf(input.attributes.title)
    },
    async beforeDelete (event) {
      const current = await event.current()
      calls.push(['beforeDelete', event.id, current.attributes.pages])
      if ((current.attributes.pages ?? 0) > 100) throw new JsonApiError({ status: 409, code: 'APP_TOO_BIG', detail: 'too big to delete' })
    },
    beforeLink (change, event) {
      calls.push(['beforeLink', event.id, change.relationship, change.op, change.ids])
      if (change.relationship === 'shelves' && change.ids?.includes('3') === true) {
        throw new JsonApiError({ status: 403, code: 'APP_SHELF', detail: 'shelf 3 is closed' })
      }
    },
    async afterCreate (stored, event) {
      calls.push(['afterCreate', stored])
      await event.db.insertInto('h_audit').values({ entry: `created ${stored.id} ${stored.attributes.title}` }).execute()
      if (stored.attributes.title === 'boom') throw new JsonApiError({ status: 409, code: 'APP_BOOM', detail: 'after create failed' })
    },
    async afterUpdate (stored, event) {
      calls.push(['afterUpdate', stored.id, stored.attributes.title])
      await event.db.insertInto('h_audit').values({ entry: `updated ${stored.id}` }).execute()
      if (stored.attributes.title === 'boom') throw new JsonApiError({ status: 409, code: 'APP_BOOM', detail: 'after update failed' })
    },
    async afterDelete (event) {
      calls.push(['afterDelete', event.id])
      await event.db.insertInto('h_audit').values({ entry: `deleted ${event.id}` }).execute()
      if (event.id === '2') throw new JsonApiError({ status: 409, code: 'APP_BOOM', detail: 'after delete failed' })
    },
  },
})

const shelf = define({
  type: 'shelf',
  path: '/shelves',
  table: 'h_shelves',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { books: { kind: 'to-many', type: 'book', through: { table: 'h_shelf_books', sourceKey: 'shelf_id', targetKey: 'book_id' } } },
})

const app = await documentedFastify()
await app.register(jsonApi, {
  db,
  resources: [author, book, shelf],
  context: (request) => {
    contexts++
    return { actor: String(request.headers['x-actor'] ?? 'nobody') }
  },
})
await app.ready()
t.teardown(() => app.close())

type Response = TestResponse

function send (method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return injectJsonApi(app, method, url, { body, headers: { 'x-actor': 'ann', ...headers } })
}

async function snapshot (): Promise<Record<string, unknown[]>> {
  const tables: Record<string, unknown[]> = {}
  for (const table of TABLES) {
    tables[table] = engine === 'postgres'
      ? (await sql<{ row: unknown }>`select to_jsonb(t) as row from ${sql.table(table)} t order by 1::text`.execute(db)).rows.map((row) => row.row)
      : await db.selectFrom(table).selectAll().execute()
  }
  for (const rows of Object.values(tables)) rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
  return tables
}

/** A request that must fail with `expected` and leave every table as it was. */
async function failsUnchanged (t: Test, method: InjectOptions['method'], url: string, body: unknown, expected: ExpectedError): Promise<Response> {
  const before = await snapshot()
  const response = await send(method, url, body)
  assertError(t, response, expected)
  t.same(await snapshot(), before, 'nothing written')
  return response
}

/** Empties every table and starts its ids again at 1. */
async function emptyTables (): Promise<void> {
  await emptyTablesOf(db, TABLES)
}

t.beforeEach(async () => {
  await emptyTables()
  await db.insertInto('h_authors').values([{ name: 'ann' }, { name: 'bob' }]).execute()
  await db.insertInto('h_books').values([
    { title: 'first', pages: 10, slug: 'first', secret: 's1', author_id: 1 },
    { title: 'locked', pages: 500, slug: 'locked', secret: null, author_id: 2 },
  ]).execute()
  await db.insertInto('h_shelves').values([{ name: 'a' }, { name: 'b' }, { name: 'c' }]).execute()
  await db.insertInto('h_shelf_books').values([{ book_id: 1, shelf_id: 1 }]).execute()
  calls.length = 0
  contexts = 0
})

t.test('beforeCreate receives the typed input and the context, and may set read-only, hidden and relationship values', async (t) => {
  const response = await send('POST', '/books?include=author', { data: { type: 'book', attributes: { title: 'A Good Book', pages: 12 } } })
  t.equal(response.status, 201)
  t.same(response.body.data.attributes, { title: 'A Good Book', pages: 12, slug: 'a-good-book' }, 'the hidden attribute is not rendered')
  t.same(response.body.data.relationships.author.data, { type: 'author', id: '1' }, 'the relationship the hook set')
  t.same(calls[0], ['beforeCreate', 'ann', { id: undefined, attributes: { title: 'A Good Book', pages: 12 }, relationships: {} }])
  const row = await db.selectFrom('h_books').selectAll().where('id', '=', 3).executeTakeFirstOrThrow()
  t.same(row, { id: 3, title: 'A Good Book', pages: 12, slug: 'a-good-book', secret: 'by ann', author_id: 1 })
  t.same(calls[1], ['afterCreate', { id: '3', attributes: { title: 'A Good Book', pages: 12, slug: 'a-good-book', secret: 'by ann' } }], 'afterCreate sees every attribute as stored')
  t.same(await db.selectFrom('h_audit').select('entry').execute(), [{ entry: 'created 3 A Good Book' }])
})

t.test('beforeCreate may return a new input instead of changing the one it got', async (t) => {
  const response = await send('POST', '/books', { data: { type: 'book', attributes: { title: 'replace' }, relationships: { author: { data: { type: 'author', id: '1' } } } } })
  t.equal(response.status, 201)
  const row = await db.selectFrom('h_books').selectAll().where('id', '=', 3).executeTakeFirstOrThrow()
  t.same(row, { id: 3, title: 'replaced', pages: null, slug: 'replaced', secret: null, author_id: 2 })
})

t.test('a hook refuses with its own error and pointer; nothing is written', async (t) => {
  await failsUnchanged(t, 'POST', '/books', { data: { type: 'book', attributes: { title: 'refuse' } } }, { status: 422, code: 'APP_TITLE', pointer: '/data/attributes/title' })
  await failsUnchanged(t, 'PATCH', '/books/2', { data: { type: 'book', id: '2', attributes: { title: 'open' } } }, { status: 403, code: 'APP_LOCKED', pointer: '/data' })
  await failsUnchanged(t, 'DELETE', '/books/2', undefined, { status: 409, code: 'APP_TOO_BIG' })
  t.same(calls.filter((call) => call[0] === 'beforeDelete'), [['beforeDelete', '2', 500]], 'beforeDelete read the current row')
})

t.test('no before* hook ever sees a row that does not exist: 404 first, and the hook does not run', async (t) => {
  const writes: Array<[InjectOptions['method'], string, unknown]> = [
    ['PATCH', '/books/99', { data: { type: 'book', id: '99', attributes: { title: 'x' } } }],
    ['DELETE', '/books/99', undefined],
    ['PATCH', '/books/99/relationships/shelves', { data: [{ type: 'shelf', id: '1' }] }],
    ['POST', '/books/99/relationships/shelves', { data: [{ type: 'shelf', id: '1' }] }],
    ['PATCH', '/books/abc', { data: { type: 'book', id: 'abc', attributes: { title: 'x' } } }],
  ]
  for (const [method, url, body] of writes) {
    calls.length = 0
    await failsUnchanged(t, method, url, body, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    t.same(calls, [], `${method} ${url}: no hook ran`)
  }
})

t.test('a hook that returns what the declaration cannot store is the application\'s mistake: 500, nothing written', async (t) => {
  for (const title of ['wrong name', 'wrong value']) {
    await failsUnchanged(t, 'POST', '/books', { data: { type: 'book', attributes: { title } } }, { status: 500, code: 'FJA_INTERNAL' })
  }
})

t.test('beforeUpdate sees what the client sent and the stored resource (hidden attributes too), and may change the input', async (t) => {
  const response = await send('PATCH', '/books/1', { data: { type: 'book', id: '1', attributes: { title: 'First Edition' } } })
  t.equal(response.status, 200)
  t.same(response.body.data.attributes, { title: 'First Edition', pages: 10, slug: 'first-edition' })
  t.same(calls[0], ['beforeUpdate', 'ann', '1', { id: '1', attributes: { title: 'First Edition' }, relationships: {} },
    { id: '1', attributes: { title: 'first', pages: 10, slug: 'first', secret: 's1' } }])
  t.same(calls[1], ['afterUpdate', '1', 'First Edition'])
  const bad = await send('PATCH', '/books/1', { data: { type: 'book', id: '1', attributes: { slug: 'hand-made' } } })
  assertError(t, bad, { status: 422, code: 'FJA_READ_ONLY_FIELD', pointer: '/data/attributes/slug' })
})

t.test('after* hooks run inside the write\'s transaction: their failure rolls back the write and what they wrote', async (t) => {
  await failsUnchanged(t, 'POST', '/books', { data: { type: 'book', attributes: { title: 'boom' } } }, { status: 409, code: 'APP_BOOM' })
  await failsUnchanged(t, 'PATCH', '/books/1', { data: { type: 'book', id: '1', attributes: { title: 'boom' } } }, { status: 409, code: 'APP_BOOM' })
  await db.updateTable('h_books').set({ title: 'unlocked', pages: 1 }).where('id', '=', 2).execute()
  await db.deleteFrom('h_audit').execute()
  await failsUnchanged(t, 'DELETE', '/books/2', undefined, { status: 409, code: 'APP_BOOM' })
  const deleted = await send('DELETE', '/books/1')
  t.equal(deleted.status, 200)
  t.same(await db.selectFrom('h_audit').select('entry').execute(), [{ entry: 'deleted 1' }], 'a successful write commits what its hook wrote')
})

t.test('beforeLink runs for every change of an existing resource\'s relationship, whatever the route', async (t) => {
  const changes: Array<[InjectOptions['method'], string, unknown, unknown[]]> = [
    ['PATCH', '/books/1', { data: { type: 'book', id: '1', relationships: { shelves: { data: [{ type: 'shelf', id: '2' }] }, author: { data: null } } } },
      [['beforeLink', '1', 'shelves', 'replace', ['2']], ['beforeLink', '1', 'author', 'replace', null]]],
    ['PATCH', '/books/1/relationships/shelves', { data: [{ type: 'shelf', id: '1' }] }, [['beforeLink', '1', 'shelves', 'replace', ['1']]]],
    ['POST', '/books/1/relationships/shelves', { data: [{ type: 'shelf', id: '2' }] }, [['beforeLink', '1', 'shelves', 'add', ['2']]]],
    ['DELETE', '/books/1/relationships/shelves', { data: [{ type: 'shelf', id: '2' }] }, [['beforeLink', '1', 'shelves', 'remove', ['2']]]],
    ['PATCH', '/books/1/relationships/author', { data: { type: 'author', id: '2' } }, [['beforeLink', '1', 'author', 'replace', ['2']]]],
    ['POST', '/books/1/shelves', { data: { type: 'shelf', attributes: { name: 'd' } } }, [['beforeLink', '1', 'shelves', 'add', ['4']]]],
    ['POST', '/books/1/author', { data: { type: 'author', attributes: { name: 'cat' } } }, [['beforeLink', '1', 'author', 'replace', ['3']]]],
  ]
  for (const [method, url, body, expected] of changes) {
    calls.length = 0
    const response = await send(method, url, body)
    t.ok(response.status === 200 || response.status === 201, `${method} ${url}: ${response.status}`)
    t.same(calls.filter((call) => call[0] === 'beforeLink'), expected, `${method} ${url}`)
  }
})

t.test('a beforeLink error without a source points at the linkage; nothing is written', async (t) => {
  await failsUnchanged(t, 'PATCH', '/books/1', { data: { type: 'book', id: '1', attributes: { title: 'x' }, relationships: { shelves: { data: [{ type: 'shelf', id: '3' }] } } } },
    { status: 403, code: 'APP_SHELF', pointer: '/data/relationships/shelves/data' })
  await failsUnchanged(t, 'POST', '/books/1/relationships/shelves', { data: [{ type: 'shelf', id: '3' }] }, { status: 403, code: 'APP_SHELF', pointer: '/data' })
  await failsUnchanged(t, 'PATCH', '/books/1/relationships/shelves', { data: [{ type: 'shelf', id: '3' }] }, { status: 403, code: 'APP_SHELF', pointer: '/data' })
})

t.test('inside operations: one context for the batch, hooks per operation, errors pointing into the request, all or nothing', async (t) => {
  const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"'
  const run = (operations: unknown[]) => send('POST', '/operations', { 'atomic:operations': operations }, { 'content-type': ATOMIC })
  const ok = await run([
    { op: 'add', data: { type: 'book', lid: 'b', attributes: { title: 'Batch One' } } },
    { op: 'update', data: { type: 'book', lid: 'b', attributes: { title: 'Batch Two' } } },
    { op: 'add', ref: { type: 'book', lid: 'b', relationship: 'shelves' }, data: [{ type: 'shelf', id: '2' }] },
  ])
  t.equal(ok.status, 200)
  t.equal(contexts, 1, 'the context is derived once for the batch')
  t.same(ok.body['atomic:results'][1].data.attributes, { title: 'Batch Two', pages: null, slug: 'batch-two' })
  t.same(calls.map((call) => call[0]), ['beforeCreate', 'afterCreate', 'beforeUpdate', 'afterUpdate', 'beforeLink'])
  const failing: Array<[unknown, number, string, string]> = [
    [{ op: 'add', data: { type: 'book', attributes: { title: 'refuse' } } }, 422, 'APP_TITLE', '/atomic:operations/1/data/attributes/title'],
    [{ op: 'update', data: { type: 'book', id: '2', attributes: { title: 'x' } } }, 403, 'APP_LOCKED', '/atomic:operations/1/data'],
    [{ op: 'remove', ref: { type: 'book', id: '2' } }, 409, 'APP_TOO_BIG', '/atomic:operations/1/ref'],
    [{ op: 'add', ref: { type: 'book', id: '1', relationship: 'shelves' }, data: [{ type: 'shelf', id: '3' }] }, 403, 'APP_SHELF', '/atomic:operations/1/data'],
    [{ op: 'add', data: { type: 'book', attributes: { title: 'boom' } } }, 409, 'APP_BOOM', '/atomic:operations/1/data'],
    [{ op: 'add', data: { type: 'book', attributes: { title: 'plain' } } }, 403, 'APP_PLAIN', '/atomic:operations/1/data'],
    [{ op: 'update', data: { type: 'book', id: '1', attributes: { title: 'x' } }, meta: { ifMatch: '"stale"' } }, 412, 'FJA_PRECONDITION_FAILED', '/atomic:operations/1/meta/ifMatch'],
  ]
  for (const [operation, status, code, pointer] of failing) {
    const before = await snapshot()
    const response = await run([{ op: 'add', data: { type: 'book', attributes: { title: 'kept?' } } }, operation])
    t.equal(response.status, status, code)
    t.equal(response.body.errors[0].code, code)
    t.same(response.body.errors[0].source, { pointer }, `${code} points at ${pointer}`)
    t.match(response.body.errors[0].meta, { operation: 1 })
    t.same(await snapshot(), before, `${code}: the batch is rolled back, audit rows included`)
  }
})

t.test('the context is derived once per request, before the request is read', async (t) => {
  contexts = 0
  await send('GET', '/books?include=author,shelves')
  await send('GET', '/books/1/relationships/shelves')
  await send('POST', '/books', { data: { type: 'book', attributes: { title: 'ctx' } } })
  t.equal(contexts, 3)
})

t.test('a scope that does not return a condition is the application\'s mistake: 500, no rows', async (t) => {
  const broken = define({
    type: 'broken',
    table: 'h_shelves',
    attributes: { name: { schema: Type.String() } },
    hooks: { scope: () => 'everything' as never },
  })
  const other = await documentedFastify()
  await other.register(jsonApi, { db, resources: [broken] })
  t.teardown(() => other.close())
  const response = await other.inject({ method: 'GET', url: '/broken' })
  t.equal(response.statusCode, 500)
  t.equal(JSON.parse(response.body).errors[0].code, 'FJA_INTERNAL')
  t.notMatch(response.body, /"name"/, 'no row leaks')
})
