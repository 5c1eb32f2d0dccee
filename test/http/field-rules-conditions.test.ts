import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { jsonApi, type AnyResourceDeclaration, type FilterBuilder } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { emptyTables } from '../helpers/engine.js'

// Field rules whose conditions reach other rows (`where.has('owner', …)`: a subquery in the select list, in the
// `CASE` of filters and sorts, in cursors), and a write rule judged on the created row (`where.references('owner',
// …)`: a client may create its own rows with the attribute, not others'), on every engine.

interface Context { readonly user: { readonly id: string, readonly name: string } | undefined }

const database = await openTestDatabase()
t.teardown(() => database.close())
const db = database.db

/** `computer.serial` is read by its owner only (found through the owner's name); `computer.name` is written by its owner only. */
const ruled = resources.map((resource: AnyResourceDeclaration): AnyResourceDeclaration => resource.type !== 'computer'
  ? resource
  : {
      ...resource,
      rules: {
        serial: {
          read: (context: Context, where: FilterBuilder<any, any>) => context.user === undefined
            ? false
            : where.has('owner', (owner) => owner.eq('name', (context.user as NonNullable<Context['user']>).name)),
        },
        name: {
          write: (context: Context, where: FilterBuilder<any, any>) => context.user === undefined ? false : where.references('owner', context.user.id),
        },
      },
    })

const app: FastifyInstance = await documentedFastify()
await app.register(jsonApi, {
  db,
  resources: ruled,
  context: (request) => {
    const id = request.headers['x-user-id']
    return { user: typeof id === 'string' ? { id, name: String(request.headers['x-user-name']) } : undefined }
  },
})
await app.ready()
t.teardown(() => app.close())

const ADA = { 'x-user-id': '1', 'x-user-name': 'ada' }
const GRACE = { 'x-user-id': '2', 'x-user-name': 'grace' }
const CURSORS = { accept: 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"' }

t.before(async () => {
  await emptyTables(db, ['notes', 'posts', 'user_bios', 'workplaces', 'computers', 'users', 'groups'])
  await db.insertInto('users').values([{ name: 'ada' }, { name: 'grace' }]).execute()
  await db.insertInto('computers').values([
    { serial: 'A1', name: 'analytical', owner_id: 1 },
    { serial: 'B2', name: 'harvard', owner_id: 2 },
    { serial: 'B3', name: 'univac', owner_id: 2 },
    { serial: 'C4', name: 'spare', owner_id: null },
  ]).execute()
})

function get (url: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return injectJsonApi(app, 'GET', url, { headers })
}

function serials (response: TestResponse): Record<string, unknown> {
  const items = [...(Array.isArray(response.body.data) ? response.body.data : [response.body.data]), ...(response.body.included ?? [])]
  return Object.fromEntries(items.filter((item: any) => item.type === 'computer' && 'serial' in item.attributes).map((item: any) => [item.id, item.attributes.serial]))
}

t.test('a rule through a relationship: the serial is rendered on the owner\'s own computers only, everywhere', async (t) => {
  for (const url of ['/computers', '/computers/1', '/computers/2', '/users?include=computers', '/users/2/computers', '/computers?page[size]=0']) {
    t.same(serials(await get(url, ADA)), url === '/computers/2' || url === '/users/2/computers' ? {} : { 1: 'A1' }, `${url} as ada`)
    t.same(serials(await get(url)), {}, `${url} anonymous`)
  }
  t.same(serials(await get('/computers', GRACE)), { 2: 'B2', 3: 'B3' })
  const ids = (response: TestResponse): string[] => response.body.data.map((item: any) => item.id)
  t.same(ids(await get('/computers?filter[serial]=B2', ADA)), [], 'a filter sees NULL where the rule does not hold')
  t.same(ids(await get('/computers?filter[serial]=B2', GRACE)), ['2'])
  t.same(ids(await get('/computers?sort=-serial', GRACE)), ['1', '4', '3', '2'], 'NULLs first descending (by id), then grace\'s serials')
  t.same(ids(await get('/users?filter[computers.serial]=B3', ADA)), [], 'a relationship filter through the rule')
  t.same(ids(await get('/users?filter[computers.serial]=B3', GRACE)), ['2'])
})

t.test('leak: no answer to ada depends on grace\'s serials', async (t) => {
  const requests = [
    '/computers?filter[serial]=B2', '/computers?sort=serial', '/computers?sort=-serial&page[size]=1&page[number]=2',
    `/computers?filter=${encodeURIComponent(JSON.stringify([{ name: 'serial', op: 'startswith', val: 'B' }]))}`,
    '/users?filter[computers.serial]=B2', '/users?include=computers', '/computers/2',
  ]
  const seen = async (): Promise<unknown[]> => {
    const all: unknown[] = []
    for (const url of requests) {
      const response = await get(url, ADA)
      all.push({ status: response.status, body: response.body, etag: response.headers.etag })
    }
    let next: string | undefined = '/computers?sort=serial&page[size]=1'
    while (next !== undefined && all.length < 20) {
      const page = await get(next, { ...ADA, ...CURSORS })
      all.push({ status: page.status, body: page.body })
      next = page.body.links?.next ?? undefined
    }
    return all
  }
  const first = await seen()
  await db.updateTable('computers').set({ serial: 'Z9' }).where('id', '=', 2).execute()
  t.same(await seen(), first, 'grace\'s serial Z9 instead of B2 changes nothing ada sees')
  await db.updateTable('computers').set({ serial: null }).where('id', '=', 3).execute()
  t.same(await seen(), first, '… nor B3 gone')
  await db.updateTable('computers').set({ serial: 'B2' }).where('id', '=', 2).execute()
  await db.updateTable('computers').set({ serial: 'B3' }).where('id', '=', 3).execute()
})

t.test('a write rule on the created row: a client creates its own computers with a name, not others\'', async (t) => {
  const create = (owner: string, headers: Record<string, string>) => injectJsonApi(app, 'POST', '/computers', {
    headers,
    body: { data: { type: 'computer', attributes: { name: 'mine' }, relationships: { owner: { data: { type: 'user', id: owner } } } } },
  })
  const before = await db.selectFrom('computers').selectAll().orderBy('id').execute()
  for (const [owner, headers] of [['2', ADA], ['1', {}]] as const) {
    const refused = await create(owner, headers)
    t.equal(refused.status, 403)
    t.same(refused.body.errors.map((error: any) => [error.code, error.source]), [['FJA_FIELD_FORBIDDEN', { pointer: '/data/attributes/name' }]])
    t.same(await db.selectFrom('computers').selectAll().orderBy('id').execute(), before, 'nothing written: the created row was rolled back')
  }
  const created = await create('1', ADA)
  t.equal(created.status, 201, 'ada creates a computer of her own with a name')
  t.equal(created.body.data.attributes.name, 'mine')
  t.equal(created.body.data.attributes.serial, null, 'and reads its serial: the rule holds on the row as created')
  await db.deleteFrom('computers').where('id', '=', Number(created.body.data.id)).execute()
})

t.test('a write rule on an update is judged on the row as it is, before the write', async (t) => {
  const rename = (id: string, headers: Record<string, string>, owner?: string) => injectJsonApi(app, 'PATCH', `/computers/${id}`, {
    headers,
    body: { data: { type: 'computer', id, attributes: { name: 'renamed' }, ...(owner === undefined ? {} : { relationships: { owner: { data: { type: 'user', id: owner } } } }) } },
  })
  const refused = await rename('2', ADA, '1')
  t.equal(refused.status, 403, 'ada cannot rename grace\'s computer, not even while taking it')
  t.same(refused.body.errors[0].source, { pointer: '/data/attributes/name' })
  const [row] = await db.selectFrom('computers').select(['name', 'owner_id']).where('id', '=', 2).execute()
  t.same(row, { name: 'harvard', owner_id: 2 }, 'nothing written')
  t.equal((await rename('99', ADA)).status, 404, 'a computer that does not exist is a 404, not a 403')
  const allowed = await rename('1', ADA)
  t.equal(allowed.status, 200)
  t.equal(allowed.body.data.attributes.name, 'renamed')
  const given = await rename('1', ADA, '2')
  t.equal(given.status, 200, 'judged before the write: ada may rename the computer she gives away')
  t.notOk('serial' in given.body.data.attributes, 'the answer is read as the row is now: grace\'s, so ada does not see its serial')
  await db.updateTable('computers').set({ name: 'analytical', owner_id: 1 }).where('id', '=', 1).execute()
})
