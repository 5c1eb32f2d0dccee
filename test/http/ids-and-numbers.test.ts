import t from 'tap'
import type { FastifyInstance, FastifyServerOptions, InjectOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql, type Kysely } from 'kysely'
import { jsonApi, defineResource, ResourceConfigError, type AnyResourceDeclaration } from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertErrors } from '../helpers/assert-errors.js'
import { onlyOn, testEngine } from '../helpers/engine.js'

// Above 2^31 (an `integer` id could not hold it) and above 2^53 (a JS number could not hold it exactly).
const FIRST = '9007199254740993'
const SECOND = '9007199254740994'
const INT8_MAX = '9223372036854775807'
const INT8_MIN = '-9223372036854775808'

const engine = testEngine()

/**
 * `accounts` and `entries` have ids assigned by the database, starting above 2^53 and above 2^31: `bigserial` on
 * PostgreSQL, `bigint auto_increment` on MariaDB. SQLite's integers are exact only up to 2^53 once read
 * (`better-sqlite3` reads them as JavaScript numbers), so its accounts start at 1. A text key is `varchar(255)` on
 * MariaDB, which cannot index a `text` column whole; it says `not null`, which SQLite does not imply for a primary key
 * that is not an `integer primary key`.
 */
async function migrate (db: Kysely<any>): Promise<void> {
  if (engine === 'postgres') {
    await sql`create table accounts (
      id bigserial primary key,
      name text not null,
      balance numeric(20,6),
      big bigint,
      ratio numeric(10,4),
      small integer,
      parent_id bigint references accounts (id) on delete set null
    )`.execute(db)
    await sql`alter sequence accounts_id_seq restart with 9007199254740993`.execute(db)
    await sql`create table tags (slug text primary key, label text not null)`.execute(db)
    await sql`create table account_tags (
      account_id bigint not null references accounts (id) on delete cascade,
      tag_slug text not null references tags (slug) on delete cascade,
      primary key (account_id, tag_slug)
    )`.execute(db)
    await sql`create table entries (
      id bigserial primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      tag_slug text references tags (slug),
      amount numeric(20,6) not null
    )`.execute(db)
    await sql`alter sequence entries_id_seq restart with 4294967296`.execute(db)
    return
  }
  const mysql = engine === 'mysql'
  const key = mysql ? sql`varchar(255)` : sql`text`
  const table = (name: string) => mysql ? db.schema.createTable(name).modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : db.schema.createTable(name)
  // SQLite: AUTOINCREMENT needs an `integer primary key` (a `bigint` column is no alias of the rowid).
  const id = mysql ? 'bigint' : 'integer'
  await table('accounts')
    .addColumn('id', id, (col) => col.primaryKey().autoIncrement())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('balance', 'numeric(20, 6)')
    .addColumn('big', 'bigint')
    .addColumn('ratio', 'numeric(10, 4)')
    .addColumn('small', 'integer')
    .addColumn('parent_id', 'bigint', (col) => col.references('accounts.id').onDelete('set null'))
    .execute()
  await table('tags')
    .addColumn('slug', key, (col) => col.primaryKey().notNull())
    .addColumn('label', 'text', (col) => col.notNull())
    .execute()
  await table('account_tags')
    .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('tag_slug', key, (col) => col.notNull().references('tags.slug').onDelete('cascade'))
    .addPrimaryKeyConstraint('account_tags_pkey', ['account_id', 'tag_slug'])
    .execute()
  await table('entries')
    .addColumn('id', id, (col) => col.primaryKey().autoIncrement())
    .addColumn('account_id', 'bigint', (col) => col.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('tag_slug', key, (col) => col.references('tags.slug'))
    .addColumn('amount', 'numeric(20, 6)', (col) => col.notNull())
    .execute()
  await restartIds(db, 'entries', '4294967296')
  if (mysql) await restartIds(db, 'accounts', FIRST)
}

/** The next id the database assigns to a new row of `table` (MariaDB and SQLite; PostgreSQL restarts its sequence). */
async function restartIds (db: Kysely<any>, table: string, next: string): Promise<void> {
  if (engine === 'mysql') await sql`alter table ${sql.table(table)} auto_increment = ${sql.raw(BigInt(next).toString())}`.execute(db)
  else {
    await db.deleteFrom('sqlite_sequence').where('name', '=', table).execute()
    await db.insertInto('sqlite_sequence').values({ name: table, seq: Number(BigInt(next) - 1n) }).execute()
  }
}

/** Empties `accounts` and the tables that point at it, ids restarted (PostgreSQL's `truncate … restart identity cascade`). */
async function emptyAccounts (): Promise<void> {
  if (engine === 'postgres') {
    await sql`truncate accounts restart identity cascade`.execute(db)
  } else if (engine === 'mysql') {
    // TRUNCATE of a table that foreign keys point at needs their checks off (it restarts AUTO_INCREMENT too).
    await db.connection().execute(async (connection) => {
      await sql`set foreign_key_checks = 0`.execute(connection)
      try {
        for (const table of ['account_tags', 'entries', 'accounts']) await sql`truncate table ${sql.table(table)}`.execute(connection)
      } finally {
        await sql`set foreign_key_checks = 1`.execute(connection)
      }
    })
  } else {
    for (const table of ['account_tags', 'entries', 'accounts']) await db.deleteFrom(table).execute()
    await db.deleteFrom('sqlite_sequence').where('name', 'in', ['entries', 'accounts']).execute()
  }
}

/** A `text` key column: `varchar(255)` on MariaDB, which cannot index a `text` column whole. */
const keyType = engine === 'mysql' ? 'varchar(255)' : 'text'

/** SQLite: integers beyond 2^53 do not come back exact (docs/databases.md). */
const exact64 = onlyOn(['postgres', 'mysql'], '64-bit integers beyond 2^53 are not exact on SQLite (better-sqlite3 reads them as JavaScript numbers; docs/databases.md)')

const account = defineResource({
  type: 'account',
  path: '/accounts',
  table: 'accounts',
  id: { kind: 'bigint' },
  attributes: {
    name: { schema: Type.String(), required: true },
    balance: { schema: Type.Union([Type.String({ format: 'decimal' }), Type.Null()]) },
    big: { schema: Type.Union([Type.String({ format: 'int64' }), Type.Null()]) },
    ratio: { schema: Type.Union([Type.Number(), Type.Null()]) },
    small: { schema: Type.Union([Type.Integer(), Type.Null()]) },
  },
  relationships: {
    parent: { kind: 'to-one', type: 'account', foreignKey: 'parent_id' },
    entries: { kind: 'to-many', type: 'entry', inverse: 'account' },
    tags: { kind: 'to-many', type: 'tag', through: { table: 'account_tags', sourceKey: 'account_id', targetKey: 'tag_slug' } },
  },
})

const tag = defineResource({
  type: 'tag',
  path: '/tags',
  table: 'tags',
  id: { column: 'slug', kind: 'text', pattern: /[a-z0-9]+(?:-[a-z0-9]+)*/, maxLength: 32 },
  clientIds: 'required',
  attributes: { label: { schema: Type.String(), required: true } },
  relationships: {
    accounts: { kind: 'to-many', type: 'account', through: { table: 'account_tags', sourceKey: 'tag_slug', targetKey: 'account_id' } },
  },
})

const entry = defineResource({
  type: 'entry',
  path: '/entries',
  table: 'entries',
  id: { kind: 'bigint' },
  attributes: { amount: { schema: Type.String({ format: 'decimal' }), required: true } },
  relationships: {
    account: { kind: 'to-one', type: 'account', foreignKey: 'account_id', required: true },
    tag: { kind: 'to-one', type: 'tag', foreignKey: 'tag_slug' },
  },
})

/** The accounts table declared the way it must not be: a `bigint` beyond 2^53 as `Type.Integer()`. */
const lossy = defineResource({
  type: 'lossy',
  table: 'accounts',
  id: { kind: 'bigint' },
  attributes: { big: { schema: Type.Union([Type.Integer(), Type.Null()]) } },
})

const database = await openTestDatabase(migrate)
t.teardown(() => database.close())
const db = database.db

const logLines: Array<Record<string, any>> = []

async function build (resources: readonly AnyResourceDeclaration[], server: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = await documentedFastify(server)
  await app.register(jsonApi, { db, resources })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

const app = await build([account, tag, entry, lossy], {
  logger: { level: 'error', stream: { write: (line: string) => { logLines.push(JSON.parse(line)) } } },
})

function send (method: InjectOptions['method'], url: string, options: TestRequest = {}): Promise<TestResponse> {
  return injectJsonApi(app, method, url, options)
}

function filter (value: unknown): string {
  return `filter=${encodeURIComponent(JSON.stringify(value))}`
}

async function createAccount (attributes: Record<string, unknown>, relationships?: Record<string, unknown>): Promise<TestResponse> {
  const response = await send('POST', '/accounts', { body: { data: { type: 'account', attributes, ...(relationships === undefined ? {} : { relationships }) } } })
  return response
}

/** The statements a request runs. */
async function statements (work: () => Promise<unknown>): Promise<number> {
  database.counter.reset()
  await work()
  return database.counter.count
}

t.test('bigserial ids above 2^53: create, read the self link, update, link, include, filter, delete', { skip: exact64 }, async (t) => {
  const created = await createAccount({ name: 'first', balance: '12345678901234.123456', big: INT8_MAX, ratio: 1.5 })
  t.equal(created.status, 201)
  t.equal(created.body.data.id, FIRST, 'the id is exact')
  t.equal(created.body.data.links.self, `/accounts/${FIRST}`)
  t.equal(created.headers.location, `/accounts/${FIRST}`)
  t.same(created.body.data.attributes, { name: 'first', balance: '12345678901234.123456', big: INT8_MAX, ratio: 1.5, small: null })

  const read = await send('GET', created.body.data.links.self)
  t.equal(read.status, 200, 'the self link of a bigint id answers')
  t.equal(read.body.data.id, FIRST)
  t.match(read.text, /"ratio":1\.5[,}]/, 'a numeric declared Type.Number() is a JSON number')
  t.match(read.text, /"big":"9223372036854775807"/, 'an int64 is an exact string')

  const second = await createAccount({ name: 'second' }, { parent: { data: { type: 'account', id: FIRST } } })
  t.equal(second.status, 201)
  t.equal(second.body.data.id, SECOND)

  const patched = await send('PATCH', `/accounts/${FIRST}`, {
    body: { data: { type: 'account', id: FIRST, attributes: { name: 'renamed', big: INT8_MIN }, relationships: { parent: { data: { type: 'account', id: SECOND } } } } },
  })
  t.equal(patched.status, 200)
  t.equal(patched.body.data.attributes.big, INT8_MIN)
  t.equal(patched.body.data.attributes.name, 'renamed')

  const entryCreated = await send('POST', '/entries?include=account', {
    body: { data: { type: 'entry', attributes: { amount: '-0.000001' }, relationships: { account: { data: { type: 'account', id: FIRST } } } } },
  })
  t.equal(entryCreated.status, 201)
  t.equal(entryCreated.body.data.id, '4294967296', 'above 2^31')
  t.same(entryCreated.body.data.relationships.account.data, { type: 'account', id: FIRST }, 'linkage to a bigint id')
  t.same(entryCreated.body.included.map((item: any) => item.id), [FIRST])
  t.equal(entryCreated.body.data.attributes.amount, '-0.000001')

  const withIncludes = await send('GET', `/accounts/${FIRST}?include=entries,parent`)
  t.equal(withIncludes.status, 200)
  t.same(withIncludes.body.data.relationships.entries.data, [{ type: 'entry', id: '4294967296' }])
  t.same(withIncludes.body.data.relationships.parent.data, { type: 'account', id: SECOND })
  t.same(withIncludes.body.included.map((item: any) => `${item.type}:${item.id}`).sort(), [`account:${SECOND}`, 'entry:4294967296'])

  const related = await send('GET', `/accounts/${FIRST}/entries`)
  t.same(related.body.data.map((item: any) => item.id), ['4294967296'], 'a related route of a bigint id')
  const linkage = await send('GET', `/entries/4294967296/relationships/account`)
  t.same(linkage.body.data, { type: 'account', id: FIRST })
  const relinked = await send('PATCH', `/accounts/${SECOND}/relationships/parent`, { body: { data: { type: 'account', id: FIRST } } })
  t.equal(relinked.status, 200)
  t.same(relinked.body.data, { type: 'account', id: FIRST })

  const simple = await send('GET', `/accounts?filter[id]=${SECOND}`)
  t.same(simple.body.data.map((item: any) => item.id), [SECOND], 'filter[id]')
  const byRelated = await send('GET', `/entries?filter[account_id]=${FIRST}`)
  t.same(byRelated.body.data.map((item: any) => item.id), ['4294967296'], 'filter[<relationship>_id]')
  const greater = await send('GET', `/accounts?${filter([{ name: 'id', op: 'gt', val: FIRST }])}`)
  t.same(greater.body.data.map((item: any) => item.id), [SECOND], 'gt on a bigint id is exact')
  const within = await send('GET', `/accounts?${filter([{ name: 'id', op: 'in_', val: [FIRST, '1'] }])}`)
  t.same(within.body.data.map((item: any) => item.id), [FIRST])
  const sorted = await send('GET', '/accounts?sort=-id')
  t.same(sorted.body.data.map((item: any) => item.id), [SECOND, FIRST])
  const through = await send('GET', `/entries?${filter([{ name: 'account', op: 'has', val: { name: 'id', op: 'eq', val: FIRST } }])}`)
  t.same(through.body.data.map((item: any) => item.id), ['4294967296'])
  const fields = await send('GET', `/accounts?${filter([{ name: 'id', op: 'lt', field: 'big' }])}`)
  t.equal(fields.status, 200, 'a bigint id compares with an int64 attribute')
  t.same(fields.body.data, [], 'big is INT8_MIN or null')

  const removed = await send('DELETE', `/accounts/${SECOND}`)
  t.equal(removed.status, 200)
  t.equal((await send('GET', `/accounts/${SECOND}`)).status, 404)
  const after = await send('GET', `/accounts/${FIRST}?include=parent`)
  t.equal(after.body.data.relationships.parent.data, null)
})

t.test('ids that cannot be bigints are 404s without a query; valid ones are asked', async (t) => {
  for (const id of ['9223372036854775808', '99999999999999999999', '01', '-1', '1.0', 'abc', '１']) {
    let response: TestResponse | undefined
    const count = await statements(async () => { response = await send('GET', `/accounts/${encodeURIComponent(id)}`) })
    assertErrors(t, response as TestResponse, [{ status: 404, code: 'FJA_RESOURCE_NOT_FOUND' }])
    t.equal(count, 0, `${id}: no query`)
  }
  let response: TestResponse | undefined
  const count = await statements(async () => { response = await send('GET', `/accounts/${INT8_MAX}`) })
  t.equal((response as TestResponse).status, 404)
  t.equal(count, 1, 'the largest bigint is a real id')
  const linked = await send('POST', '/entries', {
    body: { data: { type: 'entry', attributes: { amount: '1' }, relationships: { account: { data: { type: 'account', id: '99999999999999999999' } } } } },
  })
  assertErrors(t, linked, [{ status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/account/data' }])
  const filtered = await send('GET', '/entries?filter[account_id]=99999999999999999999')
  assertErrors(t, filtered, [{ status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter[account_id]' }])
  const like = await send('GET', `/accounts?${filter([{ name: 'id', op: 'like', val: '9%' }])}`)
  assertErrors(t, like, [{ status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter', detail: /'like' is not allowed on 'id' \(decimal\)/ }])
  const text = await send('GET', `/accounts?${filter([{ name: 'id', op: 'eq', field: 'name' }])}`)
  assertErrors(t, text, [{ status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter' }])
})

t.test('text ids: client-generated, matched against the pattern, 404 without a query when they cannot exist, 409 twice', async (t) => {
  const created = await send('POST', '/tags', { body: { data: { type: 'tag', id: 'big-spender', attributes: { label: 'Big spender' } } } })
  t.equal(created.status, 201)
  t.equal(created.body.data.id, 'big-spender')
  t.equal(created.body.data.links.self, '/tags/big-spender')
  t.equal((await send('GET', '/tags/big-spender')).status, 200)

  const twice = await send('POST', '/tags', { body: { data: { type: 'tag', id: 'big-spender', attributes: { label: 'again' } } } })
  t.equal(twice.status, 409)
  t.equal(twice.body.errors[0].code, 'FJA_UNIQUE_VIOLATION')

  for (const id of ['Big', 'big spender', '-big', 'a'.repeat(33), 'big-']) {
    const refused = await send('POST', '/tags', { body: { data: { type: 'tag', id, attributes: { label: 'x' } } } })
    assertErrors(t, refused, [{ status: 422, code: 'FJA_VALIDATION', pointer: '/data/id' }])
  }
  const missing = await send('POST', '/tags', { body: { data: { type: 'tag', attributes: { label: 'x' } } } })
  t.equal(missing.status, 422, 'clientIds: required')

  for (const id of ['Big', 'big%20spender', 'a'.repeat(33), 'x%00y']) {
    let response: TestResponse | undefined
    const count = await statements(async () => { response = await send('GET', `/tags/${id}`) })
    assertErrors(t, response as TestResponse, [{ status: 404, code: 'FJA_RESOURCE_NOT_FOUND' }])
    t.equal(count, 0, `${id}: no query`)
  }
  t.equal((await send('GET', `/tags/${'a'.repeat(32)}`)).status, 404, 'the longest id is asked')

  await send('POST', '/tags', { body: { data: { type: 'tag', id: 'red', attributes: { label: 'Red' } } } })
  const acct = await createAccount({ name: 'tagged' }, { tags: { data: [{ type: 'tag', id: 'red' }, { type: 'tag', id: 'big-spender' }] } })
  t.equal(acct.status, 201)
  const accountId = acct.body.data.id as string
  const badLink = await send('POST', `/accounts/${accountId}/relationships/tags`, { body: { data: [{ type: 'tag', id: 'NOPE' }] } })
  assertErrors(t, badLink, [{ status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/0' }])
  const reverse = await send('GET', '/tags/red/accounts')
  t.same(reverse.body.data.map((item: any) => item.id), [accountId])
  const included = await send('GET', `/accounts/${accountId}?include=tags`)
  t.same(included.body.data.relationships.tags.data.map((item: any) => item.id).sort(), ['big-spender', 'red'])
  const byTag = await send('GET', '/accounts?filter[tags_id]=red')
  t.same(byTag.body.data.map((item: any) => item.id), [accountId])
  const prefix = await send('GET', `/tags?${filter([{ name: 'id', op: 'startswith', val: 'big' }])}`)
  t.same(prefix.body.data.map((item: any) => item.id), ['big-spender'], 'a text id is a string for the operators')
  const compared = await send('GET', `/tags?${filter([{ name: 'id', op: 'ne', field: 'label' }])}`)
  t.equal(compared.status, 200, 'a text id compares with a string attribute')
  t.equal(compared.body.data.length, 2)
  const entryWithTag = await send('POST', '/entries', {
    body: { data: { type: 'entry', attributes: { amount: '2' }, relationships: { account: { data: { type: 'account', id: accountId } }, tag: { data: { type: 'tag', id: 'Red' } } } } },
  })
  assertErrors(t, entryWithTag, [{ status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/tag/data' }])
  const removed = await send('DELETE', '/tags/red')
  t.equal(removed.status, 200)
})

t.test('numeric and bigint attributes round-trip exactly, filter and sort as numbers', async (t) => {
  await emptyAccounts()
  if (engine === 'postgres') await sql`alter sequence accounts_id_seq restart with 9007199254740993`.execute(db)
  else if (engine === 'mysql') await restartIds(db, 'accounts', FIRST)
  const values = [
    { name: 'nine', big: '9', balance: '9.000001', ratio: 0.25 },
    { name: 'ten', big: '10', balance: '10.5', ratio: 10 },
    { name: 'hundred', big: '100', balance: '99999999999999.999999', ratio: -3.125 },
    { name: 'max', big: INT8_MAX, balance: '-99999999999999.999999', ratio: null },
  ]
  const ids: Record<string, string> = {}
  for (const value of values) {
    const created = await createAccount(value)
    t.equal(created.status, 201, value.name)
    ids[value.name] = created.body.data.id
  }
  const read = await send('GET', `/accounts/${ids.hundred}`)
  const ten = await send('GET', `/accounts/${ids.ten}`)
  if (testEngine() === 'sqlite') {
    // SQLite stores a numeric column as a REAL: 15 significant digits, no scale (docs/databases.md).
    t.same(read.body.data.attributes, { name: 'hundred', big: '100', balance: '100000000000000', ratio: -3.125, small: null })
    t.equal(ten.body.data.attributes.balance, '10.5', 'SQLite: a REAL, without the scale')
  } else {
    t.same(read.body.data.attributes, { name: 'hundred', big: '100', balance: '99999999999999.999999', ratio: -3.125, small: null })
    t.equal(ten.body.data.attributes.balance, '10.500000', 'numeric(20,6) answers at its scale')
  }
  t.match(ten.text, /"ratio":10[,}]/)

  const names = async (query: string): Promise<string[]> => {
    const response = await send('GET', `/accounts?${query}`)
    t.equal(response.status, 200, query)
    return response.body.data.map((item: any) => item.attributes.name)
  }
  t.same(await names(`${filter([{ name: 'big', op: 'gt', val: '10' }])}&sort=big`), ['hundred', 'max'], 'gt on a bigint compares numbers, not text')
  t.same(await names(`${filter([{ name: 'big', op: 'lt', val: '100' }])}&sort=big`), ['nine', 'ten'])
  t.same(await names(`${filter([{ name: 'big', op: 'eq', val: INT8_MAX }])}`), ['max'])
  t.same(await names(`filter[big]=${INT8_MAX}`), ['max'])
  t.same(await names(`${filter([{ name: 'big', op: 'between', val: ['9', '10'] }])}&sort=big`), ['nine', 'ten'])
  t.same(await names(`${filter([{ name: 'balance', op: 'gt', val: '9.5' }])}&sort=balance`), ['ten', 'hundred'])
  t.same(await names(`${filter([{ name: 'balance', op: 'lt', val: '9.000002' }])}&sort=balance`), ['max', 'nine'])
  t.same(await names(`${filter([{ name: 'balance', op: 'eq', val: '10.5' }])}`), ['ten'], 'equal as numbers: 10.5 = 10.500000')
  t.same(await names(`${filter([{ name: 'balance', op: 'in_', val: ['99999999999999.999999', '9.000001'] }])}&sort=balance`), ['nine', 'hundred'])
  t.same(await names(`${filter([{ name: 'ratio', op: 'ge', val: 0.25 }])}&sort=-ratio`), ['ten', 'nine'])
  t.same(await names('sort=big'), ['nine', 'ten', 'hundred', 'max'], 'sorted as numbers')
  t.same(await names('sort=-balance'), ['hundred', 'ten', 'nine', 'max'])
  t.same(await names(`${filter([{ name: 'big', op: 'gt', field: 'balance' }])}&sort=big`), ['max'], 'two exact numbers compare')
  t.same(await names(`${filter([{ name: 'ratio', op: 'lt', field: 'big' }])}&sort=big`), ['nine', 'hundred'], 'a number with an exact number')

  const bad = await send('GET', `/accounts?${filter([{ name: 'big', op: 'gt', val: '1e3' }])}`)
  assertErrors(t, bad, [{ status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter', detail: /not a valid value for 'big' \(decimal\)/ }])
  const number = await send('GET', `/accounts?${filter([{ name: 'big', op: 'gt', val: 10 }])}`)
  t.equal(number.status, 400, 'an exact number is filtered with a string')
  const like = await send('GET', `/accounts?${filter([{ name: 'balance', op: 'like', val: '1%' }])}`)
  t.equal(like.status, 400, 'like is for text')
  const outOfRange = await send('GET', `/accounts?${filter([{ name: 'big', op: 'eq', val: '9223372036854775808' }])}`)
  t.equal(outOfRange.status, 400)

  const invalid = await createAccount({ name: 'x', big: '9223372036854775808', balance: '1.5e3', ratio: '1' })
  assertErrors(t, invalid, [
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/balance' },
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/big' },
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/ratio' },
  ])
  const numberForString = await createAccount({ name: 'x', big: 12 })
  assertErrors(t, numberForString, [{ status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/big' }])
})

t.test('an integer attribute over a bigint beyond 2^53 fails loudly instead of rounding', { skip: onlyOn(['postgres', 'mysql'], 'better-sqlite3 reads integers as JavaScript numbers, exact to 2^53 (docs/databases.md)') }, async (t) => {
  await emptyAccounts()
  await db.insertInto('accounts').values({ name: 'safe', big: '9007199254740991' }).execute()
  const safe = await send('GET', '/lossy')
  t.equal(safe.status, 200)
  t.same(safe.body.data.map((item: any) => item.attributes.big), [9007199254740991], 'a safe integer is a number')
  await db.insertInto('accounts').values({ name: 'unsafe', big: '9007199254740993' }).execute()
  logLines.length = 0
  const unsafe = await send('GET', '/lossy')
  assertErrors(t, unsafe, [{ status: 500, code: 'FJA_INTERNAL' }])
  t.match(logLines.map((line) => line.err?.message).join('\n'), /9007199254740993 of the integer attribute 'big' is beyond Number\.MAX_SAFE_INTEGER.*format: 'int64'/)
})

t.test('cannot write an integer attribute beyond 2^53: a 422, not a row that can no longer be read', async (t) => {
  await emptyAccounts()
  // 9007199254740993 reads as 9007199254740992 (2^53), which is not a safe integer either: it would be stored, then
  // fail every read of the row.
  for (const big of ['9007199254740993', '9007199254740992', '-9007199254740993', '1e300']) {
    const refused = await send('POST', '/lossy', { body: `{"data":{"type":"lossy","attributes":{"big":${big}}}}` })
    assertErrors(t, refused, [{ status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/big', detail: /beyond Number\.MAX_SAFE_INTEGER.*int64/ }])
  }
  const { rows } = await sql<{ n: string | number }>`select count(*) as n from accounts`.execute(db)
  t.equal(String(rows[0].n), '0', 'nothing written')
  // The largest safe integer passes the reader; the row then fails on the table's own rule (`name` is NOT NULL and
  // `lossy` does not declare it): a 422 from the database, not from the reader.
  const safe = await send('POST', '/lossy', { body: { data: { type: 'lossy', attributes: { big: 9007199254740991 } } } })
  t.equal(safe.status, 422)
  t.notMatch(JSON.stringify(safe.body.errors), /MAX_SAFE_INTEGER/)
  const updated = await send('PATCH', '/lossy/1', { body: '{"data":{"type":"lossy","id":"1","attributes":{"big":9007199254740993}}}' })
  assertErrors(t, updated, [{ status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/big', detail: /beyond Number\.MAX_SAFE_INTEGER/ }])
})

t.test('the OpenAPI document describes each id kind', async (t) => {
  const schemas = (app as any).swagger().components.schemas
  t.same(schemas['account.id'], { type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$', description: 'A 64-bit integer (at most 9223372036854775807), as a string.' })
  t.same(schemas['tag.id'], { type: 'string', pattern: '^(?:[a-z0-9]+(?:-[a-z0-9]+)*)$', maxLength: 32, description: 'A text id.' })
  t.same(schemas['account.resource'].properties.attributes.properties.big, { anyOf: [{ type: 'string', format: 'int64' }, { type: 'null' }] })
  const items = schemas['account.filter-item'].anyOf as Array<Record<string, any>>
  const big = items.find((item) => item.properties?.name?.enum?.[0] === 'big')
  t.same(big?.properties.op.enum, ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'between', 'in_', 'notin_', 'is_', 'isnot'], 'ordered, not text')
  t.ok(big?.properties.field.enum.includes('id') && big?.properties.field.enum.includes('balance') && big?.properties.field.enum.includes('ratio'))
  t.notOk(big?.properties.field.enum.includes('name'))
})

t.test('id declarations are checked at registration', async (t) => {
  const declare = (id: unknown): AnyResourceDeclaration => ({ type: 'thing', id } as AnyResourceDeclaration)
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown kind', { kind: 'serial' }, /unknown id kind 'serial' \(integer, bigint, uuid or text\)/],
    ['a text id without a pattern', { kind: 'text' }, /a text id needs a `pattern`/],
    ['an empty pattern', { kind: 'text', pattern: '' }, /a text id needs a `pattern`/],
    ['an invalid pattern', { kind: 'text', pattern: '[a-z' }, /not a valid regular expression/],
    ['a pattern escaping its anchors', { kind: 'text', pattern: 'a)|(b' }, /not a valid regular expression/],
    ['a pattern with flags', { kind: 'text', pattern: /[a-z]+/i }, /flags 'i' are not supported/],
    ['a pattern on a bigint id', { kind: 'bigint', pattern: /[0-9]+/ }, /`pattern` is for text ids only, not bigint ids/],
    ['a maxLength on a uuid id', { kind: 'uuid', maxLength: 36 }, /`maxLength` is for text ids only/],
    ['a zero maxLength', { kind: 'text', pattern: '.+', maxLength: 0 }, /`maxLength` must be a positive integer/],
    ['an id that is not an object', 'bigint', /must be an object/],
  ]
  for (const [label, id, message] of cases) {
    const broken = await documentedFastify()
    t.teardown(() => broken.close())
    const error = await broken.register(jsonApi, { db, resources: [declare(id)] }).ready().then(() => undefined, (thrown: unknown) => thrown)
    t.ok(error instanceof ResourceConfigError, `${label}: a ResourceConfigError`)
    t.match((error as Error).message, /resource 'thing', field 'id'/, label)
    t.match((error as Error).message, message, label)
  }
  await sql`create table thing (id ${sql.raw(keyType)} primary key)`.execute(db)
  t.teardown(async () => { await sql`drop table thing`.execute(db) })
  const string = await build([{ type: 'thing', id: { kind: 'text', pattern: '[a-z]+' }, clientIds: 'required' }])
  t.ok(string, 'a pattern may be given as its source')
})

t.test('a text id that nothing assigns: a warning at registration naming the resource, and a 422 at /data/id, not a bare 422', async (t) => {
  // `not null`: SQLite lets a primary key that is not an `integer primary key` be NULL, unless it says so.
  await sql`create table memos (slug ${sql.raw(keyType)} not null primary key, body text not null, owner text not null)`.execute(db)
  t.teardown(async () => { await sql`drop table memos`.execute(db) })
  const memo = defineResource({
    type: 'memo',
    path: '/memos',
    table: 'memos',
    id: { column: 'slug', kind: 'text', pattern: /[a-z]+/ },
    attributes: { body: { schema: Type.String(), required: true } },
  })
  // with a logger: a warning in the log
  const lines: Array<{ level: number, msg: string }> = []
  const logged = await build([memo], { logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  t.match(lines, [{ level: 40, msg: /^fastify-jsonapi: resource 'memo', field 'id': a text id is never assigned .* Set clientIds to 'required'/ }])
  // without one: a process warning (Fastify without a logger drops log.warn)
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { warnings.push(warning) }
  process.on('warning', onWarning)
  await build([memo])
  await new Promise((resolve) => setImmediate(resolve))
  process.off('warning', onWarning)
  t.match(warnings, [{ name: 'Warning', code: 'FJA_DECLARATION_WARNING', message: /resource 'memo', field 'id'/ }])
  // the create fails with a pointer at the id and says why
  const created = await injectJsonApi(logged, 'POST', '/memos', { body: { data: { type: 'memo', attributes: { body: 'x' } } } })
  assertErrors(t, created, [{ status: 422, code: 'FJA_NOT_NULL_VIOLATION', pointer: '/data/id', detail: /a new 'memo' gets no id: clients may not send one \(clientIds: 'forbidden'\) and the database assigns none/ }])
  // a NOT NULL column that no field writes: named, at the resource object
  const withIds = await build([{ ...memo, clientIds: 'required' }])
  const unnamed = await injectJsonApi(withIds, 'POST', '/memos', { body: { data: { type: 'memo', id: 'one', attributes: { body: 'x' } } } })
  assertErrors(t, unnamed, [{ status: 422, code: 'FJA_NOT_NULL_VIOLATION', pointer: '/data', meta: { column: 'owner' }, detail: /a required value \(column 'owner', which no field of 'memo' writes\) is missing/ }])
  t.same((await sql<{ n: string | number }>`select count(*) as n from memos`.execute(db)).rows.map((row) => ({ n: Number(row.n) })), [{ n: 0 }], 'nothing written')
  const required = await injectJsonApi(withIds, 'POST', '/memos', { body: { data: { type: 'memo', attributes: { body: 'x' } } } })
  t.equal(required.status, 422, 'clientIds required: a create without an id is refused before any SQL')
})
