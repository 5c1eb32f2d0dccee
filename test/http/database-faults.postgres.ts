// A bad day of the database: faults are 503s with Retry-After (never a 500, never a crash), serialization failures
// and deadlocks are retried a bounded number of times without applying anything twice, a statement timeout and a
// full server are 503s, terminated backends under load leave no partial write and the service answers again at
// once, and a graceful close lets requests in flight finish. The tests that need a real server (statement timeout,
// roles, pg_terminate_backend) run in the PostgreSQL server pass (DATABASE_URL=postgres://…).
//
// PostgreSQL's own: its fixture raises SQLSTATEs from plpgsql triggers and counts attempts in a sequence. Imported by
// database-faults.test.ts on PostgreSQL and PGlite only; MariaDB's faults are in mariadb-faults.test.ts.
import t, { type Test } from 'tap'
import { createServer } from 'node:net'
import { randomBytes } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { sql, type Kysely } from 'kysely'
import type { FastifyInstance } from 'fastify'
import {
  createPostgresDatabase, defineResource, jsonApi, KyselyRepository, type JsonApiOptions, type QueryLayer, type Repository,
} from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError } from '../helpers/assert-errors.js'
import { onPostgresServer } from '../helpers/engine.js'

const url = process.env.DATABASE_URL
const onPostgres = onPostgresServer()

const database = await openTestDatabase(async () => {})
t.teardown(() => database.close())
const db = database.db

await sql`create table f_owners (id serial primary key, name text not null)`.execute(db)
await sql`create table f_items (id serial primary key, name text not null, owner_id integer references f_owners on delete set null)`.execute(db)
// A serialization failure raised by the server itself, on demand: the first `fail_first` writes of an item named
// `conflict…` fail with SQLSTATE 40001. A sequence is not transactional, so it counts the attempts that rolled back.
await sql`create sequence f_attempts`.execute(db)
await sql`create table f_plan (fail_first integer not null)`.execute(db)
await sql`insert into f_plan values (0)`.execute(db)
await sql`create function f_conflict() returns trigger language plpgsql as $$
begin
  if nextval('f_attempts') <= (select fail_first from f_plan) then
    raise exception 'could not serialize access (forced by the test)' using errcode = 'serialization_failure';
  end if;
  return new;
end $$`.execute(db)
await sql`create trigger f_conflict before insert or update on f_items for each row when (new.name like 'conflict%') execute function f_conflict()`.execute(db)
// Owners have no hooks: their creates and updates are single statements, retried outside any transaction.
await sql`create trigger f_owner_conflict before insert or update on f_owners for each row when (new.name like 'conflict%') execute function f_conflict()`.execute(db)

/** What the next writes do: the first `failFirst` attempts fail with a serialization failure. */
async function plan (failFirst: number): Promise<void> {
  await sql`update f_plan set fail_first = ${failFirst}`.execute(db)
  await sql`select setval('f_attempts', 1, false)`.execute(db)
}

/** How many attempts the writes of conflict items made since the last {@link plan}. */
async function attempts (): Promise<number> {
  const { rows } = await sql<{ n: string }>`select case when is_called then last_value else 0 end as n from f_attempts`.execute(db)
  return Number(rows[0].n)
}

async function rows (table: 'f_owners' | 'f_items'): Promise<Array<{ id: number; name: string; owner_id?: number | null }>> {
  return (await sql<{ id: number; name: string }>`select * from ${sql.table(table)} order by id`.execute(db)).rows
}

async function names (table: 'f_owners' | 'f_items'): Promise<string[]> {
  return (await rows(table)).map((row) => row.name)
}

/** Every hook decision of a test, by item name. */
const hooks = {
  gate: undefined as Promise<void> | undefined,
  entered: undefined as (() => void) | undefined,
  thrown: undefined as Error | undefined,
}

const owner = defineResource({
  type: 'owner',
  path: '/owners',
  table: 'f_owners',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { items: { type: 'item', kind: 'to-many', inverse: 'owner' } },
})

const item = defineResource({
  type: 'item',
  path: '/items',
  table: 'f_items',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { owner: { type: 'owner', kind: 'to-one', foreignKey: 'owner_id' } },
  hooks: {
    async beforeCreate (input, event) {
      const name = String(input.attributes.name)
      if (name.startsWith('slow')) await sql`select pg_sleep(2)`.execute(event.db)
      if (name.startsWith('gated')) {
        hooks.entered?.()
        await hooks.gate
      }
      if (name.startsWith('raise') && hooks.thrown !== undefined) throw hooks.thrown
    },
  },
})

async function faultApp (t: Test, options: Partial<JsonApiOptions> & Pick<JsonApiOptions, 'db'> | Partial<JsonApiOptions> & Pick<JsonApiOptions, 'repository'>): Promise<FastifyInstance> {
  const app = await documentedFastify()
  await app.register(jsonApi, { resources: [owner, item], ...options })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

function send (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<TestResponse> {
  const headers: Record<string, string> = path === '/operations'
    ? { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' }
    : {}
  return injectJsonApi(app, method, path, { body, headers })
}

function newItem (name: string, ownerId?: string): unknown {
  return { data: { type: 'item', attributes: { name }, ...(ownerId === undefined ? {} : { relationships: { owner: { data: { type: 'owner', id: ownerId } } } }) } }
}

function fault (t: Test, response: TestResponse, code: string, retryAfter = '1'): void {
  assertError(t, response, { status: 503, code })
  t.equal(response.headers['retry-after'], retryAfter, 'Retry-After')
}

const app = await faultApp(t, { db })

t.beforeEach(async () => {
  await sql`truncate f_items, f_owners restart identity cascade`.execute(db)
  await plan(0)
  hooks.thrown = undefined
})

t.test('a write that meets a serialization failure is run again and succeeds, once', async (t) => {
  await plan(2)
  const created = await send(app, 'POST', '/items', newItem('conflict-1'))
  t.equal(created.status, 201)
  t.equal(created.body.data.attributes.name, 'conflict-1')
  t.equal(await attempts(), 3, 'two rolled-back attempts, then the one that committed')
  t.same(await names('f_items'), ['conflict-1'], 'written exactly once')
})

t.test('cannot get past a conflict that outlasts the retries: 503, nothing written', async (t) => {
  await plan(100)
  fault(t, await send(app, 'POST', '/items', newItem('conflict-2')), 'FJA_DATABASE_CONFLICT')
  t.equal(await attempts(), 4, 'the first attempt and three retries (the default)')
  t.same(await names('f_items'), [])
  await plan(100)
  const [first] = await rows('f_items')
  t.equal(first, undefined)
  const made = await send(app, 'POST', '/items', newItem('plain'))
  t.equal(made.status, 201, 'a write the conflict does not touch goes through')
  fault(t, await send(app, 'PATCH', `/items/${made.body.data.id as string}`, { data: { type: 'item', id: made.body.data.id, attributes: { name: 'conflict-3' } } }), 'FJA_DATABASE_CONFLICT')
  t.same(await names('f_items'), ['plain'], 'the update was not applied')
})

t.test('a single-statement write (a type without hooks) is retried by itself, and gives up after the retries', async (t) => {
  await plan(2)
  const created = await send(app, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'conflict-owner' } } })
  t.equal(created.status, 201)
  t.equal(await attempts(), 3, 'two failed attempts, then the one that wrote')
  t.same(await names('f_owners'), ['conflict-owner'], 'written exactly once')

  await plan(1)
  const renamed = await send(app, 'PATCH', `/owners/${created.body.data.id as string}`, { data: { type: 'owner', id: created.body.data.id, attributes: { name: 'conflict-renamed' } } })
  t.equal(renamed.status, 200)
  t.equal(renamed.body.data.attributes.name, 'conflict-renamed')
  t.equal(await attempts(), 2)

  await plan(100)
  fault(t, await send(app, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'conflict-never' } } }), 'FJA_DATABASE_CONFLICT')
  t.equal(await attempts(), 4, 'the first attempt and three retries (the default)')
  t.same(await names('f_owners'), ['conflict-renamed'], 'nothing more written')
})

t.test('an operations batch is retried as a whole: nothing of a failed attempt is applied twice', async (t) => {
  await plan(1)
  const response = await send(app, 'POST', '/operations', {
    'atomic:operations': [
      { op: 'add', data: { type: 'owner', lid: 'o', attributes: { name: 'batch-owner' } } },
      { op: 'add', data: { type: 'item', attributes: { name: 'conflict-batch' }, relationships: { owner: { data: { type: 'owner', lid: 'o' } } } } },
    ],
  })
  t.equal(response.status, 200)
  t.equal(await attempts(), 2)
  t.same(await names('f_owners'), ['batch-owner'], 'the owner of the rolled-back attempt is not there twice')
  const [written] = await rows('f_items')
  t.same({ name: written.name, owner: written.owner_id }, { name: 'conflict-batch', owner: Number(response.body['atomic:results'][0].data.id) })

  await plan(100)
  fault(t, await send(app, 'POST', '/operations', {
    'atomic:operations': [
      { op: 'add', data: { type: 'owner', lid: 'o', attributes: { name: 'lost-owner' } } },
      { op: 'add', data: { type: 'item', attributes: { name: 'conflict-lost' }, relationships: { owner: { data: { type: 'owner', lid: 'o' } } } } },
    ],
  }), 'FJA_DATABASE_CONFLICT')
  t.same(await names('f_owners'), ['batch-owner'], 'no partial write')
})

t.test('a relationship write is retried too', async (t) => {
  const holder = await send(app, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'holder' } } })
  const made = await send(app, 'POST', '/items', newItem('conflict-link'))
  await plan(1)
  const linked = await send(app, 'PATCH', `/items/${made.body.data.id as string}/relationships/owner`, { data: { type: 'owner', id: holder.body.data.id } })
  t.equal(linked.status, 200)
  t.equal(await attempts(), 2)
  t.equal((await rows('f_items'))[0].owner_id, Number(holder.body.data.id))
})

t.test('retries and Retry-After are options', async (t) => {
  const strict = await faultApp(t, { db, database: { retries: 0, retryAfter: 7 } })
  await plan(1)
  fault(t, await send(strict, 'POST', '/items', newItem('conflict-strict')), 'FJA_DATABASE_CONFLICT', '7')
  t.equal(await attempts(), 1, 'not retried')
  t.same(await names('f_items'), [])
})

t.test('a fault raised in a hook or by a repository is a 503, never a 500', async (t) => {
  const lost = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })
  hooks.thrown = lost
  fault(t, await send(app, 'POST', '/items', newItem('raise-1')), 'FJA_DATABASE_UNAVAILABLE')
  hooks.thrown = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })
  fault(t, await send(app, 'POST', '/items', newItem('raise-2')), 'FJA_DATABASE_TIMEOUT')
  t.same(await names('f_items'), [], 'nothing written')

  /** The default repository, failing its reads with one error. */
  class FailingReads extends KyselyRepository {
    error: unknown
    override findMany (layer: QueryLayer): Promise<Array<Record<string, unknown>>> {
      return this.error === undefined ? super.findMany(layer) : Promise.reject(this.error)
    }
  }
  const repository = new FailingReads(db)
  const reading = await faultApp(t, { repository: repository as Repository })
  for (const [error, code] of [
    [Object.assign(new Error('sorry, too many clients already'), { code: '53300' }), 'FJA_DATABASE_UNAVAILABLE'],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 'FJA_DATABASE_UNAVAILABLE'],
    [new Error('Connection terminated unexpectedly'), 'FJA_DATABASE_UNAVAILABLE'],
    [Object.assign(new Error('deadlock detected'), { code: '40P01' }), 'FJA_DATABASE_CONFLICT'],
  ] as const) {
    repository.error = error
    fault(t, await send(reading, 'GET', '/owners'), code)
    fault(t, await send(reading, 'GET', '/owners/1?include=items'), code)
  }
  repository.error = undefined
  t.equal((await send(reading, 'GET', '/owners')).status, 200, 'answers again once the database does')
})

/** A TCP port nothing listens on. */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => { resolve() }))
  return port
}

t.test('cannot reach the database: every route answers 503 and the process keeps running', async (t) => {
  const unreachable = await createPostgresDatabase({ connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/nowhere`, connectionTimeout: 2000 })
  t.teardown(() => unreachable.close())
  const down = await faultApp(t, { db: unreachable.db })
  fault(t, await send(down, 'GET', '/owners'), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(down, 'GET', '/owners/1'), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(down, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'x' } } }), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(down, 'POST', '/items', newItem('hooked')), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(down, 'POST', '/operations', { 'atomic:operations': [{ op: 'add', data: { type: 'owner', attributes: { name: 'x' } } }] }), 'FJA_DATABASE_UNAVAILABLE')
})

t.test('createPostgresDatabase refuses timeouts that are not milliseconds', async (t) => {
  await t.rejects(createPostgresDatabase({ statementTimeout: -1 }), /statementTimeout/)
  await t.rejects(createPostgresDatabase({ connectionTimeout: 1.5 }), /connectionTimeout/)
})

t.test('a graceful close lets a request in flight finish and commit', async (t) => {
  const server = await faultApp(t, { db })
  await server.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.server.address() as { port: number }
  let release!: () => void
  hooks.gate = new Promise<void>((resolve) => { release = resolve })
  const entered = new Promise<void>((resolve) => { hooks.entered = resolve })
  const inFlight = fetch(`http://127.0.0.1:${port}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.api+json' },
    body: JSON.stringify(newItem('gated-1')),
  })
  await entered
  let closed = false
  const closing = server.close().then(() => { closed = true })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.notOk(closed, 'close waits for the request in flight')
  release()
  const response = await inFlight
  t.equal(response.status, 201, 'the request in flight is answered')
  t.equal(response.headers.get('connection'), 'close', 'and its keep-alive connection is closed')
  await response.text()
  // Without that, the close would wait for the client's keep-alive connection to time out (72 s by default).
  const waited = await Promise.race([closing.then(() => 'closed'), new Promise((resolve) => setTimeout(() => { resolve('still open') }, 5000))])
  t.equal(waited, 'closed', 'the close completes as soon as the request in flight is answered')
  t.same(await names('f_items'), ['gated-1'], 'and its write committed')
  hooks.gate = undefined
})

/** The test database's schema on PostgreSQL: pools of the tests below open their connections in it. */
async function schemaOf (): Promise<string> {
  return (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
}

async function pgPool (t: Test, options: { statementTimeout?: number; user?: string; max?: number; name?: string; connectionTimeout?: number }): Promise<Kysely<any>> {
  const target = new URL(url as string)
  if (options.user !== undefined) target.username = options.user
  const opened = await createPostgresDatabase({
    connectionString: target.toString(),
    statementTimeout: options.statementTimeout,
    connectionTimeout: options.connectionTimeout ?? 3000,
    pool: { options: `-c search_path=${await schemaOf()}`, max: options.max ?? 4, application_name: options.name ?? 'fja-fault-test' },
    onConnectionError: () => {},
  })
  t.teardown(() => opened.close())
  return opened.db
}

t.test('a statement that runs past the statement timeout: 503, nothing written', { skip: !onPostgres && 'needs a PostgreSQL server (DATABASE_URL=postgres://…)' }, async (t) => {
  const timed = await faultApp(t, { db: await pgPool(t, { statementTimeout: 300 }) })
  fault(t, await send(timed, 'POST', '/items', newItem('slow-1')), 'FJA_DATABASE_TIMEOUT')
  t.same(await names('f_items'), [], 'the transaction rolled back')
  t.equal((await send(timed, 'POST', '/items', newItem('quick'))).status, 201, 'the next request is served')
})

t.test('every connection of the pool busy for longer than the connection timeout: 503, then served again', { skip: !onPostgres && 'needs a PostgreSQL server (DATABASE_URL=postgres://…)' }, async (t) => {
  const small = await pgPool(t, { max: 1, connectionTimeout: 300 })
  const busy = await faultApp(t, { db: small })
  t.equal((await send(busy, 'GET', '/owners')).status, 200, 'served while the connection is free')
  let free!: () => void
  const held = small.connection().execute(async () => { await new Promise<void>((resolve) => { free = resolve }) })
  await new Promise((resolve) => setTimeout(resolve, 20))
  fault(t, await send(busy, 'GET', '/owners'), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(busy, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'x' } } }), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(busy, 'POST', '/items', newItem('waited')), 'FJA_DATABASE_UNAVAILABLE')
  free()
  await held
  t.same(await names('f_owners'), [], 'nothing written')
  t.same(await names('f_items'), [])
  t.equal((await send(busy, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'after' } } })).status, 201, 'served once the connection is free')
})

t.test('too many connections: 503', { skip: !onPostgres && 'needs a PostgreSQL server (DATABASE_URL=postgres://…)' }, async (t) => {
  const role = `fja_full_${randomBytes(4).toString('hex')}`
  await sql`create role ${sql.id(role)} login connection limit 0`.execute(db)
  t.teardown(async () => { await sql`drop role if exists ${sql.id(role)}`.execute(db) })
  const full = await faultApp(t, { db: await pgPool(t, { user: role }) })
  fault(t, await send(full, 'GET', '/owners'), 'FJA_DATABASE_UNAVAILABLE')
  fault(t, await send(full, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'x' } } }), 'FJA_DATABASE_UNAVAILABLE')
  t.same(await names('f_owners'), [])
})

t.test('backends terminated under concurrent reads, writes and batches', { skip: !onPostgres && 'needs a PostgreSQL server (DATABASE_URL=postgres://…)' }, async (t) => {
  const name = `fja-kill-${randomBytes(4).toString('hex')}`
  const loaded = await faultApp(t, { db: await pgPool(t, { max: 6, name }) })
  const seed = await send(loaded, 'POST', '/owners', { data: { type: 'owner', attributes: { name: 'seed' } } })
  t.equal(seed.status, 201)

  let killing = true
  let killed = 0
  const killer = (async () => {
    while (killing) {
      const result = await sql<{ pid: number }>`select pg_terminate_backend(pid) as pid from pg_stat_activity where application_name = ${name}`.execute(db)
      killed += result.rows.length
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
  })()

  const statuses: number[] = []
  const work: Array<Promise<void>> = []
  for (let round = 0; round < 40; round++) {
    const batch = [
      send(loaded, 'GET', '/owners?include=items'),
      send(loaded, 'GET', `/owners/${seed.body.data.id as string}/items`),
      send(loaded, 'POST', '/items', newItem(`single-${round}`, seed.body.data.id)),
      send(loaded, 'POST', '/operations', {
        'atomic:operations': [
          { op: 'add', data: { type: 'owner', lid: 'o', attributes: { name: `batch-${round}` } } },
          { op: 'add', data: { type: 'item', attributes: { name: `batch-${round}` }, relationships: { owner: { data: { type: 'owner', lid: 'o' } } } } },
        ],
      }),
    ]
    work.push(Promise.all(batch).then((responses) => { for (const response of responses) statuses.push(response.status) }))
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await Promise.all(work)
  killing = false
  await killer

  t.ok(killed > 0, `backends were terminated (${killed})`)
  const unexpected = statuses.filter((status) => !(status < 300 || status === 503))
  t.same(unexpected, [], 'every answer is a success or a 503')
  t.ok(statuses.some((status) => status === 503), 'some requests met a terminated backend')

  const started = Date.now()
  let back: TestResponse | undefined
  while (Date.now() - started < 1000) {
    back = await send(loaded, 'GET', '/owners')
    if (back.status === 200) break
  }
  t.equal(back?.status, 200, 'answers again within a second')
  t.ok(Date.now() - started < 1000)

  const owners = await rows('f_owners')
  const items = await rows('f_items')
  for (let round = 0; round < 40; round++) {
    const batchOwners = owners.filter((row) => row.name === `batch-${round}`)
    const batchItems = items.filter((row) => row.name === `batch-${round}`)
    t.ok(batchOwners.length <= 1 && batchOwners.length === batchItems.length, `batch ${round}: all or nothing, at most once`)
    if (batchOwners.length === 1) t.equal(batchItems[0].owner_id, batchOwners[0].id)
    t.ok(items.filter((row) => row.name === `single-${round}`).length <= 1, `single ${round}: at most once`)
  }
})
