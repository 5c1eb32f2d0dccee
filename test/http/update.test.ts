import t, { type Test } from 'tap'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { assertErrors, failsUnchanged as failsWithout, type ExpectedError } from '../helpers/assert-errors.js'
import { dateText, storedJson } from '../helpers/engine.js'

const api = await startTestApp(t.teardown)

const PHOTO_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301'

async function seed (): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values([{ name: 'engineers' }, { name: 'artists' }]).execute()
  // Apart: in one multi-row INSERT, SQLite writes NULL (not the default) where a row leaves out a column another sets
  await api.db.insertInto('users').values([
    { name: 'ada', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org', age: 36, birth_date: '1815-12-10', gender: 'f', words: ['a', 'b'], group_id: 1, date_create: '2020-01-02' },
  ]).execute()
  await api.db.insertInto('users').values([
    { name: 'grace', first_name: 'Grace', group_id: 1, date_create: '2020-01-03' },
    { name: 'linus', date_create: '2020-01-04' },
  ]).execute()
  await api.db.insertInto('computers').values([
    { serial: 'A1', name: 'analytical', owner_id: 1 },
    { serial: 'B2', name: 'difference', owner_id: 1 },
    { serial: 'C3', name: 'harvard', owner_id: 2 },
    { serial: 'D4', name: 'spare', owner_id: null },
  ]).execute()
  await api.db.insertInto('user_bios').values([
    { birth_city: 'London', favourite_movies: 'none', user_id: 1 },
    { birth_city: 'New York', favourite_movies: null, user_id: 2 },
  ]).execute()
  await api.db.insertInto('posts').values([{ title: 'hello', body: 'first', user_id: 1 }]).execute()
  await api.db.insertInto('workplaces').values([{ name: 'lab', user_id: 1 }, { name: 'office', user_id: null }]).execute()
  await api.db.insertInto('parents').values([{ name: 'p1' }, { name: 'p2' }]).execute()
  await api.db.insertInto('children').values([{ name: 'c1' }, { name: 'c2' }, { name: 'c3' }]).execute()
  await api.db.insertInto('parent_to_child_associations').values([
    { parent_id: 1, child_id: 1, extra_data: 'one-one' },
    { parent_id: 1, child_id: 2, extra_data: 'one-two' },
    { parent_id: 2, child_id: 1, extra_data: null },
  ]).execute()
  await api.db.insertInto('photos').values({ id: PHOTO_ID, name: 'beach', words: JSON.stringify({ tags: ['sea'] }) }).execute()
}

t.beforeEach(seed)

/** Sends a PATCH that must fail with these errors and leave every table as it was. */
function failsUnchanged (t: Test, url: string, body: unknown, expected: readonly ExpectedError[]): Promise<TestResponse> {
  return failsWithout(t, api, 'PATCH', url, { body }, expected)
}

function patch (url: string, body: unknown): Promise<TestResponse> {
  return api.request('PATCH', url, { body })
}

function userBody (id: string, attributes?: Record<string, unknown>, relationships?: Record<string, unknown>): unknown {
  return { data: { type: 'user', id, ...(attributes === undefined ? {} : { attributes }), ...(relationships === undefined ? {} : { relationships }) } }
}

function identifiers (type: string, ids: readonly string[]): Array<{ type: string; id: string }> {
  return ids.map((id) => ({ type, id }))
}

function ownersOfComputers (): Promise<unknown[]> {
  return api.db.selectFrom('computers').select(['id', 'owner_id']).orderBy('id').execute()
}

const ADA = {
  name: 'ada',
  first_name: 'Ada',
  last_name: 'Lovelace',
  display_name: 'Ada Lovelace',
  email: 'ada@example.org',
  age: 36,
  status: 'active',
  birth_date: '1815-12-10',
  gender: 'f',
  words: ['a', 'b'],
  date_create: '2020-01-02',
}

// ---------------------------------------------------------------------------------------------------------------
// Success

t.test('PATCH is a partial update: only the attributes sent change', async (t) => {
  const response = await patch('/users/1', userBody('1', { age: 37, email: 'countess@example.org', words: ['c'] }))
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, {
    data: {
      type: 'user',
      id: '1',
      attributes: { ...ADA, age: 37, email: 'countess@example.org', words: ['c'] },
      links: { self: '/users/1' },
      relationships: Object.fromEntries(['computers', 'group', 'bio', 'posts', 'workplace', 'notes']
        .map((name) => [name, { links: { self: `/users/1/relationships/${name}`, related: `/users/1/${name}` } }])),
    },
    links: { self: '/users/1' },
    jsonapi: { version: '1.0' },
  })
  const row = await api.db.selectFrom('users')
    .select(['name', 'first_name', 'last_name', 'email', 'age', 'status', 'gender', 'words', 'group_id'])
    .select(dateText('birth_date').as('birth_date'))
    .select(dateText('date_create').as('date_create'))
    .where('id', '=', 1)
    .executeTakeFirst()
  t.same(storedJson(row, 'words'), {
    name: 'ada',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'countess@example.org',
    age: 37,
    status: 'active',
    gender: 'f',
    words: ['c'],
    group_id: 1,
    birth_date: '1815-12-10',
    date_create: '2020-01-02',
  }, 'untouched columns and relationships keep their values')
  t.same(await ownersOfComputers(), [{ id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: null }])
})

t.test('PATCH with no attributes and no relationships changes nothing and answers the resource', async (t) => {
  const before = await api.snapshot()
  const response = await patch('/users/1', userBody('1'))
  t.equal(response.status, 200)
  t.same(response.body.data.attributes, ADA)
  t.same(await api.snapshot(), before)
  const empty = await patch('/users/1', userBody('1', {}, {}))
  t.equal(empty.status, 200)
  t.same(empty.body.data.attributes, ADA)
  t.same(await api.snapshot(), before)
})

t.test('PATCH sets nullable attributes to null; display_name follows', async (t) => {
  const response = await patch('/users/1', userBody('1', { last_name: null, birth_date: null, age: null, email: null }))
  t.equal(response.status, 200)
  t.same(response.body.data.attributes, { ...ADA, last_name: null, display_name: 'Ada', birth_date: null, age: null, email: null })
  t.same(await api.db.selectFrom('users').select(['last_name', 'birth_date', 'age', 'email', 'first_name']).where('id', '=', 1).executeTakeFirst(), {
    last_name: null, birth_date: null, age: null, email: null, first_name: 'Ada',
  })
  const both = await patch('/users/1', userBody('1', { first_name: '  ' }))
  t.equal(both.body.data.attributes.display_name, 'ada', 'blank names fall back to name')
})

t.test('PATCH a JSON attribute replaces the whole object', async (t) => {
  const words = { tags: ['sky'], people: 2 }
  const response = await patch(`/photos/${PHOTO_ID}`, { data: { type: 'photo', id: PHOTO_ID, attributes: { words } } })
  t.equal(response.status, 200)
  t.same(response.body.data, { type: 'photo', id: PHOTO_ID, attributes: { name: 'beach', words }, links: { self: `/photos/${PHOTO_ID}` } })
  t.same((await api.db.selectFrom('photos').select(['name', 'words']).execute()).map((row) => storedJson(row, 'words')), [{ name: 'beach', words }])
  const cleared = await patch(`/photos/${PHOTO_ID}`, { data: { type: 'photo', id: PHOTO_ID, attributes: { words: null } } })
  t.same(cleared.body.data.attributes, { name: 'beach', words: null })
})

t.test('PATCH a to-one: change the group, then clear it with null', async (t) => {
  const changed = await patch('/users/1?include=group', userBody('1', undefined, { group: { data: { type: 'group', id: '2' } } }))
  t.equal(changed.status, 200)
  t.same(changed.body.data.relationships.group.data, { type: 'group', id: '2' })
  t.same(changed.body.included, [{
    type: 'group',
    id: '2',
    attributes: { name: 'artists' },
    links: { self: '/groups/2' },
    relationships: { users: { links: { self: '/groups/2/relationships/users', related: '/groups/2/users' } } },
  }])
  t.same(changed.body.data.attributes, ADA, 'attributes untouched')
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: 2 }, { id: 2, group_id: 1 }, { id: 3, group_id: null },
  ])

  const cleared = await patch('/users/1?include=group', userBody('1', undefined, { group: { data: null } }))
  t.equal(cleared.status, 200)
  t.same(cleared.body.data.relationships.group.data, null)
  t.notOk('included' in cleared.body)
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: null }, { id: 2, group_id: 1 }, { id: 3, group_id: null },
  ])
})

t.test('PATCH a to-many replaces the whole set; the old members lose their owner; [] clears it', async (t) => {
  const replaced = await patch('/users/1?include=computers', userBody('1', undefined, {
    computers: { data: identifiers('computer', ['4', '3', '2']) },
  }))
  t.equal(replaced.status, 200)
  t.same(replaced.body.data.relationships.computers.data, identifiers('computer', ['2', '3', '4']), 'exactly the set sent')
  t.same(replaced.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`).sort(), ['computer:2', 'computer:3', 'computer:4'])
  t.same(await ownersOfComputers(), [{ id: 1, owner_id: null }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 1 }, { id: 4, owner_id: 1 }])
  const grace = await api.request('GET', '/users/2?include=computers')
  t.same(grace.body.data.relationships.computers.data, [], 'the computer taken from grace is no longer hers')

  const cleared = await patch('/users/1?include=computers', userBody('1', undefined, { computers: { data: [] } }))
  t.equal(cleared.status, 200)
  t.same(cleared.body.data.relationships.computers.data, [])
  t.notOk('included' in cleared.body)
  t.same(await ownersOfComputers(), [{ id: 1, owner_id: null }, { id: 2, owner_id: null }, { id: 3, owner_id: null }, { id: 4, owner_id: null }])
})

t.test('PATCH a to-many with duplicates links each once', async (t) => {
  const response = await patch('/users/3?include=computers', userBody('3', undefined, { computers: { data: identifiers('computer', ['4', '4']) } }))
  t.equal(response.status, 200)
  t.same(response.body.data.relationships.computers.data, identifiers('computer', ['4']))
  t.same(await ownersOfComputers(), [{ id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: 3 }])
})

t.test('PATCH the inverse to-one user.bio: the bio moves to the user', async (t) => {
  const response = await patch('/users/3?include=bio', userBody('3', undefined, { bio: { data: { type: 'user_bio', id: '1' } } }))
  t.equal(response.status, 200)
  t.same(response.body.data.relationships.bio.data, { type: 'user_bio', id: '1' })
  t.same(response.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`), ['user_bio:1'])
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 3 }, { id: 2, user_id: 2 }])
  const ada = await api.request('GET', '/users/1?include=bio')
  t.same(ada.body.data.relationships.bio.data, null)
  const same = await patch('/users/2?include=bio', userBody('2', undefined, { bio: { data: { type: 'user_bio', id: '2' } } }))
  t.equal(same.status, 200, 'setting the bio a user already has is a no-op')
  t.same(same.body.data.relationships.bio.data, { type: 'user_bio', id: '2' })
})

t.test('PATCH the inverse to-one user.workplace: set, move, clear', async (t) => {
  const set = await patch('/users/2?include=workplace', userBody('2', undefined, { workplace: { data: { type: 'workplace', id: '2' } } }))
  t.equal(set.status, 200)
  t.same(set.body.data.relationships.workplace.data, { type: 'workplace', id: '2' })
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 1 }, { id: 2, user_id: 2 }])

  const moved = await patch('/users/2?include=workplace', userBody('2', undefined, { workplace: { data: { type: 'workplace', id: '1' } } }))
  t.equal(moved.status, 200)
  t.same(moved.body.data.relationships.workplace.data, { type: 'workplace', id: '1' })
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 2 }, { id: 2, user_id: null }],
    'the previous workplace is unlinked, the new one taken from ada')

  const cleared = await patch('/users/2?include=workplace', userBody('2', undefined, { workplace: { data: null } }))
  t.equal(cleared.status, 200)
  t.same(cleared.body.data.relationships.workplace.data, null)
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: null }, { id: 2, user_id: null }])
})

t.test('PATCH a many-to-many parent.kids: replaces the association rows', async (t) => {
  const response = await patch('/parents/1?include=kids', { data: { type: 'parent', id: '1', relationships: { kids: { data: identifiers('child', ['3', '2']) } } } })
  t.equal(response.status, 200)
  t.same(response.body.data.relationships.kids.data, identifiers('child', ['2', '3']))
  t.same(response.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`).sort(), ['child:2', 'child:3'])
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id', 'extra_data']).orderBy('parent_id').orderBy('child_id').execute(), [
    { parent_id: 1, child_id: 2, extra_data: 'one-two' },
    { parent_id: 1, child_id: 3, extra_data: null },
    { parent_id: 2, child_id: 1, extra_data: null },
  ], 'the dropped link is deleted, the kept one keeps its row, the new one has extra_data null; other parents untouched')

  const cleared = await patch('/parents/1?include=kids', { data: { type: 'parent', id: '1', relationships: { kids: { data: [] } } } })
  t.equal(cleared.status, 200)
  t.same(cleared.body.data.relationships.kids.data, [])
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id']).orderBy('id').execute(), [{ parent_id: 2, child_id: 1 }])
  t.same(await api.db.selectFrom('children').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }, { id: 3 }], 'the children themselves remain')
})

t.test('PATCH a many-to-many child.guardians', async (t) => {
  const response = await patch('/children/1?include=guardians', { data: { type: 'child', id: '1', relationships: { guardians: { data: identifiers('parent', ['2']) } } } })
  t.equal(response.status, 200)
  t.same(response.body.data.relationships.guardians.data, identifiers('parent', ['2']))
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id', 'extra_data']).orderBy('id').execute(), [
    { parent_id: 1, child_id: 2, extra_data: 'one-two' },
    { parent_id: 2, child_id: 1, extra_data: null },
  ])
  const both = await patch('/children/1?include=guardians', { data: { type: 'child', id: '1', relationships: { guardians: { data: identifiers('parent', ['1', '2']) } } } })
  t.same(both.body.data.relationships.guardians.data, identifiers('parent', ['1', '2']))
  t.same(await api.db.selectFrom('parent_to_child_associations').select(['parent_id', 'child_id', 'extra_data']).orderBy('id').execute(), [
    { parent_id: 1, child_id: 2, extra_data: 'one-two' },
    { parent_id: 2, child_id: 1, extra_data: null },
    { parent_id: 1, child_id: 1, extra_data: null },
  ])
  const p1 = await api.request('GET', '/parents/1?include=kids,children')
  t.same(p1.body.data.relationships.kids.data, identifiers('child', ['1', '2']), 'seen from the parent too')
  t.same(p1.body.data.relationships.children.data.length, 2)
})

t.test('PATCH a group\'s users (the inverse of user.group)', async (t) => {
  const response = await patch('/groups/2?include=users', { data: { type: 'group', id: '2', relationships: { users: { data: identifiers('user', ['1', '3']) } } } })
  t.equal(response.status, 200)
  t.same(response.body.data.relationships.users.data, identifiers('user', ['1', '3']))
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: 2 }, { id: 2, group_id: 1 }, { id: 3, group_id: 2 },
  ])
})

t.test('computer.owner and computer.user are the same link', async (t) => {
  const byOwner = await patch('/computers/4?include=owner,user', { data: { type: 'computer', id: '4', relationships: { owner: { data: { type: 'user', id: '2' } } } } })
  t.equal(byOwner.status, 200)
  t.same(byOwner.body.data.relationships.owner.data, { type: 'user', id: '2' })
  t.same(byOwner.body.data.relationships.user.data, { type: 'user', id: '2' })
  t.same(byOwner.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`), ['user:2'])
  t.same(await api.db.selectFrom('computers').selectAll().where('id', '=', 4).executeTakeFirst(), { id: 4, serial: 'D4', name: 'spare', owner_id: 2 })

  const byUser = await patch('/computers/4?include=owner', { data: { type: 'computer', id: '4', relationships: { user: { data: { type: 'user', id: '3' } } } } })
  t.equal(byUser.status, 200)
  t.same(byUser.body.data.relationships.owner.data, { type: 'user', id: '3' })
  t.same(await api.db.selectFrom('computers').select('owner_id').where('id', '=', 4).executeTakeFirst(), { owner_id: 3 })

  const both = await patch('/computers/4?include=owner', {
    data: { type: 'computer', id: '4', relationships: { owner: { data: null }, user: { data: null } } },
  })
  t.equal(both.status, 200)
  t.same(both.body.data.relationships.owner.data, null)
  t.same(await api.db.selectFrom('computers').select('owner_id').where('id', '=', 4).executeTakeFirst(), { owner_id: null })
})

t.test('PATCH a user_bio: birth_city is required on update too', async (t) => {
  const response = await patch('/user-bio/1', { data: { type: 'user_bio', id: '1', attributes: { birth_city: 'Paris' } } })
  t.equal(response.status, 200)
  t.same(response.body.data.attributes, { birth_city: 'Paris', favourite_movies: 'none' })
  t.same(await api.db.selectFrom('user_bios').selectAll().orderBy('id').execute(), [
    { id: 1, birth_city: 'Paris', favourite_movies: 'none', user_id: 1 },
    { id: 2, birth_city: 'New York', favourite_movies: null, user_id: 2 },
  ])
  const moved = await patch('/user-bio/1?include=user', {
    data: { type: 'user_bio', id: '1', attributes: { birth_city: 'Paris' }, relationships: { user: { data: { type: 'user', id: '3' } } } },
  })
  t.equal(moved.status, 200)
  t.same(moved.body.data.relationships.user.data, { type: 'user', id: '3' })
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 3 }, { id: 2, user_id: 2 }])
})

t.test('PATCH a post: its required user can change', async (t) => {
  const response = await patch('/posts/1?include=user', { data: { type: 'post', id: '1', attributes: { body: 'edited' }, relationships: { user: { data: { type: 'user', id: '2' } } } } })
  t.equal(response.status, 200)
  t.same(response.body.data.attributes, { title: 'hello', body: 'edited' })
  t.same(response.body.data.relationships.user.data, { type: 'user', id: '2' })
  t.same(await api.db.selectFrom('posts').selectAll().execute(), [{ id: 1, title: 'hello', body: 'edited', user_id: 2 }])
})

t.test('PATCH a user\'s posts: a post moves to its new user', async (t) => {
  await api.db.insertInto('posts').values({ title: 'by grace', body: '', user_id: 2 }).execute()
  const response = await patch('/users/2?include=posts', userBody('2', undefined, { posts: { data: identifiers('post', ['1', '2']) } }))
  t.equal(response.status, 200)
  t.same(response.body.data.relationships.posts.data, identifiers('post', ['1', '2']))
  t.same(await api.db.selectFrom('posts').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 2 }, { id: 2, user_id: 2 }])
})

// ---------------------------------------------------------------------------------------------------------------
// Failures

t.test('cannot PATCH with a data.id other than the URL\'s: 409', async (t) => {
  await failsUnchanged(t, '/users/1', userBody('2', { name: 'x' }), [{ status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/id' }])
  await failsUnchanged(t, '/users/1', userBody('01', { name: 'x' }), [{ status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/id' }])
})

t.test('cannot PATCH without data.id: 400', async (t) => {
  await failsUnchanged(t, '/users/1', { data: { type: 'user', attributes: { name: 'x' } } }, [{ status: 400, code: 'FJA_INVALID_DOCUMENT', pointer: '/data/id' }])
  await failsUnchanged(t, '/users/1', { data: { type: 'user', id: 1, attributes: { name: 'x' } } }, [{ status: 400, code: 'FJA_INVALID_DOCUMENT', pointer: '/data/id' }])
})

t.test('cannot PATCH a body that is not a resource document: 400', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['no data', { meta: {} }, ''],
    ['data null', { data: null }, '/data'],
    ['data an array', { data: [{ type: 'user', id: '1' }] }, '/data'],
    ['data.type missing', { data: { id: '1', attributes: { name: 'x' } } }, '/data/type'],
    ['attributes not an object', { data: { type: 'user', id: '1', attributes: 'x' } }, '/data/attributes'],
    ['a to-many given an object', { data: { type: 'user', id: '1', relationships: { computers: { data: { type: 'computer', id: '4' } } } } }, '/data/relationships/computers/data'],
    ['a to-one given an array', { data: { type: 'user', id: '1', relationships: { group: { data: [] } } } }, '/data/relationships/group/data'],
  ]
  for (const [label, body, pointer] of cases) {
    await t.test(label, async (t) => {
      await failsUnchanged(t, '/users/1', body, [{ status: 400, code: 'FJA_INVALID_DOCUMENT', pointer }])
    })
  }
})

t.test('cannot PATCH with a type other than the collection\'s: 409', async (t) => {
  await failsUnchanged(t, '/users/1', { data: { type: 'computer', id: '1', attributes: { name: 'x' } } }, [{ status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/type' }])
  await failsUnchanged(t, '/users/1', userBody('1', undefined, { group: { data: { type: 'user', id: '2' } } }), [
    { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/relationships/group/data/type' },
  ])
})

t.test('cannot PATCH read-only attributes: 422', async (t) => {
  await failsUnchanged(t, '/users/1', userBody('1', { display_name: 'Countess' }), [{ status: 422, code: 'FJA_READ_ONLY_FIELD', pointer: '/data/attributes/display_name' }])
  await failsUnchanged(t, '/users/1', userBody('1', { age: 40, date_create: '2021-01-01' }), [{ status: 422, code: 'FJA_READ_ONLY_FIELD', pointer: '/data/attributes/date_create' }])
})

t.test('cannot PATCH invalid values: 422, one error per field', async (t) => {
  await failsUnchanged(t, '/users/1', userBody('1', { name: null, age: 'x', birth_date: '2021-13-01', words: [1] }), [
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/name' },
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/age' },
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/birth_date' },
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/words/0' },
  ])
  await failsUnchanged(t, '/parent-to-child-association/1', { data: { type: 'parent-to-child-association', id: '1', attributes: { extra_data: 'y'.repeat(51) } } }, [
    { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/extra_data' },
  ])
})

t.test('cannot PATCH an integer beyond the column range: 422 pointing at it', async (t) => {
  await failsUnchanged(t, '/users/1', userBody('1', { age: 99999999999 }), [{ status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/age' }])
})

t.test('cannot PATCH unknown attributes or relationships: 422', async (t) => {
  await failsUnchanged(t, '/users/1', userBody('1', { nickname: 'x', age: 2 }), [{ status: 422, code: 'FJA_UNKNOWN_FIELD', pointer: '/data/attributes/nickname' }])
  await failsUnchanged(t, '/users/1', userBody('1', { age: 2 }, { friends: { data: [] } }), [{ status: 422, code: 'FJA_UNKNOWN_FIELD', pointer: '/data/relationships/friends' }])
  await failsUnchanged(t, '/users/1', userBody('1', { bio: { data: null } }), [{ status: 422, code: 'FJA_UNKNOWN_FIELD', pointer: '/data/attributes/bio' }])
})

t.test('cannot PATCH a user_bio without birth_city: 422', async (t) => {
  await failsUnchanged(t, '/user-bio/1', { data: { type: 'user_bio', id: '1', attributes: { favourite_movies: 'Metropolis' } } }, [
    { status: 422, code: 'FJA_MISSING_FIELD', pointer: '/data/attributes', meta: { field: 'birth_city' }, detail: /birth_city/ },
  ])
  await failsUnchanged(t, '/user-bio/1', { data: { type: 'user_bio', id: '1', relationships: { user: { data: { type: 'user', id: '3' } } } } }, [
    { status: 422, code: 'FJA_MISSING_FIELD', pointer: '/data', meta: { field: 'birth_city' }, detail: /birth_city/ },
  ])
})

t.test('cannot PATCH what does not exist: 404', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['/users/99', userBody('99', { age: 1 })],
    ['/users/abc', userBody('abc', { age: 1 })],
    ['/users/1.5', userBody('1.5', { age: 1 })],
    ['/users/99999999999', userBody('99999999999', { age: 1 })],
    ['/photos/00000000-0000-0000-0000-000000000000', { data: { type: 'photo', id: '00000000-0000-0000-0000-000000000000', attributes: { name: 'x' } } }],
    ['/photos/not-a-uuid', { data: { type: 'photo', id: 'not-a-uuid', attributes: { name: 'x' } } }],
  ]
  for (const [url, body] of cases) {
    await t.test(url, async (t) => {
      await failsUnchanged(t, url, body, [{ status: 404, code: 'FJA_RESOURCE_NOT_FOUND' }])
    })
  }
})

t.test('cannot link a target that does not exist: 404 pointing at it', async (t) => {
  await failsUnchanged(t, '/users/1', userBody('1', { age: 50 }, { group: { data: { type: 'group', id: '99' } } }), [
    { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/group/data' },
  ])
  await failsUnchanged(t, '/users/1', userBody('1', { age: 50 }, { computers: { data: identifiers('computer', ['4', '99']) } }), [
    { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/computers/data/1' },
  ])
  await failsUnchanged(t, '/parents/1', { data: { type: 'parent', id: '1', relationships: { kids: { data: identifiers('child', ['3', 'x']) } } } }, [
    { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/kids/data/1' },
  ])
  await failsUnchanged(t, '/users/1', userBody('1', undefined, { bio: { data: { type: 'user_bio', id: 'abc' } } }), [
    { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/bio/data' },
  ])
})

t.test('cannot clear a required to-one: 422 naming the relationship', async (t) => {
  await failsUnchanged(t, '/posts/1', { data: { type: 'post', id: '1', attributes: { title: 'changed' }, relationships: { user: { data: null } } } }, [
    { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/user/data', detail: /'user'/ },
  ])
  await failsUnchanged(t, '/parent-to-child-association/1', { data: { type: 'parent-to-child-association', id: '1', relationships: { child: { data: null } } } }, [
    { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/child/data', detail: /'child'/ },
  ])
  await failsUnchanged(t, '/user-bio/1', { data: { type: 'user_bio', id: '1', attributes: { birth_city: 'Paris' }, relationships: { user: { data: null } } } }, [
    { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/user/data', detail: /'user'/ },
  ])
})

t.test('cannot move a user\'s bio away when the bio requires its user: 422, attributes rolled back', async (t) => {
  await t.test('bio cleared with null', async (t) => {
    await failsUnchanged(t, '/users/1', userBody('1', { name: 'changed', age: 99 }, { bio: { data: null } }), [
      { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/bio/data', detail: /bio/ },
    ])
    t.same(await api.db.selectFrom('users').select(['name', 'age']).where('id', '=', 1).executeTakeFirst(), { name: 'ada', age: 36 })
  })
  await t.test('bio replaced by another user\'s bio', async (t) => {
    await failsUnchanged(t, '/users/1', userBody('1', { name: 'changed' }, { bio: { data: { type: 'user_bio', id: '2' } } }), [
      { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/bio/data', detail: /bio/ },
    ])
  })
  await t.test('posts emptied (a post requires its user)', async (t) => {
    await failsUnchanged(t, '/users/1', userBody('1', { age: 1 }, { posts: { data: [] } }), [
      { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/posts/data', detail: /posts/ },
    ])
  })
})

t.test('a PATCH that writes attributes, a to-one and a to-many, then fails on a relationship, leaves everything unchanged', async (t) => {
  const before = await api.snapshot()
  const response = await patch('/users/1', userBody('1', { name: 'changed', first_name: null, words: [] }, {
    group: { data: { type: 'group', id: '2' } },
    computers: { data: identifiers('computer', ['3', '4']) },
    workplace: { data: { type: 'workplace', id: '2' } },
    bio: { data: null },
  }))
  assertErrors(t, response, [{ status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/bio/data' }])
  t.same(await api.snapshot(), before, 'rolled back')
  t.same(storedJson(await api.db.selectFrom('users').select(['name', 'first_name', 'words', 'group_id']).where('id', '=', 1).executeTakeFirst(), 'words'), {
    name: 'ada', first_name: 'Ada', words: ['a', 'b'], group_id: 1,
  })
  t.same(await ownersOfComputers(), [{ id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: null }])
  const read = await api.request('GET', '/users/1?include=bio,workplace')
  t.same(read.body.data.attributes, ADA)
  t.same(read.body.data.relationships.bio.data, { type: 'user_bio', id: '1' })
  t.same(read.body.data.relationships.workplace.data, { type: 'workplace', id: '1' })
})

t.test('cannot PATCH into a unique violation: 409', async (t) => {
  await failsUnchanged(t, '/user-bio/2', { data: { type: 'user_bio', id: '2', attributes: { birth_city: 'Boston' }, relationships: { user: { data: { type: 'user', id: '1' } } } } }, [
    { status: 409, code: 'FJA_UNIQUE_VIOLATION', pointer: '/data/relationships/user' },
  ])
  await failsUnchanged(t, '/workplaces/2', { data: { type: 'workplace', id: '2', relationships: { user: { data: { type: 'user', id: '1' } } } } }, [
    { status: 409, code: 'FJA_UNIQUE_VIOLATION', pointer: '/data/relationships/user' },
  ])
})

t.test('cannot PATCH a computer whose owner and user differ', async (t) => {
  await failsUnchanged(t, '/computers/4', {
    data: { type: 'computer', id: '4', relationships: { owner: { data: { type: 'user', id: '1' } }, user: { data: null } } },
  }, [{ status: 422, code: 'FJA_VALIDATION', pointer: '/data/relationships/user/data' }])
})
