// The example app's acting user, private notes and post rules (the contract's "Acting user, private notes and
// business rules"): a note is visible to its owner only, through every route that can reach it, and every way of
// writing one obeys the same rules.
import t, { type Test } from 'tap'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { jsonApi } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { injectJsonApi, startTestApp, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { assertError, failsUnchanged } from '../helpers/assert-errors.js'
import { resource } from '../helpers/documents.js'
import { dialectPattern, dialectText } from '../helpers/engine.js'

const api = await startTestApp(t.teardown)
const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"'

/** As the acting user `user` (undefined: anonymous). */
function as (user: string | undefined, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, request: TestRequest = {}): Promise<TestResponse> {
  const headers = { ...(request.headers ?? {}), ...(user === undefined ? {} : { 'x-user-id': user }) }
  return api.request(method, url, { ...request, headers })
}

function ids (response: TestResponse): string[] {
  const data = response.body.data
  return (Array.isArray(data) ? data : [data]).filter((item) => item !== null).map((item: { id: string }) => item.id)
}

function includedOf (response: TestResponse, type: string): string[] {
  return (response.body.included ?? []).filter((item: { type: string }) => item.type === type).map((item: { id: string }) => item.id)
}

/** The body never mentions grace's note: not its id as a note, not its text. */
function noSecret (t: Test, response: TestResponse): void {
  const text = JSON.stringify(response.body)
  t.notMatch(text, /grace secret/, 'no attribute of the invisible note')
  t.notMatch(text, /"type":"note","id":"3"/, 'no identifier of the invisible note')
}

async function seed (): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values({ name: 'engineers' }).execute()
  await api.db.insertInto('users').values([
    { name: 'ada', group_id: 1 },
    { name: 'grace', group_id: 1 },
    { name: 'linus' },
  ]).execute()
  await api.db.insertInto('notes').values([
    { text: 'ada one', owner_id: 1 },
    { text: 'ada two', owner_id: 1 },
    { text: 'grace secret', owner_id: 2 },
  ]).execute()
  await api.db.insertInto('computers').values([{ serial: 'G1', owner_id: 2 }, { serial: 'A1', owner_id: 1 }]).execute()
}

t.beforeEach(seed)

t.test('the acting user: X-User-Id names an existing user, or the request is refused with 401', async (t) => {
  for (const value of ['99', 'abc', '0', '-1', '99999999999', '1, 2', '']) {
    const response = await as(value, 'GET', '/notes')
    assertError(t, response, { status: 401, code: 'unknown_user', title: 'Unknown user', header: 'X-User-Id' })
  }
  const anonymous = await as(undefined, 'GET', '/users')
  t.equal(anonymous.status, 200, 'no header: an anonymous request')
})

t.test('visibility: a request sees exactly its own notes; an anonymous one sees none', async (t) => {
  const ada = await as('1', 'GET', '/notes')
  t.equal(ada.status, 200)
  t.same(ids(ada), ['1', '2'])
  t.same(ada.body.meta, { count: 2 })
  t.same(ada.body.data[0], resource('note', '1', { text: 'ada one' }))
  noSecret(t, ada)
  const grace = await as('2', 'GET', '/notes')
  t.same(ids(grace), ['3'])
  t.same(grace.body.meta, { count: 1 })
  const linus = await as('3', 'GET', '/notes')
  t.same(ids(linus), [])
  t.same(linus.body.meta, { count: 0 })
  const anonymous = await as(undefined, 'GET', '/notes')
  t.same(ids(anonymous), [])
  t.same(anonymous.body.meta, { count: 0 })
})

t.test('leak matrix: every read that can reach a note shows only visible ones', async (t) => {
  const cases: Array<[string, (t: Test, response: TestResponse) => void]> = [
    ['/notes/3', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/notes/1', (t, response) => t.same(ids(response), ['1'])],
    ['/notes?page[size]=1', (t, response) => {
      t.same(ids(response), ['1'])
      t.same(response.body.meta, { count: 2 })
      t.same(response.body.links, {
        self: '/notes?page%5Bsize%5D=1',
        first: '/notes?page%5Bsize%5D=1',
        next: '/notes?page%5Bsize%5D=1&page%5Bnumber%5D=2',
        last: '/notes?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      }, 'the last page counts visible notes only')
    }],
    ['/notes?filter=[{"name":"text","op":"like","val":"%25secret%25"}]', (t, response) => t.same(ids(response), [])],
    ['/notes?filter[owner_id]=2', (t, response) => t.same(ids(response), [])],
    ['/users/2/notes', (t, response) => {
      t.same(ids(response), [])
      t.same(response.body.meta, { count: 0 })
    }],
    ['/users/1/notes', (t, response) => t.same(ids(response), ['1', '2'])],
    ['/users/2/relationships/notes', (t, response) => {
      t.same(response.body.data, [])
      t.same(response.body.meta, { count: 0 })
    }],
    ['/users/1/relationships/notes', (t, response) => t.same(response.body.data, [{ type: 'note', id: '1' }, { type: 'note', id: '2' }])],
    ['/notes/3/owner', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/notes/3/relationships/owner', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/users?include=notes', (t, response) => {
      t.same(response.body.data.map((user: any) => user.relationships.notes.data), [
        [{ type: 'note', id: '1' }, { type: 'note', id: '2' }], [], [],
      ])
      t.same(includedOf(response, 'note'), ['1', '2'])
    }],
    ['/users/2?include=notes', (t, response) => {
      t.same(response.body.data.relationships.notes.data, [])
      t.notOk('included' in response.body)
    }],
    ['/groups/1?include=users.notes', (t, response) => t.same(includedOf(response, 'note'), ['1', '2'])],
    ['/computers?include=owner.notes', (t, response) => {
      const grace = response.body.included.find((item: any) => item.type === 'user' && item.id === '2')
      t.same(grace.relationships.notes.data, [], 'depth 2: grace\'s notes are not linked')
      t.same(includedOf(response, 'note'), ['1', '2'])
    }],
    ['/notes?include=owner.notes', (t, response) => t.same(includedOf(response, 'note'), [])],
    ['/users?filter=[{"name":"notes","op":"any","val":{"name":"text","op":"eq","val":"grace secret"}}]', (t, response) => {
      t.same(ids(response), [])
      t.same(response.body.meta, { count: 0 })
    }],
    ['/users?filter=[{"name":"notes","op":"any"}]', (t, response) => t.same(ids(response), ['1'], 'only the visible notes count')],
    ['/users?filter=[{"not":{"name":"notes","op":"any"}}]', (t, response) => t.same(ids(response), ['2', '3'])],
    ['/users?filter=[{"name":"notes.text","op":"eq","val":"grace secret"}]', (t, response) => t.same(ids(response), [])],
    ['/users?filter[notes.text]=grace secret', (t, response) => t.same(ids(response), [])],
    ['/users?filter[notes.text]=ada one', (t, response) => t.same(ids(response), ['1'])],
    ['/notes?sort=-owner.name', (t, response) => t.same(ids(response), ['1', '2'])],
  ]
  for (const [url, check] of cases) {
    await t.test(`as ada: GET ${url}`, async (t) => {
      const response = await as('1', 'GET', url.replace(/ /g, '%20'))
      check(t, response)
      noSecret(t, response)
    })
  }
})

t.test('a scope adds no statement to any read', async (t) => {
  const counts: Array<[string | undefined, string, number, number]> = [
    [undefined, '/notes', 200, 2],
    [undefined, '/notes/1', 404, 1],
    [undefined, '/users?include=notes', 200, 3],
    [undefined, '/users/1/notes', 200, 3],
    ['1', '/notes', 200, 1 + 2],
    ['1', '/notes/1', 200, 1 + 1],
    ['1', '/users?include=notes.owner', 200, 1 + 4],
    ['1', '/users?filter=[{"name":"notes","op":"any"}]', 200, 1 + 2],
  ]
  for (const [user, url, status, statements] of counts) {
    api.counter.reset()
    const response = await as(user, 'GET', url)
    t.equal(response.status, status, url)
    t.equal(api.counter.count, statements, `${user === undefined ? 'anonymous' : `as ${user} (one statement finds the user)`}: ${url}`)
  }
  api.counter.reset()
  await as('1', 'GET', '/notes')
  // The page and its count run side by side: either may be recorded first.
  const [page, count] = api.counter.statements.slice(1).sort((a, b) => Number(a.includes('count(*)')) - Number(b.includes('count(*)')))
  t.match(page, dialectPattern(/^select "id", .* from "notes" where "owner_id" = \$1 order by/), 'the scope is a condition of the same statement (its columns unqualified: no other table)')
  t.equal(count, dialectText('select count(*) as "count" from "notes" where "owner_id" = $1'), 'and of the count')
})

t.test('create: anonymous → 401; the owner is the acting user, set when absent, 403 when someone else', async (t) => {
  const body = (relationships?: unknown) => ({ body: { data: { type: 'note', attributes: { text: 'new' }, ...(relationships === undefined ? {} : { relationships }) } } })
  await failsUnchanged(t, api, 'POST', '/notes', body(), { status: 401, code: 'unauthenticated', title: 'Unauthenticated', header: 'X-User-Id' })
  const created = await as('1', 'POST', '/notes?include=owner', body())
  t.equal(created.status, 201)
  t.same(created.body.data, resource('note', '4', { text: 'new' }, { owner: { type: 'user', id: '1' } }))
  t.equal(created.headers.location, '/notes/4')
  const explicit = await as('2', 'POST', '/notes', body({ owner: { data: { type: 'user', id: '2' } } }))
  t.equal(explicit.status, 201, 'naming the acting user is accepted')
  const before = await api.snapshot()
  const refused = await as('1', 'POST', '/notes', body({ owner: { data: { type: 'user', id: '2' } } }))
  assertError(t, refused, { status: 403, code: 'not_your_note', title: 'Forbidden', pointer: '/data/relationships/owner' })
  t.same(await api.snapshot(), before, 'nothing written')
  const rows = await api.db.selectFrom('notes').select(['id', 'owner_id']).orderBy('id').execute()
  t.same(rows.map((row) => [row.id, row.owner_id]), [[1, 1], [2, 1], [3, 2], [4, 1], [5, 2]])
})

t.test('change: invisible notes are 404; the owner never changes; user.notes is never written', async (t) => {
  const cases: Array<[string, 'PATCH' | 'DELETE' | 'POST', string, unknown, number, string, string | undefined]> = [
    ['1', 'PATCH', '/notes/3', { data: { type: 'note', id: '3', attributes: { text: 'mine now' } } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    [undefined as never, 'PATCH', '/notes/1', { data: { type: 'note', id: '1', attributes: { text: 'anonymous' } } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'DELETE', '/notes/3', undefined, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    [undefined as never, 'DELETE', '/notes/1', undefined, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'PATCH', '/notes/1', { data: { type: 'note', id: '1', relationships: { owner: { data: { type: 'user', id: '2' } } } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data/relationships/owner'],
    ['1', 'PATCH', '/notes/1', { data: { type: 'note', id: '1', relationships: { owner: { data: { type: 'user', id: '1' } } } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data/relationships/owner'],
    ['1', 'PATCH', '/notes/1/relationships/owner', { data: { type: 'user', id: '2' } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data'],
    // A refusal is only ever about a note the request can see: for grace's note (or none) the answer is the 404.
    ['1', 'PATCH', '/notes/3/relationships/owner', { data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'PATCH', '/notes/99/relationships/owner', { data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    [undefined as never, 'PATCH', '/notes/1/relationships/owner', { data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'PATCH', '/notes/3', { data: { type: 'note', id: '3', relationships: { owner: { data: { type: 'user', id: '1' } } } } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'POST', '/notes/3/relationships/owner', { data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'DELETE', '/notes/3/relationships/owner', { data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'POST', '/notes/1/relationships/owner', { data: { type: 'user', id: '1' } }, 403, 'FJA_TO_ONE_MEMBERS', undefined],
    ['1', 'DELETE', '/notes/1/relationships/owner', { data: { type: 'user', id: '1' } }, 403, 'FJA_TO_ONE_MEMBERS', undefined],
    ['1', 'PATCH', '/notes/3/owner', { data: { type: 'user', id: '2', attributes: { name: 'mallory' } } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'POST', '/notes/3/owner', { data: { type: 'user', attributes: { name: 'mallory' } } }, 404, 'FJA_RESOURCE_NOT_FOUND', undefined],
    ['1', 'POST', '/notes/1/owner', { data: { type: 'user', attributes: { name: 'mallory' } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data'],
    ['1', 'PATCH', '/users/1', { data: { type: 'user', id: '1', relationships: { notes: { data: [{ type: 'note', id: '3' }] } } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data/relationships/notes'],
    ['1', 'PATCH', '/users/1', { data: { type: 'user', id: '1', relationships: { notes: { data: [] } } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data/relationships/notes'],
    ['1', 'POST', '/users', { data: { type: 'user', attributes: { name: 'eve' }, relationships: { notes: { data: [{ type: 'note', id: '1' }] } } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data/relationships/notes'],
    ['1', 'PATCH', '/users/1/relationships/notes', { data: [] }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data'],
    ['1', 'POST', '/users/1/relationships/notes', { data: [{ type: 'note', id: '3' }] }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data'],
    ['1', 'DELETE', '/users/2/relationships/notes', { data: [{ type: 'note', id: '3' }] }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data'],
    ['1', 'POST', '/users/1/notes', { data: { type: 'note', attributes: { text: 'through the user' } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/data'],
  ]
  for (const [user, method, url, body, status, code, pointer] of cases) {
    await t.test(`${user === undefined ? 'anonymous' : `as ${user}`}: ${method} ${url}`, async (t) => {
      const before = await api.snapshot()
      const response = await as(user, method, url, body === undefined ? {} : { body })
      assertError(t, response, { status, code, ...(pointer === undefined ? {} : { pointer }) })
      t.same(await api.snapshot(), before, 'nothing written')
    })
  }
})

t.test('change: a visible note can be edited and deleted by its owner', async (t) => {
  const patched = await as('1', 'PATCH', '/notes/1', { body: { data: { type: 'note', id: '1', attributes: { text: 'ada edited' } } } })
  t.equal(patched.status, 200)
  t.same(patched.body.data.attributes, { text: 'ada edited' })
  const deleted = await as('1', 'DELETE', '/notes/2')
  t.equal(deleted.status, 200)
  const rows = await api.db.selectFrom('notes').select(['id', 'text']).orderBy('id').execute()
  t.same(rows, [{ id: 1, text: 'ada edited' }, { id: 3, text: 'grace secret' }])
})

t.test('operations: the same rules; a failing operation rolls the batch back and points into the request', async (t) => {
  const run = (user: string | undefined, operations: unknown[]) => as(user, 'POST', '/operations', { body: { 'atomic:operations': operations }, headers: { 'content-type': ATOMIC } })
  const ok = await run('1', [
    { op: 'add', data: { type: 'note', lid: 'n', attributes: { text: 'batched' } } },
    { op: 'update', data: { type: 'note', lid: 'n', attributes: { text: 'batched twice' } } },
  ])
  t.equal(ok.status, 200)
  t.same(ok.body['atomic:results'].map((result: any) => result.data.attributes.text), ['batched', 'batched twice'])
  t.equal((await api.db.selectFrom('notes').select('owner_id').where('id', '=', 4).executeTakeFirstOrThrow()).owner_id, 1, 'the owner is the acting user')

  const failing: Array<[string | undefined, unknown, number, string, string]> = [
    ['1', { op: 'update', data: { type: 'note', id: '3', attributes: { text: 'x' } } }, 404, 'FJA_RESOURCE_NOT_FOUND', '/atomic:operations/1/data'],
    ['1', { op: 'update', ref: { type: 'note', id: '3', relationship: 'owner' }, data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', '/atomic:operations/1/ref'],
    ['1', { op: 'add', ref: { type: 'note', id: '3', relationship: 'owner' }, data: { type: 'user', id: '1' } }, 404, 'FJA_RESOURCE_NOT_FOUND', '/atomic:operations/1/ref'],
    ['1', { op: 'add', ref: { type: 'note', id: '1', relationship: 'owner' }, data: { type: 'user', id: '1' } }, 403, 'FJA_TO_ONE_MEMBERS', '/atomic:operations/1/ref/relationship'],
    ['1', { op: 'update', data: { type: 'note', id: '3', relationships: { owner: { data: { type: 'user', id: '1' } } } } }, 404, 'FJA_RESOURCE_NOT_FOUND', '/atomic:operations/1/data'],
    ['1', { op: 'remove', ref: { type: 'note', id: '3' } }, 404, 'FJA_RESOURCE_NOT_FOUND', '/atomic:operations/1/ref'],
    ['1', { op: 'add', data: { type: 'note', attributes: { text: 'x' }, relationships: { owner: { data: { type: 'user', id: '2' } } } } }, 403, 'not_your_note', '/atomic:operations/1/data/relationships/owner'],
    [undefined, { op: 'add', data: { type: 'note', attributes: { text: 'x' } } }, 401, 'unauthenticated', '/atomic:operations/1/data'],
    ['1', { op: 'update', ref: { type: 'note', id: '1', relationship: 'owner' }, data: { type: 'user', id: '2' } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/atomic:operations/1/data'],
    ['1', { op: 'update', data: { type: 'note', id: '1', relationships: { owner: { data: { type: 'user', id: '1' } } } } }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/atomic:operations/1/data/relationships/owner'],
    ['1', { op: 'remove', ref: { type: 'user', id: '2', relationship: 'notes' }, data: [{ type: 'note', id: '3' }] }, 403, 'FJA_READ_ONLY_RELATIONSHIP', '/atomic:operations/1/data'],
    ['1', { op: 'update', data: { type: 'post', id: '1', attributes: { title: 'Forbidden fruit' } } }, 422, 'title_forbidden', '/atomic:operations/1/data/attributes/title'],
  ]
  for (const [user, operation, status, code, pointer] of failing) {
    await t.test(`${code} at ${pointer}`, async (t) => {
      // (the tables are reset before each subtest: the post the title rule is tried on is made here)
      await api.db.insertInto('posts').values({ title: 'hello', user_id: 1 }).execute()
      const before = await api.snapshot()
      // a first operation that anyone may run, so that the failing one is the second
      const response = await run(user, [{ op: 'add', data: { type: 'user', attributes: { name: 'first of the batch' } } }, operation])
      t.equal(response.status, status)
      t.equal(response.body.errors.length, 1)
      const [error] = response.body.errors
      t.equal(error.code, code)
      // the hook's 401 names the header too; every error points at its operation
      t.same(error.source, code === 'unauthenticated' ? { header: 'X-User-Id', pointer } : { pointer })
      t.match(error.meta, { operation: 1 })
      t.same(await api.snapshot(), before, 'the whole batch is rolled back')
    })
  }
})

t.test('post rules: the title is trimmed and never contains "forbidden", on every write path', async (t) => {
  const created = await as(undefined, 'POST', '/posts', { body: { data: { type: 'post', attributes: { title: '  hello  ' }, relationships: { user: { data: { type: 'user', id: '1' } } } } } })
  t.equal(created.status, 201)
  t.equal(created.body.data.attributes.title, 'hello', 'stored without surrounding white space')
  const related = await as(undefined, 'POST', '/users/2/posts', { body: { data: { type: 'post', attributes: { title: '\tvia the user\n' } } } })
  t.equal(related.status, 201)
  t.equal(related.body.data.attributes.title, 'via the user')
  const patched = await as(undefined, 'PATCH', '/posts/1', { body: { data: { type: 'post', id: '1', attributes: { title: ' edited ' } } } })
  t.equal(patched.body.data.attributes.title, 'edited')
  const bodyOnly = await as(undefined, 'PATCH', '/posts/1', { body: { data: { type: 'post', id: '1', attributes: { body: 'no title sent' } } } })
  t.equal(bodyOnly.body.data.attributes.title, 'edited', 'a PATCH without a title keeps it')
  const rows = await api.db.selectFrom('posts').select('title').orderBy('id').execute()
  t.same(rows.map((row) => row.title), ['edited', 'via the user'])

  const refused: Array<['POST' | 'PATCH', string, unknown]> = [
    ['POST', '/posts', { data: { type: 'post', attributes: { title: 'a FORBIDDEN title' }, relationships: { user: { data: { type: 'user', id: '1' } } } } }],
    ['POST', '/users/1/posts', { data: { type: 'post', attributes: { title: 'Forbidden' } } }],
    ['PATCH', '/posts/1', { data: { type: 'post', id: '1', attributes: { title: ' forbidden. ' } } }],
  ]
  for (const [method, url, body] of refused) {
    await failsUnchanged(t, api, method, url, { body }, { status: 422, code: 'title_forbidden', title: 'Forbidden title', pointer: '/data/attributes/title' })
  }
  await failsUnchanged(t, api, 'PATCH', '/posts/999', { body: { data: { type: 'post', id: '999', attributes: { title: 'forbidden' } } } },
    { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  const word = await as(undefined, 'POST', '/posts', { body: { data: { type: 'post', attributes: { title: 'forbiddenness is a word of its own' }, relationships: { user: { data: { type: 'user', id: '1' } } } } } })
  t.equal(word.status, 201, 'only the word itself is refused')
})

t.test('route metadata: an application hook reads config.jsonapi (type, action, relationship) on every route', async (t) => {
  const app = await documentedFastify()
  const seen: unknown[] = []
  app.addHook('onRequest', async (request) => {
    seen.push(request.routeOptions.config.jsonapi)
  })
  await app.register(jsonApi, { db: api.db, resources })
  t.teardown(() => app.close())
  const requests: Array<['GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', string]> = [
    ['GET', '/notes'], ['POST', '/notes'], ['GET', '/notes/1'], ['PATCH', '/notes/1'], ['DELETE', '/notes/1'],
    ['GET', '/users/1/notes'], ['POST', '/users/1/posts'], ['PATCH', '/users/1/bio'], ['DELETE', '/users/1/bio'],
    ['GET', '/users/1/relationships/notes'], ['PATCH', '/users/1/relationships/computers'], ['POST', '/users/1/relationships/computers'],
    ['DELETE', '/users/1/relationships/computers'], ['PUT', '/notes'], ['GET', '/users/1/nope'], ['POST', '/operations'],
  ]
  for (const [method, url] of requests) await injectJsonApi(app, method, url)
  t.same(seen, [
    { type: 'note', action: 'list' },
    { type: 'note', action: 'create' },
    { type: 'note', action: 'read' },
    { type: 'note', action: 'update' },
    { type: 'note', action: 'delete' },
    { type: 'user', action: 'read-related', relationship: 'notes' },
    { type: 'user', action: 'create-related', relationship: 'posts' },
    { type: 'user', action: 'update-related', relationship: 'bio' },
    { type: 'user', action: 'delete-related', relationship: 'bio' },
    { type: 'user', action: 'read-relationship', relationship: 'notes' },
    { type: 'user', action: 'replace-relationship', relationship: 'computers' },
    { type: 'user', action: 'add-relationship', relationship: 'computers' },
    { type: 'user', action: 'remove-relationship', relationship: 'computers' },
    { type: 'note', action: 'method-not-allowed' },
    { type: 'user', action: 'unknown-relationship' },
    { action: 'operations' },
  ])
})
