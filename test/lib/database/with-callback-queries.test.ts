import t from 'tap'
import pg from 'pg'
import { Kysely, PostgresDialect, sql } from 'kysely'
import { createPostgresDatabase, withCallbackQueries } from '../../../lib/index.js'
import { onPostgresServer } from '../../helpers/engine.js'

type Callback = (error: Error | null, result?: unknown) => void

/** A stand-in for pg.Client: records how `query` is called and answers through the callback, later. */
class RecordingClient {
  static calls: unknown[][] = []
  static answer: { error?: Error, result?: unknown } = { result: { rows: [{ id: 1 }] } }

  query (config: unknown, values?: unknown, callback?: unknown): unknown {
    RecordingClient.calls.push([config, values, callback])
    const done = (typeof values === 'function' ? values : callback) as Callback | undefined
    if (done === undefined) return Promise.resolve('pg promise mode')
    const { error, result } = RecordingClient.answer
    setImmediate(() => { done(error ?? null, error === undefined ? result : undefined) })
    return undefined
  }
}

const Wrapped = withCallbackQueries(RecordingClient as unknown as typeof pg.Client) as unknown as typeof RecordingClient

t.beforeEach(() => {
  RecordingClient.calls = []
  RecordingClient.answer = { result: { rows: [{ id: 1 }] } }
})

t.test('a query without a callback is built with one, and answers the same promise of the result', async (t) => {
  const client = new Wrapped()
  const answer = await client.query('select $1::int as id', [1])
  t.same(answer, { rows: [{ id: 1 }] })
  t.equal(RecordingClient.calls.length, 1)
  const [config, values, callback] = RecordingClient.calls[0]
  t.equal(config, 'select $1::int as id')
  t.same(values, [1])
  t.type(callback, 'function', 'pg is given the callback with the query')
})

t.test('a config object goes to pg as it is (pg would write the callback into it, and its caller may reuse it)', async (t) => {
  const client = new Wrapped()
  const config = { text: 'select 1', rowMode: 'array' }
  t.equal(await client.query(config), 'pg promise mode')
  t.same(RecordingClient.calls[0], [config, undefined, undefined])
  t.same(config, { text: 'select 1', rowMode: 'array' }, 'nothing written into it')
})

t.test('a failed query rejects with the error pg gives', async (t) => {
  const failure = Object.assign(new Error('relation "nowhere" does not exist'), { code: '42P01' })
  RecordingClient.answer = { error: failure }
  const client = new Wrapped()
  const rejected = await (client.query('select * from nowhere') as Promise<unknown>).then(() => undefined, (error: unknown) => error)
  t.equal(rejected, failure, 'the same error object')
  t.equal((rejected as { code?: string }).code, '42P01')
})

t.test('calls that already have a callback, or are not plain queries, go to pg as they are', async (t) => {
  const client = new Wrapped()
  const callback = (): void => {}
  t.equal(client.query('select 1', [], callback), undefined)
  t.equal(RecordingClient.calls[0][2], callback, 'a callback given third is kept')
  client.query('select 1', callback)
  t.same(RecordingClient.calls[1], ['select 1', callback, undefined], 'a callback given second is kept')
  const submittable = { submit: () => {} }
  t.equal(await client.query(submittable), 'pg promise mode', 'a submittable (a cursor) is left to pg')
  t.same(RecordingClient.calls[2], [submittable, undefined, undefined])
  const withCallback = { text: 'select 1', callback }
  client.query(withCallback)
  t.same(RecordingClient.calls[3], [withCallback, undefined, undefined], 'a config object with its own callback is left to pg')
})

t.test('a class named after its client class; wrapping it again changes nothing', async (t) => {
  const first = withCallbackQueries(pg.Client)
  t.equal(withCallbackQueries(first), first)
  t.equal(withCallbackQueries(withCallbackQueries(pg.Client)).name, 'Client')
  t.equal(first.name, 'Client')
  t.ok(new first() instanceof pg.Client, 'an instance is a pg.Client')
})

t.test('cannot wrap what is not a pg client class', async (t) => {
  t.throws(() => withCallbackQueries(undefined as unknown as typeof pg.Client), { name: 'TypeError', message: /takes a pg client class/ })
  t.throws(() => withCallbackQueries(class {} as unknown as typeof pg.Client), { name: 'TypeError', message: /takes a pg client class/ })
})

const url = process.env.DATABASE_URL
t.test('on PostgreSQL, Kysely runs statements through it, and a failed one rejects with the server error', { skip: !onPostgresServer() ? 'needs a PostgreSQL server (DATABASE_URL=postgres://…)' : false }, async (t) => {
  const pool = new pg.Pool({ connectionString: url, max: 2, Client: withCallbackQueries(pg.Client) })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  t.teardown(() => db.destroy())
  const { rows } = await sql<{ n: number, word: string }>`select ${41}::int + 1 as n, ${'it'}::text as word`.execute(db)
  t.same(rows, [{ n: 42, word: 'it' }])
  const error = await sql`select * from fja_no_such_table`.execute(db).then(() => undefined, (caught: unknown) => caught)
  t.equal((error as { code?: string }).code, '42P01')
  // The pool still serves after a failure, in a transaction too.
  const inside = await db.transaction().execute(async (trx) => (await sql<{ n: number }>`select 7 as n`.execute(trx)).rows)
  t.same(inside, [{ n: 7 }])
})

t.test('createPostgresDatabase builds its pool on it', { skip: !onPostgresServer() ? 'needs a PostgreSQL server (DATABASE_URL=postgres://…)' : false }, async (t) => {
  const database = await createPostgresDatabase({ connectionString: url, pool: { max: 1 } })
  t.teardown(database.close)
  const Client = (database.pool as unknown as { Client: typeof pg.Client }).Client
  t.equal(withCallbackQueries(Client), Client, 'a class withCallbackQueries made')
  t.ok(Client.prototype instanceof pg.Client, 'of pg.Client')
  const { rows } = await sql<{ n: number }>`select 1 as n`.execute(database.db)
  t.same(rows, [{ n: 1 }])
})
