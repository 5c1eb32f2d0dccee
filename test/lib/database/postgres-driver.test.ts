/**
 * The library's Kysely driver on `pg` (JsonApiPostgresDialect): what `createPostgresDatabase` and
 * `createEmbeddedDatabase` build their Kysely instance with, and what an application can give its own. Every
 * statement of the repository is sent as the library's query object — plain reads, keyset pages, unpaged streams,
 * transactions — and the driver's answers are Kysely's (`rows`, `numAffectedRows`, log events, errors).
 */
import t from 'tap'
import { countRowsQueries } from '../../helpers/rows-query-counter.js'
import { fakePgPool } from '../../helpers/fake-pg-pool.js'
import pg from 'pg'
import { CompiledQuery, Kysely, sql, type LogEvent } from 'kysely'
import { createPostgresDatabase, JsonApiPostgresDialect, KyselyRepository } from '../../../lib/index.js'
import { createEmbeddedDatabase } from '../../../lib/embedded.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { QueryComposer } from '../../../lib/service/query-composer.js'
import { queryTree, pageNode } from '../../../lib/query/query-tree.js'
import { resources } from '../../../examples/app/resources.js'
import { openTestDatabase } from '../../helpers/database.js'
import { onlyOn, onPostgresServer } from '../../helpers/engine.js'

const url = process.env.DATABASE_URL
// The PostgreSQL driver's own tests: on a PostgreSQL server when DATABASE_URL names one, else on the embedded PGlite.
const onPostgres = onPostgresServer()
const events: LogEvent[] = []
const opened = onPostgres
  ? await createPostgresDatabase<any>({ connectionString: url, pool: { max: 1 }, log: (event) => { events.push(event) } })
  : await createEmbeddedDatabase<any>({ log: (event) => { events.push(event) } })
const { db } = opened
t.teardown(() => opened.close())

/** The statements sent as RowsQuery (the library's query object), to tell the two paths apart. */
const sent = countRowsQueries(t.teardown)

t.beforeEach(() => { events.length = 0 })

const pid = async (): Promise<unknown> => (await db.executeQuery(CompiledQuery.raw('select pg_backend_pid() as pid'))).rows[0]

t.test('a statement answers its rows, and Kysely logs it', async (t) => {
  const query = CompiledQuery.raw('select $1::int + 1 as n', [41])
  const before = sent.count
  t.same((await db.executeQuery(query)).rows, [{ n: 42 }])
  t.equal(sent.count, before + 1, 'sent as the library\'s query object')
  t.equal(events.length, 1)
  t.match(events[0], { level: 'query', query: { sql: 'select $1::int + 1 as n' } })
})

t.test('writes answer numAffectedRows as Kysely\'s own dialect does; reads none', async (t) => {
  const table = `driver_rows_${process.pid}`
  await sql`create table ${sql.table(table)} (id int primary key, v text)`.execute(db)
  t.teardown(async () => { await sql`drop table if exists ${sql.table(table)}`.execute(db) })
  t.equal((await db.insertInto(table).values([{ id: 1, v: 'a' }, { id: 2, v: 'b' }, { id: 3, v: 'c' }]).executeTakeFirst()).numInsertedOrUpdatedRows, 3n)
  t.equal((await db.updateTable(table).set({ v: 'x' }).where('id', '<', 3).executeTakeFirst()).numUpdatedRows, 2n)
  t.equal((await db.deleteFrom(table).where('id', '=', 3).executeTakeFirst()).numDeletedRows, 1n)
  t.equal((await db.deleteFrom(table).where('id', '=', 99).executeTakeFirst()).numDeletedRows, 0n)
  const read = await db.executeQuery(CompiledQuery.raw(`select * from ${table} order by id`))
  t.same(read.rows, [{ id: 1, v: 'x' }, { id: 2, v: 'x' }])
  t.equal(read.numAffectedRows, undefined, 'a select affects no rows')
  t.same((await db.updateTable(table).set({ v: 'y' }).where('id', '=', 1).returning(['id', 'v']).execute()), [{ id: 1, v: 'y' }], 'returning')
})

t.test('a failed statement rejects with the database error, is logged as an error, and its connection stays', async (t) => {
  const before = await pid()
  events.length = 0
  const failure = await db.executeQuery(CompiledQuery.raw('select 1 / $1::int as n', [0])).then(() => undefined, (error: unknown) => error)
  t.match(failure, { code: '22012', message: /division by zero/ })
  t.equal(events.length, 1, 'an error event, and no query event')
  t.match(events[0], { level: 'error', error: failure })
  t.same(await pid(), before, 'a pool of one: the same connection serves the next statement')
})

t.test('transactions, isolation and access modes, savepoints', async (t) => {
  const table = `driver_tx_${process.pid}`
  await sql`create table ${sql.table(table)} (id int primary key)`.execute(db)
  t.teardown(async () => { await sql`drop table if exists ${sql.table(table)}`.execute(db) })
  await db.transaction().setIsolationLevel('serializable').execute(async (trx) => {
    t.same((await sql<{ level: string }>`show transaction_isolation`.execute(trx)).rows, [{ transaction_isolation: 'serializable' }])
    await trx.insertInto(table).values({ id: 1 }).execute()
  })
  await t.rejects(db.transaction().execute(async (trx) => {
    await trx.insertInto(table).values({ id: 2 }).execute()
    throw new Error('roll back')
  }), { message: 'roll back' })
  const readOnly = await db.transaction().setAccessMode('read only').execute(async (trx) => (await sql<{ transaction_read_only: string }>`show transaction_read_only`.execute(trx)).rows[0])
  t.same(readOnly, { transaction_read_only: 'on' })
  const trx = await db.startTransaction().execute()
  await trx.insertInto(table).values({ id: 3 }).execute()
  const saved = await trx.savepoint('before "four"').execute()
  await saved.insertInto(table).values({ id: 4 }).execute()
  await saved.rollbackToSavepoint('before "four"').execute()
  await saved.commit().execute()
  t.same((await db.selectFrom(table).select('id').orderBy('id').execute()).map((row) => row.id), [1, 3], 'committed, rolled back, and back to the savepoint')
})

t.test('a plain read, a count, a keyset page, a transaction and an unpaged stream all send the library\'s query object', { skip: onlyOn('postgres', 'the example database is the library\'s PostgreSQL dialect there') }, async (t) => {
  // The example app's database (made by createPostgresDatabase or createEmbeddedDatabase, migrated).
  const example = await openTestDatabase()
  t.teardown(() => example.close())
  await sql`insert into users (name) values ('ada'), ('grace')`.execute(example.db)
  const graph = resolveResources(resources)
  const user = graph.getResource('user')
  const layer = new QueryComposer(graph, undefined).collection(user, queryTree({ page: pageNode(1, 10) }), undefined)
  const repository = new KyselyRepository(example.db)
  const sends = async (label: string, work: () => Promise<unknown>): Promise<void> => {
    const before = sent.count
    await work()
    t.ok(sent.count > before, `${label}: ${sent.count - before} statements sent as RowsQuery`)
  }
  await sends('a plain read', () => repository.findMany(layer))
  await sends('a count', () => repository.count(layer))
  await sends('a keyset page', () => repository.findKeyset!(layer, { limit: 2, fromEnd: false }))
  await sends('a transaction', () => repository.transaction((inner) => inner.findMany(layer)))
  await sends('an unpaged stream', () => repository.scan!(async (_inner, batches) => {
    for await (const batch of batches(layer, 1)) t.ok(batch.length > 0)
  }))
  const before = sent.count
  const rows = await repository.findMany(layer)
  t.equal(sent.count, before + 1, 'one statement, one query object')
  t.same(rows.map((row) => row.name), ['ada', 'grace'])
})

t.test('your own Kysely on a pg pool takes the same path', async (t) => {
  let pool: pg.Pool
  if (onPostgres) {
    pool = new pg.Pool({ connectionString: url, max: 2 })
  } else {
    const [{ PGlite }, { createPgConfig }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/node-postgres')])
    const pglite = new PGlite('memory://')
    await pglite.waitReady
    t.teardown(() => pglite.close())
    pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 } as unknown as pg.PoolConfig)
  }
  const own = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool }) })
  t.teardown(() => own.destroy())
  const before = sent.count
  t.same((await own.executeQuery(CompiledQuery.raw('select $1::text as greeting', ['hello']))).rows, [{ greeting: 'hello' }])
  t.equal(sent.count, before + 1, 'sent as the library\'s query object')
})

t.test('a query answered twice settles once and releases once; a query or a pool that throws is a failure', async (t) => {
  const releases: number[] = []
  const checkouts = { count: 0 }
  const fakePool = (behaviour: 'twice' | 'throws'): unknown => fakePgPool(behaviour, releases, checkouts)
  const twice = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: fakePool('twice') as never }) })
  await t.rejects(twice.executeQuery(CompiledQuery.raw('select 1')), { message: 'could not send' }, 'the first answer counts')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(releases, [1], 'the connection is given back once')
  const throws = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: fakePool('throws') as never }) })
  await t.rejects(throws.executeQuery(CompiledQuery.raw('select 1')), { message: 'cannot serialize a parameter' })
  t.same(releases, [1, 2], 'a query that throws gives its connection back')
  const broken = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: { connect () { throw new Error('pool broken') }, end: async () => {} } as never }) })
  await t.rejects(broken.executeQuery(CompiledQuery.raw('select 1')), { message: 'pool broken' })
  const destroyed = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: fakePool('twice') as never }) })
  await destroyed.destroy()
  await t.rejects(destroyed.executeQuery(CompiledQuery.raw('select 1')), 'a destroyed instance runs nothing')
})

t.test('a stream needs the dialect\'s cursor option, as with Kysely\'s own dialect', async (t) => {
  await t.rejects(async () => {
    for await (const _ of db.selectNoFrom(sql<number>`1`.as('one')).stream()) break
  }, { message: /cursor/ })
})

t.test('a connection hook that fails gives the client back to the pool, and a failed onCreateConnection runs again', async (t) => {
  const releases: number[] = []
  const client = {
    query (_text: string, _values: unknown[], answer: (error: Error | undefined, result?: unknown) => void) {
      setImmediate(() => { answer(undefined, { rows: [{ one: 1 }], command: 'SELECT', rowCount: 1 }) })
    },
    release () { releases.push(1) },
  }
  const pool = { connect (callback: (error: Error | undefined, lent: unknown) => void) { callback(undefined, client) }, end: async () => {} }
  let creates = 0
  const created = new Kysely<any>({
    dialect: new JsonApiPostgresDialect({
      pool: pool as never,
      onCreateConnection: async () => { if (++creates === 1) throw new Error('set-up failed') },
    }),
  })
  t.teardown(() => created.destroy())
  await t.rejects(created.executeQuery(CompiledQuery.raw('select 1 as one')), { message: 'set-up failed' })
  t.same(releases, [1], 'the client went back to the pool')
  t.same((await created.executeQuery(CompiledQuery.raw('select 1 as one'))).rows, [{ one: 1 }], 'the next checkout sets it up again')
  t.equal(creates, 2)
  t.same(releases, [1, 1])

  let reserves = 0
  const reserved = new Kysely<any>({
    dialect: new JsonApiPostgresDialect({
      pool: pool as never,
      onReserveConnection: async () => { if (++reserves === 1) throw new Error('reserve failed') },
    }),
  })
  t.teardown(() => reserved.destroy())
  releases.length = 0
  await t.rejects(reserved.executeQuery(CompiledQuery.raw('select 1 as one')), { message: 'reserve failed' })
  t.same(releases, [1], 'given back after onReserveConnection failed')
  t.same((await reserved.executeQuery(CompiledQuery.raw('select 1 as one'))).rows, [{ one: 1 }])
})
