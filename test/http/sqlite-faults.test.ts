// A bad day of SQLite: the example app on `createSqliteDatabase` on a file that another process's connection (here a
// second `better-sqlite3` connection) holds locked for writing. A write waits `busyTimeout`, fails with SQLITE_BUSY,
// is retried, and answers 503 FJA_DATABASE_CONFLICT with Retry-After when the lock outlasts the retries — nothing
// written, no crash; it succeeds once when the lock goes in time. Reads go on meanwhile (WAL). Runs in every run of
// the suite, whatever DATABASE_URL names: the file is its own.
import t, { type Test } from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../examples/app/app.js'
import { migrateToLatest } from '../../examples/app/migrations.js'
import { createSqliteDatabase } from '../../lib/index.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { assertError } from '../helpers/assert-errors.js'

const directory = await mkdtemp(join(tmpdir(), 'fja-sqlite-faults-'))
const filename = join(directory, 'app.db')
t.teardown(() => rm(directory, { recursive: true, force: true }))

const setup = await createSqliteDatabase<any>({ filename })
await migrateToLatest(setup.db)
await setup.db.insertInto('users').values({ name: 'ada', email: 'ada@example.com' }).execute()
await setup.close()

const database = await createSqliteDatabase<any>({ filename, busyTimeout: 20 })
const app: FastifyInstance = await buildApp({ db: database.db })
await app.ready()
t.teardown(async () => {
  await app.close()
  await database.close()
})

/** The other connection to the file: `lock()` takes the write lock (an immediate transaction), `unlock()` ends it. */
const other = new Database(filename)
other.pragma('busy_timeout = 0')
t.teardown(() => { other.close() })
const lock = (): void => { other.exec('begin immediate') }
const unlock = (): void => { if (other.inTransaction) other.exec('rollback') }

const computer = (name: string): unknown => ({ data: { type: 'computer', attributes: { name } } })
const names = (): string[] => (other.prepare('select name from computers order by id').all() as Array<{ name: string }>).map((row) => row.name)

function fault (t: Test, response: TestResponse): void {
  assertError(t, response, { status: 503, code: 'FJA_DATABASE_CONFLICT' })
  t.equal(response.headers['retry-after'], '1', 'Retry-After')
}

t.test('cannot write while another connection holds the lock past the retries: 503, nothing written', async (t) => {
  lock()
  t.teardown(unlock)
  fault(t, await injectJsonApi(app, 'POST', '/computers', { body: computer('locked-out') }))
  const batch = await injectJsonApi(app, 'POST', '/operations', {
    headers: { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
    body: { 'atomic:operations': [{ op: 'add', data: { type: 'computer', attributes: { name: 'batch-1' } } }, { op: 'add', data: { type: 'computer', attributes: { name: 'batch-2' } } }] },
  })
  fault(t, batch)
  const read = await injectJsonApi(app, 'GET', '/users/1')
  t.equal(read.status, 200, 'a read is answered while the lock is held (WAL)')
  unlock()
  t.same(names(), [], 'nothing of the refused writes')
})

t.test('a lock that goes while the write is retried: the create succeeds, written once', async (t) => {
  lock()
  // Released on the event loop, between two attempts (a statement waiting on busy_timeout blocks the thread).
  const timer = setTimeout(unlock, 30)
  t.teardown(() => { clearTimeout(timer); unlock() })
  const response = await injectJsonApi(app, 'POST', '/computers', { body: computer('after-the-lock') })
  t.equal(response.status, 201)
  t.same(names(), ['after-the-lock'], 'one row')
})

t.test('after the faults, the app answers as before', async (t) => {
  t.equal((await injectJsonApi(app, 'POST', '/computers', { body: computer('next') })).status, 201)
  t.equal((await injectJsonApi(app, 'GET', '/computers')).status, 200)
  t.same(names(), ['after-the-lock', 'next'])
})
