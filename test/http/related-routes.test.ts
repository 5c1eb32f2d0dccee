import t, { type Test } from 'tap'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { failsUnchanged as failsWithout, type ExpectedError } from '../helpers/assert-errors.js'
import { JSONAPI, resource } from '../helpers/documents.js'
import { seedLinkedRows } from '../helpers/seed-linked-rows.js'

// The related-resource routes `<path>/<id>/<relationship>` (issue 4): GET, POST, PATCH and DELETE on a to-one by
// foreign key (computer.owner, user.group), a to-many inverse (user.computers, user.posts), an inverse to-one
// (user.bio, user.workplace) and a many-to-many through a join table (parent.kids, child.guardians).

const api = await startTestApp(t.teardown)

t.beforeEach(() => seedLinkedRows(api))

/** Sends a request that must fail with this error and leave every table as it was. */
function failsUnchanged (t: Test, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, body: unknown, want: ExpectedError): Promise<TestResponse> {
  return failsWithout(t, api, method, url, body === undefined ? {} : { body }, want)
}

// ---------------------------------------------------------------------------------------------------------------
// Expected documents

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

const GRACE = {
  name: 'grace',
  first_name: 'Grace',
  last_name: null,
  display_name: 'Grace',
  email: null,
  age: null,
  status: 'active',
  birth_date: null,
  gender: null,
  words: [],
  date_create: '2020-01-03',
}

function identifiers (type: string, ids: readonly string[]): Array<{ type: string; id: string }> {
  return ids.map((id) => ({ type, id }))
}

function keys (items: ReadonlyArray<{ type: string; id: string }> | undefined): string[] {
  return (items ?? []).map((item) => `${item.type}:${item.id}`)
}

/** The links of an unpaged collection at `url` (self, first and last are the URL itself). */
function onePage (url: string): Record<string, string> {
  return { self: url, first: url, last: url }
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

function computerRows (): Promise<unknown[]> {
  return api.db.selectFrom('computers').select(['id', 'owner_id']).orderBy('id').execute()
}

function associationRows (): Promise<unknown[]> {
  return api.db.selectFrom('parent_to_child_associations').select(['id', 'parent_id', 'child_id', 'extra_data']).orderBy('id').execute()
}

const SEEDED_ASSOCIATIONS = [
  { id: 1, parent_id: 1, child_id: 1, extra_data: 'one-one' },
  { id: 2, parent_id: 1, child_id: 2, extra_data: 'one-two' },
  { id: 3, parent_id: 2, child_id: 1, extra_data: null },
]

// ---------------------------------------------------------------------------------------------------------------
// GET a to-one

t.test('GET a to-one by foreign key: the related resource, links.self the request URL; two statements', async (t) => {
  api.counter.reset()
  const group = await api.request('GET', '/users/1/group')
  t.equal(api.counter.count, 2, 'the parent check and the row')
  t.equal(group.status, 200)
  t.match(group.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(group.body, {
    data: resource('group', '1', { name: 'engineers' }),
    links: { self: '/users/1/group' },
    jsonapi: JSONAPI,
  })

  api.counter.reset()
  const owner = await api.request('GET', '/computers/3/owner')
  t.equal(api.counter.count, 2)
  t.same(owner.body, {
    data: resource('user', '2', GRACE),
    links: { self: '/computers/3/owner' },
    jsonapi: JSONAPI,
  })
  const user = await api.request('GET', '/computers/3/user')
  t.same(user.body.data, owner.body.data, 'computer.user is the same link as computer.owner')
})

t.test('GET a to-one that is not set: data null', async (t) => {
  for (const url of ['/users/3/group', '/computers/4/owner', '/users/3/bio', '/users/2/workplace']) {
    api.counter.reset()
    const response = await api.request('GET', url)
    t.equal(response.status, 200, url)
    t.same(response.body, { data: null, links: { self: url }, jsonapi: JSONAPI }, url)
    t.equal(api.counter.count, 2, `${url}: two statements`)
  }
})

t.test('GET an inverse to-one: user.bio and user.workplace', async (t) => {
  api.counter.reset()
  const bio = await api.request('GET', '/users/1/bio')
  t.equal(api.counter.count, 2)
  t.equal(bio.status, 200)
  t.same(bio.body, {
    data: resource('user_bio', '1', { birth_city: 'London', favourite_movies: 'none' }),
    links: { self: '/users/1/bio' },
    jsonapi: JSONAPI,
  })
  const workplace = await api.request('GET', '/users/1/workplace')
  t.same(workplace.body, {
    data: resource('workplace', '1', { name: 'lab' }),
    links: { self: '/users/1/workplace' },
    jsonapi: JSONAPI,
  })
  const grace = await api.request('GET', '/users/2/bio')
  t.same(grace.body.data, resource('user_bio', '2', { birth_city: 'New York', favourite_movies: null }), 'each user gets their own bio')
})

t.test('GET a to-one with include and fields: one more statement per include path', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/computers/1/owner?include=computers,bio&fields[user]=name,computers,bio')
  t.equal(api.counter.count, 2 + 2, 'the parent check, the row, one per include path')
  t.same(response.body, {
    data: {
      type: 'user',
      id: '1',
      attributes: { name: 'ada' },
      links: { self: '/users/1' },
      relationships: {
        computers: { links: { self: '/users/1/relationships/computers', related: '/users/1/computers' }, data: identifiers('computer', ['1', '2']), meta: { count: 2 } },
        bio: { links: { self: '/users/1/relationships/bio', related: '/users/1/bio' }, data: { type: 'user_bio', id: '1' } },
      },
    },
    links: { self: '/computers/1/owner' },
    jsonapi: JSONAPI,
    included: [
      resource('computer', '1', { serial: 'A1', name: 'analytical' }),
      resource('computer', '2', { serial: 'B2', name: 'difference' }),
      resource('user_bio', '1', { birth_city: 'London', favourite_movies: 'none' }),
    ],
  })
  const bio = await api.request('GET', '/users/1/bio?include=user&fields[user_bio]=birth_city,user&fields[user]=display_name')
  t.same(bio.body.data, {
    type: 'user_bio',
    id: '1',
    attributes: { birth_city: 'London' },
    links: { self: '/user-bio/1' },
    relationships: { user: { links: { self: '/user-bio/1/relationships/user', related: '/user-bio/1/user' }, data: { type: 'user', id: '1' } } },
  })
  t.same(bio.body.included, [{ type: 'user', id: '1', attributes: { display_name: 'Ada Lovelace' }, links: { self: '/users/1' } }])
})

// ---------------------------------------------------------------------------------------------------------------
// GET a to-many

t.test('GET a to-many inverse: a collection of that parent\'s rows only, links and meta.count; three statements', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/users/1/computers')
  t.equal(api.counter.count, 3, 'the parent check, the page and the count')
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, {
    data: [
      resource('computer', '1', { serial: 'A1', name: 'analytical' }),
      resource('computer', '2', { serial: 'B2', name: 'difference' }),
    ],
    links: onePage('/users/1/computers'),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  }, 'two of the four computers are ada\'s')

  const posts = await api.request('GET', '/users/2/posts')
  t.same(posts.body, {
    data: [resource('post', '3', { title: 'bugs', body: 'a moth' })],
    links: onePage('/users/2/posts'),
    jsonapi: JSONAPI,
    meta: { count: 1 },
  })
  const adaPosts = await api.request('GET', '/users/1/posts')
  t.same(keys(adaPosts.body.data), ['post:1', 'post:2'])
  t.same(adaPosts.body.meta, { count: 2 })
})

t.test('GET an empty to-many: data [] and count 0', async (t) => {
  for (const url of ['/users/3/computers', '/users/3/posts', '/children/3/guardians', '/groups/2/users']) {
    const response = await api.request('GET', url)
    t.equal(response.status, 200, url)
    t.same(response.body, { data: [], links: onePage(url), jsonapi: JSONAPI, meta: { count: 0 } }, url)
  }
})

t.test('GET a many-to-many: parent.kids and child.guardians through the join table', async (t) => {
  api.counter.reset()
  const kids = await api.request('GET', '/parents/1/kids')
  t.equal(api.counter.count, 3)
  t.same(kids.body, {
    data: [resource('child', '1', { name: 'c1' }), resource('child', '2', { name: 'c2' })],
    links: onePage('/parents/1/kids'),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const p2 = await api.request('GET', '/parents/2/kids')
  t.same(keys(p2.body.data), ['child:1'], 'child 1 is linked to both parents: each parent sees only its own links')
  t.same(p2.body.meta, { count: 1 })
  const guardians = await api.request('GET', '/children/1/guardians')
  t.same(guardians.body, {
    data: [resource('parent', '1', { name: 'p1' }), resource('parent', '2', { name: 'p2' })],
    links: onePage('/children/1/guardians'),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const c2 = await api.request('GET', '/children/2/guardians')
  t.same(keys(c2.body.data), ['parent:1'])
  t.same(c2.body.meta, { count: 1 })
})

t.test('GET a to-many honours filter over the related rows only; meta.count counts what matches', async (t) => {
  const simple = await api.request('GET', '/users/1/computers?filter[serial]=B2')
  t.same(simple.body, {
    data: [resource('computer', '2', { serial: 'B2', name: 'difference' })],
    links: onePage('/users/1/computers?filter%5Bserial%5D=B2'),
    jsonapi: JSONAPI,
    meta: { count: 1 },
  })
  const grace = encodeURIComponent(JSON.stringify([{ name: 'serial', op: 'eq', val: 'C3' }]))
  const other = await api.request('GET', `/users/1/computers?filter=${grace}`)
  t.same(other.body.data, [], 'a computer of another user does not match')
  t.same(other.body.meta, { count: 0 })
  const any = encodeURIComponent(JSON.stringify([{ name: 'serial', op: 'in_', val: ['A1', 'C3', 'D4'] }]))
  const mixed = await api.request('GET', `/users/1/computers?filter=${any}`)
  t.same(keys(mixed.body.data), ['computer:1'])
  t.same(mixed.body.meta, { count: 1 })
  const kids = await api.request('GET', `/parents/1/kids?filter=${encodeURIComponent(JSON.stringify([{ name: 'name', op: 'ne', val: 'c1' }]))}`)
  t.same(keys(kids.body.data), ['child:2'])
  t.same(kids.body.meta, { count: 1 })
  const posts = await api.request('GET', '/users/1/posts?filter[title]=bugs')
  t.same(posts.body.data, [], 'grace\'s post is not among ada\'s')
  t.same(posts.body.meta, { count: 0 })
})

t.test('GET a to-many honours sort and fields', async (t) => {
  const response = await api.request('GET', '/users/1/computers?sort=-serial&fields[computer]=serial')
  const url = '/users/1/computers?sort=-serial&fields%5Bcomputer%5D=serial'
  t.same(response.body, {
    data: [
      { type: 'computer', id: '2', attributes: { serial: 'B2' }, links: { self: '/computers/2' } },
      { type: 'computer', id: '1', attributes: { serial: 'A1' }, links: { self: '/computers/1' } },
    ],
    links: onePage(url),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const guardians = await api.request('GET', '/children/1/guardians?sort=-name')
  t.same(keys(guardians.body.data), ['parent:2', 'parent:1'])
})

t.test('GET a to-many honours page[size] and page[number], with pagination links', async (t) => {
  const first = await api.request('GET', '/users/1/computers?page[size]=1')
  t.same(first.body, {
    data: [resource('computer', '1', { serial: 'A1', name: 'analytical' })],
    links: {
      self: '/users/1/computers?page%5Bsize%5D=1',
      first: '/users/1/computers?page%5Bsize%5D=1',
      next: '/users/1/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      last: '/users/1/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
    },
    jsonapi: JSONAPI,
    meta: { count: 2 },
  }, 'the last page is computed from the parent\'s two computers, not the four of the table')
  const second = await api.request('GET', '/users/1/computers?page[size]=1&page[number]=2')
  t.same(second.body, {
    data: [resource('computer', '2', { serial: 'B2', name: 'difference' })],
    links: {
      self: '/users/1/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      first: '/users/1/computers?page%5Bsize%5D=1',
      prev: '/users/1/computers?page%5Bsize%5D=1',
      last: '/users/1/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
    },
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const beyond = await api.request('GET', '/users/1/computers?page[size]=1&page[number]=3')
  t.same(beyond.body.data, [])
  t.same(beyond.body.meta, { count: 2 })
  const kids = await api.request('GET', '/parents/1/kids?page[size]=1&page[number]=2')
  t.same(keys(kids.body.data), ['child:2'])
  t.same(kids.body.meta, { count: 2 })
})

t.test('GET a to-many with include: one more statement per include path', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/users/1/computers?include=owner,owner.bio')
  t.equal(api.counter.count, 3 + 2, 'the parent check, the page, the count, one per include path')
  t.same(response.body, {
    data: [
      resource('computer', '1', { serial: 'A1', name: 'analytical' }, { owner: { type: 'user', id: '1' } }),
      resource('computer', '2', { serial: 'B2', name: 'difference' }, { owner: { type: 'user', id: '1' } }),
    ],
    links: onePage('/users/1/computers?include=owner,owner.bio'),
    jsonapi: JSONAPI,
    meta: { count: 2 },
    included: [
      resource('user', '1', ADA, { bio: { type: 'user_bio', id: '1' } }),
      resource('user_bio', '1', { birth_city: 'London', favourite_movies: 'none' }),
    ],
  })

  api.counter.reset()
  const kids = await api.request('GET', '/parents/1/kids?include=guardians,parents')
  t.equal(api.counter.count, 3 + 2)
  t.same(kids.body.data.map((kid: { relationships: { guardians: { data: unknown } } }) => kid.relationships.guardians.data), [
    identifiers('parent', ['1', '2']),
    identifiers('parent', ['1']),
  ])
  t.same(kids.body.data.map((kid: { relationships: { parents: { data: unknown } } }) => kid.relationships.parents.data), [
    identifiers('parent-to-child-association', ['1', '3']),
    identifiers('parent-to-child-association', ['2']),
  ])
  t.same(keys(kids.body.included).sort(), [
    'parent-to-child-association:1', 'parent-to-child-association:2', 'parent-to-child-association:3', 'parent:1', 'parent:2',
  ])
})

t.test('cannot GET related with a bad query parameter: 400 naming it', async (t) => {
  const cases: Array<[string, string]> = [
    ['/users/1/computers?include=nothing', 'include'],
    ['/users/1/computers?sort=nothing', 'sort'],
    ['/users/1/computers?fields[computer]=nothing', 'fields[computer]'],
    ['/users/1/computers?page[size]=-1', 'page[size]'],
    ['/users/1/group?include=nothing', 'include'],
  ]
  for (const [url, parameter] of cases) {
    await t.test(url, async (t) => {
      await failsUnchanged(t, 'GET', url, undefined, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter })
    })
  }
})

t.test('cannot GET related of a parent that does not exist, or an unknown relationship: 404', async (t) => {
  for (const url of ['/users/99/group', '/users/99/computers', '/users/abc/bio', '/users/1.5/posts', '/parents/99/kids', '/children/x/guardians', '/computers/99999999999/owner']) {
    await t.test(url, async (t) => {
      await failsUnchanged(t, 'GET', url, undefined, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    })
  }
  for (const url of ['/users/1/nothing', '/users/1/kids', '/parents/1/computers', '/users/99/nothing']) {
    await t.test(url, async (t) => {
      await failsUnchanged(t, 'GET', url, undefined, { status: 404, code: 'FJA_ROUTE_NOT_FOUND', detail: /relationship/ })
    })
  }
})

// ---------------------------------------------------------------------------------------------------------------
// POST: create a related resource and link it

t.test('POST to a to-many inverse: 201, the new computer belongs to the parent', async (t) => {
  const response = await api.request('POST', '/users/1/computers', { body: { data: { type: 'computer', attributes: { serial: 'E5', name: 'new' } } } })
  t.equal(response.status, 201)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.equal(response.headers.location, '/computers/5')
  t.same(response.body, {
    data: resource('computer', '5', { serial: 'E5', name: 'new' }),
    links: { self: '/computers/5' },
    jsonapi: JSONAPI,
  })
  t.same(await computerRows(), [
    { id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: null }, { id: 5, owner_id: 1 },
  ], 'added to the set, the other computers untouched')
  const read = await api.request('GET', '/users/1/computers')
  t.same(keys(read.body.data), ['computer:1', 'computer:2', 'computer:5'])
  t.same(read.body.meta, { count: 3 })
})

t.test('POST to a to-many with include: the parent is linked in the response', async (t) => {
  const response = await api.request('POST', '/users/2/computers?include=owner', { body: { data: { type: 'computer', attributes: { serial: 'E5' } } } })
  t.equal(response.status, 201)
  t.same(response.body, {
    data: resource('computer', '5', { serial: 'E5', name: null }, { owner: { type: 'user', id: '2' } }),
    links: { self: '/computers/5' },
    jsonapi: JSONAPI,
    included: [resource('user', '2', GRACE)],
  })
})

t.test('POST /users/1/posts without a user relationship: the URL implies it', async (t) => {
  const response = await api.request('POST', '/users/1/posts', { body: { data: { type: 'post', attributes: { title: 'implied' } } } })
  t.equal(response.status, 201)
  t.equal(response.headers.location, '/posts/4')
  t.same(response.body, {
    data: resource('post', '4', { title: 'implied', body: '' }),
    links: { self: '/posts/4' },
    jsonapi: JSONAPI,
  })
  t.same(await api.db.selectFrom('posts').selectAll().where('id', '=', 4).execute(), [{ id: 4, title: 'implied', body: '', user_id: 1 }])

  const same = await api.request('POST', '/users/1/posts?include=user', {
    body: { data: { type: 'post', attributes: { title: 'explicit' }, relationships: { user: { data: { type: 'user', id: '1' } } } } },
  })
  t.equal(same.status, 201, 'a user relationship naming the URL\'s user is fine')
  t.same(same.body.data.relationships.user.data, { type: 'user', id: '1' })
  t.same(await api.db.selectFrom('posts').select(['id', 'user_id']).orderBy('id').execute(), [
    { id: 1, user_id: 1 }, { id: 2, user_id: 1 }, { id: 3, user_id: 2 }, { id: 4, user_id: 1 }, { id: 5, user_id: 1 },
  ])
})

t.test('cannot POST /users/1/posts with a user relationship naming another user: 409, nothing created', async (t) => {
  await failsUnchanged(t, 'POST', '/users/1/posts', {
    data: { type: 'post', attributes: { title: 'x' }, relationships: { user: { data: { type: 'user', id: '2' } } } },
  }, { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/relationships/user/data' })
  await failsUnchanged(t, 'POST', '/users/1/posts', {
    data: { type: 'post', attributes: { title: 'x' }, relationships: { user: { data: null } } },
  }, { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/relationships/user/data' })
  await failsUnchanged(t, 'POST', '/users/1/computers', {
    data: { type: 'computer', relationships: { user: { data: { type: 'user', id: '3' } } } },
  }, { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/relationships/user/data' })
})

t.test('POST to a to-one by foreign key: the new group replaces the user\'s group', async (t) => {
  const response = await api.request('POST', '/users/1/group', { body: { data: { type: 'group', attributes: { name: 'poets' } } } })
  t.equal(response.status, 201)
  t.equal(response.headers.location, '/groups/3')
  t.same(response.body, {
    data: resource('group', '3', { name: 'poets' }),
    links: { self: '/groups/3' },
    jsonapi: JSONAPI,
  })
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: 3 }, { id: 2, group_id: 1 }, { id: 3, group_id: null },
  ])
  t.same(await api.db.selectFrom('groups').selectAll().orderBy('id').execute(), [
    { id: 1, name: 'engineers' }, { id: 2, name: 'artists' }, { id: 3, name: 'poets' },
  ], 'the previous group itself remains')
  const read = await api.request('GET', '/users/1/group')
  t.equal(read.body.data.id, '3')
})

t.test('POST to computer.owner: a new user becomes the owner (set, and replacing)', async (t) => {
  const set = await api.request('POST', '/computers/4/owner', { body: { data: { type: 'user', attributes: { name: 'new', first_name: 'New' } } } })
  t.equal(set.status, 201)
  t.equal(set.headers.location, '/users/4')
  t.same(set.body.data.attributes, {
    name: 'new',
    first_name: 'New',
    last_name: null,
    display_name: 'New',
    email: null,
    age: null,
    status: 'active',
    birth_date: null,
    gender: null,
    words: [],
    date_create: set.body.data.attributes.date_create,
  })
  t.same(set.body, { data: resource('user', '4', set.body.data.attributes), links: { self: '/users/4' }, jsonapi: JSONAPI })

  const replaced = await api.request('POST', '/computers/1/owner', { body: { data: { type: 'user', attributes: { name: 'newer' } } } })
  t.equal(replaced.status, 201)
  t.equal(replaced.body.data.id, '5')
  t.same(await computerRows(), [
    { id: 1, owner_id: 5 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: 4 },
  ])
  t.same(await api.db.selectFrom('users').select(['id', 'name']).orderBy('id').execute(), [
    { id: 1, name: 'ada' }, { id: 2, name: 'grace' }, { id: 3, name: 'linus' }, { id: 4, name: 'new' }, { id: 5, name: 'newer' },
  ], 'the previous owner remains')
})

t.test('POST to an inverse to-one: a user without a bio gets one', async (t) => {
  const response = await api.request('POST', '/users/3/bio', { body: { data: { type: 'user_bio', attributes: { birth_city: 'Helsinki' } } } })
  t.equal(response.status, 201)
  t.equal(response.headers.location, '/user-bio/3')
  t.same(response.body, {
    data: resource('user_bio', '3', { birth_city: 'Helsinki', favourite_movies: null }),
    links: { self: '/user-bio/3' },
    jsonapi: JSONAPI,
  })
  t.same(await api.db.selectFrom('user_bios').select(['id', 'birth_city', 'user_id']).orderBy('id').execute(), [
    { id: 1, birth_city: 'London', user_id: 1 }, { id: 2, birth_city: 'New York', user_id: 2 }, { id: 3, birth_city: 'Helsinki', user_id: 3 },
  ])
  const read = await api.request('GET', '/users/3/bio')
  t.equal(read.body.data.id, '3')
})

t.test('POST to user.workplace replaces the previous workplace, which is unlinked', async (t) => {
  const response = await api.request('POST', '/users/1/workplace?include=user', { body: { data: { type: 'workplace', attributes: { name: 'home' } } } })
  t.equal(response.status, 201)
  t.equal(response.headers.location, '/workplaces/3')
  t.same(response.body, {
    data: resource('workplace', '3', { name: 'home' }, { user: { type: 'user', id: '1' } }),
    links: { self: '/workplaces/3' },
    jsonapi: JSONAPI,
    included: [resource('user', '1', ADA)],
  })
  t.same(await api.db.selectFrom('workplaces').selectAll().orderBy('id').execute(), [
    { id: 1, name: 'lab', user_id: null }, { id: 2, name: 'office', user_id: null }, { id: 3, name: 'home', user_id: 1 },
  ])
  const fresh = await api.request('POST', '/users/2/workplace', { body: { data: { type: 'workplace', attributes: { name: 'navy' } } } })
  t.equal(fresh.status, 201)
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute(), [
    { id: 1, user_id: null }, { id: 2, user_id: null }, { id: 3, user_id: 1 }, { id: 4, user_id: 2 },
  ])
})

t.test('cannot POST /users/1/bio when the user has a bio (its user is required): 422 saying why, nothing changed', async (t) => {
  await failsUnchanged(t, 'POST', '/users/1/bio', { data: { type: 'user_bio', attributes: { birth_city: 'Paris' } } }, {
    status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data', detail: /required/,
  })
  await failsUnchanged(t, 'POST', '/users/2/bio', { data: { type: 'user_bio', attributes: { birth_city: 'Paris' }, relationships: { user: { data: { type: 'user', id: '2' } } } } }, {
    status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data', detail: /'user' is required/,
  })
})

t.test('POST to a many-to-many: a new child and a join row with extra_data null', async (t) => {
  const response = await api.request('POST', '/parents/1/kids', { body: { data: { type: 'child', attributes: { name: 'c4' } } } })
  t.equal(response.status, 201)
  t.equal(response.headers.location, '/children/4')
  t.same(response.body, {
    data: resource('child', '4', { name: 'c4' }),
    links: { self: '/children/4' },
    jsonapi: JSONAPI,
  })
  t.same(await associationRows(), [...SEEDED_ASSOCIATIONS, { id: 4, parent_id: 1, child_id: 4, extra_data: null }])
  const read = await api.request('GET', '/parents/1?include=children.child')
  t.same(read.body.data.relationships.children.data, identifiers('parent-to-child-association', ['1', '2', '4']))
  t.same(keys(read.body.included).sort(), [
    'child:1', 'child:2', 'child:4',
    'parent-to-child-association:1', 'parent-to-child-association:2', 'parent-to-child-association:4',
  ])
  const association = read.body.included.find((item: { type: string; id: string }) => item.type === 'parent-to-child-association' && item.id === '4')
  t.same(association, resource('parent-to-child-association', '4', { extra_data: null }, { child: { type: 'child', id: '4' } }))

  const guardian = await api.request('POST', '/children/3/guardians?include=kids', { body: { data: { type: 'parent', attributes: { name: 'p3' } } } })
  t.equal(guardian.status, 201)
  t.same(guardian.body, {
    data: resource('parent', '3', { name: 'p3' }, { kids: [{ type: 'child', id: '3' }] }),
    links: { self: '/parents/3' },
    jsonapi: JSONAPI,
    included: [resource('child', '3', { name: 'c3' })],
  })
  t.same(await associationRows(), [
    ...SEEDED_ASSOCIATIONS,
    { id: 4, parent_id: 1, child_id: 4, extra_data: null },
    { id: 5, parent_id: 3, child_id: 3, extra_data: null },
  ])
})

t.test('POST to a many-to-many whose body links the same pair again: one join row', async (t) => {
  const response = await api.request('POST', '/parents/2/kids', {
    body: { data: { type: 'child', attributes: { name: 'c4' }, relationships: { guardians: { data: identifiers('parent', ['2', '1']) } } } },
  })
  t.equal(response.status, 201)
  t.same(await associationRows(), [
    ...SEEDED_ASSOCIATIONS,
    { id: 4, parent_id: 2, child_id: 4, extra_data: null },
    { id: 5, parent_id: 1, child_id: 4, extra_data: null },
  ], 'one row per pair: the URL\'s link (2, 4) is not inserted twice')
})

t.test('POST to parent.children: a new association row for this parent', async (t) => {
  const response = await api.request('POST', '/parents/2/children?include=child', {
    body: { data: { type: 'parent-to-child-association', attributes: { extra_data: 'two-three' }, relationships: { child: { data: { type: 'child', id: '3' } } } } },
  })
  t.equal(response.status, 201)
  t.same(response.body.data, resource('parent-to-child-association', '4', { extra_data: 'two-three' }, { child: { type: 'child', id: '3' } }))
  t.same(await associationRows(), [...SEEDED_ASSOCIATIONS, { id: 4, parent_id: 2, child_id: 3, extra_data: 'two-three' }])
  await failsUnchanged(t, 'POST', '/parents/1/children', {
    data: { type: 'parent-to-child-association', relationships: { child: { data: { type: 'child', id: '1' } } } },
  }, { status: 409, code: 'FJA_UNIQUE_VIOLATION', pointer: '/data/relationships/parent' })
})

t.test('cannot POST to a related route whose parent does not exist: 404 and no row created', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['/users/99/posts', { data: { type: 'post', attributes: { title: 'orphan' } } }],
    ['/users/abc/computers', { data: { type: 'computer', attributes: { serial: 'X' } } }],
    ['/users/99/group', { data: { type: 'group', attributes: { name: 'orphans' } } }],
    ['/users/99/bio', { data: { type: 'user_bio', attributes: { birth_city: 'Nowhere' } } }],
    ['/users/99/workplace', { data: { type: 'workplace', attributes: { name: 'nowhere' } } }],
    ['/computers/99/owner', { data: { type: 'user', attributes: { name: 'nobody' } } }],
    ['/parents/99/kids', { data: { type: 'child', attributes: { name: 'orphan' } } }],
    ['/children/1.5/guardians', { data: { type: 'parent', attributes: { name: 'nobody' } } }],
  ]
  for (const [url, body] of cases) {
    await t.test(url, async (t) => {
      await failsUnchanged(t, 'POST', url, body, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    })
  }
})

t.test('cannot POST a related resource with an invalid body: nothing created', async (t) => {
  await failsUnchanged(t, 'POST', '/users/1/computers', { data: { type: 'user', attributes: { name: 'x' } } }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/type' })
  await failsUnchanged(t, 'POST', '/users/1/computers', { data: { type: 'computer', attributes: { serial: 5 } } }, { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/serial' })
  await failsUnchanged(t, 'POST', '/users/1/group', { data: { type: 'group', attributes: {} } }, {
    status: 422, code: 'FJA_MISSING_FIELD', pointer: '/data/attributes', meta: { field: 'name' },
  })
  await failsUnchanged(t, 'POST', '/users/3/bio', { data: { type: 'user_bio', attributes: { favourite_movies: 'x' } } }, {
    status: 422, code: 'FJA_MISSING_FIELD', pointer: '/data/attributes', meta: { field: 'birth_city' },
  })
  await failsUnchanged(t, 'POST', '/parents/1/kids', { data: { type: 'child', attributes: { name: 'x', age: 3 } } }, { status: 422, code: 'FJA_UNKNOWN_FIELD', pointer: '/data/attributes/age' })
  await failsUnchanged(t, 'POST', '/parents/1/kids', { data: [] }, { status: 400, code: 'FJA_INVALID_DOCUMENT', pointer: '/data' })
  await failsUnchanged(t, 'POST', '/users/1/posts', { data: { type: 'post', attributes: { title: 'x' }, relationships: { user: { data: { type: 'group', id: '1' } } } } }, {
    status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/relationships/user/data/type',
  })
  await failsUnchanged(t, 'POST', '/children/1/guardians', { data: { type: 'parent', attributes: { name: 'x' }, relationships: { kids: { data: identifiers('child', ['99']) } } } }, {
    status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/kids/data/0',
  })
})

// ---------------------------------------------------------------------------------------------------------------
// PATCH: update the related resource of a to-one

t.test('PATCH a to-one by foreign key updates the related group; links.self is the request URL', async (t) => {
  const response = await api.request('PATCH', '/users/1/group', { body: { data: { type: 'group', id: '1', attributes: { name: 'renamed' } } } })
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, {
    data: resource('group', '1', { name: 'renamed' }),
    links: { self: '/users/1/group' },
    jsonapi: JSONAPI,
  })
  t.same(await api.db.selectFrom('groups').selectAll().orderBy('id').execute(), [{ id: 1, name: 'renamed' }, { id: 2, name: 'artists' }])
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: 1 }, { id: 2, group_id: 1 }, { id: 3, group_id: null },
  ], 'the link is unchanged')
})

t.test('PATCH computer.owner updates the owning user', async (t) => {
  const response = await api.request('PATCH', '/computers/1/owner', { body: { data: { type: 'user', id: '1', attributes: { age: 37 } } } })
  t.equal(response.status, 200)
  t.same(response.body, {
    data: resource('user', '1', { ...ADA, age: 37 }),
    links: { self: '/computers/1/owner' },
    jsonapi: JSONAPI,
  })
  t.same(await api.db.selectFrom('users').select(['id', 'age']).orderBy('id').execute(), [{ id: 1, age: 37 }, { id: 2, age: null }, { id: 3, age: null }])
})

t.test('PATCH an inverse to-one updates the bio or the workplace', async (t) => {
  const bio = await api.request('PATCH', '/users/1/bio', { body: { data: { type: 'user_bio', id: '1', attributes: { birth_city: 'Paris' } } } })
  t.equal(bio.status, 200)
  t.same(bio.body, {
    data: resource('user_bio', '1', { birth_city: 'Paris', favourite_movies: 'none' }),
    links: { self: '/users/1/bio' },
    jsonapi: JSONAPI,
  })
  t.same(await api.db.selectFrom('user_bios').selectAll().orderBy('id').execute(), [
    { id: 1, birth_city: 'Paris', favourite_movies: 'none', user_id: 1 },
    { id: 2, birth_city: 'New York', favourite_movies: null, user_id: 2 },
  ])

  const workplace = await api.request('PATCH', '/users/1/workplace?include=user', { body: { data: { type: 'workplace', id: '1', attributes: { name: 'lab 2' } } } })
  t.equal(workplace.status, 200)
  t.same(workplace.body, {
    data: resource('workplace', '1', { name: 'lab 2' }, { user: { type: 'user', id: '1' } }),
    links: { self: '/users/1/workplace' },
    jsonapi: JSONAPI,
    included: [resource('user', '1', ADA)],
  })
  t.same(await api.db.selectFrom('workplaces').selectAll().orderBy('id').execute(), [
    { id: 1, name: 'lab 2', user_id: 1 }, { id: 2, name: 'office', user_id: null },
  ])
})

t.test('PATCH a related resource may change its relationships too', async (t) => {
  const response = await api.request('PATCH', '/users/1/workplace', {
    body: { data: { type: 'workplace', id: '1', relationships: { user: { data: { type: 'user', id: '3' } } } } },
  })
  t.equal(response.status, 200)
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 3 }, { id: 2, user_id: null }])
  const now = await api.request('GET', '/users/1/workplace')
  t.same(now.body.data, null, 'ada has no workplace any more')
})

t.test('cannot PATCH or DELETE a to-many related route: 405 with Allow', async (t) => {
  for (const url of ['/users/1/computers', '/users/1/posts', '/parents/1/kids', '/children/1/guardians', '/groups/1/users', '/parents/1/children']) {
    for (const method of ['PATCH', 'DELETE'] as const) {
      await t.test(`${method} ${url}`, async (t) => {
        const response = await failsUnchanged(t, method, url, method === 'PATCH' ? { data: { type: 'x', id: '1' } } : undefined, {
          status: 405, code: 'FJA_METHOD_NOT_ALLOWED', detail: new RegExp(`${method} is not allowed`),
        })
        t.equal(response.headers.allow, 'GET, POST, HEAD')
      })
    }
  }
})

t.test('cannot PUT a related route: 405 with Allow', async (t) => {
  const toOne = await failsUnchanged(t, 'PUT', '/users/1/group', { data: null }, { status: 405, code: 'FJA_METHOD_NOT_ALLOWED' })
  t.equal(toOne.headers.allow, 'GET, POST, PATCH, DELETE, HEAD')
  const toMany = await failsUnchanged(t, 'PUT', '/users/1/computers', { data: [] }, { status: 405, code: 'FJA_METHOD_NOT_ALLOWED' })
  t.equal(toMany.headers.allow, 'GET, POST, HEAD')
})

t.test('cannot PATCH a related resource with another id, no id or another type', async (t) => {
  await failsUnchanged(t, 'PATCH', '/users/1/group', { data: { type: 'group', id: '2', attributes: { name: 'x' } } }, { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/id' })
  await failsUnchanged(t, 'PATCH', '/users/1/bio', { data: { type: 'user_bio', id: '2', attributes: { birth_city: 'x' } } }, { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/id' })
  await failsUnchanged(t, 'PATCH', '/computers/1/owner', { data: { type: 'user', id: '2', attributes: { age: 1 } } }, { status: 409, code: 'FJA_ID_CONFLICT', pointer: '/data/id' })
  await failsUnchanged(t, 'PATCH', '/users/1/group', { data: { type: 'group', attributes: { name: 'x' } } }, { status: 400, code: 'FJA_INVALID_DOCUMENT', pointer: '/data/id' })
  await failsUnchanged(t, 'PATCH', '/users/1/group', { data: { type: 'user', id: '1', attributes: { name: 'x' } } }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/type' })
  await failsUnchanged(t, 'PATCH', '/users/1/workplace', { data: { type: 'workplace', id: '1', attributes: { name: 7 } } }, { status: 422, code: 'FJA_VALIDATION', pointer: '/data/attributes/name' })
  await failsUnchanged(t, 'PATCH', '/users/1/bio', { data: { type: 'user_bio', id: '1', attributes: { favourite_movies: 'x' } } }, {
    status: 422, code: 'FJA_MISSING_FIELD', pointer: '/data/attributes', meta: { field: 'birth_city' },
  })
})

t.test('cannot PATCH a to-one that is not set, or of a parent that does not exist: 404', async (t) => {
  await failsUnchanged(t, 'PATCH', '/users/3/group', { data: { type: 'group', id: '1', attributes: { name: 'x' } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', detail: /group/ })
  await failsUnchanged(t, 'PATCH', '/users/3/bio', { data: { type: 'user_bio', id: '1', attributes: { birth_city: 'x' } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', detail: /bio/ })
  await failsUnchanged(t, 'PATCH', '/users/2/workplace', { data: { type: 'workplace', id: '2', attributes: { name: 'x' } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  await failsUnchanged(t, 'PATCH', '/computers/4/owner', { data: { type: 'user', id: '1', attributes: { age: 1 } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  await failsUnchanged(t, 'PATCH', '/users/99/group', { data: { type: 'group', id: '1', attributes: { name: 'x' } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', detail: /'99'/ })
  await failsUnchanged(t, 'PATCH', '/users/abc/bio', { data: { type: 'user_bio', id: '1', attributes: { birth_city: 'x' } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
})

t.test('a related PATCH that writes attributes and then fails on a relationship leaves everything unchanged', async (t) => {
  await failsUnchanged(t, 'PATCH', '/computers/1/owner', {
    data: { type: 'user', id: '1', attributes: { name: 'changed', age: 99 }, relationships: { group: { data: { type: 'group', id: '2' } }, bio: { data: null } } },
  }, { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data/relationships/bio/data', detail: /required/ })
  t.same(await api.db.selectFrom('users').select(['name', 'age', 'group_id']).where('id', '=', 1).executeTakeFirst(), { name: 'ada', age: 36, group_id: 1 })
  await failsUnchanged(t, 'PATCH', '/users/1/bio', {
    data: { type: 'user_bio', id: '1', attributes: { birth_city: 'Paris' }, relationships: { user: { data: { type: 'user', id: '2' } } } },
  }, { status: 409, code: 'FJA_UNIQUE_VIOLATION', pointer: '/data/relationships/user' })
})

// ---------------------------------------------------------------------------------------------------------------
// DELETE: delete the related resource of a to-one

t.test('DELETE a to-one by foreign key deletes the group; its users lose it', async (t) => {
  const response = await api.request('DELETE', '/users/1/group')
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, { meta: { message: 'Object successfully deleted' }, jsonapi: JSONAPI })
  t.same(await api.db.selectFrom('groups').selectAll().orderBy('id').execute(), [{ id: 2, name: 'artists' }])
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: null }, { id: 2, group_id: null }, { id: 3, group_id: null },
  ])
  const read = await api.request('GET', '/users/1/group')
  t.same(read.body.data, null)
})

t.test('DELETE computer.owner deletes the user (her bio and posts go with her)', async (t) => {
  const response = await api.request('DELETE', '/computers/3/owner')
  t.equal(response.status, 200)
  t.same(response.body, { meta: { message: 'Object successfully deleted' }, jsonapi: JSONAPI })
  t.same(await api.db.selectFrom('users').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 3 }])
  t.same(await computerRows(), [{ id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: null }, { id: 4, owner_id: null }])
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 1 }])
  t.same(await api.db.selectFrom('posts').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 1 }, { id: 2, user_id: 1 }])
})

t.test('DELETE an inverse to-one deletes the bio or the workplace', async (t) => {
  const bio = await api.request('DELETE', '/users/1/bio')
  t.equal(bio.status, 200)
  t.same(bio.body, { meta: { message: 'Object successfully deleted' }, jsonapi: JSONAPI })
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 2, user_id: 2 }])
  t.same((await api.request('GET', '/users/1/bio')).body.data, null)

  const workplace = await api.request('DELETE', '/users/1/workplace')
  t.equal(workplace.status, 200)
  t.same(workplace.body, { meta: { message: 'Object successfully deleted' }, jsonapi: JSONAPI })
  t.same(await api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 2, user_id: null }])
  t.same(await api.db.selectFrom('users').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }, { id: 3 }], 'the user remains')
})

t.test('cannot DELETE a to-one that is not set, or of a parent that does not exist: 404, nothing deleted', async (t) => {
  for (const url of ['/users/3/group', '/users/3/bio', '/users/2/workplace', '/computers/4/owner', '/users/99/group', '/users/abc/bio', '/computers/99/owner']) {
    await t.test(url, async (t) => {
      await failsUnchanged(t, 'DELETE', url, undefined, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    })
  }
})

t.test('an unknown relationship is a 404 for every method', async (t) => {
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
    await t.test(method, async (t) => {
      await failsUnchanged(t, method, '/users/1/friends', method === 'GET' || method === 'DELETE' ? undefined : { data: { type: 'user', attributes: { name: 'x' } } }, {
        status: 404, code: 'FJA_ROUTE_NOT_FOUND', detail: /'friends'/,
      })
    })
  }
})
