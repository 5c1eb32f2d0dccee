import t from 'tap'
import { fakePgPool } from '../../helpers/fake-pg-pool.js'
import { CompiledQuery, Kysely, PostgresDialect, type LogEvent } from 'kysely'
import { createPostgresDatabase } from '../../../lib/index.js'
import { createEmbeddedDatabase } from '../../../lib/embedded.js'
import { runStatementsOnPool, statementRunnerOf } from '../../../lib/database/statement-runner.js'
import { KyselyRepository } from '../../../lib/repository/kysely/kysely-repository.js'

// The statements of the repository run straight on the pool of a database the library made (createPostgresDatabase,
// createEmbeddedDatabase), outside transactions; these tests hold that path to what Kysely's executor does.

const url = process.env.DATABASE_URL
const events: LogEvent[] = []
const opened = url === undefined || url === ''
  ? await createEmbeddedDatabase<any>({ log: (event) => { events.push(event) } })
  : await createPostgresDatabase<any>({ connectionString: url, pool: { max: 1 }, log: (event) => { events.push(event) } })
const { db } = opened
t.teardown(() => opened.close())

const runner = statementRunnerOf(db)
t.ok(runner, 'a database the library made has a runner')
if (runner === undefined) throw new Error('no runner')

t.beforeEach(() => { events.length = 0 })

t.test('a statement answers its rows, and is logged as Kysely logs it', async (t) => {
  const query = CompiledQuery.raw('select $1::int + 1 as n', [41])
  t.same(await runner(query), [{ n: 42 }])
  t.equal(events.length, 1)
  const [event] = events
  t.equal(event.level, 'query')
  t.equal(event.query, query, 'the compiled query itself')
  t.type(event.queryDurationMillis, 'number')
  t.ok(event.queryDurationMillis >= 0)
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

t.test('a query answered twice (pg answers a query it could not send, then again when ready) settles once and releases once', async (t) => {
  const releases: number[] = []
  const checkouts = { count: 0 }
  const fakePool = (behaviour: 'twice' | 'throws'): unknown => fakePgPool(behaviour, releases, checkouts)
  const twice = new Kysely<any>({ dialect: new PostgresDialect({ pool: fakePool('twice') as never }) })
  runStatementsOnPool(twice, fakePool('twice') as never, undefined)
  await t.rejects(statementRunnerOf(twice)!(CompiledQuery.raw('select 1')), { message: 'could not send' }, 'the first answer counts')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(releases, [1], 'the connection is given back once')
  const throws = new Kysely<any>({ dialect: new PostgresDialect({ pool: fakePool('throws') as never }) })
  runStatementsOnPool(throws, fakePool('throws') as never, undefined)
  await t.rejects(statementRunnerOf(throws)!(CompiledQuery.raw('select 1')), { message: 'cannot serialize a parameter' })
  t.same(releases, [1, 2], 'a query that throws gives its connection back')
})

t.test('a failure rejects with mapError of the error, logged as the error itself; a pool that throws is a failure too', async (t) => {
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
  // A pool whose connect throws (it answers through its callback, but a broken one may throw): the statement fails.
  const broken = { connect () { throw new Error('pool broken') } }
  const brokenDb = new Kysely<any>({ dialect: new PostgresDialect({ pool: broken as never }) })
  runStatementsOnPool(brokenDb, broken as never, undefined)
  const thrown = await statementRunnerOf(brokenDb)!(CompiledQuery.raw('select 1'), mapError).then(() => undefined, (error: unknown) => error)
  t.type(thrown, Mapped)
  t.match((thrown as Mapped).original, { message: 'pool broken' })
})

t.test('a transaction, or an instance with a plugin, has no runner: it goes through Kysely', async (t) => {
  await db.transaction().execute(async (trx) => {
    t.equal(statementRunnerOf(trx), undefined)
  })
  t.equal(statementRunnerOf(db.withSchema('public')), undefined)
})

t.test('the repository runs its statements through the runner of its database, and through Kysely on any other', async (t) => {
  const seen: Array<[string, unknown[]]> = []
  const runnerPool = {
    connect (callback: (error: Error | undefined, client: unknown, release: () => void) => void) {
      callback(undefined, {
        query (text: string, values: unknown[], answer: (error: Error | undefined, result?: unknown) => void) {
          seen.push([text, values])
          setImmediate(() => { answer(undefined, { rows: [{ id: 7, name: 'ada' }] }) })
        },
      }, () => {})
    },
  }
  // Kysely's own pool fails every connection: a statement that reached it would fail.
  const kyselyPool = { connect: async () => { throw new Error('went through Kysely') }, end: async () => {} }
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: kyselyPool as never }) })
  const resource = { table: 'users', idColumn: 'id', type: 'user' } as never
  const layer = { resource, columns: ['name'], where: undefined, sort: [], page: undefined, include: [] } as never
  await t.rejects(new KyselyRepository(db).findMany(layer), { message: 'went through Kysely' }, 'no runner: Kysely')
  runStatementsOnPool(db, runnerPool as never, undefined)
  t.same(await new KyselyRepository(db).findMany(layer), [{ id: 7, name: 'ada' }], 'with a runner: the runner')
  t.same(seen, [['select "id", "name" from "users"', []]])
  t.equal(statementRunnerOf(db.withPlugin({ transformQuery: (args) => args.node, transformResult: async (args) => args.result })), undefined, 'an instance with a plugin is another instance')
})
