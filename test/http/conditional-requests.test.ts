import t, { type Test } from 'tap'
import { jsonApi, ResourceConfigError, type AnyResourceDeclaration } from '../../lib/index.js'
import { resources, user } from '../../examples/app/resources.js'
import { exampleContext } from '../../examples/app/context.js'
import { injectJsonApi, startTestApp, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError, failsUnchanged } from '../helpers/assert-errors.js'
import { seedLinkedRows } from '../helpers/seed-linked-rows.js'

// Conditional requests: every 200 of a GET carries the ETag of its bytes, If-None-Match makes it a 304; writes of an
// existing resource honour If-Match against the ETag of GET /<type>/<id>, atomically (a row lock in the write's
// transaction): of two concurrent writes with the same tag exactly one wins.

const api = await startTestApp(t.teardown.bind(t))
await seedLinkedRows(api)
await api.db.insertInto('users').values([{ name: 'racer' }, { name: 'strict' }, { name: 'prefixed' }]).execute() // 4, 5, 6

const TAG = /^"[A-Za-z0-9_-]{27}"$/

async function etagOf (url: string): Promise<string> {
  const response = await api.request('GET', url)
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${response.text}`)
  return String(response.headers.etag)
}

function patchUser (id: string, attributes: Record<string, unknown>, headers: Record<string, string> = {}): Promise<TestResponse> {
  return api.request('PATCH', `/users/${id}`, { body: { data: { type: 'user', id, attributes } }, headers })
}

t.test('every GET route family answers 200 with an ETag, and 304 without a body when If-None-Match holds it', async (t) => {
  for (const url of [
    '/users',
    '/users?sort=-name&page[size]=2&include=computers',
    '/users/1',
    '/users/1?fields[user]=name',
    '/users/1/computers',
    '/computers/1/owner',
    '/users/1/relationships/computers',
    '/computers/1/relationships/owner',
  ]) {
    const first = await api.request('GET', url)
    t.equal(first.status, 200, url)
    const tag = String(first.headers.etag)
    t.match(tag, TAG, `${url}: a strong tag`)
    t.equal(String((await api.request('GET', url)).headers.etag), tag, `${url}: the same bytes, the same tag`)
    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
      const again = await api.request('GET', url, { headers: { 'if-none-match': header } })
      t.equal(again.status, 304, `${url} If-None-Match: ${header}`)
      t.equal(again.text, '', 'no body')
      t.equal(again.headers.etag, tag, 'the tag again')
    }
    const stale = await api.request('GET', url, { headers: { 'if-none-match': '"not-it"' } })
    t.equal(stale.status, 200, `${url}: another tag is a full answer`)
    t.equal(stale.text, first.text)
    const malformed = await api.request('GET', url, { headers: { 'if-none-match': 'no quotes' } })
    t.equal(malformed.status, 200, `${url}: a malformed If-None-Match is ignored`)
  }
  const head = await api.app.inject({ method: 'HEAD', url: '/users/1' })
  t.equal(head.headers.etag, await etagOf('/users/1'), 'HEAD has the tag of GET')
})

t.test('the tag follows the representation: a change makes the held tag stale', async (t) => {
  const before = await etagOf('/users/2')
  const collection = await etagOf('/users')
  t.equal((await patchUser('2', { name: 'renamed' })).status, 200)
  const after = await etagOf('/users/2')
  t.not(after, before)
  t.equal((await api.request('GET', '/users/2', { headers: { 'if-none-match': before } })).status, 200, 'the old tag is not current')
  t.not(await etagOf('/users'), collection, 'the collection changed too')
  t.equal((await api.request('GET', '/users/2', { headers: { 'if-none-match': after } })).status, 304)
})

t.test('errors and streamed collections carry no ETag', async (t) => {
  const missing = await api.request('GET', '/users/999')
  t.equal(missing.status, 404)
  t.equal(missing.headers.etag, undefined)
  const streamed = await api.request('GET', '/users?page[size]=0')
  t.equal(streamed.status, 200)
  t.equal(streamed.headers.etag, undefined, 'a stream is not hashed before it is sent')
})

t.test('PATCH and DELETE honour If-Match', async (t) => {
  const tag = await etagOf('/users/3')
  const ok = await patchUser('3', { age: 41 }, { 'if-match': tag })
  t.equal(ok.status, 200, 'the current tag: written')
  t.equal(ok.body.data.attributes.age, 41)
  await failsUnchanged(t, api, 'PATCH', '/users/3', { body: { data: { type: 'user', id: '3', attributes: { age: 42 } } }, headers: { 'if-match': tag } },
    { status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' })
  const current = await etagOf('/users/3')
  t.equal((await patchUser('3', { age: 43 }, { 'if-match': `"x", ${current}` })).status, 200, 'one of a list')
  await failsUnchanged(t, api, 'PATCH', '/users/3', { body: { data: { type: 'user', id: '3', attributes: { age: 44 } } }, headers: { 'if-match': `W/${await etagOf('/users/3')}` } },
    { status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' })
  t.equal((await patchUser('3', { age: 45 }, { 'if-match': '*' })).status, 200, '* matches any existing resource')
  assertError(t, await patchUser('999', { age: 1 }, { 'if-match': '*' }), { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  assertError(t, await patchUser('999', { age: 1 }, { 'if-match': tag }), { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  await failsUnchanged(t, api, 'PATCH', '/users/3', { body: { data: { type: 'user', id: '3', attributes: { age: 46 } } }, headers: { 'if-match': 'abc' } },
    { status: 400, code: 'FJA_INVALID_HEADER', header: 'If-Match' })

  const deletable = await api.request('POST', '/computers', { body: { data: { type: 'computer', attributes: { serial: 'DEL-1' } } } })
  const id = String(deletable.body.data.id)
  const stale = await etagOf(`/computers/${id}`)
  t.equal((await api.request('PATCH', `/computers/${id}`, { body: { data: { type: 'computer', id, attributes: { name: 'changed' } } } })).status, 200)
  await failsUnchanged(t, api, 'DELETE', `/computers/${id}`, { headers: { 'if-match': stale } }, { status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' })
  t.equal((await api.request('DELETE', `/computers/${id}`, { headers: { 'if-match': await etagOf(`/computers/${id}`) } })).status, 200)
  t.equal((await api.request('GET', `/computers/${id}`)).status, 404, 'deleted')
})

t.test('relationship routes honour If-Match (the ETag of the owner)', async (t) => {
  const created = await api.request('POST', '/computers', { body: { data: { type: 'computer', attributes: { serial: 'REL-1' } } } })
  const computer = String(created.body.data.id)
  const owner = '1'
  const tag = await etagOf(`/users/${owner}`)
  t.equal((await patchUser(owner, { age: 50 })).status, 200, 'the owner changes: the held tag is stale')
  const linkage = { data: [{ type: 'computer', id: computer }] }
  await failsUnchanged(t, api, 'POST', `/users/${owner}/relationships/computers`, { body: linkage, headers: { 'if-match': tag } }, { status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' })
  await failsUnchanged(t, api, 'DELETE', `/users/${owner}/relationships/computers`, { body: linkage, headers: { 'if-match': tag } }, { status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' })
  const computerTag = await etagOf(`/computers/${computer}`)
  t.equal((await api.request('PATCH', `/computers/${computer}`, { body: { data: { type: 'computer', id: computer, attributes: { name: 'n' } } } })).status, 200)
  await failsUnchanged(t, api, 'PATCH', `/computers/${computer}/relationships/owner`, { body: { data: { type: 'user', id: owner } }, headers: { 'if-match': computerTag } },
    { status: 412, code: 'FJA_PRECONDITION_FAILED', header: 'If-Match' })
  const current = await etagOf(`/users/${owner}`)
  t.equal((await api.request('POST', `/users/${owner}/relationships/computers`, { body: linkage, headers: { 'if-match': current } })).status, 200, 'current: added')
  t.equal((await api.request('DELETE', `/users/${owner}/relationships/computers`, { body: linkage, headers: { 'if-match': current } })).status, 200,
    'a relationship is not part of the representation: the tag is still current')
  t.equal((await api.request('PATCH', `/computers/${computer}/relationships/owner`, { body: { data: { type: 'user', id: owner } }, headers: { 'if-match': await etagOf(`/computers/${computer}`) } })).status, 200)
  assertError(t, await api.request('PATCH', `/computers/999/relationships/owner`, { body: { data: null }, headers: { 'if-match': '*' } }), { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
})

t.test('the comparison and the write are atomic: of two concurrent writes with the same tag, exactly one succeeds', async (t) => {
  const rounds = 25
  let wins = 0
  for (let round = 0; round < rounds; round++) {
    const tag = await etagOf('/users/4')
    const [a, b] = await Promise.all([
      patchUser('4', { name: `a${round}` }, { 'if-match': tag }),
      patchUser('4', { name: `b${round}` }, { 'if-match': tag }),
    ])
    const statuses = [a.status, b.status].sort()
    t.same(statuses, [200, 412], `round ${round}: one 200, one 412`)
    const winner = a.status === 200 ? a : b
    const stored = await api.request('GET', '/users/4')
    t.equal(stored.body.data.attributes.name, winner.body.data.attributes.name, 'the winner\'s write is what is stored')
    if (statuses[0] === 200 && statuses[1] === 412) wins++
  }
  t.equal(wins, rounds)
  // DELETE against PATCH with the same tag: one of them, never both
  const created = await api.request('POST', '/computers', { body: { data: { type: 'computer', attributes: { serial: 'RACE' } } } })
  const id = String(created.body.data.id)
  const tag = await etagOf(`/computers/${id}`)
  const [patch, remove] = await Promise.all([
    api.request('PATCH', `/computers/${id}`, { body: { data: { type: 'computer', id, attributes: { name: 'x' } } }, headers: { 'if-match': tag } }),
    api.request('DELETE', `/computers/${id}`, { headers: { 'if-match': tag } }),
  ])
  t.equal([patch.status, remove.status].filter((status) => status === 200).length, 1, `one write won (${patch.status}, ${remove.status})`)
  t.ok([patch.status, remove.status].every((status) => [200, 404, 412].includes(status)))
})

async function appWith (declarations: readonly AnyResourceDeclaration[], options: { prefix?: string, baseUrl?: string } = {}): Promise<(method: 'GET' | 'PATCH' | 'DELETE', url: string, headers?: Record<string, string>, body?: unknown) => Promise<TestResponse>> {
  const app = await documentedFastify()
  await app.register(jsonApi, { db: api.db, resources: declarations, context: exampleContext(api.db), prefix: options.prefix, baseUrl: options.baseUrl })
  await app.ready()
  t.teardown(() => app.close())
  return (method, url, headers = {}, body = undefined) => injectJsonApi(app, method, url, { headers, body })
}

t.test('a resource may require If-Match: 428 without one', async (t) => {
  const strict = await appWith(resources.map((item) => item === user ? { ...user, requireIfMatch: true } : item))
  const body = { data: { type: 'user', id: '5', attributes: { age: 7 } } }
  const before = await api.snapshot()
  assertError(t, await strict('PATCH', '/users/5', {}, body), { status: 428, code: 'FJA_PRECONDITION_REQUIRED', header: 'If-Match' })
  assertError(t, await strict('DELETE', '/users/5'), { status: 428, code: 'FJA_PRECONDITION_REQUIRED', header: 'If-Match' })
  assertError(t, await strict('PATCH', '/users/5/relationships/computers', {}, { data: [] }), { status: 428, code: 'FJA_PRECONDITION_REQUIRED', header: 'If-Match' })
  t.same(await api.snapshot(), before, 'nothing written')
  const tag = String((await strict('GET', '/users/5')).headers.etag)
  t.equal((await strict('PATCH', '/users/5', { 'if-match': tag }, body)).status, 200)
  t.equal((await strict('PATCH', '/computers/1', {}, { data: { type: 'computer', id: '1', attributes: { name: 'free' } } })).status, 200, 'other types are not affected')
})

t.test('cannot declare requireIfMatch as anything but a boolean', async (t) => {
  const app = await documentedFastify()
  t.teardown(() => app.close())
  await t.rejects(async () => {
    await app.register(jsonApi, { db: api.db, resources: [{ ...user, requireIfMatch: 'yes' as unknown as boolean }] })
    await app.ready()
  }, ResourceConfigError)
})

t.test('the tag of GET /<type>/<id> is the one If-Match is compared with, under a prefix and a base URL too', async (t: Test) => {
  const prefixed = await appWith(resources, { prefix: '/api', baseUrl: 'https://api.example.com' })
  const read = await prefixed('GET', '/api/users/6')
  t.match(read.body.links.self, 'https://api.example.com/api/users/6')
  const written = await prefixed('PATCH', '/api/users/6', { 'if-match': String(read.headers.etag) }, { data: { type: 'user', id: '6', attributes: { age: 66 } } })
  t.equal(written.status, 200)
})

t.test('/operations: an operation on an existing resource takes its precondition in meta.ifMatch', async (t) => {
  const operations = (list: unknown[]): Promise<TestResponse> => api.request('POST', '/operations', {
    body: { 'atomic:operations': list },
    headers: { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
  })
  const tag = await etagOf('/users/2')
  const ok = await operations([{ op: 'update', data: { type: 'user', id: '2', attributes: { age: 12 } }, meta: { ifMatch: tag } }])
  t.equal(ok.status, 200, 'the current tag')
  const before = await api.snapshot()
  const stale = await operations([
    { op: 'update', data: { type: 'user', id: '3', attributes: { age: 13 } } },
    { op: 'update', data: { type: 'user', id: '2', attributes: { age: 14 } }, meta: { ifMatch: tag } },
  ])
  t.equal(stale.status, 412)
  t.equal(stale.body.errors[0].code, 'FJA_PRECONDITION_FAILED')
  t.same(stale.body.errors[0].source, { pointer: '/atomic:operations/1/meta/ifMatch' })
  t.same(await api.snapshot(), before, 'the whole batch rolled back')
  // later operations see the batch's own earlier writes: a tag read before the batch is stale after an update in it
  const current = await etagOf('/users/2')
  const inBatch = await operations([
    { op: 'update', data: { type: 'user', id: '2', attributes: { age: 15 } }, meta: { ifMatch: current } },
    { op: 'update', data: { type: 'user', id: '2', attributes: { age: 16 } }, meta: { ifMatch: current } },
  ])
  t.equal(inBatch.status, 412, 'the second operation meets the first one\'s change')
  t.same(inBatch.body.errors[0].source, { pointer: '/atomic:operations/1/meta/ifMatch' })
  t.equal((await operations([{ op: 'remove', ref: { type: 'computer', id: '4' }, meta: { ifMatch: '"stale"' } }])).status, 412, 'remove')
  t.equal((await operations([{ op: 'add', ref: { type: 'user', id: '1', relationship: 'computers' }, data: [{ type: 'computer', id: '4' }], meta: { ifMatch: '"stale"' } }])).status, 412, 'a relationship operation')
  t.equal((await operations([{ op: 'update', data: { type: 'user', id: '2', attributes: { age: 17 } }, meta: { ifMatch: '*' } }])).status, 200, '*')
  const wrong = await operations([{ op: 'update', data: { type: 'user', id: '2', attributes: { age: 18 } }, meta: { ifMatch: 7 } }])
  t.equal(wrong.status, 400)
  t.same(wrong.body.errors[0].source, { pointer: '/atomic:operations/0/meta/ifMatch' })
  const add = await operations([{ op: 'add', data: { type: 'computer', attributes: { serial: 'NEW' } }, meta: { ifMatch: '*' } }])
  t.equal(add.status, 400, 'an add has nothing to compare with')
})

t.test("an application's onSend hook sees each answer as sent: the document's text, its media type without a charset, a 304 without a body", async (t) => {
  const app = await documentedFastify()
  const seen: Array<{ url: string, status: number, type: unknown, etag: unknown, payload: unknown }> = []
  app.addHook('onSend', async (request, reply, payload) => {
    seen.push({ url: request.url, status: reply.statusCode, type: reply.getHeader('content-type'), etag: reply.getHeader('etag'), payload })
    return payload
  })
  await app.register(jsonApi, { db: api.db, resources, context: exampleContext(api.db) })
  await app.ready()
  t.teardown(() => app.close())
  const read = await injectJsonApi(app, 'GET', '/users/1')
  t.equal(read.status, 200)
  const tag = String(read.headers.etag)
  const unchanged = await injectJsonApi(app, 'GET', '/users/1', { headers: { 'if-none-match': tag } })
  t.equal(unchanged.status, 304)
  t.equal(unchanged.headers['content-length'], undefined, 'a 304 has no body and no length')
  const missing = await injectJsonApi(app, 'GET', '/users/999999')
  t.equal(missing.status, 404)
  t.same(seen.map(({ url, status, type, etag }) => ({ url, status, type, etag })), [
    { url: '/users/1', status: 200, type: 'application/vnd.api+json', etag: tag },
    { url: '/users/1', status: 304, type: 'application/vnd.api+json', etag: tag },
    { url: '/users/999999', status: 404, type: 'application/vnd.api+json', etag: undefined },
  ])
  t.equal(seen[0].payload, read.text, 'the document as text')
  t.equal(seen[1].payload, undefined, 'no body for the 304')
  t.equal(seen[2].payload, missing.text, 'an error document as text too')
  for (const response of [read, unchanged, missing]) t.equal(response.headers['content-type'], 'application/vnd.api+json', 'no charset on the wire')
})
