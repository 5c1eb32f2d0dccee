import t from 'tap'
import { fakePgPool } from '../../helpers/fake-pg-pool.js'
import { CompiledQuery, Kysely, PostgresDialect, type Driver, type LogEvent } from 'kysely'
import { createPostgresDatabase, JsonApiPostgresDialect } from '../../../lib/index.js'
import { createEmbeddedDatabase } from '../../../lib/embedded.js'
import { statementRunnerOf } from '../../../lib/database/statement-runner.js'
import { KyselyRepository } from '../../../lib/repository/kysely/kysely-repository.js'
import { Memo } from '../../../lib/schema/memo.js'
import { onPostgresServer } from '../../helpers/engine.js'

// Single statements outside transactions, offered by the adapter of the library's dialect (JsonApiPostgresDialect)
// and sent through its driver without Kysely's executor: these tests hold that path to what Kysely's executor does.

const url = process.env.DATABASE_URL
const events: LogEvent[] = []
const opened = !onPostgresServer()
  ? await createEmbeddedDatabase<any>({ log: (event) => { events.push(event) } })
  : await createPostgresDatabase<any>({ connectionString: url, pool: { max: 1 }, log: (event) => { events.push(event) } })
const { db } = opened
t.teardown(() => opened.close())

const runner = statementRunnerOf(db)
t.ok(runner, 'a database the library made offers single statements')
if (runner === undefined) throw new Error('no runner')

t.beforeEach(() => { events.length = 0 })

/** The library's dialect, counting the connections Kysely's executor asks its driver for. */
class CountingDialect extends JsonApiPostgresDialect {
  acquired = 0

  override createDriver (): Driver {
    const driver = super.createDriver()
    const acquire = driver.acquireConnection.bind(driver)
    driver.acquireConnection = () => {
      this.acquired++
      return acquire()
    }
    return driver
  }
}

t.test('a statement answers its rows, and is logged as Kysely logs it, the first on a connection and the next', async (t) => {
  for (const round of [1, 2]) {
    events.length = 0
    const query = CompiledQuery.raw('select $1::int + 1 as n', [41])
    t.same(await runner(query), [{ n: 42 }], `round ${round}`)
    t.equal(events.length, 1)
    const [event] = events
    t.equal(event.level, 'query')
    t.equal(event.query, query, 'the compiled query itself')
    t.type(event.queryDurationMillis, 'number')
    t.ok(event.queryDurationMillis >= 0)
  }
})

t.test('a failed statement rejects with the database error, is logged as an error, and its connection stays', async (t) => {
  const pid = async (): Promise<unknown> => (await runner(CompiledQuery.raw('select pg_backend_pid() as pid')))[0]
  const before = await pid()
  events.length = 0
  const failure = await runner(CompiledQuery.raw('select 1 / $1::int as n', [0])).then(() => undefined, (error: unknown) => error)
  t.match(failure, { code: '22012', message: /division by zero/ })
  t.equal(events.length, 1, 'an error event, and no query event')
  t.match(events[0], { level: 'error', error: failure, query: { sql: 'select 1 / $1::int as n' } })
  // A pool of one connection: the next statement runs on the same backend (pool.query would have closed it).
  t.same(await pid(), before, 'the same connection serves the next statement')
})

t.test('statements skip Kysely\'s executor once Kysely has met their connection', async (t) => {
  const releases: number[] = []
  const dialect = new CountingDialect({ pool: fakePgPool('twice', releases, { count: 0 }, true) as never })
  const twice = new Kysely<any>({ dialect })
  const run = statementRunnerOf(twice)
  if (run === undefined) throw new Error('no runner')
  await t.rejects(run(CompiledQuery.raw('select 1')), { message: 'could not send' }, 'the first answer counts')
  t.equal(dialect.acquired, 1, 'the first statement goes through Kysely: its driver is not initialised yet')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(releases, [1], 'the connection is given back once')
  await t.rejects(run(CompiledQuery.raw('select 1')), { message: 'could not send' }, 'the first answer counts')
  t.equal(dialect.acquired, 1, 'the next one does not')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(releases, [1, 2], 'and gives its connection back once')
  await twice.destroy()
  await t.rejects(run(CompiledQuery.raw('select 1')), { message: /destroyed/ }, 'a destroyed instance runs nothing')
})

t.test('a query that throws, or a pool that throws, is a failure of the statement, given as mapError of it', async (t) => {
  class Mapped extends Error {
    constructor (readonly original: unknown) { super('mapped') }
  }
  const mapError = (error: unknown): unknown => new Mapped(error)
  const failure = await runner(CompiledQuery.raw('select 1 / $1::int as n', [0]), mapError).then(() => undefined, (error: unknown) => error)
  t.type(failure, Mapped, 'the mapped error')
  t.match((failure as Mapped).original, { code: '22012' }, 'of the database error')
  t.equal(events.length, 1)
  t.equal(events[0].level, 'error')
  t.equal((events[0] as { error: unknown }).error, (failure as Mapped).original, 'the log sees the database error')
  t.same(await runner(CompiledQuery.raw('select 1 as n'), mapError), [{ n: 1 }], 'rows are not mapped')

  const releases: number[] = []
  const throws = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: fakePgPool('throws', releases, { count: 0 }, true) as never }) })
  const run = statementRunnerOf(throws)!
  await t.rejects(run(CompiledQuery.raw('select 1'), mapError), { message: 'mapped', original: { message: 'cannot serialize a parameter' } }, 'through Kysely')
  const thrown = await run(CompiledQuery.raw('select 1'), mapError).then(() => undefined, (error: unknown) => error)
  t.type(thrown, Mapped, 'and straight')
  t.match((thrown as Mapped).original, { message: 'cannot serialize a parameter' })
  t.same(releases, [1, 2], 'each gives its connection back')

  let connects = 0
  const broken = { connect (callback: (error: undefined, client: unknown, release: () => void) => void) {
    if (++connects > 1) throw new Error('pool broken')
    const client = { query: (_: string, __: unknown[], answer: (error: undefined, result: unknown) => void) => { answer(undefined, { rows: [], command: 'SELECT' }) }, release () {} }
    callback(undefined, client, () => {})
  }, end: async () => {} }
  const brokenDb = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: broken as never }) })
  const runBroken = statementRunnerOf(brokenDb)!
  t.same(await runBroken(CompiledQuery.raw('select 1')), [], 'the pool works once')
  const fromPool = await runBroken(CompiledQuery.raw('select 1'), mapError).then(() => undefined, (error: unknown) => error)
  t.type(fromPool, Mapped)
  t.match((fromPool as Mapped).original, { message: 'pool broken' })
})

t.test('no single statements on a transaction, an instance with a plugin, Kysely\'s own dialect or one with connection hooks', async (t) => {
  await db.transaction().execute(async (trx) => {
    t.equal(statementRunnerOf(trx), undefined)
  })
  t.equal(statementRunnerOf(db.withSchema('public')), undefined)
  t.equal(statementRunnerOf(db.withPlugin({ transformQuery: (args) => args.node, transformResult: async (args) => args.result })), undefined)
  const pool = fakePgPool('twice', []) as never
  t.equal(statementRunnerOf(new Kysely<any>({ dialect: new PostgresDialect({ pool }) })), undefined)
  t.equal(statementRunnerOf(new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool, onReserveConnection: async () => {} }) })), undefined)
  t.equal(statementRunnerOf(new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool, onCreateConnection: async () => {} }) })), undefined)
  t.ok(statementRunnerOf(new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool }) })), 'your own Kysely on the library\'s dialect has them')
})

t.test('the repository runs its single statements that way on the library\'s dialect, and through Kysely on any other', async (t) => {
  const seen: Array<[string, unknown[]]> = []
  const client = {
    query (text: string, values: unknown[], answer: (error: Error | undefined, result?: unknown) => void) {
      seen.push([text, values])
      setImmediate(() => { answer(undefined, { rows: [{ id: 7, name: 'ada' }], command: 'SELECT' }) })
    },
    release () {},
  }
  const pool = {
    connect (callback: (error: Error | undefined, client: unknown, release: () => void) => void) { callback(undefined, client, () => {}) },
    end: async () => {},
  }
  const resource = { table: 'users', idColumn: 'id', type: 'user', memo: new Memo(), computedSelects: new Map() } as never
  const layer = { resource, columns: ['name'], where: undefined, sort: [], page: undefined, include: [] } as never
  const dialect = new CountingDialect({ pool: pool as never })
  const repository = new KyselyRepository(new Kysely<any>({ dialect }))
  for (let i = 0; i < 3; i++) t.same(await repository.findMany(layer), [{ id: 7, name: 'ada' }])
  t.equal(dialect.acquired, 1, 'Kysely met the connection once; the next statements went straight')
  t.same(seen, Array(3).fill(['select "id", "name" from "users"', []]))
  await repository.transaction(async (inner) => { await inner.findMany(layer) })
  t.equal(dialect.acquired, 2, 'a transaction goes through Kysely')
})
