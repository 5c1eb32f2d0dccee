// The `readDb` option: GET and HEAD requests of the resource, related and relationship routes (streamed collections
// included) read from `readDb`; every write, the document it answers with, its precondition, and the whole
// `/operations` endpoint run on `db`. Two separate databases stand for a primary and its replica: two PGlite
// instances, or (with DATABASE_URL) the test schema or database of that server and a second database created beside
// it, or two SQLite databases in memory. They are seeded differently, so that every answer tells which one it was
// read from, and the replica is made read-only (`default_transaction_read_only`, MariaDB's read-only transactions,
// SQLite's `query_only`), so that a write routed to it fails instead of passing unnoticed.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../../examples/app/app.js'
import { resources } from '../../examples/app/resources.js'
import { migrateToLatest } from '../../examples/app/migrations.js'
import { createMysqlDatabase, jsonApi, type JsonApiOptions, type Repository } from '../../lib/index.js'
import { freshMysqlDatabase, openTestDatabase, StatementCounter, type TestDatabase } from '../helpers/database.js'
import { assertOptionsErrors } from '../helpers/assert-errors.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { assertErrors } from '../helpers/assert-errors.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { onPostgresServer, testEngine } from '../helpers/engine.js'

const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"'
const PROFILE = 'https://jsonapi.org/profiles/ethanresnick/cursor-pagination'

/** The rows of one side: user and computer names end in the side's name (`ada-primary`, `R1`). */
async function seed (db: Kysely<any>, side: 'primary' | 'replica'): Promise<void> {
  await db.insertInto('groups').values({ name: `engineers-${side}` }).execute()
  const users = side === 'primary' ? ['ada', 'grace'] : ['ada', 'grace', 'carol']
  await db.insertInto('users').values(users.map((name) => ({ name: `${name}-${side}`, group_id: name === 'ada' ? 1 : null }))).execute()
  const computers = side === 'primary' ? [{ serial: 'P1', owner_id: 1 }] : [{ serial: 'R1', owner_id: 1 }, { serial: 'R2', owner_id: 1 }]
  await db.insertInto('computers').values(computers).execute()
}

/**
 * The replica: on PGlite a second instance; on PostgreSQL a database of its own beside the one of DATABASE_URL
 * (created and dropped through an admin connection), migrated as the test schema is; on MariaDB a database of its own
 * on that server, read through one connection whose transactions are read-only; on SQLite a second in-memory
 * database, `query_only`. Read-only once seeded.
 */
async function openReplica (): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL ?? ''
  if (testEngine() === 'sqlite') {
    const replica = await openTestDatabase()
    await seed(replica.db, 'replica')
    // One connection: the setting holds for every later statement.
    await sql`pragma query_only = on`.execute(replica.db)
    return replica
  }
  if (testEngine() === 'mysql') return openMysqlReplica(url)
  if (!onPostgresServer()) {
    const replica = await openTestDatabase()
    await seed(replica.db, 'replica')
    // PGlite is one session: the setting holds for every later statement.
    await sql`set default_transaction_read_only = on`.execute(replica.db)
    return replica
  }
  const name = `fja_replica_${randomBytes(6).toString('hex')}`
  const admin = async (statement: string): Promise<void> => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`create database ${name}`)
  const address = new URL(url)
  address.pathname = `/${name}`
  const setup = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: address.toString(), max: 1 }) }) })
  await migrateToLatest(setup)
  await seed(setup, 'replica')
  await setup.destroy()
  // Every session opened from now on is read-only, as on a hot standby.
  await admin(`alter database ${name} set default_transaction_read_only = on`)
  const counter = new StatementCounter()
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: address.toString(), max: 4 }) }), log: counter.log })
  return {
    db,
    counter,
    async close () {
      await db.destroy()
      await admin(`drop database if exists ${name} with (force)`)
    },
  }
}

/**
 * MariaDB's replica: a database of its own on the server of DATABASE_URL (created and dropped through an admin
 * connection), migrated and seeded, then read through a pool of one connection whose session is read-only, as the
 * one session of PGlite is.
 */
async function openMysqlReplica (url: string): Promise<TestDatabase> {
  const fresh = await freshMysqlDatabase(url, 'replica')
  if (typeof fresh === 'string') throw new Error(fresh)
  const counter = new StatementCounter()
  const { db, close } = await createMysqlDatabase<any>({ uri: fresh.url, pool: { connectionLimit: 1 }, log: counter.log })
  await migrateToLatest(db)
  await seed(db, 'replica')
  await sql`set session transaction read only`.execute(db)
  counter.reset()
  return {
    db,
    counter,
    async close () {
      await close()
      await fresh.drop()
    },
  }
}

const primary = await openTestDatabase()
t.teardown(() => primary.close())
await seed(primary.db, 'primary')
const replica = await openReplica()
t.teardown(() => replica.close())

const app = await buildApp({ db: primary.db, readDb: replica.db })
await app.ready()
t.teardown(() => app.close())

/** Which databases a request ran statements on. */
interface Sides {
  readonly primary: number
  readonly replica: number
}

/** Sends a request (its body checked against the JSON:API schema and the OpenAPI document), counting statements. */
async function send (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, options: TestRequest = {}, on: FastifyInstance = app): Promise<TestResponse & { sides: Sides }> {
  primary.counter.reset()
  replica.counter.reset()
  const response = await injectJsonApi(on, method, url, options)
  return { ...response, sides: { primary: primary.counter.count, replica: replica.counter.count } }
}

const readsReplica = { primary: 0, replica: Number } as const
const namesOf = (items: Array<{ attributes: { name?: string; serial?: string } }>) => items.map((item) => item.attributes.name ?? item.attributes.serial)

t.test('the replica refuses writes', async (t) => {
  // PostgreSQL: cannot execute INSERT in a read-only transaction; MariaDB: Cannot execute statement in a READ ONLY
  // transaction; SQLite: attempt to write a readonly database.
  const refusal = { postgres: /read-only/, mysql: /READ ONLY transaction/, sqlite: /readonly database/ }[testEngine()]
  await t.rejects(replica.db.insertInto('groups').values({ name: 'nope' }).execute(), refusal)
})

t.test('checkDatabaseSchema checked `db`, not the replica', async (t) => {
  // buildApp sets checkDatabaseSchema: ready() succeeded; a second app shows where it asked.
  primary.counter.reset()
  replica.counter.reset()
  const again = await buildApp({ db: primary.db, readDb: replica.db })
  await again.ready()
  await again.close()
  t.ok(primary.counter.count > 0, 'the schema check ran on db')
  t.equal(replica.counter.count, 0, 'and never on readDb')
})

t.test('GET of a resource, a collection with include, related and relationship routes read from the replica', async (t) => {
  const detail = await send('GET', '/users/1?include=computers,group')
  t.equal(detail.status, 200)
  t.equal(detail.body.data.attributes.name, 'ada-replica')
  t.same(namesOf(detail.body.included).sort(), ['R1', 'R2', 'engineers-replica'])
  t.match(detail.sides, readsReplica)
  t.ok(detail.sides.replica > 0)

  const list = await send('GET', '/users?sort=-id&filter[name]=carol-replica')
  t.same(namesOf(list.body.data), ['carol-replica'], 'a row only the replica has')
  t.equal(list.body.meta.count, 1)
  t.match(list.sides, readsReplica)

  const related = await send('GET', '/users/1/computers')
  t.same(namesOf(related.body.data), ['R1', 'R2'])
  t.match(related.sides, readsReplica)

  const toOne = await send('GET', '/computers/2/owner')
  t.equal(toOne.body.data.attributes.name, 'ada-replica')
  t.match(toOne.sides, readsReplica)

  const linkage = await send('GET', '/users/1/relationships/computers')
  t.same(linkage.body.data, [{ type: 'computer', id: '1' }, { type: 'computer', id: '2' }])
  t.match(linkage.sides, readsReplica)

  const missing = await send('GET', '/users/99')
  t.equal(missing.status, 404, 'a 404 is the replica\'s too')
  t.match(missing.sides, readsReplica)
})

t.test('HEAD reads from the replica', async (t) => {
  primary.counter.reset()
  replica.counter.reset()
  const head = await app.inject({ method: 'HEAD', url: '/users/3' })
  t.equal(head.statusCode, 200, 'user 3 exists on the replica only')
  t.equal(head.body, '')
  t.ok(replica.counter.count > 0)
  t.equal(primary.counter.count, 0)
})

t.test('cursor pages and streamed collections (page[size]=0) read from the replica', async (t) => {
  const first = await send('GET', '/users?page[size]=2', { headers: { accept: `application/vnd.api+json; profile="${PROFILE}"` } })
  t.same(namesOf(first.body.data), ['ada-replica', 'grace-replica'])
  t.match(first.sides, readsReplica)
  const next = await send('GET', first.body.links.next, { headers: { accept: `application/vnd.api+json; profile="${PROFILE}"` } })
  t.same(namesOf(next.body.data), ['carol-replica'])
  t.match(next.sides, readsReplica)

  const streamed = await send('GET', '/users?page[size]=0&include=computers')
  t.equal(streamed.status, 200)
  t.same(namesOf(streamed.body.data), ['ada-replica', 'grace-replica', 'carol-replica'])
  t.same(namesOf(streamed.body.included), ['R1', 'R2'])
  t.match(streamed.sides, readsReplica, 'the read-only REPEATABLE READ snapshot and its cursor on the replica')
  t.ok(streamed.sides.replica > 0)

  const relatedStream = await send('GET', '/users/1/computers?page[size]=0')
  t.same(namesOf(relatedStream.body.data), ['R1', 'R2'])
  t.match(relatedStream.sides, readsReplica)
})

t.test('writes run on the primary and answer with what the primary holds', async (t) => {
  // POST: the replica's user 3 is carol; the created user 3 is the primary's.
  const created = await send('POST', '/users?include=computers,group', {
    body: { data: { type: 'user', attributes: { name: 'linus' }, relationships: { computers: { data: [{ type: 'computer', id: '1' }] }, group: { data: { type: 'group', id: '1' } } } } },
  })
  t.equal(created.status, 201)
  t.equal(created.body.data.id, '3')
  t.equal(created.body.data.attributes.name, 'linus')
  t.same(namesOf(created.body.included).sort(), ['P1', 'engineers-primary'], 'the included resources read back on the primary')
  t.equal(created.sides.replica, 0, 'nothing on the replica')
  t.ok(created.sides.primary > 0)
  const stored = await primary.db.selectFrom('computers').select('owner_id').where('id', '=', 1).executeTakeFirstOrThrow()
  t.equal(stored.owner_id, 3)

  // Replication lag, here for ever: the next GET reads the replica, which does not have the write.
  const stale = await send('GET', '/users/3')
  t.equal(stale.body.data.attributes.name, 'carol-replica', 'a GET after the write reads the replica')

  const updated = await send('PATCH', '/users/1?include=computers', { body: { data: { type: 'user', id: '1', attributes: { first_name: 'Ada' } } } })
  t.equal(updated.status, 200)
  t.equal(updated.body.data.attributes.name, 'ada-primary')
  t.equal(updated.body.data.attributes.display_name, 'Ada')
  t.same(updated.body.data.relationships.computers.data, [], 'the primary\'s computer 1 moved to user 3 (the replica has R1 and R2)')
  t.match(updated.sides, { replica: 0 })

  const removed = await send('DELETE', '/users/2')
  t.equal(removed.status, 200)
  t.match(removed.sides, { replica: 0 })
  t.equal((await primary.db.selectFrom('users').select('id').where('id', '=', 2).execute()).length, 0, 'deleted on the primary')
  t.equal((await replica.db.selectFrom('users').select('id').where('id', '=', 2).execute()).length, 1, 'the replica keeps its row')
})

t.test('relationship and related writes run on the primary', async (t) => {
  const replaced = await send('PATCH', '/users/1/relationships/computers', { body: { data: [{ type: 'computer', id: '1' }] } })
  t.equal(replaced.status, 200)
  t.match(replaced.sides, { replica: 0 })
  const added = await send('POST', '/users/3/relationships/computers', { body: { data: [{ type: 'computer', id: '1' }] } })
  t.equal(added.status, 200)
  t.match(added.sides, { replica: 0 })
  const createdRelated = await send('POST', '/users/1/computers', { body: { data: { type: 'computer', attributes: { serial: 'P2' } } } })
  t.equal(createdRelated.status, 201)
  t.equal(createdRelated.body.data.attributes.serial, 'P2')
  t.equal(createdRelated.body.data.id, '2', 'the primary\'s next computer id')
  t.match(createdRelated.sides, { replica: 0 })
  t.same(await primary.db.selectFrom('computers').select(['id', 'owner_id']).orderBy('id').execute(), [{ id: 1, owner_id: 3 }, { id: 2, owner_id: 1 }])
})

t.test('If-Match is compared with the primary\'s representation', async (t) => {
  // The replica's ETag of user 1 is not the primary's: a stale tag is a 412, never a lost update.
  const fromReplica = await send('GET', '/users/1')
  const refused = await send('PATCH', '/users/1', { body: { data: { type: 'user', id: '1', attributes: { age: 40 } } }, headers: { 'if-match': String(fromReplica.headers.etag) } })
  assertErrors(t, refused, [{ status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' }])
  t.match(refused.sides, { replica: 0 })

  // Without readDb every request runs on db: its GET gives the primary's tag, which the write accepts.
  const direct = await documentedFastify()
  await direct.register(jsonApi, { db: primary.db, resources })
  await direct.ready()
  t.teardown(() => direct.close())
  const fromPrimary = await send('GET', '/users/1?include=computers', {}, direct)
  t.equal(fromPrimary.body.data.attributes.name, 'ada-primary')
  t.same(fromPrimary.sides, { primary: fromPrimary.sides.primary, replica: 0 }, 'without readDb, a GET reads db')
  t.ok(fromPrimary.sides.primary > 0)
  const streamed = await send('GET', '/users?page[size]=0', {}, direct)
  t.same(namesOf(streamed.body.data), ['ada-primary', 'linus'])
  t.equal(streamed.sides.replica, 0)
  const plain = await send('GET', '/users/1', {}, direct)
  const accepted = await send('PATCH', '/users/1', { body: { data: { type: 'user', id: '1', attributes: { age: 40 } } }, headers: { 'if-match': String(plain.headers.etag) } })
  t.equal(accepted.status, 200)
  t.equal(accepted.body.data.attributes.age, 40)
  t.match(accepted.sides, { replica: 0 })
})

t.test('/operations runs on the primary, reads included, and reads its own writes', async (t) => {
  const before = await primary.db.selectFrom('users').select(sql<string>`max(id)`.as('max')).executeTakeFirstOrThrow()
  const next = String(Number(before.max) + 1)
  const response = await send('POST', '/operations', {
    headers: { 'content-type': ATOMIC },
    body: {
      'atomic:operations': [
        { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: 'margaret' } } },
        // The update reads the row the add wrote (it exists only in this transaction).
        { op: 'update', ref: { type: 'user', lid: 'u' }, data: { type: 'user', attributes: { first_name: 'Margaret' } } },
        { op: 'add', data: { type: 'computer', lid: 'c', attributes: { serial: 'P3' }, relationships: { owner: { data: { type: 'user', lid: 'u' } } } } },
        { op: 'update', ref: { type: 'user', id: '1' }, data: { type: 'user', attributes: { age: 41 } }, meta: { ifMatch: '*' } },
      ],
    },
  })
  t.equal(response.status, 200)
  const results = response.body['atomic:results']
  t.match(results[0].data, { type: 'user', id: next, attributes: { name: 'margaret' } })
  t.match(results[1].data, { type: 'user', id: next, attributes: { name: 'margaret', display_name: 'Margaret' } })
  t.match(results[2].data, { type: 'computer', attributes: { serial: 'P3' } })
  t.match(results[3].data, { type: 'user', id: '1', attributes: { name: 'ada-primary', age: 41 } })
  t.equal(response.sides.replica, 0, 'the replica is never asked')
  t.ok(response.sides.primary > 0)

  // A failing batch is rolled back on the primary, and does not touch the replica either.
  const snapshot = await primary.db.selectFrom('users').selectAll().orderBy('id').execute()
  const failed = await send('POST', '/operations', {
    headers: { 'content-type': ATOMIC },
    body: {
      'atomic:operations': [
        { op: 'add', data: { type: 'user', lid: 'v', attributes: { name: 'edsger' } } },
        { op: 'update', ref: { type: 'user', id: '9999' }, data: { type: 'user', attributes: { age: 1 } } },
      ],
    },
  })
  t.equal(failed.status, 404)
  t.equal(failed.sides.replica, 0)
  t.same(await primary.db.selectFrom('users').selectAll().orderBy('id').execute(), snapshot, 'nothing of the batch persists')
})

t.test('readDb needs db, the default repository and a Kysely instance', async (t) => {
  const repository = {} as Repository
  const cases: Array<[string, Partial<JsonApiOptions>, RegExp]> = [
    ['readDb with a repository and no db', { db: undefined, repository, readDb: replica.db }, /`readDb` needs `db` and the default repository/],
    ['readDb with db and a repository', { db: primary.db, repository, readDb: replica.db }, /`readDb` needs `db` and the default repository/],
    ['readDb not a Kysely instance', { db: primary.db, readDb: { selectFrom: 1 } as unknown as Kysely<any> }, /`readDb` must be a Kysely instance/],
    ['readDb a pg pool', { db: primary.db, readDb: new pg.Pool() as unknown as Kysely<any> }, /`readDb` must be a Kysely instance/],
    ['db not a Kysely instance', { db: 'postgres://localhost' as unknown as Kysely<any>, readDb: replica.db }, /`db` must be a Kysely instance/],
  ]
  await assertOptionsErrors(t, { db: primary.db, resources }, cases)
  const misspelt = Fastify()
  await t.rejects(async () => { await misspelt.register(jsonApi, { db: primary.db, resources, readDB: replica.db } as unknown as JsonApiOptions) },
    /'readDB' is not an option of the plugin \(did you mean 'readDb'\?\)/, 'a misspelt readDb is named')
  await misspelt.close()
  // readDb may be the same instance as db: everything then runs on it.
  const same = Fastify()
  await same.register(jsonApi, { db: primary.db, readDb: primary.db, resources })
  await same.ready()
  t.equal((await same.inject({ method: 'GET', url: '/users/1' })).statusCode, 200)
  await same.close()
})
