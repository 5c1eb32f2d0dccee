import t, { type Test } from 'tap'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { injectJsonApi, startTestApp, type TestResponse } from '../helpers/test-app.js'
import { jsonApi } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'

const api = await startTestApp(t.teardown)
const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"'
type Op = Record<string, unknown>

function run (operations: Op[], contentType = ATOMIC): Promise<TestResponse> {
  return api.request('POST', '/operations', { body: { 'atomic:operations': operations }, headers: { 'content-type': contentType } })
}

t.beforeEach(async () => {
  await api.reset()
  await api.db.insertInto('users').values([{ name: 'ada' }, { name: 'grace' }]).execute()
  await api.db.insertInto('computers').values([{ serial: 'A1', owner_id: 1 }, { serial: 'B2', owner_id: 2 }]).execute()
  await api.db.insertInto('user_bios').values({ birth_city: 'London', user_id: 1 }).execute()
})

/** A failed batch: its status, code and pointer, its meta, and nothing of the batch persisted. */
async function failsUnchanged (t: Test, operations: Op[], expected: { status: number; code: string; pointer: string; meta?: Record<string, unknown> }): Promise<TestResponse> {
  const before = await api.snapshot()
  const response = await run(operations)
  t.equal(response.status, expected.status, `${expected.code}: status`)
  t.equal(response.body.errors.length, 1)
  const [error] = response.body.errors
  t.equal(error.status, String(expected.status))
  t.equal(error.code, expected.code)
  t.same(error.source, { pointer: expected.pointer })
  if (expected.meta !== undefined) t.match(error.meta, expected.meta)
  t.same(await api.snapshot(), before, 'no row of the batch persists')
  return response
}

t.test('the seed\'s lid example: a user and its bio in one batch', async (t) => {
  const response = await run([
    { op: 'add', data: { type: 'user', lid: 'new-user', attributes: { name: 'linus', first_name: 'Linus' } } },
    { op: 'add', data: { type: 'user_bio', attributes: { birth_city: 'Helsinki' }, relationships: { user: { data: { type: 'user', lid: 'new-user' } } } } },
  ])
  t.equal(response.status, 200)
  t.equal(response.headers['content-type'], ATOMIC, 'the answer names the extension the request used')
  const [user, bio] = response.body['atomic:results']
  t.same(Object.keys(response.body), ['atomic:results', 'jsonapi'])
  t.equal(user.meta, null)
  t.match(user.data, { type: 'user', id: '3', attributes: { name: 'linus', display_name: 'Linus', status: 'active' } })
  t.ok('relationships' in user.data)
  t.match(bio.data, { type: 'user_bio', id: '2', attributes: { birth_city: 'Helsinki', favourite_movies: null } })
  t.notOk('included' in response.body)
  const row = await api.db.selectFrom('user_bios').selectAll().where('id', '=', 2).executeTakeFirstOrThrow()
  t.equal(row.user_id, 3, 'the lid became the new user\'s id')
})

t.test('the seed\'s lid example: parent, child and their association', async (t) => {
  const response = await run([
    { op: 'add', data: { type: 'parent', lid: 'p', attributes: { name: 'Alice' } } },
    { op: 'add', data: { type: 'child', lid: 'c', attributes: { name: 'Bob' } } },
    { op: 'add', data: { type: 'parent-to-child-association', attributes: { extra_data: 'adopted' }, relationships: { parent: { data: { type: 'parent', lid: 'p' } }, child: { data: { type: 'child', lid: 'c' } } } } },
  ])
  t.equal(response.status, 200)
  t.same(response.body['atomic:results'].map((result: { data: { type: string; id: string } }) => `${result.data.type}:${result.data.id}`), ['parent:1', 'child:1', 'parent-to-child-association:1'])
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id', 'extra_data']).execute(), [{ parent_id: 1, child_id: 1, extra_data: 'adopted' }])
  const parent = await api.request('GET', '/parents/1?include=children.child')
  t.same(parent.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`), ['parent-to-child-association:1', 'child:1'])
})

t.test('mixed add, update and remove; lids in to-many linkage and in ref', async (t) => {
  const response = await run([
    { op: 'add', data: { type: 'computer', lid: 'pc', attributes: { serial: 'C3' } } },
    { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: 'linus' }, relationships: { computers: { data: [{ type: 'computer', lid: 'pc' }, { type: 'computer', id: '2' }] } } } },
    { op: 'update', ref: { type: 'user', lid: 'u' }, data: { type: 'user', attributes: { age: 50 } } },
    { op: 'update', data: { type: 'computer', lid: 'pc', attributes: { name: 'penguin' } } },
    { op: 'update', data: { type: 'user', id: '1', attributes: { first_name: 'Ada' } } },
    { op: 'remove', ref: { type: 'computer', id: '1' } },
  ], 'application/vnd.api+json')
  t.equal(response.status, 200)
  t.equal(response.headers['content-type'], 'application/vnd.api+json', 'plain media type without the extension')
  const results = response.body['atomic:results']
  t.equal(results.length, 6)
  t.equal(results[2].data.attributes.age, 50)
  t.equal(results[3].data.attributes.name, 'penguin')
  t.equal(results[4].data.attributes.display_name, 'Ada')
  t.same(results[5], { data: null, meta: null })
  t.same((await api.db.selectFrom('computers').select(['id', 'owner_id']).orderBy('id').execute()), [{ id: 2, owner_id: 3 }, { id: 3, owner_id: 3 }])
})

t.test('application/json is accepted too', async (t) => {
  const response = await run([{ op: 'add', data: { type: 'group', attributes: { name: 'g' } } }], 'application/json')
  t.equal(response.status, 200)
})

t.test('a batch of removes only is a 204 without a body', async (t) => {
  const response = await run([{ op: 'remove', ref: { type: 'computer', id: '1' } }, { op: 'remove', ref: { type: 'user', id: '2' } }])
  t.equal(response.status, 204)
  t.equal(response.body, undefined)
  t.same((await api.db.selectFrom('users').select('id').execute()).map((row) => row.id), [1])
})

t.test('relationship operations: update, add and remove members, with lids', async (t) => {
  const response = await run([
    { op: 'add', data: { type: 'computer', lid: 'pc', attributes: { serial: 'C3' } } },
    { op: 'add', ref: { type: 'user', id: '1', relationship: 'computers' }, data: [{ type: 'computer', lid: 'pc' }] },
    { op: 'remove', ref: { type: 'user', id: '1', relationship: 'computers' }, data: [{ type: 'computer', id: '1' }] },
    { op: 'update', ref: { type: 'computer', id: '2', relationship: 'owner' }, data: null },
    { op: 'add', data: { type: 'group', lid: 'g', attributes: { name: 'g' } } },
    { op: 'update', ref: { type: 'group', lid: 'g', relationship: 'users' }, data: [{ type: 'user', id: '1' }, { type: 'user', id: '2' }] },
  ])
  t.equal(response.status, 200)
  t.same(response.body['atomic:results'].map((result: { data: unknown }) => result.data === null), [false, true, true, true, false, true])
  t.same(response.body['atomic:results'][1], { data: null, meta: null })
  t.same(await api.db.selectFrom('computers').select(['id', 'owner_id']).orderBy('id').execute(), [{ id: 1, owner_id: null }, { id: 2, owner_id: null }, { id: 3, owner_id: 1 }])
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [{ id: 1, group_id: 1 }, { id: 2, group_id: 1 }])
})

t.test('a many-to-many through a relationship operation inserts join rows', async (t) => {
  await api.db.insertInto('parents').values({ name: 'p' }).execute()
  await api.db.insertInto('children').values([{ name: 'c1' }, { name: 'c2' }]).execute()
  const response = await run([{ op: 'update', ref: { type: 'parent', id: '1', relationship: 'kids' }, data: [{ type: 'child', id: '1' }, { type: 'child', id: '2' }] }])
  t.equal(response.status, 200)
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id', 'extra_data']).orderBy('child_id').execute(), [
    { parent_id: 1, child_id: 1, extra_data: null }, { parent_id: 1, child_id: 2, extra_data: null },
  ])
})

t.test('rollback when the first, second, a middle or the last operation fails', async (t) => {
  const good = (name: string): Op => ({ op: 'add', data: { type: 'user', attributes: { name } } })
  const bad: Op = { op: 'add', data: { type: 'user', attributes: { name: 'x', age: 'old' } } }
  for (const [label, operations, index] of [
    ['first', [bad, good('a')], 0],
    ['second', [good('a'), bad], 1],
    ['middle', [good('a'), good('b'), bad, good('c')], 2],
    ['last', [good('a'), good('b'), { op: 'remove', ref: { type: 'computer', id: '1' } }, bad], 3],
  ] as Array<[string, Op[], number]>) {
    await failsUnchanged(t, operations, { status: 422, code: 'FJA_VALIDATION', pointer: `/atomic:operations/${index}/data/attributes/age`, meta: { operation: index, op: 'add', data: { type: 'user' } } })
    t.pass(label)
  }
})

t.test('a failure in the database rolls back too: the second bio of a user is a 409', async (t) => {
  await failsUnchanged(t, [
    { op: 'update', data: { type: 'user', id: '1', attributes: { name: 'changed' } } },
    { op: 'add', data: { type: 'user_bio', attributes: { birth_city: 'Paris' }, relationships: { user: { data: { type: 'user', id: '1' } } } } },
  ], { status: 409, code: 'FJA_UNIQUE_VIOLATION', pointer: '/atomic:operations/1/data/relationships/user' })
})

t.test('update validation: id, lid, null, and the update input of the type', async (t) => {
  await failsUnchanged(t, [{ op: 'update', data: { type: 'user', id: null, attributes: { age: 1 } } }], { status: 422, code: 'FJA_VALIDATION', pointer: '/atomic:operations/0/data/id' })
  await failsUnchanged(t, [{ op: 'update', data: { type: 'user', attributes: { age: 1 } } }], { status: 422, code: 'FJA_MISSING_FIELD', pointer: '/atomic:operations/0/data', meta: { field: 'id' } })
  await failsUnchanged(t, [{ op: 'update', data: { type: 'user_bio', id: '1', attributes: { favourite_movies: 'x' } } }], { status: 422, code: 'FJA_MISSING_FIELD', pointer: '/atomic:operations/0/data/attributes', meta: { field: 'birth_city' } })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '2' }, data: { type: 'user', id: '1', attributes: {} } }], { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/atomic:operations/0/data/id' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '1' }, data: { type: 'computer', attributes: {} } }], { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/atomic:operations/0/data/type' })
  await failsUnchanged(t, [{ op: 'update', data: { type: 'user', id: '99', attributes: { age: 1 } } }], { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', pointer: '/atomic:operations/0/data' })
  await failsUnchanged(t, [{ op: 'update', data: { type: 'user', id: '1', attributes: { display_name: 'x' } } }], { status: 422, code: 'FJA_READ_ONLY_FIELD', pointer: '/atomic:operations/0/data/attributes/display_name' })
  const ok = await run([{ op: 'update', ref: { type: 'user', id: '1' }, data: { type: 'user', attributes: { age: 7 } } }])
  t.equal(ok.status, 200, 'ref alone addresses the update')
  t.equal(ok.body['atomic:results'][0].data.attributes.age, 7)
})

t.test('lid errors: unknown, of the wrong type, defined twice', async (t) => {
  await failsUnchanged(t, [
    { op: 'add', data: { type: 'user_bio', attributes: { birth_city: 'X' }, relationships: { user: { data: { type: 'user', lid: 'nobody' } } } } },
  ], { status: 422, code: 'FJA_UNKNOWN_LID', pointer: '/atomic:operations/0/data/relationships/user/data/lid' })
  await failsUnchanged(t, [
    { op: 'add', data: { type: 'group', lid: 'g', attributes: { name: 'g' } } },
    { op: 'update', ref: { type: 'user', lid: 'g' }, data: { type: 'user', attributes: { age: 1 } } },
  ], { status: 422, code: 'FJA_UNKNOWN_LID', pointer: '/atomic:operations/1/ref/lid', meta: { operation: 1, op: 'update', ref: { type: 'user', lid: 'g' } } })
  await failsUnchanged(t, [
    { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: 'a' } } },
    { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: 'b' } } },
  ], { status: 422, code: 'FJA_DUPLICATE_LID', pointer: '/atomic:operations/1/data/lid' })
  await failsUnchanged(t, [
    { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: 'a' } } },
    { op: 'add', ref: { type: 'user', lid: 'u', relationship: 'computers' }, data: [{ type: 'computer', lid: 'missing' }] },
  ], { status: 422, code: 'FJA_UNKNOWN_LID', pointer: '/atomic:operations/1/data/0/lid' })
  await failsUnchanged(t, [{ op: 'remove', ref: { type: 'user', lid: 'later' } }, { op: 'add', data: { type: 'user', lid: 'later', attributes: { name: 'a' } } }],
    { status: 422, code: 'FJA_UNKNOWN_LID', pointer: '/atomic:operations/0/ref/lid' })
})

t.test('relationship operation errors', async (t) => {
  await failsUnchanged(t, [{ op: 'add', ref: { type: 'computer', id: '1', relationship: 'owner' }, data: { type: 'user', id: '2' } }], { status: 403, code: 'FJA_TO_ONE_MEMBERS', pointer: '/atomic:operations/0/ref/relationship' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '1', relationship: 'computers' }, data: [{ type: 'computer', id: '99' }] }], { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/atomic:operations/0/data/0' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '1', relationship: 'computers' }, data: [{ type: 'user', id: '1' }] }], { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/atomic:operations/0/data/0/type' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '1', relationship: 'computers' }, data: { type: 'computer', id: '1' } }], { status: 400, code: 'FJA_INVALID_DOCUMENT', pointer: '/atomic:operations/0/data' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '1', relationship: 'nothing' }, data: [] }], { status: 404, code: 'FJA_ROUTE_NOT_FOUND', pointer: '/atomic:operations/0/ref/relationship' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user_bio', id: '1', relationship: 'user' }, data: null }], { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/atomic:operations/0/data' })
  await failsUnchanged(t, [{ op: 'update', ref: { type: 'user', id: '99', relationship: 'computers' }, data: [] }], { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', pointer: '/atomic:operations/0/ref' })
})

t.test('malformed batches are 400s pointing into the request', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{}, '/atomic:operations'],
    [{ 'atomic:operations': [] }, '/atomic:operations'],
    [{ 'atomic:operations': {} }, '/atomic:operations'],
    [{ 'atomic:operations': [{ op: 'add' }], extra: 1 }, '/extra'],
    [{ 'atomic:operations': [5] }, '/atomic:operations/0'],
    [{ 'atomic:operations': [{ op: 'upsert', data: {} }] }, '/atomic:operations/0/op'],
    [{ 'atomic:operations': [{ data: { type: 'user' } }] }, '/atomic:operations/0/op'],
    [{ 'atomic:operations': [{ op: 'add', href: '/users', data: { type: 'user', attributes: { name: 'a' } } }] }, '/atomic:operations/0/href'],
    [{ 'atomic:operations': [{ op: 'add' }] }, '/atomic:operations/0'],
    [{ 'atomic:operations': [{ op: 'add', data: [] }] }, '/atomic:operations/0/data'],
    [{ 'atomic:operations': [{ op: 'add', data: { attributes: {} } }] }, '/atomic:operations/0/data/type'],
    [{ 'atomic:operations': [{ op: 'remove' }] }, '/atomic:operations/0'],
    [{ 'atomic:operations': [{ op: 'remove', ref: { type: 'user' } }] }, '/atomic:operations/0/ref'],
    [{ 'atomic:operations': [{ op: 'remove', ref: { type: 'user', id: '1', lid: 'x' } }] }, '/atomic:operations/0/ref'],
    [{ 'atomic:operations': [{ op: 'remove', ref: { type: 'user', id: 1 } }] }, '/atomic:operations/0/ref/id'],
    [{ 'atomic:operations': [{ op: 'remove', ref: { type: 'user', id: '1' }, data: {} }] }, '/atomic:operations/0/data'],
    [{ 'atomic:operations': [{ op: 'remove', ref: 'user' }] }, '/atomic:operations/0/ref'],
    [{ 'atomic:operations': [{ op: 'add', ref: { type: 'user', id: '1' }, data: { type: 'user' } }] }, '/atomic:operations/0/ref'],
    [{ 'atomic:operations': [{ op: 'add', data: { type: 'user', lid: 5, attributes: { name: 'a' } } }] }, '/atomic:operations/0/data/lid'],
    [{ 'atomic:operations': [{ op: 'add', ref: { type: 'user', id: '1', relationship: 'computers' } }] }, '/atomic:operations/0'],
    [[], ''],
  ]
  for (const [body, pointer] of cases) {
    const before = await api.snapshot()
    const response = await api.request('POST', '/operations', { body, headers: { 'content-type': ATOMIC } })
    t.equal(response.status, 400, JSON.stringify(body))
    t.same(response.body.errors[0].source, { pointer }, JSON.stringify(body))
    t.same(await api.snapshot(), before)
  }
  const unknownType = await run([{ op: 'add', data: { type: 'nothing', attributes: {} } }])
  t.equal(unknownType.status, 404)
  t.same(unknownType.body.errors[0].source, { pointer: '/atomic:operations/0/data/type' })
  const malformed = await api.request('POST', '/operations', { body: '{"atomic:operations": [', headers: { 'content-type': ATOMIC } })
  t.equal(malformed.status, 400)
  t.equal(malformed.body.errors[0].code, 'FJA_MALFORMED_JSON')
})

t.test('the maximum number of operations', async (t) => {
  const operations = Array.from({ length: 101 }, (_, index) => ({ op: 'add', data: { type: 'group', attributes: { name: `g${index}` } } }))
  const before = await api.snapshot()
  const tooMany = await run(operations)
  t.equal(tooMany.status, 413)
  t.equal(tooMany.body.errors[0].code, 'FJA_TOO_MANY_OPERATIONS')
  t.same(tooMany.body.errors[0].source, { pointer: '/atomic:operations' })
  t.same(await api.snapshot(), before)
  const hundred = await run(operations.slice(0, 100))
  t.equal(hundred.status, 200)
  t.equal(hundred.body['atomic:results'].length, 100)
})

t.test('media types, methods and options of the endpoint', async (t) => {
  const unsupported = await run([{ op: 'remove', ref: { type: 'user', id: '1' } }], 'application/vnd.api+json; ext="https://example.com/other"')
  t.equal(unsupported.status, 415)
  const get = await api.request('GET', '/operations')
  t.equal(get.status, 405)
  t.equal(get.headers.allow, 'POST')
  const app = await documentedFastify()
  await app.register(jsonApi, { db: api.db, resources, operations: { path: '/batch', maxOperations: 2 } })
  const off = await documentedFastify()
  await off.register(jsonApi, { db: api.db, resources, operations: { enabled: false } })
  t.teardown(async () => {
    await app.close()
    await off.close()
  })
  const headers = { 'content-type': ATOMIC }
  const moved = await injectJsonApi(app, 'POST', '/batch', { headers, body: { 'atomic:operations': [{ op: 'add', data: { type: 'group', attributes: { name: 'g' } } }] } })
  t.equal(moved.status, 200)
  const three = await injectJsonApi(app, 'POST', '/batch', { headers, body: { 'atomic:operations': [1, 2, 3].map(() => ({ op: 'remove', ref: { type: 'user', id: '1' } })) } })
  t.equal(three.status, 413)
  t.equal((await injectJsonApi(app, 'POST', '/operations', { headers, body: '{}' })).status, 404)
  t.equal((await injectJsonApi(off, 'POST', '/operations', { headers, body: '{}' })).status, 404)
})

t.test('20 concurrent batches all succeed, none partially', async (t) => {
  const batches = Array.from({ length: 20 }, (_, index) => run([
    { op: 'add', data: { type: 'user', lid: 'u', attributes: { name: `batch${index}` } } },
    { op: 'add', data: { type: 'computer', attributes: { serial: `S${index}` }, relationships: { owner: { data: { type: 'user', lid: 'u' } } } } },
    { op: 'add', data: { type: 'post', attributes: { title: `T${index}` }, relationships: { user: { data: { type: 'user', lid: 'u' } } } } },
  ]))
  const responses = await Promise.all(batches)
  t.same(responses.map((response) => response.status), Array.from({ length: 20 }, () => 200))
  const users = await api.db.selectFrom('users').select(['id', 'name']).where('name', 'like', 'batch%').execute()
  t.equal(users.length, 20)
  for (const user of users) {
    const computers = await api.db.selectFrom('computers').select('serial').where('owner_id', '=', user.id).execute()
    const posts = await api.db.selectFrom('posts').select('title').where('user_id', '=', user.id).execute()
    const index = String(user.name).slice('batch'.length)
    t.same([computers.map((row) => row.serial), posts.map((row) => row.title)], [[`S${index}`], [`T${index}`]], `batch ${index} is whole`)
  }
})
