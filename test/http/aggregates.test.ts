import t, { type Test } from 'tap'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { injectJsonApi, startTestApp, type TestResponse } from '../helpers/test-app.js'
import { assertError } from '../helpers/assert-errors.js'
import { jsonApi, type AnyResourceDeclaration } from '../../lib/index.js'
import { Type } from '@sinclair/typebox'
import { resources } from '../../examples/app/resources.js'

// Aggregates (`user.computer_count`, `parent.kid_count`, `count(…)` of the query language) and a database-computed
// attribute (`user.display_name`) on the example app, on every engine.

const api = await startTestApp(t.teardown)

t.before(async () => {
  await api.reset()
  for (const name of ['engineers', 'nobody']) await api.db.insertInto('groups').values({ name }).execute()
  for (const user of [
    { name: 'ada', first_name: 'Ada', last_name: 'Lovelace', group_id: 1, age: 36 },
    { name: 'grace', first_name: 'Grace', last_name: null, group_id: 1, age: 85 },
    { name: 'linus' },
    { name: 'alan', first_name: ' ', last_name: 'Turing' },
  ]) await api.db.insertInto('users').values(user).execute()
  await api.db.insertInto('computers').values([
    { serial: 'A1', name: 'analytical', owner_id: 1 },
    { serial: 'B2', name: 'harvard', owner_id: 2 },
    { serial: 'B3', name: 'univac', owner_id: 2 },
    { serial: 'B4', name: 'mark', owner_id: 2 },
    { serial: 'D1', name: 'ace', owner_id: 4 },
    { serial: 'C4', name: 'spare', owner_id: null },
  ]).execute()
  for (const name of ['alice', 'bob', 'carol']) await api.db.insertInto('parents').values({ name }).execute()
  for (const name of ['x', 'y', 'z']) await api.db.insertInto('children').values({ name }).execute()
  await api.db.insertInto('parent_to_child_associations').values([
    { parent_id: 1, child_id: 1 }, { parent_id: 1, child_id: 2 }, { parent_id: 2, child_id: 3 },
  ]).execute()
  await api.db.insertInto('notes').values([{ text: 'a', owner_id: 1 }, { text: 'b', owner_id: 1 }, { text: 'c', owner_id: 2 }]).execute()
})

function filter (items: unknown): string {
  return `filter=${encodeURIComponent(JSON.stringify(items))}`
}

const CURSORS = { accept: 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"' }

async function get (url: string, user?: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  api.counter.reset()
  return await api.request('GET', url, { headers: { ...headers, ...(user === undefined ? {} : { 'x-user-id': user }) } })
}

/** Cursor pages walked forwards from `url` (by `next`) to the end, then back (by `prev`): the ids each way. */
async function walk (t: Test, url: string): Promise<{ forwards: string[], backwards: string[] }> {
  const forwards: string[] = []
  let next: string | undefined = url
  let last: TestResponse | undefined
  while (next !== undefined && forwards.length < 20) {
    last = await get(next, undefined, CURSORS)
    t.equal(last.status, 200, next)
    t.equal(api.counter.count, 2, 'a cursor page and the count')
    forwards.push(...ids(last))
    next = last.body.links.next ?? undefined
  }
  const backwards: string[] = []
  let prev: string | undefined = (last as TestResponse).body.links.prev ?? undefined
  while (prev !== undefined && backwards.length < 20) {
    const page = await get(prev, undefined, CURSORS)
    backwards.unshift(...ids(page))
    prev = page.body.links.prev ?? undefined
  }
  return { forwards, backwards }
}

function ids (response: TestResponse): string[] {
  return response.body.data.map((item: { id: string }) => item.id)
}

/** `id → attribute` of a collection. */
function values (response: TestResponse, attribute: string): Record<string, unknown> {
  return Object.fromEntries(response.body.data.map((item: { id: string, attributes: Record<string, unknown> }) => [item.id, item.attributes[attribute]]))
}

t.test('declared aggregates are rendered only when the fieldset names them, computed by the database', async (t) => {
  const plain = await get('/users/2')
  t.equal(plain.status, 200)
  t.notOk('computer_count' in plain.body.data.attributes, 'not in the default fieldset')
  t.equal(plain.body.data.attributes.display_name, 'Grace', 'a computed attribute is in it')
  const counted = await get('/users?fields[user]=name,computer_count')
  t.same(values(counted, 'computer_count'), { 1: 1, 2: 3, 3: 0, 4: 1 }, 'integers, 0 for none')
  t.equal(api.counter.count, 2, 'a page and a count: the aggregate is a subquery of the page')
  const parents = await get('/parents?fields[parent]=name,kid_count')
  t.same(values(parents, 'kid_count'), { 1: 2, 2: 1, 3: 0 }, 'many-to-many')
  const one = await get('/parents/1?fields[parent]=kid_count')
  t.same(one.body.data.attributes, { kid_count: 2 })
  t.equal(api.counter.count, 1)
  const included = await get('/computers/2?include=owner&fields[user]=computer_count')
  t.same(included.body.included[0].attributes, { computer_count: 3 }, 'in included resources too')
  const related = await get('/computers/2/owner?fields[user]=computer_count')
  t.same(related.body.data.attributes, { computer_count: 3 }, 'and on related routes')
})

t.test('display_name is computed by the database: the same value as the derived rule, filterable and sortable', async (t) => {
  const all = await get('/users?fields[user]=display_name')
  t.same(values(all, 'display_name'), { 1: 'Ada Lovelace', 2: 'Grace', 3: 'linus', 4: 'Turing' })
  const sorted = await get('/users?sort=-display_name&fields[user]=display_name')
  t.same(ids(sorted), ['3', '4', '2', '1'])
  const started = await get(`/users?${filter([{ name: 'display_name', op: 'startswith', val: 'Ada ' }])}`)
  t.same(ids(started), ['1'])
  t.equal(api.counter.count, 2)
  const simple = await get('/users?filter[display_name]=Turing')
  t.same(ids(simple), ['4'])
  const compared = await get(`/users?${filter([{ name: 'display_name', op: 'eq', field: 'name' }])}`)
  t.same(ids(compared), ['3'], 'compared with another attribute')
  const through = await get(`/computers?${filter([{ name: 'owner.display_name', op: 'eq', val: 'Grace' }])}&sort=-owner.display_name,id`)
  t.same(ids(through), ['2', '3', '4'], 'through a relationship')
})

t.test('filter by an aggregate: numeric operators, count(…) on any to-many relationship, 2 statements a page', async (t) => {
  const cases: Array<[string, string, string[]]> = [
    ['/users', filter([{ name: 'computer_count', op: 'ge', val: 2 }]), ['2']],
    ['/users', filter([{ name: 'count(computers)', op: 'ge', val: 2 }]), ['2']],
    ['/users', filter([{ name: 'count(computers)', op: 'eq', val: 0 }]), ['3']],
    ['/users', filter([{ name: 'count(computers)', op: 'between', val: [1, 1] }]), ['1', '4']],
    ['/users', filter([{ name: 'count(computers)', op: 'in_', val: [0, 3] }]), ['2', '3']],
    ['/users', filter([{ name: 'count(computers)', op: 'ge', val: '2' }]), ['2']],
    ['/users', 'filter[count(computers)]=1', ['1', '4']],
    ['/users', 'filter[computer_count]=0', ['3']],
    ['/users', filter([{ or: [{ name: 'count(computers)', op: 'gt', val: 2 }, { name: 'name', op: 'eq', val: 'linus' }] }]), ['2', '3']],
    ['/users', filter([{ not: { name: 'count(computers)', op: 'ge', val: 1 } }]), ['3']],
    ['/users', filter([{ name: 'computers', op: 'any', val: [{ name: 'count(owner.computers)', op: 'gt', val: 1 }] }]), ['2']],
    ['/parents', filter([{ name: 'kid_count', op: 'gt', val: 0 }]), ['1', '2']],
    ['/parents', filter([{ name: 'count(kids)', op: 'lt', val: 2 }]), ['2', '3']],
    ['/parents', filter([{ name: 'count(children)', op: 'eq', val: 2 }]), ['1']],
    ['/children', filter([{ name: 'count(guardians)', op: 'eq', val: 1 }]), ['1', '2', '3']],
    ['/computers', filter([{ name: 'count(owner.computers)', op: 'ge', val: 3 }]), ['2', '3', '4']],
    ['/computers', filter([{ name: 'owner.computer_count', op: 'eq', val: 1 }]), ['1', '5']],
    ['/computers', filter([{ name: 'count(owner.computers)', op: 'is_' }]), ['6']],
  ]
  for (const [path, query, expected] of cases) {
    const response = await get(`${path}?${query}`)
    t.equal(response.status, 200, query)
    t.same(ids(response), expected, `${path}?${decodeURIComponent(query)}`)
    t.equal(response.body.meta.count, expected.length)
    t.equal(api.counter.count, 2, 'a page and a count')
  }
})

/** The page statement of the last request (not its `count(*)`), in lower case. */
function pageStatement (): string {
  return (api.counter.statements.find((statement) => !/^select count\(\*\) as/i.test(statement)) ?? '').toLowerCase()
}

t.test('a count that only asks whether related rows exist is written as EXISTS', async (t) => {
  for (const [op, val, expected, negated] of [['ge', 1, ['1', '2', '4'], false], ['gt', 0, ['1', '2', '4'], false], ['eq', 0, ['3'], true], ['lt', 1, ['3'], true]] as const) {
    const response = await get(`/users?${filter([{ name: 'count(computers)', op, val }])}`)
    t.same(ids(response), expected, `${op} ${val}`)
    const page = pageStatement()
    t.match(page, negated ? /not exists \(select/ : /exists \(select/, `${op} ${val}: EXISTS`)
    t.notMatch(page, /count\(\*\)/, `${op} ${val}: no count`)
  }
  const counted = await get(`/users?${filter([{ name: 'count(computers)', op: 'ge', val: 2 }])}`)
  t.same(ids(counted), ['2'])
  t.match(pageStatement(), /count\(\*\)/, 'any other comparison counts')
})

t.test('sort by an aggregate, and page by cursor under it', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['/users?sort=-count(computers),name', ['2', '1', '4', '3']],
    ['/users?sort=count(computers),-id', ['3', '4', '1', '2']],
    ['/users?sort=-computer_count,-id', ['2', '4', '1', '3']],
    ['/parents?sort=-kid_count', ['1', '2', '3']],
    ['/parents?sort=count(kids),-name', ['3', '2', '1']],
    ['/computers?sort=-count(owner.computers),id', ['6', '2', '3', '4', '1', '5']],
  ]
  for (const [url, expected] of cases) {
    const response = await get(url)
    t.same(ids(response), expected, url)
    t.equal(api.counter.count, 2)
    // The same order, one resource per cursor page, forwards; then back from the end.
    const { forwards, backwards } = await walk(t, `${url}&page[size]=1`)
    t.same(forwards, expected, `${url}: walked by cursor`)
    t.same(backwards, expected.slice(0, -1), `${url}: walked back`)
  }
  // (The order of names that differ in letter case is the collation's.)
  const byName = ids(await get('/users?sort=display_name'))
  const { forwards: walked } = await walk(t, '/users?sort=display_name&page[size]=3')
  t.same(walked, byName, 'a computed attribute is a cursor key')
})

t.test('aggregates on every route that reads a collection: related, relationship, unpaged (streamed)', async (t) => {
  const related = await get('/groups/1/users?sort=-count(computers)&fields[user]=computer_count')
  t.same(values(related, 'computer_count'), { 2: 3, 1: 1 })
  t.same(ids(related), ['2', '1'])
  t.equal(api.counter.count, 3, 'the owner, the page and the count')
  const linkage = await get('/groups/1/relationships/users?sort=-count(computers)')
  t.equal(linkage.status, 200)
  t.same(linkage.body.data.map((item: { id: string }) => item.id), ['2', '1'])
  const streamed = await get(`/users?page[size]=0&sort=-count(computers),id&fields[user]=computer_count&${filter([{ name: 'count(computers)', op: 'ge', val: 1 }])}`)
  t.same(ids(streamed), ['2', '1', '4'])
  t.same(values(streamed, 'computer_count'), { 2: 3, 1: 1, 4: 1 })
})

t.test('every count sees only the rows the request may see', async (t) => {
  const anonymous = await get('/users?sort=-count(notes),id&fields[user]=name')
  t.same(ids(anonymous), ['1', '2', '3', '4'], 'anonymous: every count is 0')
  const none = await get(`/users?${filter([{ name: 'count(notes)', op: 'gt', val: 0 }])}`)
  t.same(ids(none), [])
  t.equal(none.body.meta.count, 0)
  const ada = await get(`/users?${filter([{ name: 'count(notes)', op: 'ge', val: 1 }])}`, '1')
  t.same(ids(ada), ['1'], 'the acting user counts only their own notes')
  const grace = await get('/users?sort=-count(notes),id', '2')
  t.same(ids(grace), ['2', '1', '3', '4'], "ada's two notes count 0 for grace")
  const equal = await get(`/users?${filter([{ name: 'count(notes)', op: 'eq', val: 0 }])}`, '2')
  t.same(ids(equal), ['1', '3', '4'])
})

t.test('cannot use an aggregate wrongly: 400 with the parameter, nothing run', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [`/users?${filter([{ name: 'count(group)', op: 'eq', val: 1 }])}`, 'filter', /to-one relationship/],
    [`/users?${filter([{ name: 'count(nope)', op: 'eq', val: 1 }])}`, 'filter', /'nope' is not a relationship/],
    [`/users?${filter([{ name: 'count()', op: 'eq', val: 1 }])}`, 'filter', /not a relationship path/],
    [`/users?${filter([{ name: 'count(computers', op: 'eq', val: 1 }])}`, 'filter', /'count\(computers' is not a field of 'user'/],
    [`/users?${filter([{ name: 'count(computers.owner)', op: 'eq', val: 1 }])}`, 'filter', /only the last step/],
    [`/users?${filter([{ name: 'count(computers)', op: 'eq', val: 'many' }])}`, 'filter', /not a valid value/],
    [`/users?${filter([{ name: 'count(computers)', op: 'eq', val: 1.5 }])}`, 'filter', /not a valid value/],
    [`/users?${filter([{ name: 'count(computers)', op: 'like', val: '1%' }])}`, 'filter', /not allowed/],
    [`/users?${filter([{ name: 'count(computers)', op: 'eq', val: null }])}`, 'filter', /never null/],
    [`/users?${filter([{ name: 'computer_count', op: 'eq', field: 'age' }])}`, 'filter', /aggregate/],
    ['/users?filter[count(computers)]=x', 'filter[count(computers)]', /not a valid value/],
    ['/users?sort=count(group)', 'sort', /to-one relationship/],
    ['/users?sort=-count(nope)', 'sort', /'nope' is not a relationship/],
    ['/users?sort=count(computers),-count(computers)', 'sort', /more than once/],
  ]
  for (const [url, parameter, detail] of cases) {
    const response = await get(url)
    assertError(t, response, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter, detail })
    t.equal(api.counter.count, 0, `${decodeURIComponent(url)}: refused before any statement`)
  }
})

t.test('cannot exceed the limits with counts: each is a filter node, its steps nest deeper, each a sort key', async (t) => {
  const many = Array.from({ length: 201 }, () => ({ name: 'count(computers)', op: 'ge', val: 0 }))
  assertError(t, await get(`/users?${filter(many)}`), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter', detail: /more than 200 nodes/ })
  const nested = [{ name: 'computers', op: 'any', val: [{ name: 'owner', op: 'has', val: [{ name: 'computers', op: 'any', val: [{ name: 'owner', op: 'has', val: [{ name: 'computers', op: 'any', val: [{ name: 'owner', op: 'has', val: [{ name: 'computers', op: 'any', val: [{ name: 'count(owner.computers)', op: 'ge', val: 1 }] }] }] }] }] }] }] }]
  assertError(t, await get(`/users?${filter(nested)}`), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter', detail: /nested deeper than 8 levels/ })
  const sorted = await get(`/users?sort=${['count(computers)', 'count(posts)', 'count(notes)', 'name', 'age', 'email', 'status', 'gender', 'first_name', 'last_name', 'birth_date'].join(',')}`)
  assertError(t, sorted, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'sort', detail: /11 sort keys; at most 10/ })
  t.equal(api.counter.count, 0)
})

t.test('cannot write an aggregate or a computed attribute: 422 at its pointer, nothing written', async (t) => {
  const before = await api.snapshot()
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/users', { data: { type: 'user', attributes: { name: 'x', computer_count: 2 } } }, '/data/attributes/computer_count'],
    ['POST', '/users', { data: { type: 'user', attributes: { name: 'x', display_name: 'X' } } }, '/data/attributes/display_name'],
    ['PATCH', '/users/1', { data: { type: 'user', id: '1', attributes: { computer_count: 0 } } }, '/data/attributes/computer_count'],
    ['PATCH', '/parents/1', { data: { type: 'parent', id: '1', attributes: { kid_count: 5 } } }, '/data/attributes/kid_count'],
    ['POST', '/operations', { 'atomic:operations': [{ op: 'add', data: { type: 'parent', attributes: { name: 'p', kid_count: 1 } } }] }, '/atomic:operations/0/data/attributes/kid_count'],
  ]
  for (const [method, url, body, pointer] of cases) {
    const headers = url === '/operations' ? { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' } : undefined
    const response = await api.request(method as 'POST', url, { body, headers })
    const meta = url === '/operations' ? { meta: { operation: 0, op: 'add', data: { type: 'parent' } } } : {}
    assertError(t, response, { status: 422, code: 'FJA_READ_ONLY_FIELD', pointer, ...meta })
  }
  t.same(await api.snapshot(), before, 'nothing written')
})

t.test('a write answers with the aggregates its fieldset names', async (t) => {
  const created = await api.request('POST', '/users?fields[user]=name,computer_count,display_name', { body: { data: { type: 'user', attributes: { name: 'new', first_name: 'New' } } } })
  t.equal(created.status, 201)
  t.same(created.body.data.attributes, { name: 'new', computer_count: 0, display_name: 'New' })
  const id = created.body.data.id as string
  await api.db.insertInto('computers').values({ serial: 'N1', name: 'n', owner_id: Number(id) }).execute()
  const updated = await api.request('PATCH', `/users/${id}?fields[user]=computer_count,display_name`, { body: { data: { type: 'user', id, attributes: { last_name: 'Comer' } } } })
  t.equal(updated.status, 200)
  t.same(updated.body.data.attributes, { computer_count: 1, display_name: 'New Comer' })
  await api.db.deleteFrom('computers').where('serial', '=', 'N1').execute()
  await api.db.deleteFrom('users').where('id', '=', Number(id)).execute()
})

t.test('the OpenAPI document lists the counts each collection takes in filter and sort', async (t) => {
  const response = await api.app.inject({ method: 'GET', url: '/openapi.json' })
  const document = JSON.parse(response.body)
  const schemas = document.components.schemas
  const sort = JSON.stringify(Object.entries(schemas).find(([name]) => /user/.test(name) && /sort/.test(name))?.[1])
  t.match(sort, /count\\\\\(computers\\\\\)/, 'the sort keys of users')
  const text = JSON.stringify(schemas)
  t.match(text, /"count\(owner\.computers\)"/, 'computers filter by count(owner.computers)')
  t.match(text, /"count\(kids\)"/)
  t.match(text, /Computed by the database: count\(computers\)/)
})

t.test('aggregates in a scope: a type may be scoped by a count, and every count inside follows the scopes it reaches', async (t) => {
  // Groups are visible only with a member who owns a computer; computers with serial B2 are hidden from everyone.
  const scoped = resources.map((declaration): AnyResourceDeclaration => {
    if (declaration.type === 'group') {
      return { ...declaration, hooks: { scope: (_context: unknown, where: any) => where.has('users', (user: any) => user.gt('computer_count', 0)) } }
    }
    if (declaration.type === 'computer') return { ...declaration, hooks: { scope: (_context: unknown, where: any) => where.ne('serial', 'B2') } }
    if (declaration.type === 'user') return { ...declaration, hooks: { scope: (_context: unknown, where: any) => where.or(where.count('computers', 'ge', 1), where.eq('name', 'linus')) } }
    return declaration
  })
  const app = await documentedFastify()
  await app.register(jsonApi, { db: api.db, resources: scoped, context: () => ({ user: undefined }) })
  await app.ready()
  t.teardown(() => app.close())
  const users = await injectJsonApi(app, 'GET', '/users?fields[user]=name,computer_count&sort=id')
  t.equal(users.status, 200)
  t.same(values(users, 'computer_count'), { 1: 1, 2: 2, 3: 0, 4: 1 }, "grace's B2 is not counted; linus is visible by name")
  const groups = await injectJsonApi(app, 'GET', '/groups')
  t.same(ids(groups), ['1'], 'only the group with a member who owns a visible computer')
  const counted = await injectJsonApi(app, 'GET', `/groups?${filter([{ name: 'count(users)', op: 'eq', val: 2 }])}`)
  t.same(ids(counted), ['1'], 'a count of users within their scope')
  const none = await injectJsonApi(app, 'GET', `/users?${filter([{ name: 'count(computers)', op: 'ge', val: 3 }])}`)
  t.same(ids(none), [], 'grace owns 3 computers, 2 of which the request may see')
})

t.test('sum, min, max and avg of a related attribute: numbers, null over no related row', async (t) => {
  const Nullable = (schema: ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>) => Type.Union([schema, Type.Null()])
  const declared = resources.map((declaration): AnyResourceDeclaration => declaration.type !== 'group' ? declaration : {
    ...declaration,
    attributes: {
      ...declaration.attributes,
      total_age: { schema: Nullable(Type.Integer()), aggregate: { sum: 'users.age' } },
      youngest: { schema: Nullable(Type.Integer()), aggregate: { min: 'users.age' }, rendered: 'always' },
      oldest: { schema: Nullable(Type.Integer()), aggregate: { max: 'users.age' } },
      mean_age: { schema: Nullable(Type.Number()), aggregate: { avg: 'users.age' } },
    },
  })
  const app = await documentedFastify()
  await app.register(jsonApi, { db: api.db, resources: declared })
  await app.ready()
  t.teardown(() => app.close())
  const plain = await injectJsonApi(app, 'GET', '/groups')
  t.same(plain.body.data.map((group: any) => group.attributes), [{ name: 'engineers', youngest: 36 }, { name: 'nobody', youngest: null }], "`rendered: 'always'`")
  const all = await injectJsonApi(app, 'GET', '/groups?fields[group]=total_age,youngest,oldest,mean_age')
  t.same(all.body.data.map((group: any) => group.attributes), [
    { total_age: 121, youngest: 36, oldest: 85, mean_age: 60.5 },
    { total_age: null, youngest: null, oldest: null, mean_age: null },
  ])
  const sorted = await injectJsonApi(app, 'GET', `/groups?sort=-mean_age&${filter([{ name: 'oldest', op: 'ge', val: 80 }])}`)
  t.same(ids(sorted), ['1'])
  const bad = await injectJsonApi(app, 'GET', `/groups?${filter([{ name: 'mean_age', op: 'gt', val: 'old' }])}`)
  assertError(t, bad, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter', detail: /not a valid value/ })
})

t.test('an afterCreate hook sees a computed attribute as stored; an aggregate is not part of the stored row', async (t) => {
  const seen: unknown[] = []
  const hooked = resources.map((declaration): AnyResourceDeclaration => declaration.type !== 'user' ? declaration : {
    ...declaration,
    hooks: { afterCreate: (stored: { attributes: unknown }) => { seen.push(stored.attributes) } },
  })
  const app = await documentedFastify()
  await app.register(jsonApi, { db: api.db, resources: hooked })
  await app.ready()
  t.teardown(() => app.close())
  const created = await injectJsonApi(app, 'POST', '/users?fields[user]=display_name,computer_count', { body: { data: { type: 'user', attributes: { name: 'hooked', first_name: 'Hoo', last_name: 'Ked' } } } })
  t.equal(created.status, 201)
  t.same(created.body.data.attributes, { display_name: 'Hoo Ked', computer_count: 0 })
  t.match(seen[0], { name: 'hooked', display_name: 'Hoo Ked' })
  t.notOk('computer_count' in (seen[0] as object))
  await api.db.deleteFrom('users').where('name', '=', 'hooked').execute()
})
