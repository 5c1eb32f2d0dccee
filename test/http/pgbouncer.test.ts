// The example app behind PgBouncer in transaction pooling mode (PGBOUNCER_URL: a database reached through the pooler;
// skipped without it). Transaction pooling keeps no session state: a server connection belongs to a client for one
// transaction only, so nothing may rely on SET, named prepared statements or cursors outside a transaction. Reads
// (include, filter, sort, cursor pages), writes, streamed collections (DECLARE CURSOR in a read-only REPEATABLE READ
// transaction), atomic operations and a failing batch run here, many of them concurrently, so that the pooler's
// server connections are shared between the app's pooled client connections.
//
// The test creates the example app's tables in the default schema of that database (PgBouncer 1.18 refuses the
// `options` startup parameter, so there is no search_path of the test's own), refuses to run if one of them exists
// already, and drops them at the end. The migrations run through the pooler too: Kysely's migrator holds a
// session-level advisory lock around its transaction, which is safe here only because nothing else uses the pooler
// meanwhile (an idle PgBouncer hands the lock, the transaction and the unlock the same server connection); an
// application runs its migrations on a direct connection (docs/deployment.md).
import t from 'tap'
import pg from 'pg'
import { sql, type Kysely } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../examples/app/app.js'
import { migrateToLatest } from '../../examples/app/migrations.js'
import { seed } from '../../examples/app/seed.js'
import { createPostgresDatabase } from '../../lib/index.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'

const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"'
const PROFILED = 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"'
const TABLES = ['notes', 'parent_to_child_associations', 'parents', 'children', 'posts', 'user_bios', 'workplaces', 'computers', 'users', 'groups', 'photos']
const MIGRATOR_TABLES = ['kysely_migration', 'kysely_migration_lock']

const url = process.env.PGBOUNCER_URL
if (url === undefined || url === '') {
  t.test('the example app behind PgBouncer in transaction pooling mode', { skip: 'PGBOUNCER_URL is not set (a database URL through a PgBouncer with pool_mode = transaction; .ci/run starts one)' }, async () => {})
} else {
  await behindPgBouncer(url)
}

async function behindPgBouncer (url: string): Promise<void> {
  // More client connections than the pooler has server connections in CI (default_pool_size = 2 there).
  const database = await createPostgresDatabase<any>({ connectionString: url, pool: { max: 8 } })
  const db = database.db
  const existing = await sql<{ name: string }>`select name from unnest(${TABLES}::text[]) as name where to_regclass(name) is not null`.execute(db)
  if (existing.rows.length > 0) {
    await database.close()
    throw new Error(`PGBOUNCER_URL: the database already has ${existing.rows.map((row) => row.name).join(', ')}; point PGBOUNCER_URL at a scratch database`)
  }
  t.teardown(async () => {
    await sql`drop table if exists ${sql.join([...TABLES, ...MIGRATOR_TABLES].map((table) => sql.table(table)))} cascade`.execute(db)
    await database.close()
  })
  await migrateToLatest(db)
  await seed(db)
  const app = await buildApp({ db })
  await app.ready()
  t.teardown(() => app.close())
  run(app, db, url)
}

const send = (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, options: TestRequest = {}): Promise<TestResponse> =>
  injectJsonApi(app, method, path, options)

/** The number of rows of every table of the example app. */
async function counts (db: Kysely<any>): Promise<Record<string, number>> {
  const result: Record<string, number> = {}
  for (const table of TABLES) {
    const row = await db.selectFrom(table).select(sql<string>`count(*)`.as('count')).executeTakeFirstOrThrow()
    result[table] = Number(row.count)
  }
  return result
}

function run (app: FastifyInstance, db: Kysely<any>, url: string): void {
  t.test('the pooler shares server connections between client connections (transaction pooling)', async (t) => {
    const first = new pg.Client({ connectionString: url })
    const second = new pg.Client({ connectionString: url })
    await first.connect()
    await second.connect()
    try {
      // Both clients stay connected: with a connection per client (no pooler, or session pooling) they never see the
      // same backend; in transaction pooling an idle server connection serves whichever client asks next.
      const seen = [new Set<number>(), new Set<number>()]
      for (let round = 0; round < 10; round++) {
        for (const [index, client] of [first, second].entries()) {
          const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid')
          seen[index].add(rows[0].pid)
        }
      }
      t.ok([...seen[0]].some((pid) => seen[1].has(pid)), `two connected clients ran on one backend (${[...seen[0]].join(',')} / ${[...seen[1]].join(',')})`)
    } finally {
      await first.end()
      await second.end()
    }
  })

  t.test('reads: include, filter, sort, related and relationship routes', async (t) => {
    const list = await send(app, 'GET', '/users?include=computers,group&sort=-age&filter[status]=active&fields[user]=name,age,computers,group')
    t.equal(list.status, 200)
    t.same(list.body.data.map((user: { attributes: { name: string } }) => user.attributes.name), ['grace', 'ada'])
    t.same(list.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`).sort(), ['computer:1', 'computer:2', 'computer:3', 'group:1'])
    const detail = await send(app, 'GET', '/users/1?include=bio,posts')
    t.equal(detail.body.data.attributes.display_name, 'Ada Lovelace')
    t.equal(detail.body.included.length, 3)
    const related = await send(app, 'GET', '/users/2/computers?sort=name')
    t.same(related.body.data.map((computer: { attributes: { name: string } }) => computer.attributes.name), ['Harvard Mark II', 'UNIVAC I'])
    const linkage = await send(app, 'GET', '/users/2/relationships/computers')
    t.same(linkage.body.data, [{ type: 'computer', id: '2' }, { type: 'computer', id: '3' }])
    const filtered = await send(app, 'GET', `/computers?filter=${encodeURIComponent(JSON.stringify([{ name: 'owner.name', op: 'eq', val: 'grace' }]))}`)
    t.equal(filtered.body.meta.count, 2)
    const notes = await send(app, 'GET', '/notes', { headers: { 'x-user-id': '1' } })
    t.same(notes.body.data.map((note: { id: string }) => note.id), ['1'], 'the context (a query of its own) and the scope')
  })

  t.test('cursor pages, followed to the end', async (t) => {
    const names: string[] = []
    let next: string | undefined = '/users?page[size]=1&sort=name'
    for (let page = 0; next !== undefined && page < 10; page++) {
      const response: TestResponse = await send(app, 'GET', next, { headers: { accept: PROFILED } })
      t.equal(response.status, 200)
      names.push(...response.body.data.map((user: { attributes: { name: string } }) => user.attributes.name))
      next = response.body.links.next ?? undefined
    }
    t.same(names, ['ada', 'grace', 'linus'])
  })

  t.test('a streamed collection: DECLARE CURSOR inside its transaction', async (t) => {
    const streamed = await send(app, 'GET', '/computers?page[size]=0&include=owner&sort=id')
    t.equal(streamed.status, 200)
    t.same(streamed.body.data.map((computer: { id: string }) => computer.id), ['1', '2', '3', '4'])
    t.same(streamed.body.included.map((user: { id: string }) => user.id).sort(), ['1', '2'])
    t.equal(streamed.body.meta.count, 4)
  })

  t.test('writes: create, update with If-Match, relationship writes, delete', async (t) => {
    const created = await send(app, 'POST', '/users?include=computers', {
      body: { data: { type: 'user', attributes: { name: 'edsger', age: 72 }, relationships: { computers: { data: [{ type: 'computer', id: '4' }] } } } },
    })
    t.equal(created.status, 201)
    const id = created.body.data.id as string
    t.same(created.body.included.map((computer: { id: string }) => computer.id), ['4'])
    const current = await send(app, 'GET', `/users/${id}`)
    const updated = await send(app, 'PATCH', `/users/${id}`, {
      body: { data: { type: 'user', id, attributes: { first_name: 'Edsger', last_name: 'Dijkstra' } } },
      headers: { 'if-match': String(current.headers.etag) },
    })
    t.equal(updated.status, 200)
    t.equal(updated.body.data.attributes.display_name, 'Edsger Dijkstra')
    const stale = await send(app, 'PATCH', `/users/${id}`, { body: { data: { type: 'user', id, attributes: { age: 1 } } }, headers: { 'if-match': String(current.headers.etag) } })
    t.equal(stale.status, 412, 'the row lock and the comparison in one transaction')
    const linked = await send(app, 'PATCH', `/users/${id}/relationships/computers`, { body: { data: [{ type: 'computer', id: '4' }, { type: 'computer', id: '1' }] } })
    t.equal(linked.status, 200)
    t.same((await db.selectFrom('computers').select('id').where('owner_id', '=', Number(id)).orderBy('id').execute()).map((row) => row.id), [1, 4])
    const relinked = await send(app, 'PATCH', '/users/1/relationships/computers', { body: { data: [{ type: 'computer', id: '1' }] } })
    t.equal(relinked.status, 200)
    const removed = await send(app, 'DELETE', `/users/${id}`)
    t.equal(removed.status, 200)
    t.equal((await db.selectFrom('users').select('id').where('id', '=', Number(id)).execute()).length, 0)
  })

  t.test('atomic operations: several operations in one transaction; a failing batch leaves nothing', async (t) => {
    const done = await send(app, 'POST', '/operations', {
      headers: { 'content-type': ATOMIC },
      body: {
        'atomic:operations': [
          { op: 'add', data: { type: 'group', lid: 'g', attributes: { name: 'Pioneers' } } },
          { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: 'barbara' }, relationships: { group: { data: { type: 'group', lid: 'g' } } } } },
          { op: 'update', ref: { type: 'user', lid: 'u' }, data: { type: 'user', attributes: { first_name: 'Barbara' } } },
          { op: 'add', data: { type: 'computer', attributes: { serial: 'CLU-1' }, relationships: { owner: { data: { type: 'user', lid: 'u' } } } } },
          { op: 'add', data: { type: 'user_bio', attributes: { birth_city: 'Chicago' }, relationships: { user: { data: { type: 'user', lid: 'u' } } } } },
        ],
      },
    })
    t.equal(done.status, 200)
    const results = done.body['atomic:results']
    t.equal(results.length, 5)
    t.equal(results[2].data.attributes.display_name, 'Barbara')
    const userId = Number(results[1].data.id)
    t.equal((await db.selectFrom('computers').select('owner_id').where('serial', '=', 'CLU-1').executeTakeFirstOrThrow()).owner_id, userId)

    const before = await counts(db)
    const failed = await send(app, 'POST', '/operations', {
      headers: { 'content-type': ATOMIC },
      body: {
        'atomic:operations': [
          { op: 'add', data: { type: 'group', lid: 'g', attributes: { name: 'Nobody' } } },
          { op: 'add', data: { type: 'user', attributes: { name: 'nobody' }, relationships: { group: { data: { type: 'group', lid: 'g' } } } } },
          { op: 'update', ref: { type: 'user', id: '1' }, data: { type: 'user', attributes: { age: 99 } } },
          { op: 'remove', ref: { type: 'computer', id: '99999' } },
        ],
      },
    })
    t.equal(failed.status, 404)
    t.equal(failed.body.errors[0].source.pointer, '/atomic:operations/3/ref')
    t.same(await counts(db), before, 'nothing of the failed batch was written')
    t.equal((await db.selectFrom('users').select('age').where('id', '=', 1).executeTakeFirstOrThrow()).age, 36, 'the update before the failure rolled back')
  })

  t.test('concurrent requests share the pooled server connections', async (t) => {
    const before = await counts(db)
    const requests: Array<Promise<[string, TestResponse]>> = []
    const label = (name: string, response: Promise<TestResponse>) => response.then((result): [string, TestResponse] => [name, result])
    for (let i = 0; i < 8; i++) {
      requests.push(label(`list ${i}`, send(app, 'GET', '/users?include=computers,posts&sort=name&page[size]=2')))
      requests.push(label(`stream ${i}`, send(app, 'GET', '/computers?page[size]=0&include=owner')))
      requests.push(label(`create ${i}`, send(app, 'POST', '/computers', { body: { data: { type: 'computer', attributes: { serial: `C-${i}` }, relationships: { owner: { data: { type: 'user', id: '3' } } } } } })))
      requests.push(label(`operations ${i}`, send(app, 'POST', '/operations', {
        headers: { 'content-type': ATOMIC },
        body: { 'atomic:operations': [
          { op: 'add', data: { type: 'parent', lid: 'p', attributes: { name: `P-${i}` } } },
          { op: 'add', data: { type: 'child', lid: 'c', attributes: { name: `C-${i}` } } },
          { op: 'add', data: { type: 'parent-to-child-association', attributes: { extra_data: 'x' }, relationships: { parent: { data: { type: 'parent', lid: 'p' } }, child: { data: { type: 'child', lid: 'c' } } } } },
        ] },
      })))
      requests.push(label(`failing operations ${i}`, send(app, 'POST', '/operations', {
        headers: { 'content-type': ATOMIC },
        body: { 'atomic:operations': [
          { op: 'add', data: { type: 'group', attributes: { name: `G-${i}` } } },
          { op: 'add', data: { type: 'user_bio', attributes: { birth_city: 'Nowhere' }, relationships: { user: { data: { type: 'user', id: '99999' } } } } },
        ] },
      })))
    }
    const responses = await Promise.all(requests)
    const expected = (name: string) => name.startsWith('create') ? 201 : name.startsWith('failing') ? 404 : 200
    t.same(responses.filter(([name, response]) => response.status !== expected(name)).map(([name, response]) => `${name}: ${response.status} ${response.text.slice(0, 300)}`), [], 'every request answered as it should')
    const after = await counts(db)
    t.same(after, { ...before, computers: before.computers + 8, parents: before.parents + 8, children: before.children + 8, parent_to_child_associations: before.parent_to_child_associations + 8 },
      'the writes of the successful requests, nothing of the failing batches')
    const streams = responses.filter(([name]) => name.startsWith('stream')).map(([, response]) => response.body.data.length as number)
    t.ok(streams.every((length) => length >= before.computers && length <= after.computers), 'every stream read one consistent snapshot')
  })

  t.test('no named prepared statement was left on a server connection', async (t) => {
    const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db)
    t.same(rows, [])
  })
}
