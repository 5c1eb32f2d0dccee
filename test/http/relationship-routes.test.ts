import t, { type Test } from 'tap'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { ERROR_CODES } from '../../lib/errors/error-codes.js'
import { failsUnchanged as failsWithout, type ExpectedError } from '../helpers/assert-errors.js'
import { JSONAPI, resource } from '../helpers/documents.js'
import { seedLinkedRows } from '../helpers/seed-linked-rows.js'

// The relationship routes `<path>/<id>/relationships/<relationship>` (issue 4): GET, POST, PATCH and DELETE of the
// linkage of a to-one by foreign key (computer.owner, user.group), a to-many inverse (user.computers, user.posts), an
// inverse to-one (user.bio, user.workplace) and a many-to-many through a join table (parent.kids, child.guardians).

const api = await startTestApp(t.teardown)

t.beforeEach(() => seedLinkedRows(api))

/** Sends a request that must fail with this error and leave every table as it was. */
function failsUnchanged (t: Test, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, body: unknown, want: ExpectedError): Promise<TestResponse> {
  return failsWithout(t, api, method, url, body === undefined ? {} : { body }, want)
}

// ---------------------------------------------------------------------------------------------------------------
// Expected documents

function identifiers (type: string, ids: readonly string[]): Array<{ type: string; id: string }> {
  return ids.map((id) => ({ type, id }))
}

function keys (items: ReadonlyArray<{ type: string; id: string }> | undefined): string[] {
  return (items ?? []).map((item) => `${item.type}:${item.id}`)
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


const MEMBERS_CREATED = { meta: { message: 'Relationship successfully created' }, jsonapi: JSONAPI }
const MEMBERS_REMOVED = { meta: { message: 'Relationship successfully updated' }, jsonapi: JSONAPI }

/** The links of a to-many relationship document that fits on one page. */
function linkagePage (self: string, related: string): Record<string, string> {
  return { self, first: self, last: self, related }
}

/** The document a relationship PATCH answers: links, the resulting linkage, the message. */
function replaced (url: string, data: unknown): Record<string, unknown> {
  return { links: { self: url, related: url.replace('/relationships/', '/') }, data, meta: { message: 'Relationship successfully updated' }, jsonapi: JSONAPI }
}

/** Resource objects in `type:id` order. */
function byKey<T extends { type: string; id: string }> (items: readonly T[] | undefined): T[] {
  return [...(items ?? [])].sort((a, b) => `${a.type}:${a.id.padStart(4, '0')}`.localeCompare(`${b.type}:${b.id.padStart(4, '0')}`))
}

/** The body with its to-many linkage in id order (the resulting set; the order of the request is not significant). */
function sortedLinkage (body: Record<string, unknown>): Record<string, unknown> {
  const data = body.data as Array<{ type: string; id: string }>
  return { ...body, data: [...data].sort((a, b) => Number(a.id) - Number(b.id)) }
}

function workplaceRows (): Promise<unknown[]> {
  return api.db.selectFrom('workplaces').select(['id', 'user_id']).orderBy('id').execute()
}

function postRows (): Promise<unknown[]> {
  return api.db.selectFrom('posts').select(['id', 'user_id']).orderBy('id').execute()
}

// ---------------------------------------------------------------------------------------------------------------
// GET

t.test('GET a to-one linkage by foreign key: identifier, links.self and links.related; two statements', async (t) => {
  api.counter.reset()
  const group = await api.request('GET', '/users/1/relationships/group')
  t.equal(api.counter.count, 2, 'the parent check and the linkage')
  t.equal(group.status, 200)
  t.match(group.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(group.body, {
    links: { self: '/users/1/relationships/group', related: '/users/1/group' },
    data: { type: 'group', id: '1' },
    jsonapi: JSONAPI,
  })
  const owner = await api.request('GET', '/computers/3/relationships/owner')
  t.same(owner.body, {
    links: { self: '/computers/3/relationships/owner', related: '/computers/3/owner' },
    data: { type: 'user', id: '2' },
    jsonapi: JSONAPI,
  })
  const user = await api.request('GET', '/computers/3/relationships/user')
  t.same(user.body.data, { type: 'user', id: '2' }, 'computer.user is the same link')
  const post = await api.request('GET', '/posts/3/relationships/user')
  t.same(post.body.data, { type: 'user', id: '2' })
})

t.test('GET a to-one linkage that is not set: data null', async (t) => {
  for (const url of ['/users/3/relationships/group', '/computers/4/relationships/owner', '/users/3/relationships/bio', '/users/2/relationships/workplace']) {
    api.counter.reset()
    const response = await api.request('GET', url)
    t.equal(response.status, 200, url)
    t.same(response.body, { links: { self: url, related: url.replace('/relationships/', '/') }, data: null, jsonapi: JSONAPI }, url)
    t.equal(api.counter.count, 2, `${url}: two statements`)
  }
})

t.test('GET an inverse to-one linkage: user.bio and user.workplace', async (t) => {
  api.counter.reset()
  const bio = await api.request('GET', '/users/1/relationships/bio')
  t.equal(api.counter.count, 2)
  t.same(bio.body, {
    links: { self: '/users/1/relationships/bio', related: '/users/1/bio' },
    data: { type: 'user_bio', id: '1' },
    jsonapi: JSONAPI,
  })
  const workplace = await api.request('GET', '/users/1/relationships/workplace')
  t.same(workplace.body, {
    links: { self: '/users/1/relationships/workplace', related: '/users/1/workplace' },
    data: { type: 'workplace', id: '1' },
    jsonapi: JSONAPI,
  })
  const back = await api.request('GET', '/user-bio/2/relationships/user')
  t.same(back.body.data, { type: 'user', id: '2' })
})

t.test('GET a to-many linkage: identifiers, pagination links, related and meta.count of that parent; three statements', async (t) => {
  api.counter.reset()
  const computers = await api.request('GET', '/users/1/relationships/computers')
  t.equal(api.counter.count, 3, 'the parent check, the page and the count')
  t.equal(computers.status, 200)
  t.match(computers.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(computers.body, {
    links: linkagePage('/users/1/relationships/computers', '/users/1/computers'),
    data: identifiers('computer', ['1', '2']),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const posts = await api.request('GET', '/users/2/relationships/posts')
  t.same(posts.body, {
    links: linkagePage('/users/2/relationships/posts', '/users/2/posts'),
    data: identifiers('post', ['3']),
    jsonapi: JSONAPI,
    meta: { count: 1 },
  })
  const none = await api.request('GET', '/users/3/relationships/computers')
  t.same(none.body, {
    links: linkagePage('/users/3/relationships/computers', '/users/3/computers'),
    data: [],
    jsonapi: JSONAPI,
    meta: { count: 0 },
  })
})

t.test('GET a many-to-many linkage: parent.kids and child.guardians', async (t) => {
  api.counter.reset()
  const kids = await api.request('GET', '/parents/1/relationships/kids')
  t.equal(api.counter.count, 3)
  t.same(kids.body, {
    links: linkagePage('/parents/1/relationships/kids', '/parents/1/kids'),
    data: identifiers('child', ['1', '2']),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const p2 = await api.request('GET', '/parents/2/relationships/kids')
  t.same(p2.body.data, identifiers('child', ['1']))
  t.same(p2.body.meta, { count: 1 })
  const guardians = await api.request('GET', '/children/1/relationships/guardians')
  t.same(guardians.body, {
    links: linkagePage('/children/1/relationships/guardians', '/children/1/guardians'),
    data: identifiers('parent', ['1', '2']),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const c3 = await api.request('GET', '/children/3/relationships/guardians')
  t.same(c3.body.data, [])
  t.same(c3.body.meta, { count: 0 })
})

t.test('GET a to-many linkage is paginated', async (t) => {
  const first = await api.request('GET', '/users/1/relationships/computers?page[size]=1')
  t.same(first.body, {
    links: {
      self: '/users/1/relationships/computers?page%5Bsize%5D=1',
      first: '/users/1/relationships/computers?page%5Bsize%5D=1',
      next: '/users/1/relationships/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      last: '/users/1/relationships/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      related: '/users/1/computers',
    },
    data: identifiers('computer', ['1']),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const second = await api.request('GET', '/users/1/relationships/computers?page[size]=1&page[number]=2')
  t.same(second.body, {
    links: {
      self: '/users/1/relationships/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      first: '/users/1/relationships/computers?page%5Bsize%5D=1',
      prev: '/users/1/relationships/computers?page%5Bsize%5D=1',
      last: '/users/1/relationships/computers?page%5Bsize%5D=1&page%5Bnumber%5D=2',
      related: '/users/1/computers',
    },
    data: identifiers('computer', ['2']),
    jsonapi: JSONAPI,
    meta: { count: 2 },
  })
  const kids = await api.request('GET', '/parents/1/relationships/kids?page[size]=1&page[number]=2')
  t.same(kids.body.data, identifiers('child', ['2']))
})

t.test('GET a to-many linkage with include: the linkage, and the resources it identifies in included; one statement more', async (t) => {
  api.counter.reset()
  const plain = await api.request('GET', '/users/1/relationships/computers')
  const statements = api.counter.count
  api.counter.reset()
  const response = await api.request('GET', '/users/1/relationships/computers?include=computers')
  t.equal(response.status, 200)
  t.equal(api.counter.count, statements, 'the linkage\'s own statements: the page reads the resources themselves')
  t.same(response.body.data, plain.body.data, 'the same linkage')
  t.same(response.body.meta, { count: 2 })
  t.same(keys(response.body.included), ['computer:1', 'computer:2'], 'exactly the resources the linkage identifies')
  t.same(response.body.included[0].attributes, { serial: 'A1', name: 'analytical' })
  t.same(response.body.links.related, '/users/1/computers')

  api.counter.reset()
  const deeper = await api.request('GET', '/users/1/relationships/computers?include=computers.owner')
  t.equal(api.counter.count, statements + 1, 'one statement more for the step after the linkage\'s resources')
  t.same(keys(deeper.body.included).sort(), ['computer:1', 'computer:2', 'user:1'], 'each once')
  t.same(deeper.body.included.find((item: { type: string }) => item.type === 'computer').relationships.owner.data, { type: 'user', id: '1' }, 'full linkage from the included resources')

  const paged = await api.request('GET', '/users/1/relationships/computers?include=computers&page[size]=1&page[number]=2')
  t.same(paged.body.data, identifiers('computer', ['2']))
  t.same(keys(paged.body.included), ['computer:2'], 'the resources of the page only')

  const sparse = await api.request('GET', '/users/1/relationships/computers?include=computers&fields[computer]=serial')
  t.same(sparse.body.included.map((item: { attributes: unknown }) => item.attributes), [{ serial: 'A1' }, { serial: 'B2' }], 'fields apply to the included resources')

  const none = await api.request('GET', '/users/3/relationships/computers?include=computers')
  t.same(none.body.data, [])
  t.notOk('included' in none.body, 'nothing to include: no included member')

  const kids = await api.request('GET', '/parents/1/relationships/kids?include=kids')
  t.same(keys(kids.body.included), keys(kids.body.data), 'through a join table too')
})

t.test('GET a to-one linkage with include: the related resource in included', async (t) => {
  const response = await api.request('GET', '/computers/3/relationships/owner?include=owner')
  t.same(response.body.data, { type: 'user', id: '2' })
  t.same(keys(response.body.included), ['user:2'])
  const unset = await api.request('GET', '/computers/4/relationships/owner?include=owner')
  t.same(unset.body.data, null)
  t.notOk('included' in unset.body)
})

t.test('GET a linkage with include under the cursor pagination profile: the identifiers\' cursors, and included', async (t) => {
  const profile = 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"'
  const first = await api.request('GET', '/users/1/relationships/computers?include=computers&page[size]=1', { headers: { accept: profile } })
  t.equal(first.status, 200)
  t.same(keys(first.body.data), ['computer:1'])
  t.type(first.body.data[0].meta.page.cursor, 'string')
  t.same(keys(first.body.included), ['computer:1'])
  const next = await api.request('GET', first.body.links.next, { headers: { accept: profile } })
  t.same(keys(next.body.data), ['computer:2'], 'links.next walks the linkage')
  t.same(keys(next.body.included), ['computer:2'])
})

t.test('cannot GET a relationship with an include that does not start with it, or fields without include: 400 naming the parameter', async (t) => {
  for (const url of [
    '/users/1/relationships/computers?include=owner',
    '/users/1/relationships/computers?include=group',
    '/users/1/relationships/computers?include=computers,group',
    '/users/1/relationships/computers?include=computer',
    '/users/1/relationships/computers?include=computers.nothing',
    '/users/1/relationships/computers?include=computers.owner.computers.owner',
    '/users/1/relationships/computers?include=computers&include=computers',
    '/users/1/relationships/group?include=users',
  ]) {
    await failsUnchanged(t, 'GET', url, undefined, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'include' })
  }
  await failsUnchanged(t, 'GET', '/users/1/relationships/computers?fields[computer]=serial', undefined, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'fields[computer]' })
  await failsUnchanged(t, 'GET', '/users/1/relationships/computers?include=computers&fields[computer]=nothing', undefined, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'fields[computer]' })
  await failsUnchanged(t, 'GET', '/users/99/relationships/computers?include=computers', undefined, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
})

t.test('cannot GET the relationship of a parent that does not exist, or an unknown relationship: 404', async (t) => {
  for (const url of ['/users/99/relationships/group', '/users/abc/relationships/computers', '/users/1.5/relationships/bio', '/parents/99/relationships/kids', '/children/x/relationships/guardians']) {
    await failsUnchanged(t, 'GET', url, undefined, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  }
  for (const url of ['/users/1/relationships/friends', '/users/1/relationships/kids', '/parents/1/relationships/computers']) {
    await failsUnchanged(t, 'GET', url, undefined, { status: 404, code: 'FJA_ROUTE_NOT_FOUND', detail: /relationship/ })
  }
})

// ---------------------------------------------------------------------------------------------------------------
// POST: add members to a to-many

t.test('POST to a to-many inverse adds the members; one already present is not an error', async (t) => {
  const response = await api.request('POST', '/users/1/relationships/computers', { body: { data: identifiers('computer', ['3', '1']) } })
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, MEMBERS_CREATED)
  t.same(await computerRows(), [{ id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 1 }, { id: 4, owner_id: null }],
    'grace\'s computer moved to ada; ada\'s computers kept')
  const ada = await api.request('GET', '/users/1/relationships/computers')
  t.same(ada.body.data, identifiers('computer', ['1', '2', '3']))
  t.same(ada.body.meta, { count: 3 })
  const grace = await api.request('GET', '/users/2/relationships/computers')
  t.same(grace.body.data, [])
})

t.test('POST to user.posts moves a post; duplicates in the body are fine', async (t) => {
  const response = await api.request('POST', '/users/3/relationships/posts', { body: { data: identifiers('post', ['3', '3']) } })
  t.equal(response.status, 200)
  t.same(response.body, MEMBERS_CREATED)
  t.same(await postRows(), [{ id: 1, user_id: 1 }, { id: 2, user_id: 1 }, { id: 3, user_id: 3 }])
  const again = await api.request('POST', '/users/3/relationships/posts', { body: { data: identifiers('post', ['3']) } })
  t.equal(again.status, 200, 'adding a member already present is not an error')
  t.same(await postRows(), [{ id: 1, user_id: 1 }, { id: 2, user_id: 1 }, { id: 3, user_id: 3 }])
})

t.test('POST an empty list changes nothing', async (t) => {
  const before = await api.snapshot()
  const response = await api.request('POST', '/users/1/relationships/computers', { body: { data: [] } })
  t.equal(response.status, 200)
  t.same(response.body, MEMBERS_CREATED)
  t.same(await api.snapshot(), before)
})

t.test('POST to a many-to-many inserts join rows with extra_data null; a kept link keeps its row', async (t) => {
  const response = await api.request('POST', '/parents/1/relationships/kids', { body: { data: identifiers('child', ['3', '1']) } })
  t.equal(response.status, 200)
  t.same(response.body, MEMBERS_CREATED)
  t.same(await associationRows(), [...SEEDED_ASSOCIATIONS, { id: 4, parent_id: 1, child_id: 3, extra_data: null }],
    'child 1 was already linked: its row (and extra_data) kept, no duplicate')

  const guardians = await api.request('POST', '/children/3/relationships/guardians', { body: { data: identifiers('parent', ['2', '1']) } })
  t.equal(guardians.status, 200)
  t.same(guardians.body, MEMBERS_CREATED)
  t.same(await associationRows(), [
    ...SEEDED_ASSOCIATIONS,
    { id: 4, parent_id: 1, child_id: 3, extra_data: null },
    { id: 5, parent_id: 2, child_id: 3, extra_data: null },
  ])
  const c3 = await api.request('GET', '/children/3/relationships/guardians')
  t.same(c3.body.data, identifiers('parent', ['1', '2']))
})

t.test('parents and children linked through the routes read back through include=children.child', async (t) => {
  const linked = await api.request('POST', '/parents/2/relationships/kids', { body: { data: identifiers('child', ['3', '2']) } })
  t.equal(linked.status, 200)
  const response = await api.request('GET', '/parents/2?include=children.child')
  t.equal(response.status, 200)
  t.same({ ...response.body, included: byKey(response.body.included) }, {
    data: resource('parent', '2', { name: 'p2' }, { children: identifiers('parent-to-child-association', ['3', '4', '5']) }),
    links: { self: '/parents/2' },
    jsonapi: JSONAPI,
    included: [
      resource('child', '1', { name: 'c1' }),
      resource('child', '2', { name: 'c2' }),
      resource('child', '3', { name: 'c3' }),
      resource('parent-to-child-association', '3', { extra_data: null }, { child: { type: 'child', id: '1' } }),
      resource('parent-to-child-association', '4', { extra_data: null }, { child: { type: 'child', id: '3' } }),
      resource('parent-to-child-association', '5', { extra_data: null }, { child: { type: 'child', id: '2' } }),
    ],
  }, 'the new association rows (extra_data null) and their children are included')
})

// ---------------------------------------------------------------------------------------------------------------
// POST and DELETE on a to-one: 403

const TO_ONE_ROUTES: Array<[string, Record<string, unknown>]> = [
  ['/users/1/relationships/group', { type: 'group', id: '2' }],
  ['/computers/1/relationships/owner', { type: 'user', id: '2' }],
  ['/users/1/relationships/bio', { type: 'user_bio', id: '2' }],
  ['/users/1/relationships/workplace', { type: 'workplace', id: '2' }],
  ['/posts/1/relationships/user', { type: 'user', id: '2' }],
  ['/user-bio/1/relationships/user', { type: 'user', id: '3' }],
  ['/parent-to-child-association/1/relationships/child', { type: 'child', id: '3' }],
]

t.test('cannot POST or DELETE members of a to-one: 403, decided before the body is validated', async (t) => {
  for (const [url, identifier] of TO_ONE_ROUTES) {
    for (const method of ['POST', 'DELETE'] as const) {
      await t.test(`${method} ${url}`, async (t) => {
        const bodies: Array<[string, unknown]> = [
          ['an identifier', { data: identifier }],
          ['null', { data: null }],
          ['an array of identifiers', { data: [identifier] }],
          ['an identifier of another type', { data: [{ type: 'nothing', id: '1' }] }],
          ['no data', { meta: {} }],
          ['a JSON string', '"garbage"'],
          ['a JSON array', [1, 2]],
          ['no body', undefined],
        ]
        for (const [label, body] of bodies) {
          const response = await failsUnchanged(t, method, url, body, { status: 403, code: 'FJA_TO_ONE_MEMBERS', detail: /to-one/ })
          t.equal(response.status, 403, label)
        }
      })
    }
  }
  // no such user: the 404 comes first, as for every write of a resource that does not exist (or is not visible)
  for (const url of ['/users/99/relationships/group', '/users/abc/relationships/group']) {
    for (const method of ['POST', 'DELETE'] as const) {
      await failsUnchanged(t, method, url, { data: { type: 'group', id: '1' } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    }
  }
})

t.test('cannot POST or DELETE members of a to-one even when the body is not JSON: 403', async (t) => {
  for (const method of ['POST', 'DELETE'] as const) {
    await failsUnchanged(t, method, '/users/1/relationships/group', '{"data": garbage', { status: 403, code: 'FJA_TO_ONE_MEMBERS', detail: /to-one/ })
  }
})

// ---------------------------------------------------------------------------------------------------------------
// DELETE: remove members from a to-many

t.test('DELETE from a to-many inverse removes the listed members only', async (t) => {
  const response = await api.request('DELETE', '/users/1/relationships/computers', { body: { data: identifiers('computer', ['1', '3']) } })
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body, MEMBERS_REMOVED)
  t.same(await computerRows(), [{ id: 1, owner_id: null }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: null }],
    'computer 3 is grace\'s, not ada\'s: it keeps its owner')
  const groups = await api.request('DELETE', '/groups/1/relationships/users', { body: { data: identifiers('user', ['2']) } })
  t.equal(groups.status, 200)
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: 1 }, { id: 2, group_id: null }, { id: 3, group_id: null },
  ])
})

t.test('DELETE from a many-to-many deletes join rows; the children themselves remain', async (t) => {
  const response = await api.request('DELETE', '/parents/1/relationships/kids', { body: { data: identifiers('child', ['1', '3']) } })
  t.equal(response.status, 200)
  t.same(response.body, MEMBERS_REMOVED)
  t.same(await associationRows(), [SEEDED_ASSOCIATIONS[1], SEEDED_ASSOCIATIONS[2]], 'only (1, 1) is deleted; (2, 1) belongs to another parent')
  t.same(await api.db.selectFrom('children').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }, { id: 3 }])

  const guardians = await api.request('DELETE', '/children/1/relationships/guardians', { body: { data: identifiers('parent', ['2']) } })
  t.equal(guardians.status, 200)
  t.same(await associationRows(), [SEEDED_ASSOCIATIONS[1]])
})

t.test('DELETE an empty list, or members not linked, changes nothing', async (t) => {
  const before = await api.snapshot()
  const empty = await api.request('DELETE', '/users/1/relationships/computers', { body: { data: [] } })
  t.equal(empty.status, 200)
  t.same(empty.body, MEMBERS_REMOVED)
  const other = await api.request('DELETE', '/parents/2/relationships/kids', { body: { data: identifiers('child', ['2', '3']) } })
  t.equal(other.status, 200)
  t.same(await api.snapshot(), before)
})

// ---------------------------------------------------------------------------------------------------------------
// PATCH: replace the linkage

t.test('PATCH a to-one by foreign key: set, then clear with null', async (t) => {
  const set = await api.request('PATCH', '/users/1/relationships/group', { body: { data: { type: 'group', id: '2' } } })
  t.equal(set.status, 200)
  t.match(set.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(set.body, replaced('/users/1/relationships/group', { type: 'group', id: '2' }))
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: 2 }, { id: 2, group_id: 1 }, { id: 3, group_id: null },
  ])
  const cleared = await api.request('PATCH', '/users/1/relationships/group', { body: { data: null } })
  t.equal(cleared.status, 200)
  t.same(cleared.body, replaced('/users/1/relationships/group', null))
  t.same(await api.db.selectFrom('users').select(['id', 'group_id']).orderBy('id').execute(), [
    { id: 1, group_id: null }, { id: 2, group_id: 1 }, { id: 3, group_id: null },
  ])
})

t.test('PATCH computer.owner (and computer.user, the same column)', async (t) => {
  const set = await api.request('PATCH', '/computers/4/relationships/owner', { body: { data: { type: 'user', id: '3' } } })
  t.equal(set.status, 200)
  t.same(set.body, replaced('/computers/4/relationships/owner', { type: 'user', id: '3' }))
  t.same(await computerRows(), [{ id: 1, owner_id: 1 }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: 3 }])
  const byUser = await api.request('PATCH', '/computers/4/relationships/user', { body: { data: { type: 'user', id: '2' } } })
  t.same(byUser.body, replaced('/computers/4/relationships/user', { type: 'user', id: '2' }))
  t.same((await api.request('GET', '/computers/4/relationships/owner')).body.data, { type: 'user', id: '2' })
  const cleared = await api.request('PATCH', '/computers/1/relationships/owner', { body: { data: null } })
  t.same(cleared.body, replaced('/computers/1/relationships/owner', null))
  t.same(await computerRows(), [{ id: 1, owner_id: null }, { id: 2, owner_id: 1 }, { id: 3, owner_id: 2 }, { id: 4, owner_id: 2 }])
})

t.test('PATCH a required to-one to another target: post.user, user_bio.user', async (t) => {
  const post = await api.request('PATCH', '/posts/1/relationships/user', { body: { data: { type: 'user', id: '2' } } })
  t.equal(post.status, 200)
  t.same(post.body, replaced('/posts/1/relationships/user', { type: 'user', id: '2' }))
  t.same(await postRows(), [{ id: 1, user_id: 2 }, { id: 2, user_id: 1 }, { id: 3, user_id: 2 }])
  const bio = await api.request('PATCH', '/user-bio/1/relationships/user', { body: { data: { type: 'user', id: '3' } } })
  t.equal(bio.status, 200)
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 3 }, { id: 2, user_id: 2 }])
})

t.test('PATCH an inverse to-one: user.workplace set, moved, cleared', async (t) => {
  const moved = await api.request('PATCH', '/users/3/relationships/workplace', { body: { data: { type: 'workplace', id: '1' } } })
  t.equal(moved.status, 200)
  t.same(moved.body, replaced('/users/3/relationships/workplace', { type: 'workplace', id: '1' }))
  t.same(await workplaceRows(), [{ id: 1, user_id: 3 }, { id: 2, user_id: null }], 'taken from ada')
  const replacedOne = await api.request('PATCH', '/users/3/relationships/workplace', { body: { data: { type: 'workplace', id: '2' } } })
  t.equal(replacedOne.status, 200)
  t.same(await workplaceRows(), [{ id: 1, user_id: null }, { id: 2, user_id: 3 }], 'the previous workplace is unlinked')
  const cleared = await api.request('PATCH', '/users/3/relationships/workplace', { body: { data: null } })
  t.same(cleared.body, replaced('/users/3/relationships/workplace', null))
  t.same(await workplaceRows(), [{ id: 1, user_id: null }, { id: 2, user_id: null }])
})

t.test('PATCH an inverse to-one: user.bio moves to a user without one; setting the same bio is a no-op', async (t) => {
  const moved = await api.request('PATCH', '/users/3/relationships/bio', { body: { data: { type: 'user_bio', id: '1' } } })
  t.equal(moved.status, 200)
  t.same(moved.body, replaced('/users/3/relationships/bio', { type: 'user_bio', id: '1' }))
  t.same(await api.db.selectFrom('user_bios').select(['id', 'user_id']).orderBy('id').execute(), [{ id: 1, user_id: 3 }, { id: 2, user_id: 2 }])
  const before = await api.snapshot()
  const same = await api.request('PATCH', '/users/2/relationships/bio', { body: { data: { type: 'user_bio', id: '2' } } })
  t.equal(same.status, 200)
  t.same(same.body, replaced('/users/2/relationships/bio', { type: 'user_bio', id: '2' }))
  t.same(await api.snapshot(), before)
})

t.test('PATCH a to-many inverse replaces the whole set; [] clears it', async (t) => {
  const response = await api.request('PATCH', '/users/1/relationships/computers', { body: { data: identifiers('computer', ['4', '3', '4']) } })
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(sortedLinkage(response.body), replaced('/users/1/relationships/computers', identifiers('computer', ['3', '4'])), 'the resulting set, each once')
  t.same(await computerRows(), [{ id: 1, owner_id: null }, { id: 2, owner_id: null }, { id: 3, owner_id: 1 }, { id: 4, owner_id: 1 }])
  t.same((await api.request('GET', '/users/1/relationships/computers')).body.data, identifiers('computer', ['3', '4']))
  t.same((await api.request('GET', '/users/2/relationships/computers')).body.data, [], 'taken from grace')

  const cleared = await api.request('PATCH', '/users/1/relationships/computers', { body: { data: [] } })
  t.equal(cleared.status, 200)
  t.same(cleared.body, replaced('/users/1/relationships/computers', []))
  t.same(await computerRows(), [{ id: 1, owner_id: null }, { id: 2, owner_id: null }, { id: 3, owner_id: null }, { id: 4, owner_id: null }])
})

t.test('PATCH user.posts to a superset takes the posts from their users', async (t) => {
  const response = await api.request('PATCH', '/users/2/relationships/posts', { body: { data: identifiers('post', ['3', '1']) } })
  t.equal(response.status, 200)
  t.same(sortedLinkage(response.body), replaced('/users/2/relationships/posts', identifiers('post', ['1', '3'])))
  t.same(await postRows(), [{ id: 1, user_id: 2 }, { id: 2, user_id: 1 }, { id: 3, user_id: 2 }])
})

t.test('PATCH a many-to-many: dropped links lose their join row, kept ones keep it, new ones get extra_data null', async (t) => {
  const response = await api.request('PATCH', '/parents/1/relationships/kids', { body: { data: identifiers('child', ['3', '2']) } })
  t.equal(response.status, 200)
  t.same(sortedLinkage(response.body), replaced('/parents/1/relationships/kids', identifiers('child', ['2', '3'])))
  t.same(await associationRows(), [
    { id: 2, parent_id: 1, child_id: 2, extra_data: 'one-two' },
    { id: 3, parent_id: 2, child_id: 1, extra_data: null },
    { id: 4, parent_id: 1, child_id: 3, extra_data: null },
  ])
  const read = await api.request('GET', '/parents/1?include=children.child')
  t.same(read.body.data.relationships.children.data, identifiers('parent-to-child-association', ['2', '4']))
  t.same(keys(read.body.included).sort(), ['child:2', 'child:3', 'parent-to-child-association:2', 'parent-to-child-association:4'])

  const cleared = await api.request('PATCH', '/parents/1/relationships/kids', { body: { data: [] } })
  t.equal(cleared.status, 200)
  t.same(cleared.body, replaced('/parents/1/relationships/kids', []))
  t.same(await associationRows(), [{ id: 3, parent_id: 2, child_id: 1, extra_data: null }])
  t.same(await api.db.selectFrom('children').select('id').orderBy('id').execute(), [{ id: 1 }, { id: 2 }, { id: 3 }], 'the children remain')
})

t.test('PATCH child.guardians', async (t) => {
  const response = await api.request('PATCH', '/children/1/relationships/guardians', { body: { data: identifiers('parent', ['2']) } })
  t.equal(response.status, 200)
  t.same(response.body, replaced('/children/1/relationships/guardians', identifiers('parent', ['2'])))
  t.same(await associationRows(), [SEEDED_ASSOCIATIONS[1], SEEDED_ASSOCIATIONS[2]])
  const c3 = await api.request('PATCH', '/children/3/relationships/guardians', { body: { data: identifiers('parent', ['1', '2']) } })
  t.equal(c3.status, 200)
  t.same(await associationRows(), [
    SEEDED_ASSOCIATIONS[1],
    SEEDED_ASSOCIATIONS[2],
    { id: 4, parent_id: 1, child_id: 3, extra_data: null },
    { id: 5, parent_id: 2, child_id: 3, extra_data: null },
  ])
  t.same((await api.request('GET', '/parents/1/relationships/kids')).body.data, identifiers('child', ['2', '3']), 'seen from the parent too')
})

// ---------------------------------------------------------------------------------------------------------------
// Required links: 422

t.test('cannot clear or remove a link whose foreign key is NOT NULL: 422 saying why, nothing changed', async (t) => {
  const cases: Array<[string, 'POST' | 'PATCH' | 'DELETE', string, unknown, RegExp]> = [
    ['a post without its user (DELETE)', 'DELETE', '/users/1/relationships/posts', { data: identifiers('post', ['1']) }, /'post'.*'user' is required/],
    ['a post without its user (PATCH [])', 'PATCH', '/users/1/relationships/posts', { data: [] }, /'post'.*'user' is required/],
    ['a post without its user (PATCH dropping one)', 'PATCH', '/users/1/relationships/posts', { data: identifiers('post', ['2', '3']) }, /'user' is required/],
    ['a post\'s user cleared', 'PATCH', '/posts/1/relationships/user', { data: null }, /'user' is required/],
    ['a bio\'s user cleared', 'PATCH', '/user-bio/1/relationships/user', { data: null }, /'user' is required/],
    ['a user\'s bio cleared', 'PATCH', '/users/1/relationships/bio', { data: null }, /'user_bio'.*'user' is required/],
    ['a user\'s bio replaced by another user\'s', 'PATCH', '/users/2/relationships/bio', { data: { type: 'user_bio', id: '1' } }, /'user' is required/],
    ['an association without its parent', 'DELETE', '/parents/1/relationships/children', { data: identifiers('parent-to-child-association', ['1']) }, /'parent' is required/],
    ['an association without its child', 'PATCH', '/parent-to-child-association/1/relationships/child', { data: null }, /'child' is required/],
  ]
  for (const [label, method, url, body, detail] of cases) {
    await t.test(label, async (t) => {
      await failsUnchanged(t, method, url, body, { status: 422, code: 'FJA_REQUIRED_RELATIONSHIP', pointer: '/data', detail })
    })
  }
})

// ---------------------------------------------------------------------------------------------------------------
// Other errors

t.test('cannot link a member of the wrong type: 409 pointing at its type', async (t) => {
  await failsUnchanged(t, 'POST', '/users/1/relationships/computers', { data: [{ type: 'user', id: '3' }] }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/0/type' })
  await failsUnchanged(t, 'DELETE', '/users/1/relationships/computers', { data: [{ type: 'computer', id: '1' }, { type: 'post', id: '1' }] }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/1/type' })
  await failsUnchanged(t, 'PATCH', '/users/1/relationships/computers', { data: [{ type: 'computer', id: '4' }, { type: 'computers', id: '3' }] }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/1/type' })
  await failsUnchanged(t, 'PATCH', '/users/1/relationships/group', { data: { type: 'user', id: '2' } }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/type' })
  await failsUnchanged(t, 'PATCH', '/users/3/relationships/bio', { data: { type: 'user-bio', id: '1' } }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/type' })
  await failsUnchanged(t, 'POST', '/parents/1/relationships/kids', { data: [{ type: 'parent', id: '2' }] }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/0/type' })
  await failsUnchanged(t, 'PATCH', '/children/1/relationships/guardians', { data: [{ type: 'child', id: '2' }] }, { status: 409, code: 'FJA_TYPE_CONFLICT', pointer: '/data/0/type' })
})

t.test('cannot link a member that does not exist: 404 pointing at it, nothing changed', async (t) => {
  await failsUnchanged(t, 'POST', '/users/1/relationships/computers', { data: identifiers('computer', ['3', '99']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/1', detail: /'99'/ })
  await failsUnchanged(t, 'DELETE', '/users/1/relationships/computers', { data: identifiers('computer', ['abc']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/0' })
  await failsUnchanged(t, 'PATCH', '/users/1/relationships/computers', { data: identifiers('computer', ['4', '3', '1.5']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/2' })
  await failsUnchanged(t, 'PATCH', '/users/1/relationships/posts', { data: identifiers('post', ['1', '2', '3', '99999999999']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/3' })
  await failsUnchanged(t, 'PATCH', '/users/1/relationships/group', { data: { type: 'group', id: '99' } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data' })
  await failsUnchanged(t, 'PATCH', '/computers/1/relationships/owner', { data: { type: 'user', id: 'x' } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data' })
  await failsUnchanged(t, 'PATCH', '/users/3/relationships/workplace', { data: { type: 'workplace', id: '99' } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data' })
  await failsUnchanged(t, 'POST', '/parents/1/relationships/kids', { data: identifiers('child', ['3', '99']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/1' })
  await failsUnchanged(t, 'PATCH', '/parents/1/relationships/kids', { data: identifiers('child', ['99', '3']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/0' })
  await failsUnchanged(t, 'DELETE', '/children/1/relationships/guardians', { data: identifiers('parent', ['1', '99']) }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/1' })
})

t.test('cannot send a body that is not resource linkage: 400 with a pointer', async (t) => {
  const toMany = '/users/1/relationships/computers'
  const toOne = '/users/1/relationships/group'
  const cases: Array<['POST' | 'PATCH' | 'DELETE', string, unknown, string]> = [
    ['PATCH', toMany, undefined, ''],
    ['PATCH', toMany, [], ''],
    ['PATCH', toMany, '"text"', ''],
    ['PATCH', toMany, { meta: {} }, ''],
    ['PATCH', toMany, { data: { type: 'computer', id: '1' } }, '/data'],
    ['PATCH', toMany, { data: null }, '/data'],
    ['PATCH', toMany, { data: [{ type: 'computer' }] }, '/data/0'],
    ['PATCH', toMany, { data: [{ type: 'computer', id: '1' }, { type: 'computer', id: 2 }] }, '/data/1'],
    ['PATCH', toMany, { data: ['1'] }, '/data/0'],
    ['POST', toMany, undefined, ''],
    ['POST', toMany, { data: { type: 'computer', id: '3' } }, '/data'],
    ['POST', toMany, { data: [null] }, '/data/0'],
    ['DELETE', toMany, { meta: {} }, ''],
    ['DELETE', toMany, { data: [{ id: '1' }] }, '/data/0'],
    ['PATCH', toOne, { data: [] }, '/data'],
    ['PATCH', toOne, { data: [{ type: 'group', id: '2' }] }, '/data'],
    ['PATCH', toOne, { data: { type: 'group' } }, '/data'],
    ['PATCH', toOne, { data: 'group-2' }, '/data'],
    ['PATCH', toOne, {}, ''],
    ['PATCH', '/parents/1/relationships/kids', { data: {} }, '/data'],
  ]
  for (const [method, url, body, pointer] of cases) {
    await t.test(`${method} ${url} ${JSON.stringify(body) ?? 'no body'}`, async (t) => {
      await failsUnchanged(t, method, url, body, { status: 400, code: 'FJA_INVALID_DOCUMENT', pointer })
    })
  }
})

t.test('cannot change the relationship of a parent that does not exist: 404', async (t) => {
  const cases: Array<['POST' | 'PATCH' | 'DELETE', string, unknown]> = [
    ['PATCH', '/users/99/relationships/group', { data: { type: 'group', id: '1' } }],
    ['PATCH', '/users/abc/relationships/computers', { data: [] }],
    ['PATCH', '/users/99/relationships/bio', { data: null }],
    ['POST', '/users/99/relationships/computers', { data: identifiers('computer', ['4']) }],
    ['POST', '/users/-1/relationships/posts', { data: identifiers('post', ['1']) }],
    ['DELETE', '/users/1.5/relationships/computers', { data: identifiers('computer', ['1']) }],
    ['POST', '/parents/99/relationships/kids', { data: identifiers('child', ['3']) }],
    ['PATCH', '/children/99/relationships/guardians', { data: identifiers('parent', ['1']) }],
  ]
  for (const [method, url, body] of cases) {
    await t.test(`${method} ${url}`, async (t) => {
      await failsUnchanged(t, method, url, body, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    })
  }
})

t.test('an unknown relationship is a 404 for every method', async (t) => {
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
    await failsUnchanged(t, method, '/users/1/relationships/friends', method === 'GET' ? undefined : { data: [] }, {
      status: 404, code: 'FJA_ROUTE_NOT_FOUND', detail: /'friends'/,
    })
  }
})

t.test('cannot PUT a relationship: 405 with Allow', async (t) => {
  for (const url of ['/users/1/relationships/group', '/users/1/relationships/computers']) {
    const response = await failsUnchanged(t, 'PUT', url, { data: [] }, { status: 405, code: 'FJA_METHOD_NOT_ALLOWED' })
    t.equal(response.headers.allow, 'GET, PATCH, POST, DELETE, HEAD', url)
  }
})

t.test('a link the database refuses as a duplicate (parent, child) pair is a 409, never a 5xx; nothing changed', async (t) => {
  // Association 3 is (p2, c1); moving it to p1 would make a second (p1, c1).
  for (const method of ['PATCH', 'POST'] as const) {
    await t.test(method, async (t) => {
      const before = await api.snapshot()
      const body = { data: identifiers('parent-to-child-association', method === 'PATCH' ? ['1', '2', '3'] : ['3']) }
      const response = await api.request(method, '/parents/1/relationships/children', { body })
      t.equal(response.status, 409, 'status')
      t.match(response.body?.errors, [{ status: '409', code: 'FJA_UNIQUE_VIOLATION', title: ERROR_CODES.FJA_UNIQUE_VIOLATION.title }])
      t.equal(response.body?.errors?.length, 1)
      t.same(await api.snapshot(), before, 'the database is unchanged')
    })
  }
})

// ---------------------------------------------------------------------------------------------------------------
// Concurrency: writes of one owner's relationship are serialized by a lock of the owner's row

t.test('concurrent replacements of one owner\'s to-many end as one of the sets sent, never a mix', async (t) => {
  await api.db.insertInto('children').values([{ name: 'c4' }]).execute()
  const kidsOf = async (parent: number): Promise<string[]> => (await api.db.selectFrom('parent_to_child_associations').select('child_id')
    .where('parent_id', '=', parent).orderBy('child_id').execute()).map((row) => String(row.child_id))
  const usersOf = async (group: number): Promise<string[]> => (await api.db.selectFrom('users').select('id')
    .where('group_id', '=', group).orderBy('id').execute()).map((row) => String(row.id))
  const cases: Array<[string, string, readonly string[][], () => Promise<string[]>]> = [
    ['a many-to-many', '/parents/2/relationships/kids', [['1', '2'], ['3', '4'], ['2', '4'], []], () => kidsOf(2)],
    ['a to-many by foreign key', '/groups/2/relationships/users', [['1', '2'], ['3'], ['2', '3'], []], () => usersOf(2)],
  ]
  for (const [label, url, sets, stored] of cases) {
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(sets.map((ids) => api.request('PATCH', url, { body: { data: identifiers(url.includes('kids') ? 'child' : 'user', ids) } })))
      t.same(answers.map((answer) => answer.status), sets.map(() => 200), `${label}, round ${round}: every replacement succeeds`)
      const final = await stored()
      t.ok(sets.some((set) => JSON.stringify(set) === JSON.stringify(final)), `${label}, round ${round}: the stored set ${JSON.stringify(final)} is one of those sent`)
    }
  }
})

t.test('concurrent additions of the same members all succeed and link each once; concurrent replacements of a unique to-one too', async (t) => {
  const adds = await Promise.all(Array.from({ length: 6 }, () => api.request('POST', '/parents/1/relationships/kids', { body: { data: identifiers('child', ['3', '1']) } })))
  t.same(adds.map((answer) => answer.status), Array.from({ length: 6 }, () => 200), 'adding members already linked (by a concurrent request) is no conflict')
  const links = await api.db.selectFrom('parent_to_child_associations').select('child_id').where('parent_id', '=', 1).orderBy('child_id').execute()
  t.same(links.map((row) => row.child_id), [1, 2, 3], 'each member linked once')
  // workplaces.user_id is unique: two replacements of one user's workplace must not both link one
  for (let round = 0; round < 6; round++) {
    const answers = await Promise.all(['1', '2'].map((id) => api.request('PATCH', '/users/3/relationships/workplace', { body: { data: { type: 'workplace', id } } })))
    t.same(answers.map((answer) => answer.status), [200, 200], `round ${round}: both succeed, one after the other`)
    const linked = await api.db.selectFrom('workplaces').select('id').where('user_id', '=', 3).execute()
    t.equal(linked.length, 1, `round ${round}: the user has one workplace`)
  }
})
