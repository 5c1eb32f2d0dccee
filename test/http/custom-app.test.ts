import t from 'tap'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type InjectOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import {
  jsonApi, JsonApiError, KyselyRepository, ResourceConfigError, defineResource,
  type JsonApiOptions, type Repository,
} from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { openTestDatabase } from '../helpers/database.js'
import { assertOptionsErrors } from '../helpers/assert-errors.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { emptyTables, testEngine } from '../helpers/engine.js'

const database = await openTestDatabase()
t.teardown(() => database.close())
const db = database.db

type Response = TestResponse

/** Sends a request; the response must be valid JSON:API and declared by the app's OpenAPI document. */
function send (app: FastifyInstance, method: InjectOptions['method'], url: string, options: TestRequest = {}): Promise<Response> {
  return injectJsonApi(app, method, url, options)
}

/** A Fastify app with the plugin registered over the shared database, closed at the end of the file. */
async function build (
  options: Partial<JsonApiOptions> = {},
  setup: { server?: FastifyServerOptions; before?: (app: FastifyInstance) => void; after?: (app: FastifyInstance) => void } = {},
): Promise<FastifyInstance> {
  const app = await documentedFastify(setup.server ?? {})
  setup.before?.(app)
  await app.register(jsonApi, { db, resources, ...options })
  setup.after?.(app)
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/** Empties groups, users, computers and the tables that point at them (dependents first), and starts their ids again. */
async function resetTables (): Promise<void> {
  await emptyTables(db, ['notes', 'posts', 'user_bios', 'workplaces', 'computers', 'users', 'groups'])
}

/** A log destination that keeps every line, parsed. */
function logCapture (): { lines: Array<Record<string, any>>; stream: { write: (line: string) => void } } {
  const lines: Array<Record<string, any>> = []
  return { lines, stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } }
}

/** The Kysely repository, except that the listed methods fail with an unexpected error. */
class FailingRepository implements Repository {
  readonly #inner: Repository
  readonly #failing: ReadonlySet<string>

  constructor (inner: Repository, failing: readonly string[]) {
    this.#inner = inner
    this.#failing = new Set(failing)
  }

  async #call<T> (method: string, work: () => Promise<T>): Promise<T> {
    if (this.#failing.has(method)) throw new Error('secret internals: password=hunter2 at db.internal:5432')
    return work()
  }

  findMany (...args: Parameters<Repository['findMany']>) { return this.#call('findMany', () => this.#inner.findMany(...args)) }
  count (...args: Parameters<Repository['count']>) { return this.#call('count', () => this.#inner.count(...args)) }
  findRelated (...args: Parameters<Repository['findRelated']>) { return this.#call('findRelated', () => this.#inner.findRelated(...args)) }
  insert (...args: Parameters<Repository['insert']>) { return this.#call('insert', () => this.#inner.insert(...args)) }
  update (...args: Parameters<Repository['update']>) { return this.#call('update', () => this.#inner.update(...args)) }
  delete (...args: Parameters<Repository['delete']>) { return this.#call('delete', () => this.#inner.delete(...args)) }
  replaceLinks (...args: Parameters<Repository['replaceLinks']>) { return this.#call('replaceLinks', () => this.#inner.replaceLinks(...args)) }
  addLinks (...args: Parameters<Repository['addLinks']>) { return this.#call('addLinks', () => this.#inner.addLinks(...args)) }
  removeLinks (...args: Parameters<Repository['removeLinks']>) { return this.#call('removeLinks', () => this.#inner.removeLinks(...args)) }

  transaction<T> (work: (repository: Repository) => Promise<T>): Promise<T> {
    return this.#inner.transaction((inner) => work(new FailingRepository(inner, [...this.#failing])))
  }
}

t.beforeEach(resetTables)

t.test('a JsonApiError thrown by a root-level hook added before register renders through the plugin\'s handler', async (t) => {
  // The statuses of the application's own hook are declared for the OpenAPI document (every answer is checked there).
  const app = await build({ openapi: { errors: [401, 403] } }, {
    before: (app) => {
      app.addHook('preHandler', async (request) => {
        if (request.headers.authorization === undefined) {
          throw new JsonApiError({ status: 401, detail: 'Sign in first.', source: { header: 'Authorization' } })
        }
        if (request.headers.authorization === 'Bearer reader' && request.method !== 'GET') {
          throw new JsonApiError({ status: 403, code: 'APP_READ_ONLY', title: 'Read only', detail: 'readers cannot write', meta: { role: 'reader' } })
        }
      })
    },
  })
  await db.insertInto('users').values({ name: 'ada' }).execute()
  const denied = await send(app, 'GET', '/users/1')
  t.equal(denied.status, 401)
  t.match(denied.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(denied.body, {
    errors: [{ status: '401', code: 'FJA_ERROR_401', title: 'Unauthorized', detail: 'Sign in first.', source: { header: 'Authorization' } }],
    jsonapi: { version: '1.0' },
  })
  const custom = await send(app, 'POST', '/users', { body: { data: { type: 'user', attributes: { name: 'x' } } }, headers: { authorization: 'Bearer reader' } })
  t.equal(custom.status, 403)
  t.same(custom.body.errors, [{ status: '403', code: 'APP_READ_ONLY', title: 'Read only', detail: 'readers cannot write', meta: { role: 'reader' } }])
  const allowed = await send(app, 'GET', '/users/1', { headers: { authorization: 'Bearer reader' } })
  t.equal(allowed.status, 200, 'the hook lets other requests through')
  t.equal(allowed.body.data.attributes.name, 'ada')
  const rows = await db.selectFrom('users').select('name').execute()
  t.same(rows, [{ name: 'ada' }], 'the refused POST wrote nothing')
})

t.test('a preHandler of a wrapping plugin, several error objects, and a 4xx error of Fastify\'s kind', async (t) => {
  const app = await documentedFastify()
  await app.register(async function wrapper (scope) {
    scope.addHook('preHandler', async (request) => {
      const check = request.headers['x-check']
      if (check === 'many') {
        throw JsonApiError.many([
          { status: 422, detail: 'first problem', source: { pointer: '/data/attributes/name' } },
          { status: 422, detail: 'second problem', source: { parameter: 'include' } },
        ])
      }
      if (check === 'mixed') {
        throw JsonApiError.many([{ status: 404, detail: 'a' }, { status: 409, detail: 'b' }])
      }
      if (check === 'teapot') throw Object.assign(new Error('no coffee here'), { statusCode: 403 })
      if (check === 'retry') throw new JsonApiError({ status: 503, detail: 'down for maintenance', headers: { 'retry-after': '120' } })
    })
    await scope.register(jsonApi, { db, resources, openapi: { errors: [403, 422, 503] } })
  })
  await app.ready()
  t.teardown(() => app.close())

  const many = await send(app, 'GET', '/users', { headers: { 'x-check': 'many' } })
  t.equal(many.status, 422)
  t.same(many.body.errors, [
    { status: '422', code: 'FJA_ERROR_422', title: 'Unprocessable Entity', detail: 'first problem', source: { pointer: '/data/attributes/name' } },
    { status: '422', code: 'FJA_ERROR_422', title: 'Unprocessable Entity', detail: 'second problem', source: { parameter: 'include' } },
  ])
  const mixed = await send(app, 'GET', '/users', { headers: { 'x-check': 'mixed' } })
  t.equal(mixed.status, 400, 'differing 4xx statuses answer 400')
  t.same(mixed.body.errors.map((error: { status: string }) => error.status), ['404', '409'])
  const fastifyStyle = await send(app, 'GET', '/users', { headers: { 'x-check': 'teapot' } })
  t.equal(fastifyStyle.status, 403)
  t.match(fastifyStyle.body.errors[0], { status: '403', title: 'Forbidden', detail: 'no coffee here' })
  const retry = await send(app, 'GET', '/users', { headers: { 'x-check': 'retry' } })
  t.equal(retry.status, 503)
  t.equal(retry.headers['retry-after'], '120', 'extra headers of the error are sent')
  t.same(retry.body.errors, [{ status: '503', code: 'FJA_ERROR_503', title: 'Service Unavailable', detail: 'down for maintenance' }])
  const fine = await send(app, 'GET', '/users')
  t.equal(fine.status, 200)
  t.same(fine.body.data, [])
})

t.test('an unexpected error is a 500 without internals, logged through request.log', async (t) => {
  const log = logCapture()
  const app = await build(
    { repository: new FailingRepository(new KyselyRepository(db), ['findMany', 'findById', 'insert']) },
    {
      server: { logger: { level: 'error', stream: log.stream } },
      before: (app) => {
        app.addHook('preHandler', async (request) => {
          if (request.headers['x-boom'] !== undefined) throw new TypeError('secret hook failure: cannot read properties of undefined')
        })
      },
    },
  )
  await db.insertInto('users').values({ name: 'ada' }).execute()
  const requests: Array<[InjectOptions['method'], string, unknown, Record<string, string>]> = [
    ['GET', '/users', undefined, {}],
    ['GET', '/users/1', undefined, {}],
    ['POST', '/users', { data: { type: 'user', attributes: { name: 'x' } } }, {}],
    ['GET', '/computers', undefined, { 'x-boom': '1' }],
  ]
  for (const [method, url, body, headers] of requests) {
    const response = await send(app, method, url, { body, headers })
    t.equal(response.status, 500, `${method} ${url}`)
    t.match(response.headers['content-type'], /^application\/vnd\.api\+json/, `${method} ${url}`)
    t.same(response.body, {
      errors: [{ status: '500', code: 'FJA_INTERNAL', title: 'Internal server error', detail: 'the server failed to handle the request' }],
      jsonapi: { version: '1.0' },
    }, `${method} ${url}`)
    t.notMatch(response.text, /secret|hunter2|db\.internal|stack|at [A-Za-z]+\./, `${method} ${url}: no internals`)
  }
  const failures = log.lines.filter((line) => line.msg === 'fastify-jsonapi: request failed')
  t.equal(failures.length, 4, 'one error line per failed request')
  t.same(failures.map((line) => line.level), [50, 50, 50, 50], 'at level error')
  t.same(failures.map((line) => line.reqId), ['req-1', 'req-2', 'req-3', 'req-4'], 'through request.log (with the request id)')
  t.same(failures.map((line) => line.err?.message), [
    'secret internals: password=hunter2 at db.internal:5432',
    'secret internals: password=hunter2 at db.internal:5432',
    'secret internals: password=hunter2 at db.internal:5432',
    'secret hook failure: cannot read properties of undefined',
  ], 'the log keeps what the response hides')
  t.match(failures[0].err.stack, /FailingRepository/)
  t.equal(await db.selectFrom('users').select(db.fn.countAll().as('count')).executeTakeFirstOrThrow().then((row) => Number(row.count)), 1, 'the failed POST wrote nothing')

  const before = log.lines.length
  const notFound = await send(app, 'GET', '/nothing')
  t.equal(notFound.status, 404)
  const badQuery = await send(app, 'GET', '/computers?sort=nothing')
  t.equal(badQuery.status, 400)
  t.equal(log.lines.length, before, 'client errors are not logged as errors')
})

t.test('routes: a resource without delete answers DELETE with 405 and the right Allow', async (t) => {
  const team = defineResource({
    type: 'team',
    path: '/teams',
    table: 'groups',
    routes: { delete: false },
    attributes: { name: { schema: Type.String(), required: true } },
  })
  const board = defineResource({
    type: 'board',
    path: '/boards',
    table: 'groups',
    routes: { create: false, update: false },
    attributes: { name: { schema: Type.String(), required: true } },
  })
  const app = await build({ resources: [team, board] })
  await db.insertInto('groups').values([{ name: 'engineers' }, { name: 'designers' }]).execute()

  const removed = await send(app, 'DELETE', '/teams/1')
  t.equal(removed.status, 405)
  t.equal(removed.headers.allow, 'GET, PATCH, HEAD')
  t.match(removed.body.errors[0], { status: '405', code: 'FJA_METHOD_NOT_ALLOWED', title: 'Method not allowed' })
  t.same(await db.selectFrom('groups').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }], 'nothing was deleted')
  const collection = await send(app, 'DELETE', '/teams')
  t.equal(collection.status, 405)
  t.equal(collection.headers.allow, 'GET, POST, HEAD')

  const read = await send(app, 'GET', '/teams/1')
  t.equal(read.status, 200)
  t.same(read.body.data, { type: 'team', id: '1', attributes: { name: 'engineers' }, links: { self: '/teams/1' } })
  const updated = await send(app, 'PATCH', '/teams/2', { body: { data: { type: 'team', id: '2', attributes: { name: 'artists' } } } })
  t.equal(updated.status, 200)
  t.equal(updated.body.data.attributes.name, 'artists')
  const created = await send(app, 'POST', '/teams', { body: { data: { type: 'team', attributes: { name: 'testers' } } } })
  t.equal(created.status, 201)
  t.equal(created.body.data.id, '3')

  const boardCreate = await send(app, 'POST', '/boards', { body: { data: { type: 'board', attributes: { name: 'x' } } } })
  t.equal(boardCreate.status, 405)
  t.equal(boardCreate.headers.allow, 'GET, HEAD')
  const boardUpdate = await send(app, 'PATCH', '/boards/1', { body: { data: { type: 'board', id: '1', attributes: { name: 'x' } } } })
  t.equal(boardUpdate.status, 405)
  t.equal(boardUpdate.headers.allow, 'GET, DELETE, HEAD')
  t.same(await db.selectFrom('groups').select(['id', 'name']).orderBy('id').execute(), [
    { id: 1, name: 'engineers' },
    { id: 2, name: 'artists' },
    { id: 3, name: 'testers' },
  ])
  const boardDelete = await send(app, 'DELETE', '/boards/3')
  t.equal(boardDelete.status, 200)
  t.same(await db.selectFrom('groups').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }])
})

const groupAttributes = { name: { schema: Type.String(), required: true } }
const allowedGroup = defineResource({ type: 'team', path: '/teams', table: 'groups', clientIds: 'allowed', attributes: groupAttributes })
const requiredGroup = defineResource({ type: 'crew', path: '/crews', table: 'groups', clientIds: 'required', attributes: groupAttributes })

t.test('clientIds: allowed', async (t) => {
  const app = await build({ resources: [allowedGroup, requiredGroup] })
  const chosen = await send(app, 'POST', '/teams', { body: { data: { type: 'team', id: '100', attributes: { name: 'chosen' } } } })
  t.equal(chosen.status, 201)
  t.equal(chosen.headers.location, '/teams/100')
  t.same(chosen.body.data, { type: 'team', id: '100', attributes: { name: 'chosen' }, links: { self: '/teams/100' } })
  const generated = await send(app, 'POST', '/teams', { body: { data: { type: 'team', attributes: { name: 'generated' } } } })
  t.equal(generated.status, 201)
  // PostgreSQL's sequence is not advanced by an id the client chose; MariaDB's AUTO_INCREMENT and SQLite's
  // AUTOINCREMENT continue after the largest id in the table.
  const generatedId = testEngine() === 'postgres' ? '1' : '101'
  t.equal(generated.body.data.id, generatedId, testEngine() === 'postgres' ? 'the database generates the id; the sequence was not advanced by the client id' : 'the database generates the id, after the largest')
  const taken = await send(app, 'POST', '/teams', { body: { data: { type: 'team', id: generatedId, attributes: { name: 'again' } } } })
  t.equal(taken.status, 409)
  t.equal(taken.body.errors[0].code, 'FJA_UNIQUE_VIOLATION')
  const notAnInteger = await send(app, 'POST', '/teams', { body: { data: { type: 'team', id: 'abc', attributes: { name: 'x' } } } })
  t.equal(notAnInteger.status, 422)
  t.match(notAnInteger.body.errors[0], { code: 'FJA_VALIDATION', source: { pointer: '/data/id' } })
  const tooLarge = await send(app, 'POST', '/teams', { body: { data: { type: 'team', id: '99999999999', attributes: { name: 'x' } } } })
  t.equal(tooLarge.status, 422)
  t.match(tooLarge.body.errors[0], { code: 'FJA_VALIDATION', source: { pointer: '/data/id' } })
  const numeric = await send(app, 'POST', '/teams', { body: { data: { type: 'team', id: 5, attributes: { name: 'x' } } } })
  t.equal(numeric.status, 400)
  t.match(numeric.body.errors[0], { code: 'FJA_INVALID_DOCUMENT', source: { pointer: '/data/id' } })
  t.same(await db.selectFrom('groups').select(['id', 'name']).orderBy('id').execute(), testEngine() === 'postgres'
    ? [{ id: 1, name: 'generated' }, { id: 100, name: 'chosen' }]
    : [{ id: 100, name: 'chosen' }, { id: 101, name: 'generated' }])
})

t.test('clientIds: required', async (t) => {
  const app = await build({ resources: [allowedGroup, requiredGroup] })
  const missing = await send(app, 'POST', '/crews', { body: { data: { type: 'crew', attributes: { name: 'x' } } } })
  t.equal(missing.status, 422)
  t.same(missing.body.errors, [{
    status: '422',
    code: 'FJA_MISSING_FIELD',
    title: 'Missing required field',
    detail: missing.body.errors[0].detail,
    source: { pointer: '/data' },
    meta: { field: 'id' },
  }])
  t.match(missing.body.errors[0].detail, /crew/)
  const given = await send(app, 'POST', '/crews', { body: { data: { type: 'crew', id: '7', attributes: { name: 'seven' } } } })
  t.equal(given.status, 201)
  t.equal(given.body.data.id, '7')
  t.equal(given.headers.location, '/crews/7')
  t.same(await db.selectFrom('groups').select(['id', 'name']).execute(), [{ id: 7, name: 'seven' }])
})

t.test('baseUrl prefixes every link', async (t) => {
  const app = await build({ baseUrl: 'https://api.example.com/v1/', pagination: { defaultSize: 1 } })
  await db.insertInto('users').values([{ name: 'ada' }, { name: 'grace' }]).execute()
  await db.insertInto('computers').values({ serial: 'A1', owner_id: 1 }).execute()
  const one = await send(app, 'GET', '/users/1?include=computers')
  t.equal(one.status, 200)
  t.same(one.body.links, { self: 'https://api.example.com/v1/users/1' })
  t.same(one.body.data.links, { self: 'https://api.example.com/v1/users/1' })
  t.same(one.body.data.relationships.computers.links, {
    self: 'https://api.example.com/v1/users/1/relationships/computers',
    related: 'https://api.example.com/v1/users/1/computers',
  })
  t.same(one.body.included[0].links, { self: 'https://api.example.com/v1/computers/1' })
  const page = await send(app, 'GET', '/users')
  t.same(page.body.links, {
    self: 'https://api.example.com/v1/users',
    first: 'https://api.example.com/v1/users',
    next: 'https://api.example.com/v1/users?page%5Bnumber%5D=2',
    last: 'https://api.example.com/v1/users?page%5Bnumber%5D=2',
  })
  const created = await send(app, 'POST', '/users', { body: { data: { type: 'user', attributes: { name: 'linus' } } } })
  t.equal(created.status, 201)
  t.equal(created.headers.location, 'https://api.example.com/v1/users/3')
  t.equal(created.body.data.links.self, 'https://api.example.com/v1/users/3')
})

t.test('pagination options', async (t) => {
  const app = await build({ pagination: { defaultSize: 2, maxSize: 3, unpaged: 'forbidden' } })
  await db.insertInto('users').values([{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }, { name: 'e' }]).execute()
  const first = await send(app, 'GET', '/users')
  t.same(first.body.data.map((user: { id: string }) => user.id), ['1', '2'], 'defaultSize')
  t.same(first.body.meta, { count: 5 })
  t.same(first.body.links, { self: '/users', first: '/users', next: '/users?page%5Bnumber%5D=2', last: '/users?page%5Bnumber%5D=3' })
  const last = await send(app, 'GET', '/users?page[number]=3')
  t.same(last.body.data.map((user: { id: string }) => user.id), ['5'])
  const max = await send(app, 'GET', '/users?page[size]=3')
  t.equal(max.body.data.length, 3, 'maxSize itself is allowed')
  const over = await send(app, 'GET', '/users?page[size]=4')
  t.equal(over.status, 400)
  t.match(over.body.errors[0], { code: 'FJA_INVALID_QUERY_PARAMETER', source: { parameter: 'page[size]' } })
  const unpaged = await send(app, 'GET', '/users?page[size]=0')
  t.equal(unpaged.status, 400, 'unpaged: forbidden')
  t.match(unpaged.body.errors[0], { code: 'FJA_INVALID_QUERY_PARAMETER', source: { parameter: 'page[size]' } })

  const depth = await build({ maxIncludeDepth: 1 })
  const shallow = await send(depth, 'GET', '/users?include=computers')
  t.equal(shallow.status, 200)
  const deep = await send(depth, 'GET', '/users?include=computers.owner')
  t.equal(deep.status, 400)
  t.match(deep.body.errors[0], { code: 'FJA_INVALID_QUERY_PARAMETER', source: { parameter: 'include' } })
})

t.test('notFoundHandler: false leaves unknown routes to the application', async (t) => {
  const fastifyDefault = await build({ notFoundHandler: false })
  // Fastify's own 404 (not JSON:API, so not through the checking helper).
  const raw = await fastifyDefault.inject({ method: 'GET', url: '/nothing' })
  const plain = { status: raw.statusCode, headers: raw.headers, body: JSON.parse(raw.body) }
  t.equal(plain.status, 404)
  t.match(plain.headers['content-type'], /^application\/json/)
  t.match(plain.body, { statusCode: 404, error: 'Not Found' })
  t.notOk('errors' in plain.body, 'not the plugin\'s JSON:API 404')

  const own = await build({ notFoundHandler: false }, {
    after: (app) => {
      app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ custom: true }))
    },
  })
  const customRaw = await own.inject({ method: 'GET', url: '/nothing' })
  t.equal(customRaw.statusCode, 404)
  t.same(JSON.parse(customRaw.body), { custom: true })
  const stillJsonApi = await send(own, 'PUT', '/users/1')
  t.equal(stillJsonApi.status, 405, 'the plugin\'s own routes still answer')
  t.equal(stillJsonApi.body.errors[0].code, 'FJA_METHOD_NOT_ALLOWED')
  const resource = await send(own, 'GET', '/users/42')
  t.equal(resource.body.errors[0].code, 'FJA_RESOURCE_NOT_FOUND')

  const withHandler = await build()
  const jsonApi404 = await send(withHandler, 'GET', '/nothing')
  t.equal(jsonApi404.body.errors[0].code, 'FJA_ROUTE_NOT_FOUND', 'by default the plugin answers unknown routes')
})

t.test('bad plugin options throw JsonApiOptionsError at registration', async (t) => {
  const cases: Array<[string, Partial<JsonApiOptions>, RegExp]> = [
    ['no db', { db: undefined }, /`db`/],
    ['pageSize 0', { pagination: { defaultSize: 0 } }, /pagination\.defaultSize/],
    ['negative maxSize', { pagination: { maxSize: -1 } }, /pagination\.maxSize/],
    ['fractional pageSize', { pagination: { defaultSize: 2.5 } }, /pagination\.defaultSize/],
    ['defaultSize over maxSize', { pagination: { defaultSize: 50, maxSize: 10 } }, /pagination\.defaultSize.*pagination\.maxSize/],
    ['maxIncludeDepth 0', { maxIncludeDepth: 0 }, /maxIncludeDepth/],
    ['operations on a resource path', { operations: { path: '/users' } }, /operations\.path.*'\/users'.*resource 'user'/],
    ['operations path not a path', { operations: { path: 'ops' } }, /operations\.path/],
    ['maxOperations 0', { operations: { maxOperations: 0 } }, /operations\.maxOperations/],
    ['unknown unpaged policy', { pagination: { unpaged: 'sometimes' as 'allowed' } }, /pagination\.unpaged/],
  ]
  await assertOptionsErrors(t, { db, resources }, cases)
})

t.test('a wrong declaration fails at registration with ResourceConfigError', async (t) => {
  const app = Fastify()
  const broken = defineResource({
    type: 'badge',
    table: 'groups',
    relationships: { holder: { kind: 'to-one', type: 'nobody', foreignKey: 'holder_id' } },
  })
  try {
    await app.register(jsonApi, { db, resources: [...resources, broken] })
    t.fail('registration should fail')
  } catch (error) {
    t.ok(error instanceof ResourceConfigError)
    t.equal((error as ResourceConfigError).code, 'FJA_INVALID_DECLARATION')
    t.match((error as Error).message, /resource 'badge', field 'holder'/)
    t.match((error as Error).message, /'nobody'/)
  } finally {
    await app.close()
  }
})
