import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import fc from 'fast-check'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { failsUnchanged } from '../helpers/assert-errors.js'
import { testEngine } from '../helpers/engine.js'

/** Whether a statement is not one of a transaction's own (`BEGIN`, `COMMIT` …). */
function notTransaction (text: string): boolean {
  return !/^(begin|commit|rollback|start transaction|savepoint|release)/i.test(text.trim())
}

// Field rules on the example app: `user.phone` is read and written by its own user only (the `rules` of
// examples/app/resources.ts), on every engine. The leak matrix: requests that differ only in a phone number the
// request may not read give the same status, body, order, count, links, cursors and ETag.

const api = await startTestApp(t.teardown)

const CURSORS = { accept: 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"' }

async function seed (): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values({ name: 'engineers' }).execute()
  for (const user of [
    { name: 'ada', phone: '111', group_id: 1 },
    { name: 'grace', phone: '555', group_id: 1 },
    { name: 'linus', phone: null, group_id: 1 },
  ]) await api.db.insertInto('users').values(user).execute()
  await api.db.insertInto('computers').values([
    { serial: 'A1', name: 'analytical', owner_id: 1 },
    { serial: 'B2', name: 'harvard', owner_id: 2 },
    { serial: 'C3', name: 'unix', owner_id: 3 },
  ]).execute()
}

t.before(seed)

function filter (items: unknown): string {
  return `filter=${encodeURIComponent(JSON.stringify(items))}`
}

function as (user: string | undefined, headers: Record<string, string> = {}): { headers: Record<string, string> } {
  return { headers: { ...headers, ...(user === undefined ? {} : { 'x-user-id': user }) } }
}

async function get (url: string, user?: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return await api.request('GET', url, as(user, headers))
}

/** The phone of each user in a document's data and included, by id (absent members left out). */
function phones (body: any): Record<string, unknown> {
  const all = [...(Array.isArray(body.data) ? body.data : body.data === null ? [] : [body.data]), ...(body.included ?? [])]
  const found: Record<string, unknown> = {}
  for (const item of all) if (item.type === 'user' && 'phone' in item.attributes) found[item.id] = item.attributes.phone
  return found
}

t.test('the phone is rendered to its own user only, on every route that renders users', async (t) => {
  const routes = [
    '/users', '/users/1', '/users/2', '/users?fields[user]=name,phone', '/users/2?fields[user]=phone',
    '/computers?include=owner', '/computers/2?include=user', '/computers/2/owner', '/groups/1/users',
    '/groups/1?include=users', '/users?page[size]=0', '/users?page[size]=2&sort=-name',
  ]
  for (const url of routes) {
    for (const [user, expected] of [[undefined, {}], ['1', { 1: '111' }], ['2', { 2: '555' }], ['3', { 3: null }]] as const) {
      const response = await get(url, user)
      t.equal(response.status, 200, `${url} as ${String(user)}`)
      const shown = phones(response.body)
      const own = Object.fromEntries(Object.entries(expected).filter(([id]) => JSON.stringify(response.body).includes(`"id":"${id}"`)))
      t.same(shown, own, `${url} as ${String(user)}: the phone of the acting user's own user only`)
    }
  }
  const cursor = await get('/users?page[size]=1', '2', CURSORS)
  t.same(phones(cursor.body), {}, 'a cursor page of user 1, read by user 2')
  const own = await get('/users?page[size]=1&sort=-name', '3', CURSORS)
  t.same(phones(own.body), { 3: null }, 'a cursor page of the acting user: a null phone is rendered')
  const other = await get('/users/1?fields[user]=name,phone', '2')
  t.same(other.body.data.attributes, { name: 'ada' }, 'a fieldset that names the phone does not bring it back')
})

t.test('a read of a user by id is one statement, with the rule', async (t) => {
  api.counter.reset()
  t.notOk('phone' in (await get('/users/1')).body.data.attributes)
  t.equal(api.counter.count, 1, 'anonymous: the read')
  api.counter.reset()
  const response = await get('/users/1', '1')
  t.equal(response.body.data.attributes.phone, '111')
  t.equal(api.counter.count, 2, 'the acting user\'s: the example app\'s check of the user, and the read')
})

t.test('an answer to a write renders the phone as the request may read it', async (t) => {
  const mine = await api.request('PATCH', '/users/1', { ...as('1'), body: { data: { type: 'user', id: '1', attributes: { name: 'ada' } } } })
  t.equal(mine.status, 200)
  t.equal(mine.body.data.attributes.phone, '111')
  const theirs = await api.request('PATCH', '/users/1', { ...as('2'), body: { data: { type: 'user', id: '1', attributes: { name: 'ada' } } } })
  t.equal(theirs.status, 200)
  t.notOk('phone' in theirs.body.data.attributes, 'another user\'s answer has no phone')
  api.counter.reset()
  const anonymous = await api.request('PATCH', '/users/1', { body: { data: { type: 'user', id: '1', attributes: { name: 'ada' } } } })
  t.notOk('phone' in anonymous.body.data.attributes)
  const written = api.counter.statements.filter(notTransaction).length
  if (testEngine() === 'postgres') t.equal(api.counter.count, 1, 'a rule decided for the whole request costs the write nothing: one UPDATE … RETURNING')
  api.counter.reset()
  await api.request('PATCH', '/users/1', { ...as('2'), body: { data: { type: 'user', id: '1', attributes: { name: 'ada' } } } })
  t.equal(api.counter.statements.filter(notTransaction).length, written + 2,
    'a row rule: the write, the example\'s check of the acting user, and one read of the rule on the row as written')
  const created = await api.request('POST', '/users', { ...as('1'), body: { data: { type: 'user', attributes: { name: 'new' } } } })
  t.equal(created.status, 201)
  t.notOk('phone' in created.body.data.attributes, 'a created user is not the acting user\'s own')
  const operations = await api.request('POST', '/operations', {
    headers: { 'x-user-id': '1', 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
    body: { 'atomic:operations': [
      { op: 'update', data: { type: 'user', id: '1', attributes: { name: 'ada' } } },
      { op: 'update', data: { type: 'user', id: '2', attributes: { name: 'grace' } } },
    ] },
  })
  t.equal(operations.status, 200)
  t.same(operations.body['atomic:results'].map((result: any) => result.data.attributes.phone), ['111', undefined])
  await seed()
})

/** What a response shows: status, body, ETag. */
function seen (response: TestResponse): unknown {
  return { status: response.status, body: response.body, etag: response.headers.etag }
}

/** Every page of a cursor walk from `url` forwards, then back: what each shows. */
async function walk (url: string, user: string | undefined): Promise<unknown[]> {
  const shown: unknown[] = []
  let next: string | undefined = url
  let last: TestResponse | undefined
  while (next !== undefined && shown.length < 10) {
    last = await get(next, user, CURSORS)
    shown.push(seen(last))
    next = last.body.links?.next ?? undefined
  }
  let prev: string | undefined = last?.body.links?.prev ?? undefined
  while (prev !== undefined && shown.length < 20) {
    const page = await get(prev, user, CURSORS)
    shown.push(seen(page))
    prev = page.body.links?.prev ?? undefined
  }
  return shown
}

const LEAK_REQUESTS = [
  '/users/2', '/users', '/users?fields[user]=name,phone',
  '/users?filter[phone]=555', '/users?filter[phone]=000', '/computers?filter[owner.phone]=555', '/groups?filter[users.phone]=555',
  `/users?${filter([{ name: 'phone', op: 'eq', val: '555' }])}`,
  `/users?${filter([{ name: 'phone', op: 'ne', val: '555' }])}`,
  `/users?${filter([{ name: 'phone', op: 'startswith', val: '5' }])}`,
  `/users?${filter([{ name: 'phone', op: 'like', val: '%5%' }])}`,
  `/users?${filter([{ name: 'phone', op: 'gt', val: '2' }])}`,
  `/users?${filter([{ name: 'phone', op: 'between', val: ['0', '9'] }])}`,
  `/users?${filter([{ name: 'phone', op: 'in_', val: ['555', '000'] }])}`,
  `/users?${filter([{ name: 'phone', op: 'is_', val: null }])}`,
  `/users?${filter([{ name: 'phone', op: 'isnot', val: null }])}`,
  `/users?${filter([{ not: { name: 'phone', op: 'eq', val: '555' } }])}`,
  `/users?${filter([{ or: [{ name: 'phone', op: 'eq', val: '555' }, { name: 'name', op: 'eq', val: 'linus' }] }])}`,
  `/users?${filter([{ name: 'phone', op: 'eq', field: 'name' }])}`,
  `/users?${filter([{ name: 'name', op: 'lt', field: 'phone' }])}`,
  `/computers?${filter([{ name: 'owner', op: 'has', val: { name: 'phone', op: 'eq', val: '555' } }])}`,
  `/groups?${filter([{ name: 'users', op: 'any', val: { name: 'phone', op: 'gt', val: '200' } }])}`,
  '/users?sort=phone', '/users?sort=-phone', '/users?sort=phone,-name', '/users?sort=-phone&page[size]=1&page[number]=2',
  '/computers?sort=owner.phone', '/computers?sort=-owner.phone&include=owner',
  '/groups/1/users?sort=phone', '/computers?include=owner', '/users?page[size]=0&sort=phone',
]

/** Every request of the matrix as `user`, with the cursor walks ordered by the phone. */
async function matrix (user: string | undefined): Promise<unknown[]> {
  const shown: unknown[] = []
  for (const url of LEAK_REQUESTS) shown.push(seen(await get(url, user)))
  shown.push(await walk('/users?sort=phone&page[size]=1', user))
  shown.push(await walk('/users?sort=-phone,name&page[size]=2', user))
  shown.push(await walk('/computers?sort=owner.phone&page[size]=1', user))
  return shown
}

async function setPhone (id: number, phone: string | null): Promise<void> {
  await api.db.updateTable('users').set({ phone }).where('id', '=', id).execute()
}

t.test('leak matrix: no answer depends on a phone number the request may not read', async (t) => {
  for (const user of [undefined, '1', '3']) {
    await setPhone(2, '555')
    const first = await matrix(user)
    for (const phone of ['000', null, '999', 'ada']) {
      await setPhone(2, phone)
      const other = await matrix(user)
      t.same(other, first, `as ${String(user)}: grace's phone ${String(phone)} instead of 555 changes nothing`)
    }
  }
  // The matrix can tell: the user who may read the phone sees the difference.
  await setPhone(2, '555')
  const before = await matrix('2')
  await setPhone(2, '000')
  t.notSame(await matrix('2'), before, 'grace herself sees her phone change')
  await setPhone(2, '555')
})

t.test('the acting user filters and sorts by their own phone', async (t) => {
  const ids = (response: TestResponse): string[] => response.body.data.map((item: any) => item.id)
  t.same(ids(await get('/users?filter[phone]=555', '2')), ['2'])
  t.same(ids(await get('/users?filter[phone]=555', '1')), [])
  t.same(ids(await get(`/users?${filter([{ name: 'phone', op: 'is_', val: null }])}`, '1')), ['2', '3'], 'the others\' phones are null to user 1')
  t.same(ids(await get('/users?sort=phone', '2')), ['2', '1', '3'], 'hidden phones sort as NULL, last ascending')
  t.same(ids(await get('/users?sort=-phone', '2')), ['1', '3', '2'], 'NULLs first descending, by id among them')
  const counted = await get('/users?filter[phone]=555&page[size]=1', '2')
  t.equal(counted.body.meta.count, 1)
})

t.test('cannot write the phone of another user, nor create a user with one', async (t) => {
  const patch = (id: string, phone: unknown): { body: unknown } => ({ body: { data: { type: 'user', id, attributes: { phone } } } })
  for (const user of [undefined, '1', '3']) {
    await failsUnchanged(t, api, 'PATCH', '/users/2', { ...as(user), ...patch('2', '000') },
      { status: 403, code: 'FJA_FIELD_FORBIDDEN', pointer: '/data/attributes/phone' })
    await failsUnchanged(t, api, 'PATCH', '/users/2', { ...as(user), body: { data: { type: 'user', id: '2', attributes: { name: 'x', phone: null } } } },
      { status: 403, code: 'FJA_FIELD_FORBIDDEN', pointer: '/data/attributes/phone' })
    await failsUnchanged(t, api, 'POST', '/users', { ...as(user), body: { data: { type: 'user', attributes: { name: 'new', phone: '123' } } } },
      { status: 403, code: 'FJA_FIELD_FORBIDDEN', pointer: '/data/attributes/phone' })
  }
  await failsUnchanged(t, api, 'PATCH', '/users/99', { ...as('1'), ...patch('99', '000') },
    { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  await failsUnchanged(t, api, 'PATCH', '/users/99', { ...as(undefined), ...patch('99', '000') },
    { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  const atomic = { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' }
  await failsUnchanged(t, api, 'POST', '/operations', {
    headers: { ...atomic, 'x-user-id': '1' },
    body: { 'atomic:operations': [
      { op: 'update', data: { type: 'user', id: '1', attributes: { name: 'changed', phone: '222' } } },
      { op: 'update', data: { type: 'user', id: '2', attributes: { phone: '000' } } },
    ] },
  }, { status: 403, code: 'FJA_FIELD_FORBIDDEN', pointer: '/atomic:operations/1/data/attributes/phone', meta: { operation: 1, op: 'update', data: { type: 'user', id: '2' } } })
  await failsUnchanged(t, api, 'POST', '/operations', {
    headers: { ...atomic, 'x-user-id': '1' },
    body: { 'atomic:operations': [{ op: 'add', data: { type: 'user', attributes: { name: 'new', phone: '1' } } }] },
  }, { status: 403, code: 'FJA_FIELD_FORBIDDEN', pointer: '/atomic:operations/0/data/attributes/phone', meta: { operation: 0, op: 'add', data: { type: 'user' } } })
})

t.test('the acting user writes their own phone', async (t) => {
  const response = await api.request('PATCH', '/users/3', { ...as('3'), body: { data: { type: 'user', id: '3', attributes: { phone: '333' } } } })
  t.equal(response.status, 200)
  t.equal(response.body.data.attributes.phone, '333')
  const [row] = await api.db.selectFrom('users').select('phone').where('id', '=', 3).execute()
  t.equal(row.phone, '333')
  const other = await api.request('PATCH', '/users/3', { ...as('1'), body: { data: { type: 'user', id: '3', attributes: { name: 'linus' } } } })
  t.equal(other.status, 200, 'another user may still write the other attributes')
  await setPhone(3, null)
})

t.test('cannot use a cursor to learn a hidden phone', async (t) => {
  // A cursor made by grace (who sees her phone) carries it; read by another user, it is only a position among nulls.
  const mine = await get('/users?sort=phone&page[size]=1', '2', CURSORS)
  const next = mine.body.links.next as string
  const theirs = await get(next, '1', CURSORS)
  t.equal(theirs.status, 200)
  // To user 1, grace's phone is NULL, after every value: the page after '555' is the NULLs, grace first (by id).
  t.same(theirs.body.data.map((item: any) => item.id), ['2'])
  t.same(phones(theirs.body), {}, 'and it shows no phone')
  const again = await get(next, '1', CURSORS)
  await setPhone(2, '000')
  t.same(seen(await get(next, '1', CURSORS)), seen(again), 'whatever grace\'s phone is now')
  await setPhone(2, '555')
})

t.test('leak property: generated filters and sorts give the same answer whatever the phones the request may not read', async (t) => {
  const PHONES = ['111', '555', '000', '9', 'ada', '']
  const phone = fc.constantFrom(...PHONES)
  const comparison = fc.oneof(
    fc.record({ name: fc.constant('phone'), op: fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le', 'startswith', 'endswith', 'like', 'ilike'), val: phone }),
    fc.record({ name: fc.constant('phone'), op: fc.constantFrom('is_', 'isnot'), val: fc.constant(null) }),
    fc.record({ name: fc.constant('phone'), op: fc.constantFrom('in_', 'notin_'), val: fc.array(phone, { minLength: 1, maxLength: 3 }) }),
    fc.record({ name: fc.constantFrom('phone', 'name'), op: fc.constantFrom('eq', 'lt', 'gt'), field: fc.constantFrom('phone', 'name') }),
    fc.record({ name: fc.constant('name'), op: fc.constant('ne'), val: fc.constantFrom('ada', 'grace') }),
  )
  const node: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      comparison,
      fc.record({ or: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ not: tie('node') }),
    ),
  })).node
  const request = fc.record({
    collection: fc.constantFrom('/users', '/groups/1/users'),
    filter: fc.option(fc.array(node, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    sort: fc.option(fc.constantFrom('phone', '-phone', 'phone,-name', '-phone,name'), { nil: undefined }),
    size: fc.constantFrom(1, 2, 10),
    user: fc.constantFrom(undefined, '1'),
    // The phones of grace and linus, which neither an anonymous request nor ada may read.
    hidden: fc.tuple(fc.option(phone, { nil: null }), fc.option(phone, { nil: null })),
  })
  await fc.assert(fc.asyncProperty(request, async ({ collection, filter: items, sort, size, user, hidden }) => {
    const url = `${collection}?page[size]=${size}${items === undefined ? '' : `&${filter(items)}`}${sort === undefined ? '' : `&sort=${sort}`}`
    await setPhone(2, '555')
    await setPhone(3, null)
    const before = seen(await get(url, user))
    await setPhone(2, hidden[0])
    await setPhone(3, hidden[1])
    const after = seen(await get(url, user))
    if (!isDeepStrictEqual(before, after)) throw new Error(`${url} as ${String(user)} depends on hidden phones ${JSON.stringify(hidden)}`)
  }), { numRuns: Number(process.env.FC_LEAK_RUNS ?? '150') })
  await setPhone(2, '555')
  await setPhone(3, null)
  t.pass('150 generated requests')
})
