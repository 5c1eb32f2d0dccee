import t from 'tap'
import { startTestApp } from '../helpers/test-app.js'

const api = await startTestApp(t.teardown)

async function seed (): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values({ name: 'engineers' }).execute()
  // One row at a time: each takes the defaults of the columns it leaves out (SQLite has no DEFAULT in a multi-row insert).
  for (const user of [
    { name: 'ada', first_name: 'Ada', last_name: 'Lovelace', age: 36, birth_date: '1815-12-10', group_id: 1, words: ['a', 'b'] },
    { name: 'grace', first_name: 'Grace', last_name: null, age: 85 },
    { name: 'linus' },
  ]) await api.db.insertInto('users').values(user).execute()
  await api.db.insertInto('computers').values([
    { serial: 'A1', name: 'analytical', owner_id: 1 },
    { serial: 'B2', name: 'harvard', owner_id: 2 },
    { serial: 'B3', name: 'univac', owner_id: 2 },
    { serial: 'C4', name: 'spare', owner_id: null },
  ]).execute()
  await api.db.insertInto('user_bios').values({ birth_city: 'London', favourite_movies: 'none', user_id: 1 }).execute()
}

t.before(seed)

t.test('GET a collection: data, links, meta.count, jsonapi, default order by id', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/users')
  t.equal(response.status, 200)
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(response.body.data.map((user: { id: string }) => user.id), ['1', '2', '3'])
  t.same(response.body.meta, { count: 3 })
  t.same(response.body.jsonapi, { version: '1.0' })
  t.same(response.body.links, { self: '/users', first: '/users', last: '/users' })
  t.equal(api.counter.count, 2, 'a page and a count')
  const ada = response.body.data[0]
  t.same(ada.attributes, {
    name: 'ada',
    first_name: 'Ada',
    last_name: 'Lovelace',
    display_name: 'Ada Lovelace',
    email: null,
    age: 36,
    status: 'active',
    birth_date: '1815-12-10',
    gender: null,
    words: ['a', 'b'],
    date_create: ada.attributes.date_create,
  })
  t.match(ada.attributes.date_create, /^\d{4}-\d{2}-\d{2}$/)
  t.same(ada.links, { self: '/users/1' })
  t.same(ada.relationships.computers, { links: { self: '/users/1/relationships/computers', related: '/users/1/computers' } }, 'no linkage unless included')
  t.same(Object.keys(ada.relationships), ['computers', 'group', 'bio', 'posts', 'workplace', 'notes'])
})

t.test('display_name follows the set names', async (t) => {
  const response = await api.request('GET', '/users')
  t.same(response.body.data.map((user: { attributes: { display_name: string } }) => user.attributes.display_name), ['Ada Lovelace', 'Grace', 'linus'])
})

t.test('GET one resource', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/computers/2')
  t.equal(response.status, 200)
  t.same(response.body, {
    data: {
      type: 'computer',
      id: '2',
      attributes: { serial: 'B2', name: 'harvard' },
      links: { self: '/computers/2' },
      relationships: {
        owner: { links: { self: '/computers/2/relationships/owner', related: '/computers/2/owner' } },
        user: { links: { self: '/computers/2/relationships/user', related: '/computers/2/user' } },
      },
    },
    links: { self: '/computers/2' },
    jsonapi: { version: '1.0' },
  })
  t.equal(api.counter.count, 1, 'one statement')
})

t.test('include direct relationships: linkage and included, one query per path', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/users?include=computers,bio,group')
  t.equal(response.status, 200)
  t.equal(api.counter.count, 2 + 3, 'page, count, one per include path')
  const [ada, grace, linus] = response.body.data
  t.same(ada.relationships.computers.data, [{ type: 'computer', id: '1' }])
  t.same(ada.relationships.bio.data, { type: 'user_bio', id: '1' })
  t.same(ada.relationships.group.data, { type: 'group', id: '1' })
  t.same(grace.relationships.computers.data, [{ type: 'computer', id: '2' }, { type: 'computer', id: '3' }])
  t.same(grace.relationships.bio.data, null)
  t.same(linus.relationships.computers.data, [])
  t.same(linus.relationships.group.data, null)
  t.notOk('data' in ada.relationships.posts, 'relationships not included carry no linkage')
  const keys = response.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`).sort()
  t.same(keys, ['computer:1', 'computer:2', 'computer:3', 'group:1', 'user_bio:1'])
})

t.test('include on a single resource and a to-one foreign key', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/computers/3?include=owner')
  t.equal(api.counter.count, 2)
  t.same(response.body.data.relationships.owner.data, { type: 'user', id: '2' })
  t.equal(response.body.included.length, 1)
  t.equal(response.body.included[0].attributes.name, 'grace')
  const spare = await api.request('GET', '/computers/4?include=owner')
  t.same(spare.body.data.relationships.owner.data, null)
  t.notOk('included' in spare.body)
})

t.test('nested include never repeats a primary resource in included', async (t) => {
  const response = await api.request('GET', '/users/2?include=computers.owner')
  t.same(response.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`), ['computer:2', 'computer:3'])
  t.same(response.body.included[0].relationships.owner.data, { type: 'user', id: '2' })
})

t.test('pagination: page[size], page[number] and links', async (t) => {
  const response = await api.request('GET', '/computers?page[size]=2&page[number]=2')
  t.same(response.body.data.map((item: { id: string }) => item.id), ['3', '4'])
  t.same(response.body.meta, { count: 4 })
  t.same(response.body.links, {
    self: '/computers?page%5Bsize%5D=2&page%5Bnumber%5D=2',
    first: '/computers?page%5Bsize%5D=2',
    prev: '/computers?page%5Bsize%5D=2',
    last: '/computers?page%5Bsize%5D=2&page%5Bnumber%5D=2',
  })
  const first = await api.request('GET', '/computers?page[size]=3')
  t.equal(first.body.links.next, '/computers?page%5Bsize%5D=3&page%5Bnumber%5D=2')
  t.notOk('prev' in first.body.links)
  const unpaged = await api.request('GET', '/computers?page[size]=0')
  t.equal(unpaged.body.data.length, 4)
})

t.test('sort by attributes, id as tie-break', async (t) => {
  const response = await api.request('GET', '/computers?sort=-serial')
  t.same(response.body.data.map((item: { attributes: { serial: string } }) => item.attributes.serial), ['C4', 'B3', 'B2', 'A1'])
})

t.test('sparse fieldsets select only what is asked', async (t) => {
  api.counter.reset()
  const response = await api.request('GET', '/users/1?fields[user]=display_name,computers&include=computers&fields[computer]=serial')
  t.same(response.body.data.attributes, { display_name: 'Ada Lovelace' })
  t.same(Object.keys(response.body.data.relationships), ['computers'])
  t.same(response.body.included[0].attributes, { serial: 'A1' })
  t.notOk('relationships' in response.body.included[0], 'a fieldset without relationships renders none')
  t.notMatch(api.counter.statements[0], /"age"/, 'unrequested columns are not selected')
})

t.test('cannot fetch what does not exist', async (t) => {
  for (const url of ['/users/99', '/users/abc', '/users/1.5', '/users/-1', '/users/99999999999', '/photos/not-a-uuid', '/photos/00000000-0000-0000-0000-000000000000']) {
    const response = await api.request('GET', url)
    t.equal(response.status, 404, url)
    t.equal(response.body.errors[0].code, 'FJA_RESOURCE_NOT_FOUND', url)
    t.equal(response.body.errors[0].status, '404')
  }
})

t.test('cannot use unknown query parameters or bad values', async (t) => {
  const cases: Array<[string, string]> = [
    ['/users?include=nothing', 'include'],
    ['/users?include=computers.nothing', 'include'],
    ['/users?include=computers.owner.computers.owner', 'include'],
    ['/users?fields[nothing]=name', 'fields[nothing]'],
    ['/users?fields[user]=nothing', 'fields[user]'],
    ['/users?sort=nothing', 'sort'],
    ['/users?sort=count(group)', 'sort'],
    ['/users?page[size]=-1', 'page[size]'],
    ['/users?page[size]=1001', 'page[size]'],
    ['/users?page[size]=abc', 'page[size]'],
    ['/users?page[number]=0', 'page[number]'],
    ['/users?page[offset]=1', 'page[offset]'],
    ['/users?include=computers&include=bio', 'include'],
    ['/users?unknown=1', 'unknown'],
  ]
  for (const [url, parameter] of cases) {
    const response = await api.request('GET', url)
    t.equal(response.status, 400, url)
    t.same(response.body.errors[0].source, { parameter }, url)
  }
  const passThrough = await api.request('GET', '/users?camelCase=1&with_underscore=2')
  t.equal(passThrough.status, 200, 'names that are not all-lowercase letters are the application\'s')
})
