/**
 * The example app on SQLite (`better-sqlite3`, through `createSqliteDatabase`) answers what it answers on the test
 * database (PGlite, or PostgreSQL with `DATABASE_URL`): both seeded alike, every request below is sent to both and
 * must give the same status, the same document (valid JSON:API, as the OpenAPI document declares it) and the same
 * number of statements. Then what only SQLite can get wrong: its errors as JSON:API errors, nothing half-written.
 */
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { buildApp } from '../../examples/app/app.js'
import { migrateToLatest } from '../../examples/app/migrations.js'
import { seed } from '../../examples/app/seed.js'
import { createSqliteDatabase } from '../../lib/index.js'
import { openTestDatabase, StatementCounter } from '../helpers/database.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'

const reference = await openTestDatabase()
await seed(reference.db)
const sqliteCounter = new StatementCounter()
const sqlite = await createSqliteDatabase<any>({ log: sqliteCounter.log })
await migrateToLatest(sqlite.db)
await seed(sqlite.db)

const referenceApp = await buildApp({ db: reference.db })
const sqliteApp = await buildApp({ db: sqlite.db })
await referenceApp.ready()
await sqliteApp.ready()
t.teardown(async () => {
  await referenceApp.close()
  await sqliteApp.close()
  await reference.close()
  await sqlite.close()
})

/** What differs between two databases by design: the day a row was created, the random ids of photos. */
function comparable (text: string): string {
  return text
    .replace(/"date_create":"\d{4}-\d{2}-\d{2}"/g, '"date_create":"…"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/"etag":"[^"]*"|W\/\\"[^"]*\\"/g, '<etag>')
}

async function both (app: 'read' | 'write', method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, options: TestRequest = {}): Promise<[TestResponse, TestResponse]> {
  reference.counter.reset()
  const onReference = await injectJsonApi(referenceApp, method, url, options)
  const referenceStatements = reference.counter.count
  sqliteCounter.reset()
  const onSqlite = await injectJsonApi(sqliteApp, method, url, options)
  // An unpaged read (`page[size]=0`) reads window by window on SQLite: no cursor to declare, one statement fewer.
  const streamed = url.includes('page[size]=0')
  if (app === 'read' && sqliteCounter.count !== referenceStatements - (streamed ? 1 : 0)) {
    throw new Error(`${method} ${url}: ${sqliteCounter.count} statements on SQLite, ${referenceStatements} on the reference:\n${sqliteCounter.statements.join('\n')}`)
  }
  return [onReference, onSqlite]
}

async function same (t: Test, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, options: TestRequest = {}): Promise<TestResponse> {
  const [onReference, onSqlite] = await both(method === 'GET' ? 'read' : 'write', method, url, options)
  t.equal(onSqlite.status, onReference.status, `${method} ${url}: the same status (${onReference.status})`)
  t.equal(comparable(onSqlite.text), comparable(onReference.text), `${method} ${url}: the same document`)
  return onSqlite
}

/** A date as node-postgres reads one (local midnight), as its day. */
const day = (date: Date): string => `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`

const filter = (items: unknown): string => `filter=${encodeURIComponent(JSON.stringify(items))}`

t.test('reads: the same documents and statement counts', async (t) => {
  const urls = [
    '/users', '/users/1', '/users/2?include=computers,group,bio', '/users?include=computers.owner,posts',
    '/computers', '/computers?include=owner', '/groups?include=users', '/parents?include=kids', '/children/1/guardians',
    '/users/1/computers', '/users/1/relationships/computers', '/computers/1/relationships/owner', '/photos', '/notes',
    '/users?sort=age', '/users?sort=-age', '/users?sort=-name&page[size]=2', '/users?sort=age&page[size]=1&page[number]=2',
    '/computers?sort=serial', '/computers?sort=-serial,name', '/computers?sort=owner.name', '/computers?sort=-owner.age',
    '/users?fields[user]=name,age', '/users?page[size]=0', '/users?page[size]=0&include=computers',
    '/users?filter[name]=ada', '/users?filter[age]=85', '/users?filter[email]=null',
    `/users?${filter([{ name: 'age', op: 'gt', val: 40 }])}`,
    `/users?${filter([{ name: 'age', op: 'in_', val: [36, 85] }])}`,
    `/users?${filter([{ name: 'age', op: 'notin_', val: [36] }])}`,
    `/users?${filter([{ name: 'age', op: 'between', val: [30, 40] }])}`,
    `/users?${filter([{ name: 'email', op: 'is_', val: null }])}`,
    `/users?${filter([{ or: [{ name: 'name', op: 'eq', val: 'ada' }, { name: 'age', op: 'is_', val: null }] }])}`,
    `/users?${filter([{ not: { name: 'name', op: 'eq', val: 'ada' } }])}`,
    `/computers?${filter([{ name: 'name', op: 'like', val: '%Engine%' }])}`,
    `/computers?${filter([{ name: 'name', op: 'like', val: '%ENGINE%' }])}`,
    `/computers?${filter([{ name: 'name', op: 'ilike', val: '%ENGINE%' }])}`,
    `/computers?${filter([{ name: 'name', op: 'notilike', val: '%engine%' }])}`,
    `/computers?${filter([{ name: 'serial', op: 'startswith', val: 'UNI' }])}`,
    `/computers?${filter([{ name: 'serial', op: 'endswith', val: '-1' }])}`,
    `/computers?${filter([{ name: 'name', op: 'like', val: '%\\_%' }])}`,
    `/posts?${filter([{ name: 'body', op: 'match', val: 'engine' }])}`,
    `/posts?${filter([{ name: 'body', op: 'match', val: 'relay' }])}`,
    `/users?${filter([{ name: 'computers', op: 'any', val: { name: 'name', op: 'ilike', val: '%univac%' } }])}`,
    `/computers?${filter([{ name: 'owner', op: 'has', val: { name: 'age', op: 'gt', val: 50 } }])}`,
    `/parents?${filter([{ name: 'kids', op: 'any', val: { name: 'name', op: 'eq', val: 'Dave' } }])}`,
    `/users?${filter([{ name: 'words', op: 'in', val: ['cobol', 'nothing'] }])}`,
    `/photos?${filter([{ name: 'words', op: 'jsonb_contains', val: { sky: 'orange' } }])}`,
    `/photos?${filter([{ name: 'words', op: 'jsonb_contains', val: { sky: 'blue' } }])}`,
    '/users/99', '/users?sort=nothing', `/users?${filter([{ name: 'age', op: 'gt', val: 'old' }])}`,
  ]
  for (const url of urls) await same(t, 'GET', url)
})

t.test('cursor pages walk every row once, in order, with NULLs last', async (t) => {
  for (const sort of ['age', '-age', 'name', '-owner.name']) {
    const type = sort.includes('owner') ? 'computers' : 'users'
    let url: string | undefined = `/${type}?sort=${sort}&page[size]=1&page[after]`
    // The first page of a cursor walk: no cursor yet.
    url = `/${type}?sort=${sort}&page[size]=1`
    const seen: string[] = []
    for (let page = 0; url !== undefined && page < 10; page++) {
      const [onReference, onSqlite] = await both('read', 'GET', url)
      t.equal(onSqlite.status, onReference.status, `${url}: the same status`)
      t.same(onSqlite.body.data.map((item: { id: string }) => item.id), onReference.body.data.map((item: { id: string }) => item.id), `${url}: the same rows`)
      seen.push(...onSqlite.body.data.map((item: { id: string }) => item.id))
      const next = onSqlite.body.links?.next
      url = typeof next === 'string' && next !== '' ? next : undefined
    }
    t.equal(new Set(seen).size, seen.length, `sort=${sort}: no row twice`)
  }
})

t.test('writes: the same answers, and the same rows after them', async (t) => {
  const computer = (attributes: Record<string, unknown>, owner?: string) => ({
    data: { type: 'computer', attributes, ...(owner === undefined ? {} : { relationships: { owner: { data: { type: 'user', id: owner } } } }) },
  })
  await same(t, 'POST', '/computers', { body: computer({ serial: 'S-1', name: 'new' }, '1') })
  await same(t, 'POST', '/computers', { body: computer({ serial: 'S-2', name: 'orphan' }, '99') })
  await same(t, 'POST', '/computers', { body: computer({ serial: 12 }) })
  await same(t, 'PATCH', '/computers/1', { body: { data: { type: 'computer', id: '1', attributes: { name: 'renamed' } } } })
  await same(t, 'PATCH', '/users/1', { body: { data: { type: 'user', id: '1', attributes: { words: ['new', 'words'], age: 37 } } } })
  await same(t, 'GET', '/users/1')
  await same(t, 'POST', '/users', { body: { data: { type: 'user', attributes: { name: 'ken', words: ['unix'] } } } })
  await same(t, 'POST', '/photos', { body: { data: { type: 'photo', attributes: { name: 'Moon', words: { n: 1, sky: 'black' } } } } })
  await same(t, 'PATCH', '/users/1/relationships/computers', { body: { data: [{ type: 'computer', id: '2' }] } })
  await same(t, 'POST', '/parents/1/relationships/kids', { body: { data: [{ type: 'child', id: '2' }] } })
  await same(t, 'DELETE', '/parents/1/relationships/kids', { body: { data: [{ type: 'child', id: '1' }] } })
  await same(t, 'DELETE', '/computers/3')
  await same(t, 'DELETE', '/computers/3')
  await same(t, 'POST', '/operations', {
    headers: { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
    body: {
      'atomic:operations': [
        { op: 'add', data: { type: 'group', lid: 'g', attributes: { name: 'Atomic' } } },
        { op: 'add', data: { type: 'computer', attributes: { name: 'in batch' }, relationships: { owner: { data: { type: 'user', id: '99' } } } } },
      ],
    },
  })
  for (const table of ['users', 'computers', 'groups', 'parent_to_child_associations', 'photos']) {
    // Compared as the API reads them: dates as days (pg gives a Date), photos by name (their ids are random).
    const rows = async (db: Kysely<any>) => JSON.stringify((await db.selectFrom(table).selectAll().orderBy(table === 'photos' ? 'name' : 'id').execute())
      .map((row) => ({
        ...row,
        birth_date: row.birth_date instanceof Date ? day(row.birth_date) : row.birth_date,
        date_create: undefined,
        words: undefined,
        id: table === 'photos' ? undefined : row.id,
      })))
    t.equal(await rows(sqlite.db), await rows(reference.db), `${table}: the same rows on both`)
  }
})

t.test('cannot: a unique violation on SQLite is a 409 and writes nothing', async (t) => {
  await sql`create unique index computers_serial_unique on computers (serial)`.execute(sqlite.db)
  const before = await sqlite.db.selectFrom('computers').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
  const response = await injectJsonApi(sqliteApp, 'POST', '/computers', { body: { data: { type: 'computer', attributes: { serial: 'AE-1815' } } } })
  t.equal(response.status, 409)
  t.equal(response.body.errors[0].code, 'FJA_UNIQUE_VIOLATION')
  const after = await sqlite.db.selectFrom('computers').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
  t.equal(after.n, before.n, 'no row written')
})

