/**
 * Included to-many collections are paged per owner (issue 33; the section of that name in the example app's guide):
 * every to-many step of an include path reads at most a page of each owner's related resources (default 10, by id),
 * in one statement per step whatever the number of owners; each owner's relationship object tells `meta.count` (what
 * the request may see) and links `next` to the relationship route's page after it, whose pages walk the rest once;
 * `page[<path>][size]` sets the size per path; everything else is a 400 naming its parameter.
 *
 * Every response is checked against the JSON:API schema and the app's OpenAPI document (`api.request`).
 */
import t, { type Test } from 'tap'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { assertError } from '../helpers/assert-errors.js'

const api = await startTestApp(t.teardown)

/** Computers of each user: user 1 has 23, user 2 has 2, user 3 none. */
const COMPUTERS = { 1: 23, 2: 2, 3: 0 } as const

async function seed (): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values([{ name: 'everyone' }]).execute()
  for (const name of ['u1', 'u2', 'u3']) await api.db.insertInto('users').values({ name, group_id: 1 }).execute()
  const computers = Object.entries(COMPUTERS).flatMap(([owner, count]) =>
    Array.from({ length: count }, (_, index) => ({ serial: `u${owner}-${index + 1}`, owner_id: Number(owner) })))
  await api.db.insertInto('computers').values(computers).execute()
  await api.db.insertInto('notes').values([1, 1, 1, 2, 2].map((owner, index) => ({ text: `note ${index + 1}`, owner_id: owner }))).execute()
  await api.db.insertInto('parents').values([{ name: 'p1' }, { name: 'p2' }]).execute()
  await api.db.insertInto('children').values([1, 2, 3, 4].map((index) => ({ name: `c${index}` }))).execute()
  await api.db.insertInto('parent_to_child_associations').values([
    { parent_id: 1, child_id: 4, extra_data: null },
    { parent_id: 1, child_id: 2, extra_data: null },
    { parent_id: 1, child_id: 1, extra_data: null },
    { parent_id: 1, child_id: 3, extra_data: null },
    { parent_id: 2, child_id: 1, extra_data: null },
  ]).execute()
}

await seed()

/** The ids of computers of user 1, in id order (2 and 3 follow). */
const firstIds = (count: number, from = 1): string[] => Array.from({ length: count }, (_, index) => String(from + index))

async function get (t: Test, url: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  const response = await api.request('GET', url, { headers })
  t.equal(response.status, 200, `GET ${url}`)
  return response
}

function relationshipOf (document: any, type: string, id: string, name: string): any {
  const items = [...(Array.isArray(document.data) ? document.data : [document.data]), ...(document.included ?? [])]
  return items.find((item: any) => item.type === type && item.id === id)?.relationships?.[name]
}

function ids (linkage: ReadonlyArray<{ id: string }>): string[] {
  return linkage.map((item) => item.id)
}

/** The path and query of an absolute or relative link, as `api.request` takes it. */
function target (link: string): string {
  return link.replace(/^https?:\/\/[^/]+/, '')
}

/** Follows `links.next` from a relationship object through the relationship route's pages: every id seen, in order. */
async function walk (t: Test, next: string | undefined): Promise<{ ids: string[]; pages: number }> {
  const seen: string[] = []
  let pages = 0
  for (let link = next; link !== undefined; pages++) {
    if (pages > 50) throw new Error('the pages do not end')
    const response = await get(t, target(link))
    seen.push(...ids(response.body.data))
    link = response.body.links.next
  }
  return { ids: seen, pages }
}

t.test('an included to-many holds the first 10 of each owner by id, with meta.count and a next link', async (t) => {
  const response = await get(t, '/users?include=computers')
  const body = response.body
  const one = relationshipOf(body, 'user', '1', 'computers')
  t.same(ids(one.data), firstIds(10))
  t.same(one.meta, { count: 23 })
  t.match(one.links.next, /^\/users\/1\/relationships\/computers\?page%5Bsize%5D=10&page%5Bafter%5D=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
  t.same(Object.keys(one.links), ['self', 'related', 'next'])
  const two = relationshipOf(body, 'user', '2', 'computers')
  t.same(ids(two.data), ['24', '25'])
  t.same(two.meta, { count: 2 })
  t.same(Object.keys(two.links), ['self', 'related'], 'no next link when the page holds them all')
  const three = relationshipOf(body, 'user', '3', 'computers')
  t.same(three.data, [])
  t.same(three.meta, { count: 0 })
  t.same(body.included.map((item: any) => item.id).sort((a: string, b: string) => Number(a) - Number(b)), [...firstIds(10), '24', '25'],
    'included holds exactly the resources of the pages')
  t.same(body.meta, { count: 3 }, 'the primary count is unchanged')
})

t.test('following next walks the rest exactly once, in id order, in pages of the same size', async (t) => {
  for (const size of [1, 3, 10, 22]) {
    const response = await get(t, `/users?include=computers&page[computers][size]=${size}`)
    const one = relationshipOf(response.body, 'user', '1', 'computers')
    t.same(ids(one.data), firstIds(size), `page[computers][size]=${size}`)
    const rest = await walk(t, one.links.next)
    t.same(rest.ids, firstIds(23 - size, size + 1), `the rest after ${size}`)
    t.equal(rest.pages, Math.ceil((23 - size) / size), 'pages of the same size')
  }
  const all = await get(t, '/users?include=computers&page[computers][size]=23')
  const one = relationshipOf(all.body, 'user', '1', 'computers')
  t.same(ids(one.data), firstIds(23), 'a page as large as the relationship: the old behaviour for one request')
  t.same(one.meta, { count: 23 })
  t.notOk(one.links.next)
})

t.test('a page per owner is one statement per path step, for 1, 10 or 500 owners', async (t) => {
  await api.reset()
  const owners = 500
  await api.db.insertInto('users').values(Array.from({ length: owners }, (_, index) => ({ name: `owner ${index + 1}` }))).execute()
  // Owner n has n % 13 computers: 0 to 12, so pages are full, partial and empty.
  const computers = Array.from({ length: owners }, (_, index) => Array.from({ length: (index + 1) % 13 }, (_, at) => ({ serial: `o${index + 1}-${at}`, owner_id: index + 1 }))).flat()
  for (let start = 0; start < computers.length; start += 500) await api.db.insertInto('computers').values(computers.slice(start, start + 500)).execute()
  t.teardown(seed)
  for (const size of [1, 10, 500]) {
    api.counter.reset()
    const response = await get(t, `/users?page[size]=${size}&include=computers.owner.computers&page[computers][size]=5&page[computers.owner.computers][size]=5`)
    t.equal(api.counter.count, 2 + 3, `${size} owners: the page, its count, one statement per step`)
    t.equal(response.body.data.length, size)
    for (const user of response.body.data) {
      const expected = Number(user.id) % 13
      const relationship = user.relationships.computers
      t.equal(relationship.meta.count, expected)
      t.equal(relationship.data.length, Math.min(expected, 5))
      t.equal(relationship.links.next !== undefined, expected > 5)
    }
  }
  api.counter.reset()
  await get(t, '/users/7?include=computers')
  t.equal(api.counter.count, 2, 'a detail: the row and one statement for the include')
})

t.test('page[<path>][size] sets the size of one path, written as in include', async (t) => {
  const response = await get(t, '/users?include=computers,posts,group.users&page[group.users][size]=2&page[computers][size]=4')
  t.same(ids(relationshipOf(response.body, 'user', '1', 'computers').data), firstIds(4))
  const users = relationshipOf(response.body, 'group', '1', 'users')
  t.same(ids(users.data), ['1', '2'])
  t.same(users.meta, { count: 3 })
  t.match(users.links.next, /^\/groups\/1\/relationships\/users\?page%5Bsize%5D=2&page%5Bafter%5D=/)
  const rest = await walk(t, users.links.next)
  t.same(rest.ids, ['3'])
  t.same(relationshipOf(response.body, 'user', '1', 'posts'), { links: { self: '/users/1/relationships/posts', related: '/users/1/posts' }, data: [], meta: { count: 0 } })
})

t.test('a resource reached by two paths through the same relationship shows the larger of its pages', async (t) => {
  // The owners of the users' computers are the users themselves: one resource object, one relationship object.
  for (const [sizes, shown] of [['&page[computers.owner.computers][size]=2', 10], ['&page[computers][size]=3', 10], ['&page[computers][size]=12&page[computers.owner.computers][size]=4', 12]] as const) {
    const response = await get(t, `/users?include=computers.owner.computers${sizes}`)
    const one = relationshipOf(response.body, 'user', '1', 'computers')
    t.same(ids(one.data), firstIds(shown), sizes)
    t.same(one.meta, { count: 23 })
    t.match(one.links.next, new RegExp(`page%5Bsize%5D=${shown}&`), 'its next link pages by the size shown')
    const included = new Set(response.body.included.map((item: any) => `${item.type}:${item.id}`))
    t.ok(ids(one.data).every((id) => included.has(`computer:${id}`)), 'each resource of the page is included')
  }
})

t.test('a to-one step is not paged; the to-many steps after it are', async (t) => {
  const response = await get(t, '/computers/1?include=owner.computers&page[owner.computers][size]=2')
  const owner = response.body.data.relationships.owner
  t.same(owner.data, { type: 'user', id: '1' })
  t.notOk(owner.meta, 'a to-one has no count')
  t.same(Object.keys(owner.links), ['self', 'related'])
  const computers = relationshipOf(response.body, 'user', '1', 'computers')
  t.same(ids(computers.data), ['1', '2'])
  t.same(computers.meta, { count: 23 })
})

t.test('many-to-many: the page partitions on the join table, in the related id order', async (t) => {
  const response = await get(t, '/parents?include=kids&page[kids][size]=3')
  const first = relationshipOf(response.body, 'parent', '1', 'kids')
  t.same(ids(first.data), ['1', '2', '3'])
  t.same(first.meta, { count: 4 })
  t.same((await walk(t, first.links.next)).ids, ['4'])
  const second = relationshipOf(response.body, 'parent', '2', 'kids')
  t.same(ids(second.data), ['1'])
  t.same(second.meta, { count: 1 })
  t.notOk(second.links.next)
})

t.test('scopes apply inside a page and its count: no count tells what the request may not see', async (t) => {
  const anonymous = await get(t, '/users?include=notes')
  for (const id of ['1', '2', '3']) {
    t.same(relationshipOf(anonymous.body, 'user', id, 'notes').meta, { count: 0 }, `anonymous: user ${id} has no visible notes`)
  }
  const own = await get(t, '/users?include=notes&page[notes][size]=2', { 'x-user-id': '1' })
  const mine = relationshipOf(own.body, 'user', '1', 'notes')
  t.same(ids(mine.data), ['1', '2'])
  t.same(mine.meta, { count: 3 })
  t.same((await walk(t, mine.links.next)).ids, [], 'the walk needs the same user')
  const walked = await api.request('GET', target(mine.links.next), { headers: { 'x-user-id': '1' } })
  t.same(ids(walked.body.data), ['3'], 'the rest, for the same user')
  t.same(relationshipOf(own.body, 'user', '2', 'notes').meta, { count: 0 }, "another user's notes are not counted")
})

t.test('the related route, the relationship route with include, and cursor pages of primary data are paged alike', async (t) => {
  const related = await get(t, '/computers/1/owner?include=computers&page[computers][size]=2')
  t.same(ids(related.body.data.relationships.computers.data), ['1', '2'])
  t.same(related.body.data.relationships.computers.meta, { count: 23 })

  const linkage = await get(t, '/groups/1/relationships/users?include=users.computers&page[users.computers][size]=2')
  t.same(ids(linkage.body.data), ['1', '2', '3'])
  const computers = relationshipOf({ data: [], included: linkage.body.included }, 'user', '1', 'computers')
  t.same(ids(computers.data), ['1', '2'])
  t.same(computers.meta, { count: 23 })

  const profile = 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"'
  const cursor = await get(t, '/users?page[size]=1&include=computers&page[computers][size]=3', { accept: profile })
  const one = cursor.body.data[0].relationships.computers
  t.same(ids(one.data), firstIds(3))
  t.same(one.meta, { count: 23 })
  const after = await get(t, target(cursor.body.links.next), { accept: profile })
  t.same(after.body.data[0].relationships.computers.meta, { count: 2 }, 'the next cursor page keeps the size')
  t.same(ids(after.body.data[0].relationships.computers.data), ['24', '25'])
})

t.test('a streamed collection (page[size]=0) pages each batch per owner', async (t) => {
  const response = await get(t, '/users?page[size]=0&include=computers&page[computers][size]=4')
  const one = relationshipOf(response.body, 'user', '1', 'computers')
  t.same(ids(one.data), firstIds(4))
  t.same(one.meta, { count: 23 })
  t.ok(one.links.next)
  t.equal(response.body.included.length, 4 + 2)
})

t.test('the ETag covers the pages: a change beyond the page changes the count, and the tag', async (t) => {
  const before = await get(t, '/users/1?include=computers')
  const tag = before.headers.etag as string
  t.ok(tag)
  const same = await api.request('GET', '/users/1?include=computers', { headers: { 'if-none-match': tag } })
  t.equal(same.status, 304)
  await api.db.insertInto('computers').values({ serial: 'late', owner_id: 1 }).execute()
  t.teardown(seed)
  const after = await api.request('GET', '/users/1?include=computers', { headers: { 'if-none-match': tag } })
  t.equal(after.status, 200, 'a new computer beyond the page of 10 is a new count')
  t.same(ids(after.body.data.relationships.computers.data), firstIds(10))
  t.same(after.body.data.relationships.computers.meta, { count: 24 })
})

t.test('cannot ask for a page out of range, of a path that is not a to-many step of include, or of anything else', async (t) => {
  const refused: Array<[string, string]> = [
    ['/users?include=computers&page[computers][size]=0', 'page[computers][size]'],
    ['/users?include=computers&page[computers][size]=1001', 'page[computers][size]'],
    ['/users?include=computers&page[computers][size]=-1', 'page[computers][size]'],
    ['/users?include=computers&page[computers][size]=ten', 'page[computers][size]'],
    ['/users?include=computers&page[computers][size]=', 'page[computers][size]'],
    ['/users?include=computers&page[computers][size]=2&page[computers][size]=3', 'page[computers][size]'],
    ['/users?include=computers&page[posts][size]=2', 'page[posts][size]'],
    ['/users?page[computers][size]=2', 'page[computers][size]'],
    ['/users?include=group&page[group][size]=2', 'page[group][size]'],
    ['/users?include=computers.owner&page[computers.owner][size]=2', 'page[computers.owner][size]'],
    ['/users?include=computers&page[nope][size]=2', 'page[nope][size]'],
    ['/users?include=computers&page[computers.nope][size]=2', 'page[computers.nope][size]'],
    ['/users?include=computers&page[computers][number]=2', 'page[computers][number]'],
    ['/users?include=computers&page[][size]=2', 'page[][size]'],
    ['/users/1?include=computers&page[computers][size]=0', 'page[computers][size]'],
    ['/users/1/computers?include=owner.computers&page[computers][size]=2', 'page[computers][size]'],
    ['/users/1/relationships/computers?include=computers&page[computers][size]=2', 'page[computers][size]'],
    ['/users/1/relationships/computers?page[computers.owner.computers][size]=2', 'page[computers.owner.computers][size]'],
    ['/users/1/relationships/computers?include=computers.owner.computers&page[owner.computers][size]=2', 'page[owner.computers][size]'],
    ['/users/1/relationships/computers?include=computers.owner.computers&page[computers.owner.computers][size]=1001', 'page[computers.owner.computers][size]'],
  ]
  for (const [url, parameter] of refused) {
    const response = await api.request('GET', url)
    assertError(t, response, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter })
  }
  // The include limits still hold, whatever the pages.
  const deep = await api.request('GET', '/users?include=computers.owner.computers.owner&page[computers][size]=2')
  assertError(t, deep, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'include' })
})

t.test('the relationship route with include pages the steps after its linkage, named from the owner', async (t) => {
  const response = await get(t, '/users/1/relationships/computers?include=computers.owner.computers&page[computers.owner.computers][size]=3')
  t.same(ids(response.body.data), firstIds(23), 'the linkage: its own page (page[size])')
  const owner = relationshipOf({ data: [], included: response.body.included }, 'user', '1', 'computers')
  t.same(ids(owner.data), firstIds(3))
  t.same(owner.meta, { count: 23 })
})
