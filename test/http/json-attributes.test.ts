import t from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql, type Kysely } from 'kysely'
import { jsonApi, defineResource } from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError } from '../helpers/assert-errors.js'
import { testEngine } from '../helpers/engine.js'

// Attributes stored as JSON (`storage: 'json'`) in `jsonb` and `json` columns: every JSON value comes back as it was
// sent. A JSON string is a string, whatever it looks like: `"123"` is not the number 123, `"hello"` is not an error.

const engine = testEngine()

/**
 * JSON columns: `jsonb` and `json` on PostgreSQL; on MariaDB `json` (JSON text, checked by `json_valid`) and
 * `longtext` (its `json` refuses 32 levels of nesting or more: docs/databases.md); JSON text in a `text` column on
 * SQLite.
 */
async function migrate (db: Kysely<any>): Promise<void> {
  const jsonb = engine === 'postgres' ? sql`jsonb` : engine === 'mysql' ? sql`json` : sql`text`
  const json = engine === 'postgres' ? sql`json` : engine === 'mysql' ? sql`longtext` : sql`text`
  // A table with its `id` column as each engine assigns ids; on MariaDB in `utf8mb4` compared by code point.
  const createTable = (name: string) => {
    const table = engine === 'mysql' ? db.schema.createTable(name).modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : db.schema.createTable(name)
    return engine === 'postgres'
      ? table.addColumn('id', 'serial', (col) => col.primaryKey())
      : table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
  }
  await createTable('documents')
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('doc', jsonb)
    .addColumn('raw', json)
    .addColumn('meta', jsonb, (col) => col.notNull().defaultTo(sql`'{}'`))
    .execute()
  await createTable('sections')
    .addColumn('document_id', 'integer', (col) => col.notNull().references('documents.id'))
    .addColumn('body', jsonb)
    .execute()
}

/**
 * The JSON types of a document's `doc` and `raw` as PostgreSQL's `jsonb_typeof` and `json_typeof` name them
 * (`object`, `array`, `string`, `number`, `boolean`; NULL for SQL NULL), from each engine's own `json_type`.
 */
async function storedKinds (db: Kysely<any>, id: number): Promise<{ doc: string | null, raw: string | null }> {
  if (engine === 'postgres') {
    const [stored] = (await sql<{ doc: string | null; raw: string | null }>`select jsonb_typeof(doc) as doc, json_typeof(raw) as raw from documents where id = ${id}`.execute(db)).rows
    return stored
  }
  const [stored] = (await sql<{ doc: string | null; raw: string | null }>`select json_type(doc) as doc, json_type(raw) as raw from documents where id = ${id}`.execute(db)).rows
  const names: Record<string, string> = { integer: 'number', double: 'number', decimal: 'number', real: 'number', text: 'string', true: 'boolean', false: 'boolean' }
  const kind = (type: string | null): string | null => type === null ? null : names[type.toLowerCase()] ?? type.toLowerCase()
  return { doc: kind(stored.doc), raw: kind(stored.raw) }
}

/** The number of documents, as text (PostgreSQL's `count(*)` is a `bigint`, read as text). */
async function countDocuments (db: Kysely<any>): Promise<string> {
  return String((await sql<{ count: string | number }>`select count(*) as count from documents`.execute(db)).rows[0].count)
}

/** What the `afterCreate` hook of `document` saw, one entry per create. */
const hookSaw: unknown[] = []

const document = defineResource({
  type: 'document',
  path: '/documents',
  table: 'documents',
  id: { kind: 'integer' },
  attributes: {
    title: { schema: Type.String(), required: true },
    doc: { schema: Type.Unknown(), storage: 'json' },
    raw: { schema: Type.Unknown(), storage: 'json' },
    // An object schema: stored as JSON by default.
    meta: { schema: Type.Record(Type.String(), Type.Unknown()) },
  },
  relationships: {
    sections: { kind: 'to-many', type: 'section', inverse: 'document' },
  },
  hooks: {
    afterCreate (stored) {
      hookSaw.push(stored.attributes.doc)
    },
  },
})

const section = defineResource({
  type: 'section',
  path: '/sections',
  table: 'sections',
  id: { kind: 'integer' },
  attributes: { body: { schema: Type.Unknown(), storage: 'json' } },
  relationships: { document: { kind: 'to-one', type: 'document', foreignKey: 'document_id', required: true } },
})

const database = await openTestDatabase(migrate)
t.teardown(() => database.close())
const db = database.db

const app: FastifyInstance = await documentedFastify({})
await app.register(jsonApi, { db, resources: [document, section] })
await app.ready()
t.teardown(() => app.close())

function send (method: InjectOptions['method'], url: string, options: TestRequest = {}): Promise<TestResponse> {
  return injectJsonApi(app, method, url, options)
}

/** JSON values of every kind, strings that look like other JSON values among them. */
const VALUES: ReadonlyArray<[string, unknown]> = [
  ['a word', 'hello'],
  ['a string of digits', '123'],
  ['a string that reads as true', 'true'],
  ['a string that reads as null', 'null'],
  ['a string that reads as an object', '{"a":1}'],
  ['a string that reads as a string', '"quoted"'],
  ['the empty string', ''],
  ['a string with quotes, escapes and non-ASCII', 'Zoë said "hi"\n\\ ☃'],
  ['a number', 7.5],
  ['zero', 0],
  ['false', false],
  ['an object', { a: 'b', n: [1, '2', null], nested: { deep: true } }],
  ['an array', [1, '2', { three: 3 }]],
  ['an empty array', []],
  ['null', null],
]

t.test('every JSON value round-trips through jsonb and json: create, read, list, include, update, hooks', async (t) => {
  for (const [label, value] of VALUES) {
    hookSaw.length = 0
    const created = await send('POST', '/documents', { body: { data: { type: 'document', attributes: { title: label, doc: value, raw: value, meta: { value } } } } })
    t.equal(created.status, 201, `${label}: created`)
    t.same(created.body.data.attributes, { title: label, doc: value, raw: value, meta: { value } }, `${label}: the create answers the value`)
    t.same(hookSaw, [value], `${label}: afterCreate sees the value`)
    const id = created.body.data.id as string

    const read = await send('GET', `/documents/${id}`)
    t.equal(read.status, 200)
    t.strictSame(read.body.data.attributes.doc, value, `${label}: read from jsonb`)
    t.strictSame(read.body.data.attributes.raw, value, `${label}: read from json`)

    const stored = await storedKinds(db, Number(id))
    const kind = value === null ? null : Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value
    t.same(stored, { doc: kind, raw: kind }, `${label}: stored as a JSON ${kind ?? 'NULL'}`)

    const sectionCreated = await send('POST', '/sections', { body: { data: { type: 'section', attributes: { body: value }, relationships: { document: { data: { type: 'document', id } } } } } })
    t.equal(sectionCreated.status, 201)
    const included = await send('GET', `/documents/${id}?include=sections`)
    t.strictSame(included.body.included[0].attributes.body, value, `${label}: included`)

    const updated = await send('PATCH', `/documents/${id}`, { body: { data: { type: 'document', id, attributes: { doc: value, raw: { was: value } } } } })
    t.equal(updated.status, 200)
    t.strictSame(updated.body.data.attributes.doc, value, `${label}: the update answers the value`)
    t.strictSame(updated.body.data.attributes.raw, { was: value })
  }
  const list = await send('GET', `/documents?sort=id&page[size]=${VALUES.length}`)
  t.strictSame(list.body.data.map((item: any) => item.attributes.doc), VALUES.map(([, value]) => value), 'a page answers each value')
  t.strictSame(list.body.data.map((item: any) => item.attributes.meta), VALUES.map(([, value]) => ({ value })))
})

t.test('a JSON string written by SQL reads as that string', async (t) => {
  const { rows: [row] } = engine === 'postgres'
    ? await sql<{ id: number }>`insert into documents (title, doc, raw) values ('by sql', '"7"'::jsonb, '"{\\"x\\": 1}"'::json) returning id`.execute(db)
    : await sql<{ id: number }>`insert into documents (title, doc, raw) values ('by sql', ${'"7"'}, ${'"{\\"x\\": 1}"'}) returning id`.execute(db)
  const read = await send('GET', `/documents/${row.id}`)
  t.equal(read.status, 200)
  t.strictSame(read.body.data.attributes.doc, '7')
  t.strictSame(read.body.data.attributes.raw, '{"x": 1}')
})

t.test('cannot store what is not JSON: the value of an object attribute must be an object', async (t) => {
  const before = await countDocuments(db)
  const refused = await send('POST', '/documents', { body: { data: { type: 'document', attributes: { title: 'x', meta: 'a string' } } } })
  t.equal(refused.status, 422)
  t.equal(refused.body.errors[0].source.pointer, '/data/attributes/meta')
  const after = await countDocuments(db)
  t.equal(after, before, 'nothing written')
})

t.test('a value nests at most 64 levels of arrays and objects; deeper is a 422 at the attribute, never a 500', async (t) => {
  const nested = (levels: number): unknown => {
    let value: unknown = 'core'
    for (let level = 1; level <= levels; level++) value = level % 2 === 0 ? { k: value } : [value]
    return value
  }
  const count = (): Promise<string> => countDocuments(db)
  const before = await count()

  // MariaDB's `json` column (doc there) refuses 32 levels or more with its json_valid check: a 422, never a 500;
  // 64 levels go to its `longtext` column (raw).
  const docLevels = testEngine() === 'mysql' ? 31 : 64
  if (testEngine() === 'mysql') {
    const checked = await send('POST', '/documents', { body: { data: { type: 'document', attributes: { title: 'checked', doc: nested(32), raw: nested(1) } } } })
    t.equal(checked.status, 422, 'MariaDB: 32 levels in a json column are refused by its check')
    t.equal(checked.body.errors[0].code, 'FJA_CONSTRAINT_VIOLATION')
  }
  const deepest = await send('POST', '/documents', { body: { data: { type: 'document', attributes: { title: 'deepest', doc: nested(docLevels), raw: nested(64) } } } })
  t.equal(deepest.status, 201, '64 levels are written')
  t.same(deepest.body.data.attributes.doc, nested(docLevels), 'and read back as sent')
  const read = await send('GET', `/documents/${deepest.body.data.id as string}`)
  t.same(read.body.data.attributes.raw, nested(64))

  for (const levels of [65, 5000, 100000]) {
    // Written by hand: JSON.stringify itself cannot write the deepest of these.
    const raw = `{"data":{"type":"document","attributes":{"title":"deep","doc":${'['.repeat(levels)}${']'.repeat(levels)}}}}`
    const refused = await send('POST', '/documents', { body: raw })
    assertError(t, refused, { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/doc', detail: /more than 64 levels deep/ })
  }
  // A required attribute refused for its depth is not reported missing as well: one error, at the attribute.
  const title = await send('POST', '/documents', { body: { data: { type: 'document', attributes: { title: nested(65) } } } })
  assertError(t, title, { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/title', detail: /more than 64 levels deep/ })
  const made = deepest.body.data.id as string
  const update = await send('PATCH', `/documents/${made}`, { body: { data: { type: 'document', id: made, attributes: { meta: { a: nested(64) } } } } })
  assertError(t, update, { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/meta', detail: /more than 64 levels deep/ })
  const operations = await send('POST', '/operations', {
    headers: { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
    body: `{"atomic:operations":[{"op":"add","data":{"type":"document","attributes":{"title":"op","raw":{"a":${'['.repeat(20000)}${']'.repeat(20000)}}}}}]}`,
  })
  assertError(t, operations, {
    status: 422, code: 'FJA_VALIDATION', pointer: '/atomic:operations/0/data/attributes/raw', detail: /more than 64 levels deep/, meta: { operation: 0, op: 'add', data: { type: 'document' } },
  })
  t.equal(await count(), String(Number(before) + 1), 'only the 64-level document was written')
  const { meta } = (await sql<{ meta: unknown }>`select meta from documents where id = ${Number(made)}`.execute(db)).rows[0]
  t.same(typeof meta === 'string' && engine !== 'postgres' ? JSON.parse(meta) : meta, {}, 'the update wrote nothing')
})

t.test('cannot store a value that would not come back as sent: a number beyond a double, a lone surrogate', async (t) => {
  const count = (): Promise<string> => countDocuments(db)
  const before = await count()
  // Written by hand: these are JSON texts that JSON.stringify cannot produce.
  const cases: Array<[string, string, string, RegExp]> = [
    ['a number beyond a double', '"doc":1e400', '/data/attributes/doc', /'doc' is a number beyond the range of a double/],
    ['a negative one, nested', '"raw":{"a":[1,-1e400]}', '/data/attributes/raw/a/1', /beyond the range of a double/],
    ['a lone high surrogate', '"doc":"a\\ud800"', '/data/attributes/doc', /lone UTF-16 surrogate/],
    ['a lone low surrogate in a nested string', '"meta":{"k":["\\udc00"]}', '/data/attributes/meta/k/0', /lone UTF-16 surrogate/],
    ['a lone surrogate in a member name', '"doc":{"x":{"\\ud83d":1}}', '/data/attributes/doc/x/\ud83d', /member name that contains a lone UTF-16 surrogate/],
    ['a lone surrogate in a text column', '"doc":1', '/data/attributes/title', /'title' contains a lone UTF-16 surrogate/],
  ]
  for (const [label, member, pointer, detail] of cases) {
    const title = pointer.endsWith('title') ? '"x\\udfffy"' : '"t"'
    const refused = await send('POST', '/documents', { body: `{"data":{"type":"document","attributes":{"title":${title},${member}}}}` })
    t.equal(refused.status, 422, label)
    assertError(t, refused, { status: 422, code: 'FJA_VALIDATION', pointer, detail })
  }
  t.equal(await count(), before, 'nothing written')

  // A surrogate pair is one character, and any double is a JSON number: both come back as sent.
  const made = await send('POST', '/documents', { body: '{"data":{"type":"document","attributes":{"title":"\\ud83d\\ude00","doc":{"\\ud83d\\ude00":[1.7976931348623157e308,-5e-324]}}}}' })
  t.equal(made.status, 201)
  t.same(made.body.data.attributes, { title: '😀', doc: { '😀': [Number.MAX_VALUE, -Number.MIN_VALUE] }, raw: null, meta: {} })
  const read = await send('GET', `/documents/${made.body.data.id as string}`)
  t.same(read.body.data.attributes.doc, { '😀': [Number.MAX_VALUE, -Number.MIN_VALUE] })
})
