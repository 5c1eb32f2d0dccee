/**
 * The example app on SQLite (`better-sqlite3`, through `createSqliteDatabase`) and on MariaDB (`mysql2`, through
 * `createMysqlDatabase`) answers what it answers on the test database (PGlite, or PostgreSQL with `DATABASE_URL`):
 * each seeded alike, every request below is sent to both and must give the same status, the same document (valid
 * JSON:API, as the OpenAPI document declares it) and the same number of statements. Then what only the engine can get
 * wrong: its errors as JSON:API errors, nothing half-written.
 *
 * MariaDB is the server of `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/`), in a database of its own dropped at
 * the end; without a server there, its half is skipped (not a failure). `.ci/run` always gives it one.
 */
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../examples/app/app.js'
import { migrateToLatest } from '../../examples/app/migrations.js'
import { seed } from '../../examples/app/seed.js'
import { createMysqlDatabase, createSqliteDatabase } from '../../lib/index.js'
import { freshMysqlDatabase, openTestDatabase, StatementCounter, type TestDatabase } from '../helpers/database.js'
import { testEngine } from '../helpers/engine.js'
import { openPreparedDatabase } from '../../examples/shared/prepared-database.js'
import { appSchema } from '../../examples/shared/example-schemas.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'

/** The embedded PGlite with the example app's schema, as the suite opens it by default. */
async function openEmbeddedReference (): Promise<TestDatabase> {
  const counter = new StatementCounter()
  const { database } = await openPreparedDatabase(appSchema, { log: counter.log, warn: () => {} })
  return { db: database.db, counter, close: database.close }
}

/** The test database (PGlite, or PostgreSQL with `DATABASE_URL`), seeded, with the app on it: one per engine compared. */
async function openReference () {
  // PostgreSQL always: the suite's database when it is one, else the embedded PGlite.
  const database = testEngine() === 'postgres' ? await openTestDatabase() : await openEmbeddedReference()
  await seed(database.db)
  const app = await buildApp({ db: database.db })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await database.close()
  })
  return { ...database, app }
}

/** An engine under test: its database (migrated, seeded), its app and its statements. */
interface Engine {
  readonly name: string
  readonly db: Kysely<any>
  readonly app: FastifyInstance
  readonly counter: StatementCounter
  /** Makes `serial` of `computers` unique, as the engine writes it. */
  readonly uniqueSerial: string
  /**
   * The statements an unpaged read (`page[size]=0`) takes beside the reference's: it reads window by window, with
   * no cursor to declare (SQLite: one fewer; MariaDB sets the snapshot's isolation in a statement of its own: as many).
   */
  readonly streamed: number
  /** The reference it is compared with (written to as it is). */
  readonly reference: Awaited<ReturnType<typeof openReference>>
}

async function start (name: string, db: Kysely<any>, counter: StatementCounter, close: () => Promise<void>, uniqueSerial: string, streamed: number): Promise<Engine> {
  await migrateToLatest(db)
  await seed(db)
  const app = await buildApp({ db })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await close()
  })
  return { name, db, app, counter, uniqueSerial, streamed, reference: await openReference() }
}

async function openSqlite (): Promise<Engine> {
  const counter = new StatementCounter()
  const { db, close } = await createSqliteDatabase<any>({ log: counter.log })
  return start('SQLite', db, counter, close, 'create unique index computers_serial_unique on computers (serial)', -1)
}

/** MariaDB in a fresh database, or undefined when no server answers at `MYSQL_URL`. */
async function openMariadb (): Promise<Engine | string> {
  const fresh = await freshMysqlDatabase(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/', 'parity')
  if (typeof fresh === 'string') return fresh
  const counter = new StatementCounter()
  const { db, close } = await createMysqlDatabase<any>({ uri: fresh.url, log: counter.log })
  return start('MariaDB', db, counter, async () => {
    await close()
    await fresh.drop()
  }, 'create unique index computers_serial_unique on computers (serial(100))', 0)
}

/** What differs between two databases by design: the day a row was created, the random ids of photos. */
function comparable (text: string): string {
  return text
    .replace(/"date_create":"\d{4}-\d{2}-\d{2}"/g, '"date_create":"…"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/"etag":"[^"]*"|W\/\\"[^"]*\\"/g, '<etag>')
}

async function both (engine: Engine, app: 'read' | 'write', method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, options: TestRequest = {}): Promise<[TestResponse, TestResponse]> {
  const reference = engine.reference
  reference.counter.reset()
  const onReference = await injectJsonApi(reference.app, method, url, options)
  const referenceStatements = reference.counter.count
  engine.counter.reset()
  const onEngine = await injectJsonApi(engine.app, method, url, options)
  const streamed = url.includes('page[size]=0')
  // A value its column cannot hold fails PostgreSQL's statements; the other engines refuse it before any: no count.
  const refusedByDatabase = onReference.status === 400 && /does not fit the type of its column/.test(onReference.text)
  // PostgreSQL answered as soon as one of the statements it ran side by side failed: let the other one end before the
  // next request counts its own (on a server it may still be running).
  if (refusedByDatabase) await new Promise((resolve) => setTimeout(resolve, 200))
  if (app === 'read' && !refusedByDatabase && engine.counter.count !== referenceStatements + (streamed ? engine.streamed : 0)) {
    throw new Error(`${method} ${url}: ${engine.counter.count} statements on ${engine.name}, ${referenceStatements} on the reference:\n${engine.counter.statements.join('\n')}`)
  }
  return [onReference, onEngine]
}

async function same (t: Test, engine: Engine, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, options: TestRequest = {}): Promise<TestResponse> {
  const [onReference, onEngine] = await both(engine, method === 'GET' ? 'read' : 'write', method, url, options)
  t.equal(onEngine.status, onReference.status, `${method} ${url}: the same status (${onReference.status})`)
  t.equal(comparable(onEngine.text), comparable(onReference.text), `${method} ${url}: the same document`)
  return onEngine
}

/** A date as node-postgres reads one (local midnight), as its day. */
const day = (date: Date): string => `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`

const filter = (items: unknown): string => `filter=${encodeURIComponent(JSON.stringify(items))}`

/** The whole comparison, on one engine. */
function parity (t: Test, engine: Engine): void {
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
    // A value its column cannot hold: PostgreSQL refuses it; the other engines refuse it before the statement.
    '/users?filter[age]=2147483648', '/users?filter[id]=1&filter[age]=-2147483649', '/users?filter[age]=2147483647',
    `/users?${filter([{ name: 'age', op: 'in_', val: [1, 3000000000] }])}&filter[name]=ada`,
    '/computers?filter[owner.age]=9223372036854775808', '/users?filter[group_id]=2147483648',
    `/users?${filter([{ name: 'name', op: 'eq', val: 'a\u0000b' }])}`, `/photos?${filter([{ name: 'words', op: 'jsonb_contains', val: { 'a\u0000': 1 } }])}`,
    ]
    for (const url of urls) await same(t, engine, 'GET', url)
  })

  t.test('cursor pages walk every row once, in order, with NULLs last', async (t) => {
    for (const sort of ['age', '-age', 'name', '-owner.name']) {
      const type = sort.includes('owner') ? 'computers' : 'users'
      let url: string | undefined = `/${type}?sort=${sort}&page[size]=1&page[after]`
      // The first page of a cursor walk: no cursor yet.
      url = `/${type}?sort=${sort}&page[size]=1`
      const seen: string[] = []
      for (let page = 0; url !== undefined && page < 10; page++) {
        const [onReference, onEngine] = await both(engine, 'read', 'GET', url)
        t.equal(onEngine.status, onReference.status, `${url}: the same status`)
        t.same(onEngine.body.data.map((item: { id: string }) => item.id), onReference.body.data.map((item: { id: string }) => item.id), `${url}: the same rows`)
        seen.push(...onEngine.body.data.map((item: { id: string }) => item.id))
        const next = onEngine.body.links?.next
        url = typeof next === 'string' && next !== '' ? next : undefined
      }
      t.equal(new Set(seen).size, seen.length, `sort=${sort}: no row twice`)
    }
  })

  t.test('writes: the same answers, and the same rows after them', async (t) => {
    const computer = (attributes: Record<string, unknown>, owner?: string) => ({
      data: { type: 'computer', attributes, ...(owner === undefined ? {} : { relationships: { owner: { data: { type: 'user', id: owner } } } }) },
    })
    await same(t, engine, 'POST', '/computers', { body: computer({ serial: 'S-1', name: 'new' }, '1') })
    await same(t, engine, 'POST', '/computers', { body: computer({ serial: 'S-2', name: 'orphan' }, '99') })
    await same(t, engine, 'POST', '/computers', { body: computer({ serial: 12 }) })
    await same(t, engine, 'PATCH', '/computers/1', { body: { data: { type: 'computer', id: '1', attributes: { name: 'renamed' } } } })
    await same(t, engine, 'PATCH', '/users/1', { body: { data: { type: 'user', id: '1', attributes: { words: ['new', 'words'], age: 37 } } } })
    await same(t, engine, 'GET', '/users/1')
    await same(t, engine, 'POST', '/users', { body: { data: { type: 'user', attributes: { name: 'ken', words: ['unix'] } } } })
    await same(t, engine, 'POST', '/photos', { body: { data: { type: 'photo', attributes: { name: 'Moon', words: { n: 1, sky: 'black' } } } } })
    await same(t, engine, 'PATCH', '/users/1/relationships/computers', { body: { data: [{ type: 'computer', id: '2' }] } })
    await same(t, engine, 'POST', '/parents/1/relationships/kids', { body: { data: [{ type: 'child', id: '2' }] } })
    await same(t, engine, 'DELETE', '/parents/1/relationships/kids', { body: { data: [{ type: 'child', id: '1' }] } })
    await same(t, engine, 'DELETE', '/computers/3')
    await same(t, engine, 'DELETE', '/computers/3')
    await same(t, engine, 'POST', '/operations', {
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
      t.equal(await rows(engine.db), await rows(engine.reference.db), `${table}: the same rows on both`)
    }
  })

  t.test(`cannot: a unique violation on ${engine.name} is a 409 at the attribute and writes nothing`, async (t) => {
    await sql.raw(engine.uniqueSerial).execute(engine.db)
    const before = await engine.db.selectFrom('computers').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
    const response = await injectJsonApi(engine.app, 'POST', '/computers', { body: { data: { type: 'computer', attributes: { serial: 'AE-1815' } } } })
    t.equal(response.status, 409)
    t.equal(response.body.errors[0].code, 'FJA_UNIQUE_VIOLATION')
    t.equal(response.body.errors[0].source?.pointer, '/data/attributes/serial')
    const after = await engine.db.selectFrom('computers').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
    t.equal(after.n, before.n, 'no row written')
  })
}

// Both opened before the first test starts: a test file ends when its tests have run.
const sqliteEngine = await openSqlite()
const mariadb = await openMariadb()

t.test('SQLite answers as the reference does', async (t) => {
  parity(t, sqliteEngine)
})

t.test('MariaDB answers as the reference does', { skip: typeof mariadb === 'string' ? mariadb : false }, async (t) => {
  parity(t, mariadb as Engine)
})
