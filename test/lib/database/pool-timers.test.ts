import t, { type Test } from 'tap'
import { CompiledQuery } from 'kysely'
import type { PoolClient } from 'pg'
import { createPostgresDatabase, type PostgresDatabase } from '../../../lib/index.js'
import { onPostgresServer } from '../../helpers/engine.js'

// The pool of createPostgresDatabase arms its connection timeout only for a checkout that may have to wait: these
// tests count the timers pg-pool arms (by their delay, a value nothing else here uses) and check that a checkout
// that does wait still times out, and that ending the pool serves the checkouts it queued without a timer.

const url = process.env.DATABASE_URL
// The PostgreSQL driver's own tests: on a PostgreSQL server when DATABASE_URL names one, else on the embedded PGlite.
const onPostgres = onPostgresServer()
const skip = !onPostgres && 'needs a PostgreSQL server (DATABASE_URL=postgres://…)'

/** Runs one statement through the database's Kysely instance (its driver borrows a connection of the pool). */
type Run = (query: CompiledQuery) => Promise<unknown[]>

async function open (t: Test, max: number, connectionTimeout: number, closeAfter = true): Promise<PostgresDatabase<any> & { run: Run }> {
  const opened = await createPostgresDatabase<any>({ connectionString: url, connectionTimeout, pool: { max } })
  if (closeAfter) t.teardown(() => opened.close())
  const run: Run = async (query) => (await opened.db.executeQuery(query)).rows as unknown[]
  return { ...opened, run }
}

/** Runs `work`, counting the timers armed meanwhile with `delay` ms. */
async function timersArmed (delay: number, work: () => Promise<void>): Promise<number> {
  const original = globalThis.setTimeout
  let armed = 0
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (ms === delay) armed++
    return original(callback, ms, ...args)
  }) as typeof setTimeout
  try {
    await work()
  } finally {
    globalThis.setTimeout = original
  }
  return armed
}

const SELECT_ONE = CompiledQuery.raw('select 1 as one')

t.test('a checkout an idle connection serves arms no timer', { skip }, async (t) => {
  const { pool, db, run } = await open(t, 3, 4321)
  await Promise.all([run(SELECT_ONE), run(SELECT_ONE), run(SELECT_ONE)])
  t.equal(pool.idleCount, 3, 'three idle connections')
  const armed = await timersArmed(4321, async () => {
    t.same(await run(SELECT_ONE), [{ one: 1 }], 'a statement of the runner')
    await Promise.all([run(SELECT_ONE), run(SELECT_ONE), run(SELECT_ONE)])
    t.same((await db.executeQuery(CompiledQuery.raw('select 2 as two'))).rows, [{ two: 2 }], 'a statement through Kysely')
    const client: PoolClient = await pool.connect()
    client.release()
  })
  t.equal(armed, 0, 'no connection timer')
  t.equal(pool.options.connectionTimeoutMillis, 4321, 'the option is as it was')
})

t.test('a checkout that has to wait arms its timer, and fails once it passes', { skip }, async (t) => {
  const { pool, run } = await open(t, 1, 300)
  const held = await pool.connect()
  let started = 0
  let failure: unknown
  const armed = await timersArmed(300, async () => {
    started = Date.now()
    failure = await run(SELECT_ONE).then(() => undefined, (error: unknown) => error)
  })
  t.equal(armed, 1, 'one timer: no idle connection')
  t.match(failure, { message: 'timeout exceeded when trying to connect' })
  t.ok(Date.now() - started >= 250, 'after the connection timeout')
  held.release()
  t.same(await run(SELECT_ONE), [{ one: 1 }], 'served once a connection is free')
})

t.test('more checkouts at once than idle connections: those that may wait arm a timer', { skip }, async (t) => {
  const { pool, run } = await open(t, 2, 4322)
  await Promise.all([run(SELECT_ONE), run(SELECT_ONE)])
  t.equal(pool.idleCount, 2)
  let answers: unknown[] = []
  const armed = await timersArmed(4322, async () => {
    answers = await Promise.all([run(SELECT_ONE), run(SELECT_ONE), run(SELECT_ONE), run(SELECT_ONE)])
  })
  t.equal(armed, 2, 'the first two are served by the idle connections, the other two wait with a timer')
  t.same(answers, [[{ one: 1 }], [{ one: 1 }], [{ one: 1 }], [{ one: 1 }]])
})

t.test('ending the pool serves the checkouts queued without a timer first', { skip }, async (t) => {
  const { pool, run } = await open(t, 1, 5000, false)
  await run(SELECT_ONE)
  t.equal(pool.idleCount, 1)
  const checkout = pool.connect()
  const ending = pool.end()
  const first = await Promise.race([checkout.then(() => 'served'), new Promise((resolve) => setTimeout(() => { resolve('left waiting') }, 2000))])
  t.equal(first, 'served', 'the checkout made before the end gets its connection')
  const client = await checkout
  t.same((await client.query('select 3 as three')).rows, [{ three: 3 }])
  client.release()
  await ending
  t.ok(pool.ended, 'and the pool ends once it is released')
})

t.test('end with a callback', { skip }, async (t) => {
  const { pool, run } = await open(t, 1, 5000, false)
  await run(SELECT_ONE)
  const checkout = pool.connect()
  const ended = new Promise<unknown>((resolve) => { pool.end((error?: Error) => { resolve(error ?? 'ended') }) })
  ;(await checkout).release()
  t.equal(await ended, 'ended')
})

t.test('close ends the pool, and its connections', { skip }, async (t) => {
  const opened = await createPostgresDatabase<any>({ connectionString: url, pool: { max: 1 } })
  t.same((await opened.db.executeQuery(SELECT_ONE)).rows, [{ one: 1 }])
  t.equal(opened.pool.totalCount, 1, 'one connection open')
  await opened.close()
  t.ok(opened.pool.ended, 'the pool is ended')
  t.equal(opened.pool.totalCount, 0, 'and its connection closed')
  await opened.close()
  t.pass('a second close is harmless')
})
