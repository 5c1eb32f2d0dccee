import t from 'tap'
import { jsonApi, type EngineName, type JsonApiOptions } from '../../lib/index.js'
import { resources, computer, user } from '../../examples/app/resources.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { testEngine } from '../helpers/engine.js'

const database = await openTestDatabase()
t.teardown(database.close)
const db = database.db

await db.insertInto('groups').values([{ name: 'g1' }, { name: 'g2' }]).execute()
await db.insertInto('users').values([
  { name: 'u1', age: 30, group_id: 2 },
  { name: 'u2', age: 20, group_id: 1 },
  { name: 'u3', age: 30, group_id: null },
]).execute()
await db.insertInto('computers').values(Array.from({ length: 7 }, (_, index) => ({ serial: `S${index + 1}`, owner_id: (index % 3) + 1 }))).execute()

/** An app over the example tables with other options or declarations. */
async function appWith (options: Partial<JsonApiOptions>, declarations: JsonApiOptions['resources'] = resources) {
  const app = await documentedFastify()
  await app.register(jsonApi, { db, resources: declarations, ...options })
  await app.ready()
  t.teardown(() => app.close())
  return (url: string) => injectJsonApi(app, 'GET', url)
}

const get = await appWith({})
const idsOf = (body: { data: Array<{ id: string }> }) => body.data.map((item) => item.id)

t.test('sort: several keys, descending, id tie-break, to-one paths', async (t) => {
  t.same(idsOf((await get('/users?sort=-age')).body), ['1', '3', '2'], 'ties broken by id')
  t.same(idsOf((await get('/users?sort=-age,-id')).body), ['3', '1', '2'])
  t.same(idsOf((await get('/users?sort=-id')).body), ['3', '2', '1'])
  t.same(idsOf((await get('/users?sort=group.name,name')).body), ['2', '1', '3'], 'rows without the related row sort last')
  t.same(idsOf((await get('/computers?sort=-owner.age,serial&page[size]=3')).body), ['1', '3', '4'])
  t.same(idsOf((await get('/computers?sort=owner.group.name,-serial&page[size]=3')).body), ['5', '2', '7'])
})

t.test('pages never overlap and cover every row', async (t) => {
  const seen: string[] = []
  let url: string | undefined = '/computers?sort=-owner.age&page[size]=2'
  while (url !== undefined) {
    const { body }: { body: { data: Array<{ id: string }>; links: { next?: string } } } = await get(url)
    seen.push(...idsOf(body))
    url = body.links.next
  }
  t.same([...seen].sort(), ['1', '2', '3', '4', '5', '6', '7'])
})

t.test('page defaults, maximum, unpaged', async (t) => {
  const first = await get('/computers?page[size]=3&page[number]=3')
  t.same(idsOf(first.body), ['7'])
  t.same(first.body.links, {
    self: '/computers?page%5Bsize%5D=3&page%5Bnumber%5D=3',
    first: '/computers?page%5Bsize%5D=3',
    prev: '/computers?page%5Bsize%5D=3&page%5Bnumber%5D=2',
    last: '/computers?page%5Bsize%5D=3&page%5Bnumber%5D=3',
  })
  const beyond = await get('/computers?page[size]=3&page[number]=9')
  t.same(beyond.body.data, [], 'a page beyond the last is empty')
  t.equal(beyond.body.links.prev, '/computers?page%5Bsize%5D=3&page%5Bnumber%5D=3', 'prev of a page beyond the end is the last page')
  t.equal((await get('/computers?page[size]=1000')).status, 200, 'the maximum itself is allowed')
  const tooLarge = await get('/computers?page[size]=1001')
  t.equal(tooLarge.status, 400)
  t.same(tooLarge.body.errors[0].source, { parameter: 'page[size]' })
  const unpaged = await get('/computers?page[size]=0')
  t.equal(unpaged.body.data.length, 7)
  t.same(unpaged.body.links, { self: '/computers?page%5Bsize%5D=0' }, 'no pagination links without pages')
})

t.test('pagination options: global and per resource; unpaged forbidden or capped', async (t) => {
  const small = await appWith({ pagination: { defaultSize: 2, maxSize: 4, unpaged: 'forbidden' } })
  t.equal((await small('/computers')).body.data.length, 2)
  t.equal((await small('/computers?page[size]=5')).status, 400)
  const forbidden = await small('/computers?page[size]=0')
  t.equal(forbidden.status, 400)
  t.same(forbidden.body.errors[0].source, { parameter: 'page[size]' })
  const capped = await appWith({ pagination: { maxSize: 3, defaultSize: 2, unpaged: 'capped' } })
  t.equal((await capped('/computers?page[size]=0')).body.data.length, 3)
  const perResource = await appWith({}, resources.map((item) => item === computer ? { ...computer, pagination: { defaultSize: 4, maxSize: 5 } } : item))
  t.equal((await perResource('/computers')).body.data.length, 4)
  t.equal((await perResource('/computers?page[size]=6')).status, 400)
  t.equal((await perResource('/users?page[size]=6')).status, 200, 'other resources keep the plugin defaults')
})

t.test('count: false drops meta.count and last, and still knows the next page', async (t) => {
  const uncounted = await appWith({}, resources.map((item) => item === computer ? { ...computer, count: false } : item))
  database.counter.reset()
  const page = await uncounted('/computers?page[size]=3&page[number]=2')
  t.equal(database.counter.count, 1, 'no count statement')
  t.same(idsOf(page.body), ['4', '5', '6'])
  t.notOk('meta' in page.body)
  t.same(Object.keys(page.body.links).sort(), ['first', 'next', 'prev', 'self'])
  const last = await uncounted('/computers?page[size]=3&page[number]=3')
  t.same(idsOf(last.body), ['7'])
  t.notOk('next' in last.body.links, 'no next on the last page')
  const exact = await uncounted('/computers?page[size]=7')
  t.notOk('next' in exact.body.links, 'a full last page has no next either')
})

t.test('fields: include interplay and relationship rendering rules', async (t) => {
  const noRelationship = await get('/users/1?include=computers&fields[user]=name')
  t.same(noRelationship.body.data.attributes, { name: 'u1' })
  t.notOk('relationships' in noRelationship.body.data, 'a field list naming no relationship renders none')
  t.notOk('included' in noRelationship.body, 'an include whose relationship is not in the field list does not take effect')
  const withRelationship = await get('/users/1?include=computers&fields[user]=computers')
  t.same(withRelationship.body.data.attributes, {})
  t.same(withRelationship.body.data.relationships.computers.data, [{ type: 'computer', id: '1' }, { type: 'computer', id: '4' }, { type: 'computer', id: '7' }])
  t.equal(withRelationship.body.included.length, 3)
  const nested = await get('/users/1?include=computers.owner&fields[computer]=serial')
  t.same(nested.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`), ['computer:1', 'computer:4', 'computer:7'], 'a nested step whose relationship is fielded away stops there')
  const onlyIncluded = await get('/computers/1?include=owner&fields[user]=age')
  t.same(onlyIncluded.body.included[0].attributes, { age: 30 }, 'a type named only for included objects')
  t.ok('owner' in onlyIncluded.body.data.relationships, 'primary data keeps every field')
  const empty = await get('/users/1?fields[user]=')
  t.same(empty.body.data.attributes, {})
  t.notOk('relationships' in empty.body.data)
  database.counter.reset()
  await get('/users/1?fields[user]=age')
  t.notMatch(database.counter.statements[0], /"first_name"/, 'derived attribute columns are only selected when asked for')
})

t.test('include: every step, de-duplication, linkage complete, depth, one query per path', async (t) => {
  database.counter.reset()
  const response = await get('/computers?include=owner.group,owner.computers&page[size]=2')
  t.equal(database.counter.count, 2 + 3, 'page, count, owner, owner.group, owner.computers')
  const included = response.body.included.map((item: { type: string; id: string }) => `${item.type}:${item.id}`)
  t.same([...included].sort(), ['computer:4', 'computer:5', 'computer:7', 'group:1', 'group:2', 'user:1', 'user:2'].sort())
  t.equal(new Set(included).size, included.length, 'each resource once')
  t.notOk(included.includes('computer:1') || included.includes('computer:2'), 'primary resources are not repeated')
  const owner = response.body.included.find((item: { type: string; id: string }) => item.type === 'user' && item.id === '1')
  t.same(owner.relationships.computers.data.map((item: { id: string }) => item.id), ['1', '4', '7'], 'linkage is complete, primary resources included')
  t.same(owner.relationships.group.data, { type: 'group', id: '2' })
  t.equal((await get('/users?include=computers.owner.group')).status, 200, 'depth 3')
  const tooDeep = await get('/users?include=computers.owner.group.users')
  t.equal(tooDeep.status, 400)
  t.same(tooDeep.body.errors[0].source, { parameter: 'include' })
  const deeper = await appWith({ maxIncludeDepth: 4 })
  t.equal((await deeper('/users?include=computers.owner.group.users')).status, 200, 'maxIncludeDepth is configurable')
})

t.test('an include path costs one query whatever the page size', async (t) => {
  for (const size of [1, 3]) {
    database.counter.reset()
    await get(`/computers?include=owner&page[size]=${size}`)
    t.equal(database.counter.count, 3, `page[size]=${size}`)
  }
  // Every row is read in one read-only snapshot: count, declare, fetch (one batch), the include. MariaDB and SQLite
  // have no cursor to declare: they read window by window (one here), MariaDB in a REPEATABLE READ transaction set in
  // a statement of its own (docs/databases.md).
  database.counter.reset()
  await get('/computers?include=owner&page[size]=0')
  const streamed: Record<EngineName, string[]> = {
    postgres: ['start', 'select', 'declare', 'fetch', 'select', 'commit'],
    mysql: ['set', 'begin', 'select', 'select', 'select', 'commit'],
    sqlite: ['begin', 'select', 'select', 'select', 'commit'],
  }
  t.same(database.counter.statements.map((statement) => statement.split(' ')[0].toLowerCase()), streamed[testEngine()], 'page[size]=0')
})

t.test('cannot sort, page or select fields wrongly', async (t) => {
  const cases: Array<[string, string]> = [
    ['/users?sort=', 'sort'],
    ['/users?sort=name,', 'sort'],
    ['/users?sort=name,-name', 'sort'],
    ['/users?sort=computers.serial', 'sort'],
    ['/users?sort=group.nothing', 'sort'],
    ['/users?sort=nothing.name', 'sort'],
    ['/users?sort=words%3Bdrop', 'sort'],
    ['/users?page[number]=-1', 'page[number]'],
    ['/users?page[number]=1.5', 'page[number]'],
    ['/users?page[size]=1e3', 'page[size]'],
    ['/users?fields[user]=name,nothing', 'fields[user]'],
    ['/users?fields[users]=name', 'fields[users]'],
    ['/users?include=computers,', 'include'],
    ['/users?include=computers..owner', 'include'],
  ]
  for (const [url, parameter] of cases) {
    const response = await get(url)
    t.equal(response.status, 400, url)
    t.same(response.body.errors[0].source, { parameter }, url)
  }
  // the detail names a key once, and its path only when it has one
  const details: Array<[string, string]> = [
    ['/users?sort=nope', "'nope' is not an attribute of 'user'"],
    ['/users?sort=-nope', "'nope' is not an attribute of 'user'"],
    ['/users?sort=group.nope', "'group.nope': 'nope' is not an attribute of 'group'"],
    ['/users?sort=count(bio)', "'count(bio)': 'bio' is a to-one relationship of 'user': count() counts a to-many relationship"],
    ['/computers?sort=count(owner)', "'count(owner)': 'owner' is a to-one relationship of 'computer': count() counts a to-many relationship"],
  ]
  for (const [url, detail] of details) t.equal((await get(url)).body.errors[0].detail, detail, url)
})

t.test('an empty include includes nothing', async (t) => {
  const response = await get('/users/1?include=')
  t.equal(response.status, 200)
  t.notOk('included' in response.body)
  t.notOk('data' in response.body.data.relationships.computers)
  t.equal(user.type, 'user')
})
