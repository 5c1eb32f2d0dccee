// `page[size]=0` returns every row as a stream read through a cursor: the same document as the pages put together
// (order, fieldsets, filters, includes — each included resource once, never a primary one), errors before the first
// byte are error documents, a failure after it truncates the response, and a client that goes away releases the
// snapshot (on PGlite's single connection, the next request would wait for ever otherwise), and so does one that stops
// reading, once `pagination.streamTimeout` has passed.
import t from 'tap'
import { connect } from 'node:net'
import { once } from 'node:events'
import { sql } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { startTestApp, injectJsonApi } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError } from '../helpers/assert-errors.js'
import { jsonApi, KyselyRepository, type QueryLayer, type Repository, type Row } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { onPostgresServer, testEngine } from '../helpers/engine.js'

const api = await startTestApp(t.teardown.bind(t))
const USERS = 1100
/** 1 … n. */
const series = (n: number): number[] => Array.from({ length: n }, (_, index) => index + 1)
/** Inserts rows in chunks (SQLite binds at most 32,766 parameters per statement). */
async function insertRows (table: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  for (let at = 0; at < rows.length; at += 500) await api.db.insertInto(table).values(rows.slice(at, at + 500)).execute()
}
await insertRows('groups', series(7).map((g) => ({ name: `group ${g}` })))
await insertRows('users', series(USERS).map((i) => ({ name: `user ${String(i).padStart(5, '0')}`, age: i % 5 === 0 ? null : i % 90, status: 'active', group_id: 1 + i % 7 })))
await insertRows('computers', series(1500).map((i) => ({ serial: `s${i}`, name: `computer ${i}`, owner_id: 1 + (i * 7) % USERS })))

interface Resource { type: string; id: string; attributes: Record<string, unknown>; relationships?: Record<string, { data?: unknown }> }

/** Every page of a collection by number (size 1000: the maximum), put together. */
async function paged (path: string): Promise<{ data: Resource[]; included: Resource[]; count: number }> {
  const data: Resource[] = []
  const included = new Map<string, Resource>()
  let count = 0
  for (let page = 1; ; page++) {
    const response = await api.request('GET', `${path}${path.includes('?') ? '&' : '?'}page[size]=1000&page[number]=${page}`)
    t.equal(response.status, 200)
    data.push(...response.body.data)
    for (const item of response.body.included ?? []) included.set(`${item.type as string}:${item.id as string}`, item)
    count = response.body.meta.count
    if (response.body.links.next === undefined) break
  }
  const primary = new Set(data.map((item) => `${item.type}:${item.id}`))
  return { data, included: [...included.values()].filter((item) => !primary.has(`${item.type}:${item.id}`)), count }
}

function byKey (items: readonly Resource[]): Resource[] {
  return [...items].sort((a, b) => `${a.type}:${a.id}`.localeCompare(`${b.type}:${b.id}`))
}

t.test('every row, streamed: the same resources as the pages put together', async (t) => {
  for (const path of [
    '/users',
    '/users?sort=-age,name',
    '/users?fields[user]=name,age&filter=' + encodeURIComponent(JSON.stringify([{ name: 'age', op: 'ge', val: 30 }])),
    '/computers?sort=owner.name&fields[computer]=name',
    '/users/8/computers',
  ]) {
    const streamed = await api.request('GET', `${path}${path.includes('?') ? '&' : '?'}page[size]=0`)
    t.equal(streamed.status, 200, path)
    t.equal(streamed.headers['content-type'], 'application/vnd.api+json')
    const expected = await paged(path)
    t.same(streamed.body.data, expected.data, `${path}: the same rows in the same order`)
    t.equal(streamed.body.meta.count, expected.count)
    t.equal(streamed.body.meta.count, streamed.body.data.length)
    t.notOk('included' in streamed.body)
    t.same(Object.keys(streamed.body.links), ['self'], 'one page: only self')
  }
  const all = await api.request('GET', '/users?page[size]=0')
  t.equal(all.body.data.length, USERS, 'more rows than a batch')
  t.same(all.body.data.map((item: Resource) => Number(item.id)), Array.from({ length: USERS }, (_, index) => index + 1))
})

t.test('every row with includes: each included resource once, never a primary one, with linkage', async (t) => {
  for (const path of ['/computers?include=owner', '/users?include=group.users', '/users?include=computers.owner&fields[user]=name,computers']) {
    const streamed = await api.request('GET', `${path}&page[size]=0`)
    t.equal(streamed.status, 200, path)
    const expected = await paged(path)
    t.same(streamed.body.data, expected.data, `${path}: data with linkage`)
    t.same(byKey(streamed.body.included ?? []), byKey(expected.included), `${path}: included`)
    const keys = (streamed.body.included ?? []).map((item: Resource) => `${item.type}:${item.id}`)
    t.equal(new Set(keys).size, keys.length, 'no resource twice')
  }
  const groups = await api.request('GET', '/users?include=group.users&page[size]=0')
  t.same([...new Set(groups.body.included.map((item: Resource) => item.type))], ['group'], 'every user is primary: none is included')
})

t.test('cannot stream what the request may not read: errors before the first byte keep their status', async (t) => {
  assertError(t, await api.request('GET', '/users?page[size]=0&sort=nope'), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'sort' })
  assertError(t, await api.request('GET', '/users/999999/computers?page[size]=0'), { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
})

/** The example resources on a repository that fails where a test says. */
class Faulty extends KyselyRepository {
  failScan: unknown
  failAfterBatches: number | undefined
  override scan<T> (work: (repository: Repository, batches: (layer: QueryLayer, size: number) => AsyncIterable<Row[]>) => Promise<T>): Promise<T> {
    if (this.failScan !== undefined) return Promise.reject(this.failScan)
    return super.scan((repository, batches) => work(repository, (layer, size) => this.#failing(batches(layer, size))))
  }

  async * #failing (batches: AsyncIterable<Row[]>): AsyncIterable<Row[]> {
    let seen = 0
    for await (const batch of batches) {
      if (this.failAfterBatches !== undefined && seen >= this.failAfterBatches) throw new Error('the scan broke')
      seen++
      yield batch
    }
  }
}

async function faultyApp (repository: Faulty): Promise<FastifyInstance> {
  const app = await documentedFastify()
  await app.register(jsonApi, { repository, resources })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

t.test('a fault before the first byte is a 503 document; after it, the response is cut short', async (t) => {
  const repository = new Faulty(api.db)
  const app = await faultyApp(repository)
  // A lost connection, as each engine's driver reports it.
  repository.failScan = {
    postgres: () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    mysql: () => Object.assign(new Error('Connection was killed'), { code: 'ER_CONNECTION_KILLED', errno: 1927 }),
    sqlite: () => Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }),
  }[testEngine()]()
  const refused = await injectJsonApi(app, 'GET', '/users?page[size]=0')
  assertError(t, refused, { status: 503, code: 'FJA_DATABASE_UNAVAILABLE' })
  t.equal(refused.headers['retry-after'], '1')
  repository.failScan = undefined
  repository.failAfterBatches = 1
  await t.rejects(app.inject({ method: 'GET', url: '/users?page[size]=0' }), /destroyed before completion/,
    'the status went with the first byte, so the response is aborted: the client cannot mistake it for every row')
  repository.failAfterBatches = undefined
  const whole = await injectJsonApi(app, 'GET', '/users?page[size]=0')
  t.equal(whole.body.data.length, USERS, 'and the next request is whole')
})

t.test('a client that goes away mid-stream releases the snapshot', async (t) => {
  const app = await faultyApp(new Faulty(api.db))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const controller = new AbortController()
  const response = await fetch(`http://127.0.0.1:${port}/computers?page[size]=0&include=owner`, { signal: controller.signal })
  t.equal(response.status, 200)
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const first = await reader.read()
  t.ok((first.value?.length ?? 0) > 0, 'the first bytes arrived')
  controller.abort()
  await reader.cancel().catch(() => {})
  // On PGlite, one connection: an abandoned transaction would make this wait for ever.
  const next = await api.request('GET', '/users?page[size]=2')
  t.equal(next.status, 200, 'the database serves the next request')
  const again = await fetch(`http://127.0.0.1:${port}/users?page[size]=0`)
  t.equal((await again.json() as { data: unknown[] }).data.length, USERS)
  // fetch keeps its connection alive: without this, closing the app waits for the server's keep-alive timeout (72 s)
  app.server.closeAllConnections()
})

t.test('a client that stops reading cannot hold the database past pagination.streamTimeout: the stream is cut, its connection released', async (t) => {
  // names long enough that the document (about 22 MB) fills every buffer between the server and a client that reads nothing
  await api.db.updateTable('users').set({ first_name: 'x'.repeat(20000) }).execute()
  t.teardown(async () => { await api.db.updateTable('users').set({ first_name: null }).execute() })
  const app = await documentedFastify()
  await app.register(jsonApi, { db: api.db, resources, pagination: { streamTimeout: 300 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  // a client that sends its request, reads the status line, then reads nothing more (and never goes away)
  const client = connect(port, '127.0.0.1')
  t.teardown(() => { client.destroy() })
  await once(client, 'connect')
  client.write('GET /users?page[size]=0&fields[user]=name,first_name HTTP/1.1\r\nHost: x\r\n\r\n')
  const [head] = await once(client, 'data') as [Buffer]
  t.match(head.toString('latin1'), /^HTTP\/1\.1 200 /, 'the stream started')
  client.pause()
  const started = Date.now()
  // the server gives up on it: it closes the connection (the body cut off; a paused client does not notice)
  const connections = (): Promise<number> => new Promise((resolve, reject) => app.server.getConnections((error, count) => error ? reject(error) : resolve(count)))
  while (await connections() > 0 && Date.now() - started < 20_000) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(await connections(), 0, `the server closed the connection after ${Date.now() - started} ms`)
  // and its snapshot is gone: on PGlite's one connection the next request would wait for ever; on PostgreSQL no
  // transaction is left open on the cursor
  const next = await api.request('GET', '/users?page[size]=2')
  t.equal(next.status, 200, 'the database serves the next request')
  if (onPostgresServer()) {
    const open = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where query like 'fetch forward%' and state = 'idle in transaction'`.execute(api.db)
    t.same(open.rows, [{ n: 0 }], 'no transaction left on a cursor')
  }
})
