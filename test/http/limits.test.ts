import t, { type Test } from 'tap'
import qs from 'qs'
import Fastify from 'fastify'
import { jsonApi, JsonApiOptionsError, type JsonApiOptions } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { exampleContext } from '../../examples/app/context.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError } from '../helpers/assert-errors.js'

// Every limit of a query, at its boundary: exactly at the limit is a 200, one over is a 400 naming the parameter.

const database = await openTestDatabase()
t.teardown(database.close)
const db = database.db

await db.insertInto('groups').values([{ name: 'g1' }, { name: 'g2' }]).execute()
await db.insertInto('users').values([
  { name: 'u1', age: 30, group_id: 2 },
  { name: 'u2', age: 20, group_id: 1 },
  { name: 'u3', age: 40, group_id: null },
]).execute()
await db.insertInto('user_bios').values([{ birth_city: 'Paris', user_id: 1 }, { birth_city: 'Oslo', user_id: 2 }]).execute()
await db.insertInto('computers').values([
  { serial: 'S1', name: 'c1', owner_id: 1 },
  { serial: 'S2', name: 'c2', owner_id: 2 },
  { serial: 'S3', name: 'c3', owner_id: 1 },
]).execute()
await db.insertInto('posts').values({ title: 'p1', user_id: 1 }).execute()
await db.insertInto('workplaces').values({ name: 'w1', user_id: 2 }).execute()

type Get = (url: string) => Promise<TestResponse>

/** An app over the example tables with these options. */
async function appWith (options: Partial<JsonApiOptions> = {}): Promise<Get> {
  const app = await documentedFastify()
  await app.register(jsonApi, { db, resources, context: exampleContext(db), ...options })
  await app.ready()
  t.teardown(() => app.close())
  return (url) => injectJsonApi(app, 'GET', url)
}

const get = await appWith()

/** A 400 `FJA_INVALID_QUERY_PARAMETER` naming `parameter`. */
async function refused (t: Test, url: string, parameter: string, detail?: RegExp, request: Get = get): Promise<void> {
  assertError(t, await request(url), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter, detail })
}

/** A 200. */
async function ok (t: Test, url: string, request: Get = get): Promise<TestResponse> {
  const response = await request(url)
  t.equal(response.status, 200, `${url.slice(0, 120)}: ${response.status === 200 ? '' : response.text.slice(0, 300)}`)
  return response
}

function filterUrl (path: string, filter: unknown, extra = ''): string {
  return `${path}?filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`
}

const comparison = { name: 'id', op: 'ge', val: 1 }
const ids = (response: TestResponse): string[] => response.body.data.map((item: { id: string }) => item.id)

t.test('include: at most 10 paths', async (t) => {
  const ten = ['computers', 'group', 'bio', 'posts', 'workplace', 'notes', 'computers.owner', 'group.users', 'bio.user', 'posts.user']
  const response = await ok(t, `/users?include=${ten.join(',')}`)
  t.ok(response.body.included.length > 0)
  await refused(t, `/users?include=${[...ten, 'workplace.user'].join(',')}`, 'include', /^11 include paths; at most 10 are allowed$/)
  await ok(t, `/users?include=${[...ten, 'computers', 'bio.user'].join(',')}`)
  t.pass('a path given twice counts once')
  await ok(t, `/users/1?include=${ten.join(',')}`)
  await refused(t, `/users/1?include=${[...ten, 'workplace.user'].join(',')}`, 'include')
  const related = ['owner', 'user', 'owner.computers', 'owner.group', 'owner.bio', 'owner.posts', 'owner.workplace', 'owner.notes', 'user.computers', 'user.group']
  await ok(t, `/users/1/computers?include=${related.join(',')}`)
  await refused(t, `/users/1/computers?include=${[...related, 'user.bio'].join(',')}`, 'include', /^11 include paths/)
})

t.test('include: at most 3 relationships in a path', async (t) => {
  await ok(t, '/users?include=computers.owner.group')
  await refused(t, '/users?include=computers.owner.group.users', 'include', /deeper than the maximum include depth of 3/)
})

t.test('sort: at most 10 keys', async (t) => {
  const ten = ['-age', 'name', 'first_name', 'last_name', 'email', 'status', 'birth_date', 'gender', 'date_create', 'id']
  t.same(ids(await ok(t, `/users?sort=${ten.join(',')}`)), ['3', '1', '2'])
  await refused(t, `/users?sort=${[...ten, 'group.name'].join(',')}`, 'sort', /^11 sort keys; at most 10 are allowed$/)
  const related = ['id', 'serial', 'name', 'owner.id', 'owner.name', 'owner.age', 'owner.email', 'owner.status', 'owner.gender', 'owner.group.name']
  await ok(t, `/users/1/computers?sort=${related.join(',')}`)
  await refused(t, `/users/1/computers?sort=${[...related, 'owner.bio.birth_city'].join(',')}`, 'sort', /^11 sort keys/)
})

t.test('sort: at most 3 relationship steps in a key', async (t) => {
  // user → bio → user → bio: to-one all the way.
  t.same(ids(await ok(t, '/users?sort=bio.user.bio.birth_city')), ['2', '1', '3'], 'Oslo, Paris, then the user without a bio')
  await refused(t, '/users?sort=bio.user.bio.user.name', 'sort', /^'bio\.user\.bio\.user\.name' follows 4 relationships; at most 3 are allowed$/)
  await ok(t, '/computers?sort=owner.bio.user.name')
  await refused(t, '/computers?sort=-owner.bio.user.group.name', 'sort')
})

// From a user: computers.owner is two steps back to a user.
const steps = (count: number): string => Array.from({ length: count }, (_, index) => (index % 2 === 0 ? 'computers' : 'owner')).join('.')

t.test('filter: each relationship step of a name is a level of the depth (8)', async (t) => {
  // A top-level comparison is at level 1; seven steps take it to level 8.
  t.same(ids(await ok(t, filterUrl('/users', [{ name: `${steps(7)}.name`, op: 'eq', val: 'c1' }]))), ['1'])
  await refused(t, filterUrl('/users', [{ name: `${steps(8)}.name`, op: 'eq', val: 'u1' }]), 'filter', /^at \[0\]\.name: '.*' is nested deeper than 8 levels \(each relationship step is a level\)$/)
  // Inside a `not` (level 2) six steps are the most.
  await ok(t, filterUrl('/users', [{ not: { name: `${steps(6)}.name`, op: 'eq', val: 'u1' } }]))
  await refused(t, filterUrl('/users', [{ not: { name: `${steps(7)}.name`, op: 'eq', val: 'c1' } }]), 'filter', /^at \[0\]\.not\.name: /)
  // A relationship filter reached through six steps is at level 7; its `val` at level 8.
  await ok(t, filterUrl('/users', [{ name: `${steps(6)}.computers`, op: 'any', val: { name: 'name', op: 'eq', val: 'c1' } }]))
  await refused(t, filterUrl('/users', [{ name: `${steps(7)}.owner`, op: 'has', val: { name: 'name', op: 'eq', val: 'u1' } }]), 'filter', /^at \[0\]\.val: the filter is nested deeper than 8 levels$/)
})

t.test('filter: a simple filter counts its relationship steps too (`_id` is one)', async (t) => {
  t.same(ids(await ok(t, `/users?filter[${steps(7)}.name]=c1`)), ['1'])
  await refused(t, `/users?filter[${steps(8)}.name]=u1`, `filter[${steps(8)}.name]`, /nested deeper than 8 levels/)
  t.same(ids(await ok(t, `/users?filter[${steps(6)}.group_id]=2`)), ['1'])
  await refused(t, `/users?filter[${steps(7)}.owner_id]=1`, `filter[${steps(7)}.owner_id]`, /nested deeper than 8 levels/)
})

t.test('filter: every simple filter is a node (200 in all)', async (t) => {
  const json = Array.from({ length: 199 }, () => comparison)
  t.same(ids(await ok(t, filterUrl('/users', json, '&filter[name]=u1'))), ['1'], '199 filter objects and one simple filter')
  await refused(t, filterUrl('/users', json, '&filter[name]=u1&filter[age]=30'), 'filter[age]', /^the filter has more than 200 nodes$/)
  await refused(t, `/users?filter[name]=u1&filter[age]=30&filter=${encodeURIComponent(JSON.stringify(json))}`, 'filter', /^at \[198\]: the filter has more than 200 nodes$/, get)
})

t.test('filter: every element of an array value, and every array inside an array, is a node', async (t) => {
  const values = (count: number) => Array.from({ length: count }, (_, index) => index + 1)
  t.same(ids(await ok(t, filterUrl('/users', [{ name: 'id', op: 'in_', val: values(199) }]))), ['1', '2', '3'], 'one filter object and 199 values')
  await refused(t, filterUrl('/users', [{ name: 'id', op: 'in_', val: values(200) }]), 'filter', /^at \[0\]\.val\[199\]: the filter has more than 200 nodes$/)
  await ok(t, filterUrl('/users', [{ name: 'words', op: 'in', val: Array.from({ length: 199 }, (_, index) => `w${index}`) }]))
  await refused(t, filterUrl('/users', [{ name: 'words', op: 'in', val: Array.from({ length: 200 }, (_, index) => `w${index}`) }]), 'filter')
  // `and` holding arrays of one comparison: 1 + 2 × 99 + 1 = 200 nodes.
  await ok(t, filterUrl('/users', [{ and: [...Array.from({ length: 99 }, () => [comparison]), comparison] }]))
  await refused(t, filterUrl('/users', [{ and: Array.from({ length: 100 }, () => [comparison]) }]), 'filter', /^at \[0\]\.and\[99\]\[0\]: the filter has more than 200 nodes$/)
  // A comparison inside 200 nested arrays (the outermost is the filter itself): 199 + 1 nodes.
  let nested: unknown = comparison
  for (let level = 0; level < 200; level++) nested = [nested]
  await ok(t, filterUrl('/users', nested))
  await refused(t, filterUrl('/users', [nested]), 'filter', /more than 200 nodes/)
})

t.test('custom limits via options', async (t) => {
  const tight = await appWith({ include: { maxPaths: 2, maxDepth: 1 }, sort: { maxKeys: 2, maxDepth: 1 }, filter: { maxDepth: 2, maxNodes: 3 } })
  await ok(t, '/users?include=computers,group', tight)
  await refused(t, '/users?include=computers,group,bio', 'include', /^3 include paths; at most 2 are allowed$/, tight)
  await refused(t, '/users?include=computers.owner', 'include', /maximum include depth of 1/, tight)
  await ok(t, '/users?sort=group.name,-age', tight)
  await refused(t, '/users?sort=name,age,id', 'sort', /at most 2/, tight)
  await refused(t, '/users?sort=bio.user.name', 'sort', /follows 2 relationships; at most 1/, tight)
  await ok(t, filterUrl('/users', [{ name: 'computers.name', op: 'eq', val: 'c1' }]), tight)
  await refused(t, filterUrl('/users', [{ name: 'computers.owner.name', op: 'eq', val: 'u1' }]), 'filter', /deeper than 2/, tight)
  await ok(t, filterUrl('/users', [{ name: 'id', op: 'in_', val: [1, 2] }]), tight)
  await refused(t, filterUrl('/users', [{ name: 'id', op: 'in_', val: [1, 2, 3] }]), 'filter', /more than 3 nodes/, tight)
  await ok(t, '/users?filter[name]=u1&filter[age]=30&filter[status]=active', tight)
  await refused(t, '/users?filter[name]=u1&filter[age]=30&filter[status]=active&filter[email]=x', 'filter[email]', /more than 3 nodes/, tight)

  const legacy = await appWith({ maxIncludeDepth: 1 })
  await refused(t, '/users?include=computers.owner', 'include', /depth of 1/, legacy)
  const both = await appWith({ maxIncludeDepth: 4, include: { maxDepth: 4 } })
  await ok(t, '/users?include=computers.owner.group.users', both)
  const wide = await appWith({ include: { maxPaths: 11 }, sort: { maxKeys: 11, maxDepth: 4 } })
  await ok(t, '/users?include=computers,group,bio,posts,workplace,notes,computers.owner,group.users,bio.user,posts.user,workplace.user', wide)
  await ok(t, '/users?sort=name,first_name,last_name,email,age,status,birth_date,gender,date_create,id,bio.user.bio.user.name', wide)
})

t.test('cannot read a document longer than maxDocumentLength: a 400 that says how to ask for less, on every read route', async (t) => {
  // workplaces of 40,000 characters each: three of them pass 100,000 characters of JSON
  const name = 'w'.repeat(40_000)
  const ids = (await db.insertInto('workplaces').values([{ name }, { name }, { name }]).returning('id').execute()).map((row) => String(row.id))
  t.teardown(async () => { await db.deleteFrom('workplaces').where('id', 'in', ids.map(Number)).execute() })
  const small = await appWith({ maxDocumentLength: 100_000 })
  const refusals: Array<[string, string, RegExp]> = [
    ['/workplaces', 'page[size]', /^the page would be longer than 100000 characters of JSON: ask for a smaller page\[size\]/],
    ['/workplaces?page[size]=3&sort=-id', 'page[size]', /smaller page\[size\]/],
  ]
  for (const [url, parameter, detail] of refusals) assertError(t, await small(url), { status: 400, code: 'FJA_DOCUMENT_TOO_LARGE', parameter, detail })
  t.equal((await small('/workplaces?page[size]=2&sort=-id')).status, 200, 'a smaller page is answered')
  t.equal((await small(`/workplaces/${ids[0]}`)).status, 200, 'one such resource is answered')
  t.equal((await small('/workplaces?page[size]=0')).status, 200, 'every row streamed is not bounded')
  // a resource whose includes pass the bound: the include is to blame
  await db.updateTable('workplaces').set({ user_id: 1 }).where('id', '=', Number(ids[0])).execute()
  // 60,000 characters (a MariaDB text column holds 65,535 bytes), twice in the user's document: as display_name too
  await db.updateTable('users').set({ first_name: 'w'.repeat(60_000) }).where('id', '=', 1).execute()
  t.teardown(async () => { await db.updateTable('users').set({ first_name: null }).where('id', '=', 1).execute() })
  assertError(t, await small(`/workplaces/${ids[0]}?include=user`), { status: 400, code: 'FJA_DOCUMENT_TOO_LARGE', parameter: 'include', detail: /ask for fewer includes or fields/ })
  assertError(t, await small('/users/1'), { status: 400, code: 'FJA_DOCUMENT_TOO_LARGE', parameter: 'fields[user]' })
  t.equal((await small('/users/1?fields[user]=name')).status, 200, 'fewer fields are answered')
  assertError(t, await small(`/workplaces/${ids[0]}/user`), { status: 400, code: 'FJA_DOCUMENT_TOO_LARGE', parameter: 'fields[user]' })
  assertError(t, await small('/groups/2/users'), { status: 400, code: 'FJA_DOCUMENT_TOO_LARGE', parameter: 'page[size]' })
  assertError(t, await small('/groups?include=users'), { status: 400, code: 'FJA_DOCUMENT_TOO_LARGE', parameter: 'page[size]' })
  t.equal((await get('/users/1')).status, 200, 'the default bound (16 Mi characters) answers it')
})

t.test('the OpenAPI description states the limits', async (t) => {
  const app = await documentedFastify()
  await app.register(jsonApi, { db, resources, include: { maxPaths: 4 }, sort: { maxKeys: 5, maxDepth: 2 } })
  await app.ready()
  t.teardown(() => app.close())
  const parameters: Array<{ name: string; description?: string }> = (app.swagger() as any).paths['/users'].get.parameters
  t.match(parameters.find((parameter) => parameter.name === 'include')?.description, /at most 4 comma-separated paths, each at most 3 relationships deep/)
  t.match(parameters.find((parameter) => parameter.name === 'sort')?.description, /At most 5 sort keys, comma-separated, each following at most 2 to-one relationships/)
})

t.test('bad limit options throw JsonApiOptionsError at registration', async (t) => {
  const cases: Array<[string, Partial<JsonApiOptions>, RegExp]> = [
    ['include.maxPaths 0', { include: { maxPaths: 0 } }, /`include\.maxPaths` must be a positive integer/],
    ['include.maxDepth fractional', { include: { maxDepth: 1.5 } }, /`include\.maxDepth` must be a positive integer/],
    ['sort.maxKeys negative', { sort: { maxKeys: -1 } }, /`sort\.maxKeys` must be a positive integer/],
    ['sort.maxDepth a string', { sort: { maxDepth: '3' as unknown as number } }, /`sort\.maxDepth` must be a positive integer/],
    ['filter.maxNodes 0', { filter: { maxNodes: 0 } }, /`filter\.maxNodes` must be a positive integer/],
    ['filter.maxDepth NaN', { filter: { maxDepth: Number.NaN } }, /`filter\.maxDepth` must be a positive integer/],
    ['maxIncludeDepth and include.maxDepth differ', { maxIncludeDepth: 2, include: { maxDepth: 3 } }, /`include\.maxDepth` and `maxIncludeDepth` are the same limit/],
  ]
  for (const [label, options, message] of cases) {
    const app = Fastify()
    try {
      await app.register(jsonApi, { db, resources, ...options })
      t.fail(`${label}: registration should fail`)
    } catch (error) {
      t.ok(error instanceof JsonApiOptionsError, `${label}: JsonApiOptionsError`)
      t.equal((error as JsonApiOptionsError).code, 'FJA_INVALID_OPTIONS', label)
      t.match((error as Error).message, message, label)
    } finally {
      await app.close()
    }
  }
})

t.test('a host app parsing query strings with qs: the plugin reads the raw query string', async (t) => {
  const app = await documentedFastify({ routerOptions: { querystringParser: (text) => qs.parse(text) } })
  app.get('/echo', { schema: { hide: true } }, async (request) => request.query)
  await app.register(jsonApi, { db, resources, context: exampleContext(db) })
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/echo?fields[user]=name&page[size]=1&filter[name]=u1')).json(), { fields: { user: 'name' }, page: { size: '1' }, filter: { name: 'u1' } }, 'the host parses with qs')
  const withQs: Get = (url) => injectJsonApi(app, 'GET', url)
  const urls = [
    '/users?fields[user]=name,age&sort=-age',
    '/users?page[size]=1&page[number]=2&sort=name',
    '/users?page%5Bsize%5D=2',
    '/users?filter[name]=u1&include=computers,group&fields[computer]=serial',
    '/users?filter[group_id]=2',
    `/users?filter=${encodeURIComponent(JSON.stringify([{ name: 'age', op: 'in_', val: [20, 40] }]))}&sort=id`,
    '/users/1?include=bio,computers.owner&fields[user]=name,bio,computers',
    '/users/1/computers?sort=-serial&page[size]=1&fields[computer]=serial',
    '/computers?sort=owner.bio.user.name&filter[owner.name]=u1',
    '/users?include=computers.owner.group.users',
    '/users?sort=name&sort=age',
    '/users?fields[user]=name&fields[user]=age',
    '/users?page[size]=1&page[size]=2',
    '/users?filter[name]=u1&filter[name]=u2',
    '/users?fields=name',
    '/users?include[]=computers',
  ]
  for (const url of urls) {
    const plain = await get(url)
    const parsed = await withQs(url)
    t.equal(parsed.status, plain.status, `${url}: ${plain.status}`)
    t.same(parsed.body, plain.body, `${url}: the same document`)
  }
  t.same(ids(await withQs('/users?fields[user]=name&sort=-age')), ['3', '1', '2'])
  t.same((await withQs('/users?fields[user]=name&sort=-age')).body.data[0].attributes, { name: 'u3' })
  const page = await withQs('/users?page[size]=1&page[number]=2&sort=name')
  t.same(ids(page), ['2'])
  t.same(page.body.links.next, '/users?sort=name&page%5Bsize%5D=1&page%5Bnumber%5D=3', 'links repeat the raw parameters')
  t.same(ids(await withQs('/users?filter[name]=u2')), ['2'])
  await refused(t, '/users?sort=name&sort=age', 'sort', /may be given only once/, withQs)
  await refused(t, '/users?page[size]=1&page[size]=2', 'page[size]', /may be given only once/, withQs)
  await refused(t, '/users?filter[name]=u1&filter[name]=u2', 'filter[name]', /may be given only once/, withQs)
  await refused(t, '/users?include=computers&include=group', 'include', /may be given only once/, withQs)
})
