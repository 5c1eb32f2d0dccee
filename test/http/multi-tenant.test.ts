// The multi-tenant example (examples/multi-tenant): one `scope` per type keeps a request to its tenant's rows
// everywhere the type is reached, even when the database holds links from one tenant's rows to another's, and
// `beforeCreate` stamps the tenant on every new row.
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { buildTenantApp } from '../../examples/multi-tenant/app.js'
import { migrateToLatest } from '../../examples/multi-tenant/migrations.js'
import { openTestDatabase } from '../helpers/database.js'
import { assertError, type ExpectedError } from '../helpers/assert-errors.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { emptyTables as emptyTablesOf, testEngine } from '../helpers/engine.js'

const engine = testEngine()

/**
 * The example's schema (examples/multi-tenant/migrations.ts, written with PostgreSQL's `serial` ids) as MariaDB and
 * SQLite assign ids: `integer auto_increment` (tables in `utf8mb4` compared by code point, `tenant_id` a `varchar`,
 * which MariaDB can index) and `integer primary key autoincrement`.
 */
async function migrateElsewhere (db: Kysely<any>): Promise<void> {
  const mysql = engine === 'mysql'
  const tenant = mysql ? 'varchar(255)' : 'text'
  const table = (name: string) => mysql ? db.schema.createTable(name).modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : db.schema.createTable(name)
  for (const name of ['projects', 'members', 'labels']) {
    await table(name)
      .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
      .addColumn('tenant_id', tenant, (col) => col.notNull())
      .addColumn('name', 'text', (col) => col.notNull())
      .execute()
    await db.schema.createIndex(`${name}_tenant_id_index`).on(name).column('tenant_id').execute()
  }
  await table('tasks')
    .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('tenant_id', tenant, (col) => col.notNull())
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('project_id', 'integer', (col) => col.references('projects.id').onDelete('set null'))
    .addColumn('assignee_id', 'integer', (col) => col.references('members.id').onDelete('set null'))
    .execute()
  await db.schema.createIndex('tasks_tenant_id_index').on('tasks').column('tenant_id').execute()
  await db.schema.createIndex('tasks_project_id_index').on('tasks').column('project_id').execute()
  await db.schema.createIndex('tasks_assignee_id_index').on('tasks').column('assignee_id').execute()
  await table('task_labels')
    .addColumn('task_id', 'integer', (col) => col.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('label_id', 'integer', (col) => col.notNull().references('labels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('task_labels_pkey', ['task_id', 'label_id'])
    .execute()
  await db.schema.createIndex('task_labels_label_id_index').on('task_labels').column('label_id').execute()
}

const database = await openTestDatabase(engine === 'postgres' ? migrateToLatest : migrateElsewhere)
const db = database.db
const counter = database.counter
const app = await buildTenantApp({ db })
await app.ready()
t.teardown(async () => {
  await app.close()
  await database.close()
})

const ATOMIC = 'application/vnd.api+json;ext="https://jsonapi.org/ext/atomic"'
const TABLES = ['projects', 'members', 'labels', 'tasks', 'task_labels'] as const
/** A column as the statements name it: `"tenant_id"`, or `` `tenant_id` `` on MariaDB. */
const quoted = (column: string): string => engine === 'mysql' ? `\`${column}\`` : `"${column}"`

/**
 * Sends a request as `tenant` (undefined: no `X-Tenant` header). Every body must be a valid JSON:API document (an
 * `atomic:results` one for a successful batch), or this throws and the test fails.
 */
function as (tenant: string | undefined, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, request: TestRequest = {}): Promise<TestResponse> {
  return injectJsonApi(app, method, url, { ...request, headers: { ...(request.headers ?? {}), ...(tenant === undefined ? {} : { 'x-tenant': tenant }) } })
}

/** An `/operations` batch as `tenant`. */
function operations (tenant: string | undefined, ops: Array<Record<string, unknown>>): Promise<TestResponse> {
  return as(tenant, 'POST', '/operations', { body: { 'atomic:operations': ops }, headers: { 'content-type': ATOMIC } })
}

/** Every row of every table, as JSON, in a stable order. */
async function snapshot (): Promise<Record<string, unknown[]>> {
  const tables: Record<string, unknown[]> = {}
  for (const table of TABLES) {
    const order = table === 'task_labels' ? sql`t.task_id, t.label_id` : sql`t.id`
    if (engine !== 'postgres') {
      tables[table] = (await sql<Record<string, unknown>>`select * from ${sql.table(table)} t order by ${order}`.execute(db)).rows
      continue
    }
    const result = await sql<{ row: unknown }>`select to_jsonb(t) as row from ${sql.table(table)} t order by ${order}`.execute(db)
    tables[table] = result.rows.map((row) => row.row)
  }
  return tables
}

/** The rows of `task_labels`, as `task:label` pairs. */
async function taskLabels (): Promise<string[]> {
  const rows = await db.selectFrom('task_labels').select(['task_id', 'label_id']).orderBy('task_id').orderBy('label_id').execute()
  return rows.map((row) => `${row.task_id}:${row.label_id}`)
}

/**
 * Two tenants, `a` and `b`, with rows in every table, and links across tenants that an inconsistent database could
 * hold (the foreign keys reference `id` alone):
 *
 * - task 5 (b) is in project 1 (a);
 * - task 2 (a) is assigned to member 3 (b);
 * - task 2 (a) has label 3 (b);
 * - task 5 (b) has label 1 (a).
 *
 * Every text of tenant b contains `b-secret`.
 */
async function seed (): Promise<void> {
  await emptyTables()
  await db.insertInto('projects').values([
    { tenant_id: 'a', name: 'apollo' },
    { tenant_id: 'a', name: 'borealis' },
    { tenant_id: 'b', name: 'b-secret-project' },
  ]).execute()
  await db.insertInto('members').values([
    { tenant_id: 'a', name: 'ann' },
    { tenant_id: 'a', name: 'cid' },
    { tenant_id: 'b', name: 'b-secret-bob' },
  ]).execute()
  await db.insertInto('labels').values([
    { tenant_id: 'a', name: 'urgent' },
    { tenant_id: 'a', name: 'later' },
    { tenant_id: 'b', name: 'b-secret-label' },
  ]).execute()
  await db.insertInto('tasks').values([
    { tenant_id: 'a', title: 'write', project_id: 1, assignee_id: 2 },
    { tenant_id: 'a', title: 'review', project_id: 1, assignee_id: 3 },
    { tenant_id: 'a', title: 'deploy', project_id: 2, assignee_id: 1 },
    { tenant_id: 'a', title: 'idle', project_id: null, assignee_id: null },
    { tenant_id: 'b', title: 'b-secret-task', project_id: 1, assignee_id: 3 },
    { tenant_id: 'b', title: 'b-secret-other', project_id: 3, assignee_id: 3 },
  ]).execute()
  await db.insertInto('task_labels').values([
    { task_id: 1, label_id: 1 },
    { task_id: 1, label_id: 2 },
    { task_id: 2, label_id: 1 },
    { task_id: 2, label_id: 3 },
    { task_id: 3, label_id: 2 },
    { task_id: 5, label_id: 1 },
    { task_id: 6, label_id: 3 },
  ]).execute()
}

/** Empties every table and starts its ids again at 1. */
async function emptyTables (): Promise<void> {
  await emptyTablesOf(db, [...TABLES].reverse())
}

t.beforeEach(seed)

/** The rows of tenant b, by type. */
const B_ROWS: Record<string, string[]> = { project: ['3'], member: ['3'], label: ['3'], task: ['5', '6'] }
/** The rows of tenant a, by type. */
const A_ROWS: Record<string, string[]> = { project: ['1', '2'], member: ['1', '2'], label: ['1', '2'], task: ['1', '2', '3', '4'] }

/** Every resource identifier anywhere in a document (primary data, included, linkage). */
function identifiers (value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) identifiers(item, found)
  } else if (typeof value === 'object' && value !== null) {
    const { type, id } = value as { type?: unknown; id?: unknown }
    if (typeof type === 'string' && typeof id === 'string') found.push(`${type}:${id}`)
    for (const item of Object.values(value)) identifiers(item, found)
  }
  return found
}

/**
 * The document shows nothing of `other`'s rows: no text of theirs, no identifier in `data` or `included` (linkage
 * included), and no tenant column. The document's own links repeat the request's query and an error's `meta` the
 * request's `ref` and `data`: what the client sent, so they are not searched.
 */
function noLeak (t: Test, response: TestResponse, other: Record<string, string[]> = B_ROWS, marker = /b-secret/): void {
  const { data, included, errors } = response.body ?? {}
  const shown = { data, included, errors: errors?.map(({ meta: _meta, ...error }: Record<string, unknown>) => error) }
  t.notMatch(JSON.stringify(shown), marker, 'no attribute of another tenant')
  t.notMatch(JSON.stringify({ data, included }), /tenant_id/, 'the tenant column is never rendered')
  const leaked = identifiers({ data, included }).filter((key) => {
    const [type, id] = key.split(':')
    return other[type]?.includes(id) ?? false
  })
  t.same(leaked, [], 'no identifier of another tenant')
}

function ids (response: TestResponse): string[] {
  const data = response.body.data
  return (Array.isArray(data) ? data : [data]).filter((item) => item !== null).map((item: { id: string }) => item.id)
}

function includedKeys (response: TestResponse): string[] {
  return (response.body.included ?? []).map((item: { type: string; id: string }) => `${item.type}:${item.id}`).sort()
}

function linkage (item: { relationships: Record<string, { data?: unknown }> }, name: string): unknown {
  return item.relationships[name].data
}

function jsonFilter (filter: unknown): string {
  return encodeURIComponent(JSON.stringify(filter))
}

/** A request that must fail with `expected` and leave every table as it was. */
async function failsUnchanged (t: Test, tenant: string | undefined, method: 'POST' | 'PATCH' | 'DELETE', url: string, request: TestRequest, expected: ExpectedError): Promise<TestResponse> {
  const before = await snapshot()
  const response = await as(tenant, method, url, request)
  assertError(t, response, expected)
  noLeak(t, response)
  t.same(await snapshot(), before, `${method} ${url}: every table is unchanged`)
  return response
}

/** A batch that must fail with one error (status, code, pointer) and leave every table as it was. */
async function batchFailsUnchanged (t: Test, ops: Array<Record<string, unknown>>, expected: { status: number; code: string; pointer: string }): Promise<TestResponse> {
  const before = await snapshot()
  const response = await operations('a', ops)
  t.equal(response.status, expected.status, `${expected.code}: status`)
  t.equal(response.body.errors.length, 1, 'one error object')
  const [error] = response.body.errors
  t.equal(error.status, String(expected.status))
  t.equal(error.code, expected.code)
  t.same(error.source, { pointer: expected.pointer })
  noLeak(t, response)
  t.same(await snapshot(), before, 'no operation of the batch persists')
  return response
}

t.test('the tenant comes from X-Tenant: missing or malformed is a 401 pointing at the header', async (t) => {
  const requests: Array<[string | undefined, 'GET' | 'POST', string, TestRequest]> = [
    [undefined, 'GET', '/tasks', {}],
    ['', 'GET', '/tasks', {}],
    ['A', 'GET', '/projects', {}],
    ['a b', 'GET', '/projects/1', {}],
    ['a_b', 'GET', '/members', {}],
    ['x'.repeat(41), 'GET', '/labels', {}],
    [undefined, 'POST', '/projects', { body: { data: { type: 'project', attributes: { name: 'nobody' } } } }],
    [undefined, 'POST', '/operations', { body: { 'atomic:operations': [{ op: 'add', data: { type: 'project', attributes: { name: 'nobody' } } }] }, headers: { 'content-type': ATOMIC } }],
  ]
  const before = await snapshot()
  for (const [tenant, method, url, request] of requests) {
    const response = await as(tenant, method, url, request)
    t.equal(response.status, 401, `${method} ${url} with X-Tenant ${JSON.stringify(tenant)}`)
    assertError(t, response, {
      status: 401,
      code: 'unknown_tenant',
      title: 'Unknown tenant',
      header: 'X-Tenant',
      detail: tenant === undefined ? /name the tenant in the X-Tenant header/ : /is not a tenant name/,
    })
  }
  t.same(await snapshot(), before, 'nothing was written')
  const fine = await as('x'.repeat(40), 'GET', '/projects')
  t.equal(fine.status, 200, 'a 40-character tenant name is fine (and has no rows)')
  t.same(fine.body.data, [])
})

t.test('leak matrix, reads as tenant a: no row of tenant b shows, by id, attribute, count or linkage', async (t) => {
  const cases: Array<[string, (t: Test, response: TestResponse) => void]> = [
    ['/tasks', (t, response) => {
      t.same(ids(response), ['1', '2', '3', '4'])
      t.same(response.body.meta, { count: 4 }, 'the count is of tenant a\'s tasks')
      t.same(response.body.data[0].attributes, { title: 'write' }, 'no tenant_id among the attributes')
    }],
    ['/tasks?page[size]=1', (t, response) => {
      t.same(ids(response), ['1'])
      t.same(response.body.meta, { count: 4 })
      t.same(response.body.links, {
        self: '/tasks?page%5Bsize%5D=1',
        first: '/tasks?page%5Bsize%5D=1',
        next: '/tasks?page%5Bsize%5D=1&page%5Bnumber%5D=2',
        last: '/tasks?page%5Bsize%5D=1&page%5Bnumber%5D=4',
      }, 'the last page counts visible tasks only')
    }],
    ['/tasks?page[size]=1&page[number]=5', (t, response) => t.same(ids(response), [], 'no fifth page: task 5 is not there')],
    ['/tasks/5', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/tasks/6', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/projects/3', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/members/3', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/labels/3', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/tasks/2', (t, response) => {
      t.same(response.body.data, {
        type: 'task',
        id: '2',
        attributes: { title: 'review' },
        links: { self: '/tasks/2' },
        relationships: {
          project: { links: { self: '/tasks/2/relationships/project', related: '/tasks/2/project' } },
          assignee: { links: { self: '/tasks/2/relationships/assignee', related: '/tasks/2/assignee' } },
          labels: { links: { self: '/tasks/2/relationships/labels', related: '/tasks/2/labels' } },
        },
      })
    }],
    ['/projects', (t, response) => {
      t.same(ids(response), ['1', '2'])
      t.same(response.body.meta, { count: 2 })
    }],
    ['/members', (t, response) => t.same(ids(response), ['1', '2'])],
    ['/labels', (t, response) => t.same(ids(response), ['1', '2'])],
    ['/projects/1/tasks', (t, response) => {
      t.same(ids(response), ['1', '2'], 'not task 5 of tenant b, though it points at project 1')
      t.same(response.body.meta, { count: 2 })
    }],
    ['/projects/1/relationships/tasks', (t, response) => {
      t.same(response.body.data, [{ type: 'task', id: '1' }, { type: 'task', id: '2' }])
      t.same(response.body.meta, { count: 2 })
    }],
    ['/projects/1/tasks?page[size]=1', (t, response) => t.equal(response.body.links.last, '/projects/1/tasks?page%5Bsize%5D=1&page%5Bnumber%5D=2')],
    ['/projects/3/tasks', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/projects/3/relationships/tasks', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/labels/1/tasks', (t, response) => {
      t.same(ids(response), ['1', '2'], 'not task 5 of tenant b, though it has label 1')
      t.same(response.body.meta, { count: 2 })
    }],
    ['/labels/1/relationships/tasks', (t, response) => t.same(response.body.data, [{ type: 'task', id: '1' }, { type: 'task', id: '2' }])],
    ['/tasks/2/labels', (t, response) => {
      t.same(ids(response), ['1'], 'not label 3 of tenant b')
      t.same(response.body.meta, { count: 1 })
    }],
    ['/tasks/2/relationships/labels', (t, response) => t.same(response.body.data, [{ type: 'label', id: '1' }])],
    ['/tasks/2/assignee', (t, response) => {
      t.equal(response.status, 200)
      t.equal(response.body.data, null, 'the member of tenant b is no assignee for tenant a')
    }],
    ['/tasks/2/relationships/assignee', (t, response) => t.equal(response.body.data, null)],
    ['/tasks/2?include=assignee,labels,project', (t, response) => {
      t.equal(linkage(response.body.data, 'assignee'), null)
      t.same(linkage(response.body.data, 'labels'), [{ type: 'label', id: '1' }])
      t.same(linkage(response.body.data, 'project'), { type: 'project', id: '1' })
      t.same(includedKeys(response), ['label:1', 'project:1'])
    }],
    ['/tasks?include=assignee', (t, response) => {
      t.same(response.body.data.map((task: any) => linkage(task, 'assignee')), [
        { type: 'member', id: '2' }, null, { type: 'member', id: '1' }, null,
      ])
      t.same(includedKeys(response), ['member:1', 'member:2'])
    }],
    ['/projects?include=tasks', (t, response) => {
      t.same(response.body.data.map((project: any) => linkage(project, 'tasks')), [
        [{ type: 'task', id: '1' }, { type: 'task', id: '2' }],
        [{ type: 'task', id: '3' }],
      ], 'task 5 is not linked to project 1')
      t.same(includedKeys(response), ['task:1', 'task:2', 'task:3'])
    }],
    ['/projects?include=tasks.labels', (t, response) => {
      const tasks = Object.fromEntries(response.body.included.filter((item: any) => item.type === 'task').map((item: any) => [item.id, linkage(item, 'labels')]))
      t.same(tasks, {
        1: [{ type: 'label', id: '1' }, { type: 'label', id: '2' }],
        2: [{ type: 'label', id: '1' }],
        3: [{ type: 'label', id: '2' }],
      }, 'task 2 is not linked to label 3 of tenant b')
      t.same(includedKeys(response), ['label:1', 'label:2', 'task:1', 'task:2', 'task:3'])
    }],
    ['/members?include=tasks.project', (t, response) => {
      t.same(response.body.data.map((member: any) => linkage(member, 'tasks')), [[{ type: 'task', id: '3' }], [{ type: 'task', id: '1' }]])
      t.same(includedKeys(response), ['project:1', 'project:2', 'task:1', 'task:3'])
    }],
    ['/labels?include=tasks.project', (t, response) => {
      t.same(response.body.data.map((label: any) => linkage(label, 'tasks')), [
        [{ type: 'task', id: '1' }, { type: 'task', id: '2' }],
        [{ type: 'task', id: '1' }, { type: 'task', id: '3' }],
      ], 'task 5 of tenant b is not among label 1\'s tasks')
      t.same(includedKeys(response), ['project:1', 'project:2', 'task:1', 'task:2', 'task:3'])
    }],
    ['/tasks?include=project.tasks.assignee', (t, response) => {
      const project1 = response.body.included.find((item: any) => item.type === 'project' && item.id === '1')
      t.same(linkage(project1, 'tasks'), [{ type: 'task', id: '1' }, { type: 'task', id: '2' }], 'depth 2: project 1\'s tasks do not include task 5')
      t.same(includedKeys(response), ['member:1', 'member:2', 'project:1', 'project:2'])
    }],
    [`/projects?filter=${jsonFilter([{ name: 'tasks', op: 'any', val: { name: 'title', op: 'eq', val: 'b-secret-task' } }])}`, (t, response) => {
      t.same(ids(response), [], 'project 1 does not have task 5 for tenant a')
      t.same(response.body.meta, { count: 0 })
    }],
    [`/labels?filter=${jsonFilter([{ name: 'tasks', op: 'any', val: { name: 'title', op: 'like', val: 'b-secret%' } }])}`, (t, response) => t.same(ids(response), [])],
    [`/tasks?filter=${jsonFilter([{ name: 'labels', op: 'any', val: { name: 'name', op: 'eq', val: 'b-secret-label' } }])}`, (t, response) => t.same(ids(response), [])],
    [`/tasks?filter=${jsonFilter([{ name: 'assignee', op: 'has' }])}`, (t, response) => {
      t.same(ids(response), ['1', '3'], 'task 2 has no assignee tenant a can see')
      t.same(response.body.meta, { count: 2 })
    }],
    [`/tasks?filter=${jsonFilter([{ not: { name: 'assignee', op: 'has' } }])}`, (t, response) => t.same(ids(response), ['2', '4'])],
    [`/tasks?filter=${jsonFilter([{ name: 'assignee.name', op: 'eq', val: 'b-secret-bob' }])}`, (t, response) => {
      t.same(ids(response), [])
      t.same(response.body.meta, { count: 0 })
    }],
    [`/tasks?filter=${jsonFilter([{ name: 'project.tasks.title', op: 'eq', val: 'b-secret-task' }])}`, (t, response) => t.same(ids(response), [], 'depth 2 relationship filter')],
    ['/tasks?filter[assignee.name]=b-secret-bob', (t, response) => {
      t.same(ids(response), [])
      t.same(response.body.meta, { count: 0 })
    }],
    ['/tasks?filter[assignee_id]=3', (t, response) => t.same(ids(response), [], 'the linkage filter does not reach member 3')],
    ['/tasks?filter[labels.name]=b-secret-label', (t, response) => t.same(ids(response), [])],
    ['/tasks?sort=assignee.name', (t, response) => {
      t.same(ids(response), ['3', '1', '2', '4'], 'ann, cid, then no assignee (task 2\'s member is not visible) — NULLs last ascending')
    }],
    ['/tasks?sort=-assignee.name', (t, response) => {
      t.same(ids(response), ['2', '4', '1', '3'], 'NULLs first descending, ties by id')
    }],
    ['/projects/1/tasks?sort=-assignee.name', (t, response) => t.same(ids(response), ['2', '1'])],
    ['/tasks?fields[task]=title', (t, response) => {
      t.same(response.body.data.map((task: any) => task.attributes), [{ title: 'write' }, { title: 'review' }, { title: 'deploy' }, { title: 'idle' }])
      t.same(response.body.data.map((task: any) => Object.keys(task)), Array(4).fill(['type', 'id', 'attributes', 'links']))
    }],
    ['/tasks?fields[task]=title,labels&include=labels&fields[label]=name', (t, response) => {
      t.same(response.body.data.map((task: any) => linkage(task, 'labels')), [
        [{ type: 'label', id: '1' }, { type: 'label', id: '2' }], [{ type: 'label', id: '1' }], [{ type: 'label', id: '2' }], [],
      ])
      t.same(response.body.included.map((item: any) => item.attributes), [{ name: 'urgent' }, { name: 'later' }])
    }],
  ]
  for (const [url, check] of cases) {
    await t.test(`GET ${url}`, async (t) => {
      const response = await as('a', 'GET', url)
      check(t, response)
      noLeak(t, response)
    })
  }
})

t.test('leak matrix, writes as tenant a: no row of tenant b is written or linked', async (t) => {
  await t.test('PATCH and DELETE of a task of tenant b: 404', async (t) => {
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/5', { body: { data: { type: 'task', id: '5', attributes: { title: 'mine now' } } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/5', { body: { data: { type: 'task', id: '5', relationships: { project: { data: { type: 'project', id: '2' } } } } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'DELETE', '/tasks/5', {}, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'DELETE', '/projects/3', {}, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/5/relationships/project', { body: { data: { type: 'project', id: '2' } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/5/relationships/labels', { body: { data: [] } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'PATCH', '/projects/3/relationships/tasks', { body: { data: [{ type: 'task', id: '1' }] } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'PATCH', '/projects/3/relationships/tasks', { body: { data: [] } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'DELETE', '/labels/3/relationships/tasks', { body: { data: [{ type: 'task', id: '2' }] } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  })

  await t.test('linking a task of tenant a to a row of tenant b: 404 pointing at the identifier', async (t) => {
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/1', {
      body: { data: { type: 'task', id: '1', attributes: { title: 'changed' }, relationships: { assignee: { data: { type: 'member', id: '3' } } } } },
    }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/assignee/data' })
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/1', {
      body: { data: { type: 'task', id: '1', relationships: { labels: { data: [{ type: 'label', id: '2' }, { type: 'label', id: '3' }] } } } },
    }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/labels/data/1' })
    await failsUnchanged(t, 'a', 'PATCH', '/tasks/1/relationships/assignee', { body: { data: { type: 'member', id: '3' } } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data' })
    await failsUnchanged(t, 'a', 'POST', '/tasks', {
      body: { data: { type: 'task', attributes: { title: 'sneaky' }, relationships: { project: { data: { type: 'project', id: '3' } } } } },
    }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/project/data' })
    await failsUnchanged(t, 'a', 'POST', '/tasks', {
      body: { data: { type: 'task', attributes: { title: 'sneaky' }, relationships: { labels: { data: [{ type: 'label', id: '3' }] } } } },
    }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/labels/data/0' })
    await failsUnchanged(t, 'a', 'POST', '/projects', {
      body: { data: { type: 'project', attributes: { name: 'grabby' }, relationships: { tasks: { data: [{ type: 'task', id: '6' }] } } } },
    }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/tasks/data/0' })
    await failsUnchanged(t, 'a', 'POST', '/labels/1/relationships/tasks', { body: { data: [{ type: 'task', id: '5' }] } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/0' })
    await failsUnchanged(t, 'a', 'POST', '/labels/2/relationships/tasks', { body: { data: [{ type: 'task', id: '1' }, { type: 'task', id: '6' }] } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/1' })
    await failsUnchanged(t, 'a', 'POST', '/projects/2/relationships/tasks', { body: { data: [{ type: 'task', id: '6' }] } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/0' })
    await failsUnchanged(t, 'a', 'POST', '/labels/3/relationships/tasks', { body: { data: [{ type: 'task', id: '1' }] } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
    await failsUnchanged(t, 'a', 'POST', '/projects/3/tasks', { body: { data: { type: 'task', attributes: { title: 'in b' } } } }, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })
  })

  await t.test('DELETE of a b label from an a task\'s labels: 404, the link stays', async (t) => {
    await failsUnchanged(t, 'a', 'DELETE', '/tasks/2/relationships/labels', { body: { data: [{ type: 'label', id: '3' }] } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/0' })
    t.same(await taskLabels(), ['1:1', '1:2', '2:1', '2:3', '3:2', '5:1', '6:3'])
  })

  await t.test('PATCH /projects/1/relationships/tasks []: tenant a\'s tasks are unlinked, task 5 of tenant b keeps project 1', async (t) => {
    const response = await as('a', 'PATCH', '/projects/1/relationships/tasks', { body: { data: [] } })
    t.equal(response.status, 200)
    t.same(response.body.data, [])
    noLeak(t, response)
    const rows = await db.selectFrom('tasks').select(['id', 'tenant_id', 'project_id']).orderBy('id').execute()
    t.same(rows, [
      { id: 1, tenant_id: 'a', project_id: null },
      { id: 2, tenant_id: 'a', project_id: null },
      { id: 3, tenant_id: 'a', project_id: 2 },
      { id: 4, tenant_id: 'a', project_id: null },
      { id: 5, tenant_id: 'b', project_id: 1 },
      { id: 6, tenant_id: 'b', project_id: 3 },
    ])
    const after = await as('a', 'GET', '/projects/1/relationships/tasks')
    t.same(after.body.data, [])
    t.same(after.body.meta, { count: 0 })
  })

  await t.test('PATCH /projects/1/relationships/tasks replacing with task 4: only tenant a\'s rows move', async (t) => {
    const response = await as('a', 'PATCH', '/projects/1/relationships/tasks', { body: { data: [{ type: 'task', id: '4' }] } })
    t.equal(response.status, 200)
    const rows = await db.selectFrom('tasks').select(['id', 'project_id']).orderBy('id').execute()
    t.same(rows.map((row) => row.project_id), [null, null, 2, 1, 1, 3])
  })

  await t.test('PATCH /tasks/2/relationships/labels []: the link to label 3 of tenant b survives', async (t) => {
    const response = await as('a', 'PATCH', '/tasks/2/relationships/labels', { body: { data: [] } })
    t.equal(response.status, 200)
    noLeak(t, response)
    t.same(await taskLabels(), ['1:1', '1:2', '2:3', '3:2', '5:1', '6:3'])
    const labels = await as('a', 'GET', '/tasks/2/relationships/labels')
    t.same(labels.body.data, [])
  })

  await t.test('PATCH /labels/1/relationships/tasks [task 3]: the link of task 5 of tenant b survives', async (t) => {
    const response = await as('a', 'PATCH', '/labels/1/relationships/tasks', { body: { data: [{ type: 'task', id: '3' }] } })
    t.equal(response.status, 200)
    t.same(await taskLabels(), ['1:2', '2:3', '3:1', '3:2', '5:1', '6:3'])
  })

  await t.test('PATCH /tasks/2 with assignee null and labels [2]: only tenant a\'s links change', async (t) => {
    const response = await as('a', 'PATCH', '/tasks/2', {
      body: { data: { type: 'task', id: '2', relationships: { assignee: { data: null }, labels: { data: [{ type: 'label', id: '2' }] } } } },
    })
    t.equal(response.status, 200)
    noLeak(t, response)
    t.same(await taskLabels(), ['1:1', '1:2', '2:2', '2:3', '3:2', '5:1', '6:3'])
    const row = await db.selectFrom('tasks').select(['assignee_id']).where('id', '=', 2).executeTakeFirstOrThrow()
    t.equal(row.assignee_id, null, 'the row of tenant a is tenant a\'s to change')
  })

  await t.test('DELETE of tenant a\'s own rows: the database\'s on delete actions reach the links of tenant b (not scoped)', async (t) => {
    const project = await as('a', 'DELETE', '/projects/1')
    t.equal(project.status, 200)
    const rows = await db.selectFrom('tasks').select(['id', 'project_id']).orderBy('id').execute()
    t.same(rows.map((row) => row.project_id), [null, null, 2, null, null, 3], 'on delete set null: task 5 of tenant b loses its (foreign) project')
    const label = await as('a', 'DELETE', '/labels/1')
    t.equal(label.status, 200)
    t.same(await taskLabels(), ['1:2', '2:3', '3:2', '6:3'], 'on delete cascade: the join row of task 5 and label 1 goes too')
    t.same(await db.selectFrom('tasks').select('id').where('tenant_id', '=', 'b').orderBy('id').execute(), [{ id: 5 }, { id: 6 }], 'the rows of tenant b themselves stay')
  })

  await t.test('/operations: every operation that reaches a row of tenant b fails, pointing into the batch', async (t) => {
    await batchFailsUnchanged(t, [
      { op: 'update', data: { type: 'task', id: '5', attributes: { title: 'mine now' } } },
    ], { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', pointer: '/atomic:operations/0/data' })
    await batchFailsUnchanged(t, [
      { op: 'update', ref: { type: 'task', id: '5' }, data: { type: 'task', id: '5', attributes: { title: 'mine now' } } },
    ], { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', pointer: '/atomic:operations/0/ref' })
    await batchFailsUnchanged(t, [
      { op: 'remove', ref: { type: 'task', id: '5' } },
    ], { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', pointer: '/atomic:operations/0/ref' })
    await batchFailsUnchanged(t, [
      { op: 'add', data: { type: 'task', attributes: { title: 'sneaky' }, relationships: { project: { data: { type: 'project', id: '3' } } } } },
    ], { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/atomic:operations/0/data/relationships/project/data' })
    await batchFailsUnchanged(t, [
      { op: 'add', ref: { type: 'task', id: '1', relationship: 'labels' }, data: [{ type: 'label', id: '3' }] },
    ], { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/atomic:operations/0/data/0' })
    await batchFailsUnchanged(t, [
      { op: 'update', ref: { type: 'task', id: '1', relationship: 'assignee' }, data: { type: 'member', id: '3' } },
    ], { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/atomic:operations/0/data' })
    await batchFailsUnchanged(t, [
      { op: 'remove', ref: { type: 'task', id: '2', relationship: 'labels' }, data: [{ type: 'label', id: '3' }] },
    ], { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/atomic:operations/0/data/0' })
    await batchFailsUnchanged(t, [
      { op: 'add', ref: { type: 'label', id: '3', relationship: 'tasks' }, data: [{ type: 'task', id: '1' }] },
    ], { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', pointer: '/atomic:operations/0/ref' })
  })

  await t.test('/operations: a batch whose last operation reaches tenant b leaves the database unchanged', async (t) => {
    const response = await batchFailsUnchanged(t, [
      { op: 'add', data: { type: 'project', lid: 'p', attributes: { name: 'gamma' } } },
      { op: 'add', data: { type: 'task', lid: 't', attributes: { title: 'plan' }, relationships: { project: { data: { type: 'project', lid: 'p' } }, labels: { data: [{ type: 'label', id: '1' }] } } } },
      { op: 'update', data: { type: 'task', id: '1', attributes: { title: 'rewritten' } } },
      { op: 'remove', ref: { type: 'task', id: '4' } },
      { op: 'update', ref: { type: 'task', id: '2', relationship: 'assignee' }, data: { type: 'member', id: '1' } },
      { op: 'add', ref: { type: 'task', lid: 't', relationship: 'labels' }, data: [{ type: 'label', id: '2' }, { type: 'label', id: '3' }] },
    ], { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/atomic:operations/5/data/1' })
    t.match(response.body.errors[0].meta, { operation: 5, op: 'add' })
  })

  await t.test('/operations as tenant a: a batch within the tenant succeeds and stamps the tenant', async (t) => {
    const response = await operations('a', [
      { op: 'add', data: { type: 'project', lid: 'p', attributes: { name: 'gamma' } } },
      { op: 'add', data: { type: 'task', attributes: { title: 'plan' }, relationships: { project: { data: { type: 'project', lid: 'p' } }, labels: { data: [{ type: 'label', id: '1' }] } } } },
      { op: 'update', data: { type: 'task', id: '1', attributes: { title: 'rewritten' } } },
    ])
    t.equal(response.status, 200)
    noLeak(t, response)
    t.same(response.body['atomic:results'].map((result: any) => `${result.data.type}:${result.data.id}`), ['project:4', 'task:7', 'task:1'])
    t.same(response.body['atomic:results'][0].data.attributes, { name: 'gamma' })
    t.same(await db.selectFrom('projects').select(['id', 'tenant_id']).where('id', '=', 4).execute(), [{ id: 4, tenant_id: 'a' }])
    t.same(await db.selectFrom('tasks').select(['id', 'tenant_id', 'project_id']).where('id', '=', 7).execute(), [{ id: 7, tenant_id: 'a', project_id: 4 }])
    t.same(await taskLabels(), ['1:1', '1:2', '2:1', '2:3', '3:2', '5:1', '6:3', '7:1'])
  })
})

t.test('creation stamps the tenant; tenant_id is neither rendered nor writable', async (t) => {
  const created = await as('a', 'POST', '/projects', { body: { data: { type: 'project', attributes: { name: 'gamma' } } } })
  t.equal(created.status, 201)
  t.equal(created.headers.location, '/projects/4')
  t.same(created.body.data.attributes, { name: 'gamma' }, 'no tenant_id in the response')
  t.same(await db.selectFrom('projects').selectAll().where('id', '=', 4).execute(), [{ id: 4, tenant_id: 'a', name: 'gamma' }])

  const task = await as('b', 'POST', '/tasks', {
    body: { data: { type: 'task', attributes: { title: 'b-secret-new' }, relationships: { project: { data: { type: 'project', id: '3' } }, labels: { data: [{ type: 'label', id: '3' }] } } } },
  })
  t.equal(task.status, 201)
  t.same(task.body.data.attributes, { title: 'b-secret-new' })
  t.same(await db.selectFrom('tasks').selectAll().where('id', '=', 7).execute(), [{ id: 7, tenant_id: 'b', title: 'b-secret-new', project_id: 3, assignee_id: null }])
  t.same(await taskLabels(), ['1:1', '1:2', '2:1', '2:3', '3:2', '5:1', '6:3', '7:3'])

  const related = await as('a', 'POST', '/projects/2/tasks', { body: { data: { type: 'task', attributes: { title: 'from the project' } } } })
  t.equal(related.status, 201)
  t.same(await db.selectFrom('tasks').select(['id', 'tenant_id', 'project_id']).where('id', '=', 8).execute(), [{ id: 8, tenant_id: 'a', project_id: 2 }], 'a related route\'s create is stamped too')

  const unknown = { status: 422, code: 'FJA_UNKNOWN_FIELD', pointer: '/data/attributes/tenant_id', detail: /is not an attribute of/ } as const
  await failsUnchanged(t, 'a', 'POST', '/projects', { body: { data: { type: 'project', attributes: { name: 'sneaky', tenant_id: 'b' } } } }, unknown)
  await failsUnchanged(t, 'a', 'POST', '/projects', { body: { data: { type: 'project', attributes: { name: 'sneaky', tenant_id: 'a' } } } }, unknown)
  await failsUnchanged(t, 'a', 'PATCH', '/projects/1', { body: { data: { type: 'project', id: '1', attributes: { tenant_id: 'b' } } } }, unknown)
  const batch = await batchFailsUnchanged(t, [
    { op: 'add', data: { type: 'member', attributes: { name: 'sneaky', tenant_id: 'b' } } },
  ], { status: 422, code: 'FJA_UNKNOWN_FIELD', pointer: '/atomic:operations/0/data/attributes/tenant_id' })
  t.match(batch.body.errors[0].detail, /is not an attribute of 'member'/, 'a hidden read-only attribute is an unknown field: errors do not reveal it')

  assertError(t, await as('a', 'GET', '/tasks?filter[tenant_id]=b'), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter[tenant_id]' })
  assertError(t, await as('a', 'GET', `/tasks?filter=${jsonFilter([{ name: 'tenant_id', op: 'eq', val: 'b' }])}`), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter' })
  assertError(t, await as('a', 'GET', '/tasks?sort=tenant_id'), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'sort' })
  assertError(t, await as('a', 'GET', '/tasks?fields[task]=tenant_id'), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'fields[task]' })
})

t.test('tenant b sees its own rows and none of tenant a\'s', async (t) => {
  const aMarker = /"(apollo|borealis|ann|cid|urgent|later|write|review|deploy|idle)"/
  const cases: Array<[string, (t: Test, response: TestResponse) => void]> = [
    ['/tasks', (t, response) => {
      t.same(ids(response), ['5', '6'])
      t.same(response.body.meta, { count: 2 })
    }],
    ['/projects', (t, response) => t.same(ids(response), ['3'])],
    ['/tasks/1', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/projects/1/tasks', (t, response) => assertError(t, response, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND' })],
    ['/tasks/5/project', (t, response) => t.equal(response.body.data, null, 'project 1 of tenant a is no project for tenant b')],
    ['/tasks?include=project,assignee,labels', (t, response) => {
      t.same(response.body.data.map((task: any) => [linkage(task, 'project'), linkage(task, 'assignee'), linkage(task, 'labels')]), [
        [null, { type: 'member', id: '3' }, []],
        [{ type: 'project', id: '3' }, { type: 'member', id: '3' }, [{ type: 'label', id: '3' }]],
      ])
      t.same(includedKeys(response), ['label:3', 'member:3', 'project:3'])
    }],
    ['/labels/3?include=tasks', (t, response) => {
      t.same(linkage(response.body.data, 'tasks'), [{ type: 'task', id: '6' }], 'task 2 of tenant a is not among label 3\'s tasks')
      t.same(includedKeys(response), ['task:6'])
    }],
    ['/members/3/tasks', (t, response) => t.same(ids(response), ['5', '6'], 'not task 2 of tenant a')],
    ['/tasks?sort=project.name', (t, response) => t.same(ids(response), ['6', '5'], 'task 5\'s project is not visible: it sorts last')],
    [`/projects?filter=${jsonFilter([{ name: 'tasks', op: 'any' }])}`, (t, response) => t.same(ids(response), ['3'])],
  ]
  for (const [url, check] of cases) {
    await t.test(`GET ${url}`, async (t) => {
      const response = await as('b', 'GET', url)
      check(t, response)
      noLeak(t, response, A_ROWS, aMarker)
    })
  }
  await failsUnchanged(t, 'b', 'PATCH', '/tasks/5', { body: { data: { type: 'task', id: '5', relationships: { labels: { data: [{ type: 'label', id: '1' }] } } } } }, { status: 404, code: 'FJA_RELATED_NOT_FOUND', pointer: '/data/relationships/labels/data/0' })
})

t.test('the scope adds no statement: it is part of the statement that reads', async (t) => {
  const counts: Array<[string, number]> = [
    ['/tasks', 2],
    ['/tasks/1', 1],
    ['/projects?include=tasks', 3],
    ['/projects?include=tasks.labels', 4],
    [`/tasks?sort=assignee.name&filter=${jsonFilter([{ name: 'assignee', op: 'has' }])}`, 2],
  ]
  for (const [url, expected] of counts) {
    counter.reset()
    const response = await as('a', 'GET', url)
    t.equal(response.status, 200, url)
    t.equal(counter.count, expected, `GET ${url}: ${expected} statements`)
    t.ok(counter.statements.every((statement) => statement.includes(`${quoted('tenant_id')} =`)), `GET ${url}: every statement is scoped`)
  }
})
