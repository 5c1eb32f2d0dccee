import t, { type Test } from 'tap'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { ERROR_CODES } from '../../lib/errors/error-codes.js'

const api = await startTestApp(t.teardown)

const PHOTO_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301'
const DELETED = { meta: { message: 'Object successfully deleted' }, jsonapi: { version: '1.0' } }

async function seed (): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values([{ name: 'engineers' }]).execute()
  await api.db.insertInto('users').values([
    { name: 'ada', first_name: 'Ada', group_id: 1 },
    { name: 'grace', group_id: 1 },
  ]).execute()
  await api.db.insertInto('computers').values([
    { serial: 'A1', owner_id: 1 },
    { serial: 'A2', owner_id: 1 },
    { serial: 'B1', owner_id: 2 },
  ]).execute()
  await api.db.insertInto('user_bios').values([
    { birth_city: 'London', user_id: 1 },
    { birth_city: 'New York', user_id: 2 },
  ]).execute()
  await api.db.insertInto('posts').values([
    { title: 'one', user_id: 1 },
    { title: 'two', user_id: 1 },
    { title: 'three', user_id: 2 },
  ]).execute()
  await api.db.insertInto('workplaces').values([{ name: 'lab', user_id: 1 }]).execute()
  await api.db.insertInto('parents').values([{ name: 'p1' }, { name: 'p2' }]).execute()
  await api.db.insertInto('children').values([{ name: 'c1' }, { name: 'c2' }]).execute()
  await api.db.insertInto('parent_to_child_associations').values([
    { parent_id: 1, child_id: 1, extra_data: 'x' },
    { parent_id: 1, child_id: 2, extra_data: null },
    { parent_id: 2, child_id: 1, extra_data: null },
  ]).execute()
  await api.db.insertInto('photos').values({ id: PHOTO_ID, name: 'beach', words: JSON.stringify({ a: 1 }) }).execute()
}

t.beforeEach(seed)

function assertDeleted (t: Test, response: TestResponse): void {
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, DELETED)
}

function assertNotFound (t: Test, response: TestResponse): void {
  t.equal(response.status, 404)
  t.same(Object.keys(response.body).sort(), ['errors', 'jsonapi'])
  t.equal(response.body.errors.length, 1)
  const { detail, ...rest } = response.body.errors[0]
  t.same(rest, { status: '404', code: 'FJA_RESOURCE_NOT_FOUND', title: ERROR_CODES.FJA_RESOURCE_NOT_FOUND.title })
  t.type(detail, 'string')
}

async function ids (table: string): Promise<number[]> {
  const rows = await api.db.selectFrom(table).select('id').orderBy('id').execute()
  return rows.map((row) => row.id as number)
}

t.test('DELETE a computer: 200 with meta.message and jsonapi; the row is gone', async (t) => {
  const before = await api.snapshot()
  const response = await api.request('DELETE', '/computers/2')
  assertDeleted(t, response)
  t.same(await ids('computers'), [1, 3])
  const after = await api.snapshot()
  t.same({ ...after, computers: before.computers }, before, 'nothing else changed')
  assertNotFound(t, await api.request('GET', '/computers/2'))
  const ada = await api.request('GET', '/users/1?include=computers')
  t.same(ada.body.data.relationships.computers.data, [{ type: 'computer', id: '1' }])
})

t.test('DELETE a user: the bio and posts go by cascade, computers and workplace stay without owner', async (t) => {
  const response = await api.request('DELETE', '/users/1')
  assertDeleted(t, response)
  t.same(await ids('users'), [2])
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 2, user_id: 2 }])
  t.same(await api.db.selectFrom('posts').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 3, user_id: 2 }])
  t.same(await api.db.selectFrom('computers').select(['id', 'owner_id']).orderBy('id').execute(), [
    { id: 1, owner_id: null },
    { id: 2, owner_id: null },
    { id: 3, owner_id: 2 },
  ])
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).execute(), [{ id: 1, user_id: null }])
  t.same(await ids('groups'), [1], 'the group remains')
  const computer = await api.request('GET', '/computers/1?include=owner')
  t.equal(computer.status, 200)
  t.same(computer.body.data.relationships.owner.data, null)
  assertNotFound(t, await api.request('GET', '/user-bio/1'))
  assertNotFound(t, await api.request('GET', '/posts/2'))
})

t.test('DELETE a group: its users remain without a group', async (t) => {
  assertDeleted(t, await api.request('DELETE', '/groups/1'))
  t.same(await ids('groups'), [])
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [{ id: 1, group_id: null }, { id: 2, group_id: null }])
})

t.test('DELETE a parent: its association rows go, the children stay', async (t) => {
  assertDeleted(t, await api.request('DELETE', '/parents/1'))
  t.same(await ids('parents'), [2])
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id']).orderBy('id').execute(), [{ parent_id: 2, child_id: 1 }])
  t.same(await ids('children'), [1, 2])
})

t.test('DELETE an association: the parent and child stay, kids shrink', async (t) => {
  assertDeleted(t, await api.request('DELETE', '/parent-to-child-association/1'))
  t.same(await ids('parent_to_child_associations'), [2, 3])
  const parent = await api.request('GET', '/parents/1?include=kids')
  t.same(parent.body.data.relationships.kids.data, [{ type: 'child', id: '2' }])
})

t.test('DELETE a photo by its UUID', async (t) => {
  assertDeleted(t, await api.request('DELETE', `/photos/${PHOTO_ID}`))
  t.same(await api.db.selectFrom('photos').select('id').execute(), [])
})

t.test('DELETE twice: the second is a 404 and changes nothing', async (t) => {
  assertDeleted(t, await api.request('DELETE', '/posts/1'))
  const before = await api.snapshot()
  assertNotFound(t, await api.request('DELETE', '/posts/1'))
  t.same(await api.snapshot(), before)
})

t.test('cannot DELETE what does not exist: 404, nothing changes', async (t) => {
  const before = await api.snapshot()
  for (const url of ['/users/abc', '/users/99', '/users/0', '/users/-1', '/users/1.0', '/users/99999999999', '/photos/not-a-uuid', '/photos/00000000-0000-0000-0000-000000000000']) {
    await t.test(url, async (t) => {
      assertNotFound(t, await api.request('DELETE', url))
    })
  }
  t.same(await api.snapshot(), before)
})

t.test('DELETE tolerates a JSON:API body (kitsu sends one)', async (t) => {
  const response = await api.request('DELETE', '/users/2', {
    body: '{"data":{"type":"user","id":"2"}}',
    headers: { 'content-type': 'application/vnd.api+json' },
  })
  assertDeleted(t, response)
  t.same(await ids('users'), [1])
  t.same(await api.db.selectFrom('posts').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }])
})

t.test('DELETE tolerates a Content-Type without a body', async (t) => {
  const response = await api.request('DELETE', '/computers/3', { headers: { 'content-type': 'application/vnd.api+json' } })
  assertDeleted(t, response)
  t.same(await ids('computers'), [1, 2])
})
