// A bad day of MariaDB: the example app on `createMysqlDatabase`, in a database of its own on the server of
// `MYSQL_URL` (default mysql://root@127.0.0.1:3306/; without a server there the file is skipped, not failed).
// Deadlocks are retried a bounded number of times and never applied twice, then a 503; a statement past its timeout,
// a connection killed in the middle of a request or while idle, and a server that does not answer are 503s with
// Retry-After (never a 500, never a crash); nothing half-written stays, and the service answers again at once.
import t, { type Test } from 'tap'
import { createServer } from 'node:net'
import { sql, type Kysely } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../examples/app/app.js'
import { migrateToLatest } from '../../examples/app/migrations.js'
import { createMysqlDatabase, jsonApi, type MysqlDatabase } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { assertError } from '../helpers/assert-errors.js'
import { mysqlDatabaseName } from '../helpers/database.js'
import { documentedFastify } from '../helpers/documented-fastify.js'

const url = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/'
const server = new URL(url)
server.pathname = '/'
const admin = await createMysqlDatabase<any>({ uri: server.toString(), connectionTimeout: 2000, pool: { connectionLimit: 2 } })
const name = mysqlDatabaseName(url, 'faults')
let available: string | undefined
try {
  await sql`create database ${sql.id(name)} character set utf8mb4 collate utf8mb4_bin`.execute(admin.db)
} catch (error) {
  available = `no MariaDB/MySQL server at ${server.host} (${(error as Error).message})`
}
t.teardown(async () => {
  if (available === undefined) await sql`drop database if exists ${sql.id(name)}`.execute(admin.db).catch(() => {})
  await admin.close()
})

const own = new URL(url)
own.pathname = `/${name}`
const connectionErrors: Error[] = []

/** The example app on a pool of its own (statements stop after `statementTimeout` ms). */
async function open (statementTimeout = 1000): Promise<{ app: FastifyInstance, database: MysqlDatabase<any> }> {
  const database = await createMysqlDatabase<any>({ uri: own.toString(), statementTimeout, onConnectionError: (error) => connectionErrors.push(error) })
  const app = await buildApp({ db: database.db })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await database.close()
  })
  return { app, database }
}

function fault (t: Test, response: TestResponse, code: string): void {
  assertError(t, response, { status: 503, code })
  t.equal(response.headers['retry-after'], '1', 'Retry-After')
}

const computer = (name: string): unknown => ({ data: { type: 'computer', attributes: { name } } })

async function computers (db: Kysely<any>): Promise<string[]> {
  return (await db.selectFrom('computers').select('name').orderBy('id').execute()).map((row) => String(row.name))
}

t.test('MariaDB faults', { skip: available ?? false }, async (t) => {
  const setup = await createMysqlDatabase<any>({ uri: own.toString() })
  await migrateToLatest(setup.db)
  await setup.close()
  const { app, database } = await open()
  const db = database.db
  // A deadlock raised by the server itself, on demand: the first `fail_first` inserts of a computer named
  // `conflict…` fail with error 1213. A sequence is not transactional: it counts the attempts that rolled back.
  await sql`create sequence f_attempts`.execute(db)
  await sql`create table f_plan (fail_first integer not null)`.execute(db)
  await sql`insert into f_plan values (0)`.execute(db)
  await sql.raw(`create trigger f_faults before insert on computers for each row begin
    if new.name like 'conflict%' and nextval(f_attempts) <= (select fail_first from f_plan) then
      signal sqlstate '40001' set mysql_errno = 1213, message_text = 'Deadlock found when trying to get lock (forced by the test)';
    end if;
    if new.name like 'slow%' then
      do sleep(3);
    end if;
  end`).execute(db)
  const plan = async (failFirst: number): Promise<void> => {
    await sql`update f_plan set fail_first = ${failFirst}`.execute(db)
    await sql`alter sequence f_attempts restart with 1`.execute(db)
  }
  const attempts = async (): Promise<number> => Number((await sql<{ n: string }>`select nextval(f_attempts) - 1 as n`.execute(db)).rows[0].n)

  t.test('a deadlock is retried: the create succeeds once, written once', async (t) => {
    await plan(1)
    const response = await injectJsonApi(app, 'POST', '/computers', { body: computer('conflict-1') })
    t.equal(response.status, 201)
    t.equal(await attempts(), 2, 'two attempts: the deadlock, then the write')
    t.same((await computers(db)).filter((item) => item === 'conflict-1'), ['conflict-1'], 'one row')
  })

  t.test('cannot get past a deadlock that keeps coming: 503 FJA_DATABASE_CONFLICT, nothing written', async (t) => {
    await plan(100)
    fault(t, await injectJsonApi(app, 'POST', '/computers', { body: computer('conflict-2') }), 'FJA_DATABASE_CONFLICT')
    t.notOk((await computers(db)).includes('conflict-2'), 'no row')
    t.ok(await attempts() > 1, 'retried before giving up')
    await plan(0)
  })

  t.test('a deadlock inside /operations rolls the whole batch back', async (t) => {
    await plan(100)
    const response = await injectJsonApi(app, 'POST', '/operations', {
      headers: { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
      body: { 'atomic:operations': [{ op: 'add', data: { type: 'computer', attributes: { name: 'batch-first' } } }, { op: 'add', data: { type: 'computer', attributes: { name: 'conflict-3' } } }] },
    })
    fault(t, response, 'FJA_DATABASE_CONFLICT')
    const names = await computers(db)
    t.notOk(names.includes('batch-first') || names.includes('conflict-3'), 'nothing of the batch')
    await plan(0)
  })

  t.test('a statement past the statement timeout: 503 FJA_DATABASE_TIMEOUT, nothing written', async (t) => {
    fault(t, await injectJsonApi(app, 'POST', '/computers', { body: computer('slow-1') }), 'FJA_DATABASE_TIMEOUT')
    t.notOk((await computers(db)).includes('slow-1'), 'no row')
    t.equal((await injectJsonApi(app, 'GET', '/computers')).status, 200, 'the next request is answered')
  })

  t.test('a connection killed in the middle of a request: 503, nothing written, the next request answered', async (t) => {
    const { app: patient, database: patientDatabase } = await open(0)
    const request = injectJsonApi(patient, 'POST', '/computers', { body: computer('slow-killed') })
    // Wait until the INSERT runs (its trigger sleeping), then kill its connection.
    let id: number | undefined
    for (let tries = 0; tries < 100 && id === undefined; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      const { rows } = await sql<{ id: number }>`select id from information_schema.processlist where info = 'do sleep(3)' and db = ${name}`.execute(admin.db)
      id = rows[0]?.id
    }
    t.ok(id !== undefined, 'the statement was found running')
    await sql.raw(`kill connection ${Number(id)}`).execute(admin.db)
    fault(t, await request, 'FJA_DATABASE_UNAVAILABLE')
    t.notOk((await computers(db)).includes('slow-killed'), 'no row')
    const next = await injectJsonApi(patient, 'POST', '/computers', { body: computer('after-kill') })
    t.equal(next.status, 201, 'the pool opens another connection')
    t.equal((await patientDatabase.db.selectFrom('computers').select('name').where('name', '=', 'after-kill').execute()).length, 1)
  })

  t.test('connections killed while idle: no crash, told to onConnectionError, the next request answered', async (t) => {
    t.equal((await injectJsonApi(app, 'GET', '/users')).status, 200)
    const before = connectionErrors.length
    const { rows } = await sql<{ id: number }>`select id from information_schema.processlist where db = ${name} and id <> connection_id() and command = 'Sleep'`.execute(admin.db)
    for (const row of rows) await sql.raw(`kill connection ${Number(row.id)}`).execute(admin.db).catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.ok(connectionErrors.length > before, 'the pool told onConnectionError')
    // A connection that had not heard of its end yet may fail once: the request is a 503, never a 500.
    let response = await injectJsonApi(app, 'GET', '/users')
    if (response.status === 503) response = await injectJsonApi(app, 'GET', '/users')
    t.equal(response.status, 200, 'answered again')
  })
})

t.test('cannot reach a server that is not there: 503 FJA_DATABASE_UNAVAILABLE with Retry-After, no crash', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address() as { port: number }
      probe.close(() => resolve(address.port))
    })
  })
  const database = await createMysqlDatabase<any>({ uri: `mysql://root@127.0.0.1:${port}/nothing`, connectionTimeout: 1000 })
  const app = await documentedFastify()
  await app.register(jsonApi, { db: database.db, resources })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await database.close()
  })
  fault(t, await injectJsonApi(app, 'GET', '/users'), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await injectJsonApi(app, 'POST', '/computers', { body: computer('nowhere') }), 'FJA_DATABASE_UNAVAILABLE')
})
