/**
 * The count strategies of a resource (`count: true | 'exact' | 'estimated' | false`) on the same tables: what
 * `meta.count` is under each (a `count(*)`, the planner's estimate flagged `meta.countEstimated`, nothing), the
 * statements each costs, the pagination links (no `last` from an estimate; `next` exactly when a row follows), where
 * an estimated collection reports the exact number anyway (the page shows it), related collections and relationship
 * routes (the strategy of the target type), streamed collections (`page[size]=0`), cursor pages
 * (`meta.page.total` or `meta.page.estimatedTotal`), and a repository without `estimateCount`.
 *
 * Every response is checked against the JSON:API schema and the app's OpenAPI document (`injectJsonApi`).
 */
import t from 'tap'
import { sql } from 'kysely'
import { jsonApi, KyselyRepository, type AnyResourceDeclaration, type JsonApiOptions, type Repository } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { dialectPattern, testEngine } from '../helpers/engine.js'

const PROFILED = { accept: 'application/vnd.api+json; profile="https://jsonapi.org/profiles/ethanresnick/cursor-pagination"' }

const database = await openTestDatabase()
t.teardown(database.close)
const { db, counter } = database

// 900 users, ages 0–89 (each age ten times), names `user 001` …; 40 computers of user 1, two of every other user.
const USERS = 900
const series = (count: number): number[] => Array.from({ length: count }, (_, index) => index + 1)
await db.insertInto('users').values(series(USERS).map((i) => ({ name: `user ${String(i).padStart(3, '0')}`, age: i % 90 }))).execute()
await db.insertInto('computers').values(series(40).map((i) => ({ serial: `one-${i}`, owner_id: 1 }))).execute()
await db.insertInto('computers').values(series((USERS - 1) * 2).map((i) => ({ serial: `two-${i}`, owner_id: 2 + Math.floor((i - 1) / 2) }))).execute()
if (testEngine() === 'postgres') {
  // The statistics the planner estimates from (autovacuum would gather them in time; a test cannot wait for it).
  await sql`analyze users`.execute(db)
  await sql`analyze computers`.execute(db)
}

/**
 * Whether a statement is the estimate of a count: PostgreSQL's plan (`EXPLAIN`); MariaDB and SQLite have no estimate
 * and count exactly (`count(*)`), still flagged `countEstimated` (docs/databases.md).
 */
const ESTIMATES = testEngine() === 'postgres'
  ? (statement: string): boolean => statement.startsWith('explain (format json) ')
  : (statement: string): boolean => statement.startsWith('select count(*)')

type Test = Parameters<Parameters<typeof t.test>[0]>[0]
type Count = NonNullable<AnyResourceDeclaration['count']>
type Get = (url: string, headers?: Record<string, string>) => Promise<TestResponse>

/** An app over the test tables whose `user` and `computer` count with `users` and `computers`. */
async function appWith (users: Count, computers: Count = users, options: Partial<JsonApiOptions> = {}): Promise<Get> {
  const declarations = resources.map((resource: AnyResourceDeclaration) =>
    resource.type === 'user' ? { ...resource, count: users } : resource.type === 'computer' ? { ...resource, count: computers } : resource)
  const app = await documentedFastify()
  await app.register(jsonApi, { db, resources: declarations, ...options })
  await app.ready()
  t.teardown(() => app.close())
  return async (url, headers = {}) => {
    const response = await injectJsonApi(app, 'GET', url, { headers })
    if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${response.text}`)
    return response
  }
}

const exact = await appWith('exact')
const counted = await appWith(true)
const estimated = await appWith('estimated')
const uncounted = await appWith(false)

const filter = (...conditions: unknown[]): string => `filter=${encodeURIComponent(JSON.stringify(conditions))}`
const idsOf = (response: TestResponse): string[] => response.body.data.map((item: { id: string }) => item.id)
const linksOf = (response: TestResponse): string[] => Object.keys(response.body.links).sort()
/** The statements of one request (the counter reset before it). */
async function statementsOf (request: () => Promise<TestResponse>): Promise<{ response: TestResponse; statements: string[] }> {
  counter.reset()
  const response = await request()
  return { response, statements: [...counter.statements] }
}
/** The exact number of users matching a SQL condition. */
async function usersWhere (condition: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await sql<{ count: string }>`select count(*) as count from users where ${condition}`.execute(db)
  return Number(rows[0].count)
}
/** Within 10 % (or 5 rows) of the exact number: what the planner's statistics of a few hundred rows give. */
function close (t: Test, estimate: unknown, real: number, label: string): void {
  t.ok(Number.isInteger(estimate) && (estimate as number) >= 0, `${label}: a non-negative integer (${String(estimate)})`)
  t.ok(Math.abs((estimate as number) - real) <= Math.max(5, real * 0.1), `${label}: ${String(estimate)} is close to ${real}`)
}

t.test('one collection under each strategy: meta, links and statements', async (t) => {
  const url = `/users?${filter({ name: 'age', op: 'ge', val: 30 })}&sort=name&page[size]=20&page[number]=2`
  const real = await usersWhere(sql`age >= 30`)
  t.equal(real, 600)

  const byCount = await statementsOf(() => exact(url))
  t.same(byCount.response.body.meta, { count: real }, 'exact: count(*)')
  t.same(linksOf(byCount.response), ['first', 'last', 'next', 'prev', 'self'])
  t.match(byCount.response.body.links.last, /page%5Bnumber%5D=30$/)
  t.equal(byCount.statements.length, 2, 'exact: the page and the count')
  t.ok(byCount.statements.some((statement) => statement.startsWith('select count(*)')))
  t.equal((await counted(url)).text, byCount.response.text, '`count: true` is exact')

  const byPlan = await statementsOf(() => estimated(url))
  const meta = byPlan.response.body.meta
  t.same(Object.keys(meta).sort(), ['count', 'countEstimated'])
  t.equal(meta.countEstimated, true, 'flagged as an estimate')
  close(t, meta.count, real, 'estimated')
  t.same(linksOf(byPlan.response), ['first', 'next', 'prev', 'self'], 'no last link from an estimate')
  t.equal(byPlan.statements.length, 2, 'estimated: the page and a plan')
  if (testEngine() === 'postgres') t.notOk(byPlan.statements.some((statement) => /count\(\*\)/.test(statement)), 'no count(*)')
  const plan = byPlan.statements.find(ESTIMATES)
  t.ok(plan, testEngine() === 'postgres' ? 'an EXPLAIN' : 'a count(*): no estimate on this engine')
  t.match(plan, dialectPattern(/from "users" where "age" >= \$1/), 'of the same condition')
  t.notMatch(plan, /limit|order by/i, 'over every row, in no order')
  const pageAt = byPlan.statements.findIndex((statement) => statement !== plan)
  t.ok(counter.parameters[pageAt].includes(21), 'the page reads one row more than its 20')

  const without = await statementsOf(() => uncounted(url))
  t.notOk('meta' in without.response.body, 'none: no meta')
  t.same(linksOf(without.response), ['first', 'next', 'prev', 'self'])
  t.equal(without.statements.length, 1, 'none: the page only')

  t.same(idsOf(byPlan.response), idsOf(byCount.response), 'the same page under every strategy')
  t.same(idsOf(without.response), idsOf(byCount.response))
})

t.test('the estimate follows the filter and the scope of the statement', async (t) => {
  const cases: Array<[string, unknown[], ReturnType<typeof sql>]> = [
    ['no filter', [], sql`true`],
    ['age >= 30', [{ name: 'age', op: 'ge', val: 30 }], sql`age >= 30`],
    ['age < 9', [{ name: 'age', op: 'lt', val: 9 }], sql`age < 9`],
    ['age in a range', [{ name: 'age', op: 'ge', val: 20 }, { name: 'age', op: 'lt', val: 50 }], sql`age >= 20 and age < 50`],
    ['an age', [{ name: 'age', op: 'eq', val: 7 }], sql`age = 7`],
  ]
  for (const [label, conditions, condition] of cases) {
    const response = await estimated(`/users?${conditions.length === 0 ? '' : `${filter(...conditions)}&`}page[size]=5`)
    t.equal(response.body.meta.countEstimated, true, `${label}: an estimate`)
    close(t, response.body.meta.count, await usersWhere(condition), label)
  }
  // The related collection of a route is the target's collection with the link to its owner: the estimate is of that.
  const related = await estimated('/users/1/computers?page[size]=10')
  t.equal(related.body.meta.countEstimated, true)
  close(t, related.body.meta.count, 40, '/users/1/computers')
})

t.test('exact where the page shows the number; never below what the page proves', async (t) => {
  // One page holds every match: no row follows it, none comes before it.
  const few = await statementsOf(() => estimated(`/users?${filter({ name: 'age', op: 'eq', val: 89 })}&page[size]=20`))
  t.same(few.response.body.meta, { count: 10 }, 'the first page is the last: exact, not flagged')
  t.same(linksOf(few.response), ['first', 'last', 'self'], 'an exact count gives its last link')
  t.equal(few.statements.length, 2, 'the plan ran beside the page all the same')
  const none = await estimated(`/users?${filter({ name: 'name', op: 'eq', val: 'nobody' })}`)
  t.same(none.body.meta, { count: 0 }, 'no row: 0 (a planner never expects fewer than one row)')
  t.same(none.body.data, [])
  // The last page by number: the rows before it are known.
  const last = await estimated('/users?page[size]=100&page[number]=9')
  t.same(last.body.meta, { count: USERS }, 'the last page of 9: exact')
  t.match(last.body.links.last, /page%5Bnumber%5D=9$/)
  t.notOk('next' in last.body.links)
  const full = await estimated(`/users?${filter({ name: 'age', op: 'lt', val: 2 })}&page[size]=20`)
  t.same(full.body.meta, { count: 20 }, 'a full page and nothing after it: exact')
  t.notOk('next' in full.body.links, 'no next: the probe found no row beyond the page')
  // Beyond the last page: at most the rows before it.
  const beyond = await estimated('/users?page[size]=100&page[number]=12')
  t.same(beyond.body.data, [])
  t.equal(beyond.body.meta.countEstimated, true)
  t.ok(beyond.body.meta.count <= 1100, 'no more than the rows before an empty page')
  t.same(linksOf(beyond), ['first', 'prev', 'self'])
})

t.test('links of an estimated collection: next exactly when a row follows, never last', async (t) => {
  for (const [conditions, size] of [[[{ name: 'age', op: 'lt', val: 5 }], 10], [[{ name: 'age', op: 'lt', val: 5 }], 7], [[], 150]] as const) {
    const real = await usersWhere(conditions.length === 0 ? sql`true` : sql`age < 5`)
    const seen: string[] = []
    let url: string | undefined = `/users?${conditions.length === 0 ? '' : `${filter(...conditions)}&`}page[size]=${size}`
    let pages = 0
    while (url !== undefined) {
      const page = await estimated(url)
      pages++
      seen.push(...idsOf(page))
      const next: string | undefined = page.body.links.next
      const final = seen.length === real
      t.equal(next === undefined, final, `page ${pages} of ${size}: next exactly when rows follow`)
      t.equal('last' in page.body.links, final, `page ${pages}: last only once the count is exact`)
      t.equal(page.body.meta.countEstimated === undefined, final, `page ${pages}: flagged until the last page`)
      if (final) t.equal(page.body.meta.count, real, 'the last page: the exact count')
      url = next === undefined ? undefined : decodeURIComponent(next)
    }
    t.equal(pages, Math.ceil(real / size))
    t.equal(new Set(seen).size, real, 'every row once')
  }
})

t.test('related collections and relationship routes count as their target type does', async (t) => {
  const computersEstimated = await appWith('exact', 'estimated')
  const related = await statementsOf(() => computersEstimated('/users/1/computers?page[size]=10'))
  t.equal(related.response.body.meta.countEstimated, true, 'computer is estimated, user is not')
  close(t, related.response.body.meta.count, 40, 'related collection')
  t.same(linksOf(related.response), ['first', 'next', 'self'])
  t.equal(related.statements.length, 3, 'the owner, the page and the plan')
  t.ok(related.statements.some(ESTIMATES))
  const linkage = await statementsOf(() => computersEstimated('/users/1/relationships/computers?page[size]=10'))
  t.equal(linkage.response.body.meta.countEstimated, true)
  t.equal(linkage.response.body.meta.count, related.response.body.meta.count, 'the same estimate for the linkage')
  t.same(linksOf(linkage.response), ['first', 'next', 'related', 'self'])
  t.equal(linkage.statements.length, 3)
  t.same((await computersEstimated('/users/2/computers')).body.meta, { count: 2 }, 'one page of two: exact')
  t.same((await computersEstimated('/users?page[size]=1')).body.meta, { count: USERS }, 'users stay exact')

  const computersUncounted = await appWith('estimated', false)
  const without = await statementsOf(() => computersUncounted('/users/1/relationships/computers?page[size]=10'))
  t.notOk('meta' in without.response.body, 'computer is not counted')
  t.same(linksOf(without.response), ['first', 'next', 'related', 'self'])
  t.equal(without.statements.length, 2, 'the owner and the page')
  t.notOk('meta' in (await computersUncounted('/users/1/computers?page[size]=10')).body)
  t.equal((await computersUncounted('/users?page[size]=10')).body.meta.countEstimated, true, 'users are estimated')
  // A to-one related resource is never counted, whatever the target's strategy.
  const owner = await statementsOf(() => computersUncounted('/computers/1/owner'))
  t.same(owner.response.body.data.id, '1')
  t.notOk('meta' in owner.response.body)
  t.notOk(owner.statements.some((statement) => testEngine() === 'postgres' ? statement.startsWith('explain') : ESTIMATES(statement)))
})

t.test('page[size]=0: every row is streamed, so an estimated collection reports their exact number', async (t) => {
  const url = `/users?${filter({ name: 'age', op: 'ge', val: 80 })}&page[size]=0`
  const streamed = await statementsOf(() => estimated(url))
  t.equal(streamed.response.body.data.length, 100)
  t.same(streamed.response.body.meta, { count: 100 }, 'the rows written: exact, not flagged')
  t.same(linksOf(streamed.response), ['self'])
  t.notOk(streamed.statements.some((statement) => /count\(\*\)|^explain/.test(statement)), 'neither a count nor a plan')
  const byCount = await statementsOf(() => exact(url))
  t.same(byCount.response.body, streamed.response.body, 'the same document as exact')
  t.ok(byCount.statements.some((statement) => statement.startsWith('select count(*)')), 'exact: a count(*) in the snapshot')
  t.notOk('meta' in (await uncounted(url)).body, 'none: no count')
  const related = await appWith('exact', 'estimated')
  t.same((await related('/users/1/computers?page[size]=0')).body.meta, { count: 40 }, 'a streamed related collection')
})

t.test('cursor pages: meta.page.estimatedTotal for an estimate, meta.page.total for an exact count', async (t) => {
  const url = `/users?${filter({ name: 'age', op: 'ge', val: 30 })}&sort=name&page[size]=20`
  const byCount = await exact(url, PROFILED)
  t.same(byCount.body.meta, { count: 600, page: { total: 600 } })
  const byPlan = await statementsOf(() => estimated(url, PROFILED))
  const meta = byPlan.response.body.meta
  t.same(Object.keys(meta).sort(), ['count', 'countEstimated', 'page'])
  t.equal(meta.countEstimated, true)
  close(t, meta.count, 600, 'cursor page')
  t.same(meta.page, { estimatedTotal: { bestGuess: meta.count } }, 'the profile\'s estimatedTotal, never its (exact) total')
  t.equal(byPlan.statements.length, 2, 'the keyset page and the plan')
  t.same(idsOf(byPlan.response), idsOf(byCount))
  t.same(linksOf(byPlan.response), ['first', 'next', 'self'])
  // Following `next` to the end: the last page has rows before it (a cursor does not say how many): still an estimate.
  let page = byPlan.response
  for (let step = 0; step < 29; step++) page = await estimated(decodeURIComponent(page.body.links.next), PROFILED)
  t.equal(idsOf(page).length, 20)
  t.notOk('next' in page.body.links, 'the thirtieth page is the last')
  t.equal(page.body.meta.countEstimated, true, 'rows before it, in unknown number')
  t.ok(page.body.meta.count >= 21, 'at least the rows the page proves')
  // A cursor page that is both the first and the last shows every row.
  const whole = await estimated(`/users?${filter({ name: 'age', op: 'eq', val: 3 })}&page[size]=20`, PROFILED)
  t.same(whole.body.meta, { count: 10, page: { total: 10 } }, 'first and last: exact')
  t.notOk('meta' in (await uncounted(url, PROFILED)).body, 'none: no meta')
})

/** The Kysely repository on the test database, method by method (without `estimateCount` and `scan`). */
function delegating (): Repository {
  const inner = new KyselyRepository(db)
  return {
    findMany: (layer) => inner.findMany(layer),
    count: (layer) => inner.count(layer),
    findKeyset: (layer, window) => inner.findKeyset(layer, window),
    findRelated: (owner, relationship, ids, layer) => inner.findRelated(owner, relationship, ids, layer),
    insert: (...args) => inner.insert(...args),
    update: (...args) => inner.update(...args),
    delete: (target) => inner.delete(target),
    replaceLinks: (...args) => inner.replaceLinks(...args),
    addLinks: (...args) => inner.addLinks(...args),
    removeLinks: (...args) => inner.removeLinks(...args),
    transaction: (work) => inner.transaction(work),
  }
}

t.test('a repository without estimateCount counts exactly', async (t) => {
  const get = await appWith('estimated', 'estimated', { db: undefined, repository: delegating() })
  const page = await statementsOf(() => get('/users?page[size]=10'))
  t.same(page.response.body.meta, { count: USERS }, 'exact, not flagged')
  t.same(linksOf(page.response), ['first', 'last', 'next', 'self'])
  t.ok(page.statements.some((statement) => statement.startsWith('select count(*)')))
})

t.test("a repository's estimate is kept within what the page shows", async (t) => {
  let estimate = 3
  const get = await appWith('estimated', 'estimated', { db: undefined, repository: { ...delegating(), estimateCount: async () => estimate } })
  const low = await get('/users?page[size]=20&page[number]=2')
  t.same(low.body.meta, { count: 41, countEstimated: true }, 'too low: raised to the rows before the page, its rows and the one after it')
  const lowCursor = await get('/users?page[size]=20', PROFILED)
  t.same(lowCursor.body.meta, { count: 21, countEstimated: true, page: { estimatedTotal: { bestGuess: 21 } } }, 'by cursor: its rows and the one after it')
  estimate = 5000
  t.same((await get('/users?page[size]=20&page[number]=2')).body.meta, { count: 5000, countEstimated: true }, 'a high estimate stays')
  t.same((await get('/users?page[size]=100&page[number]=11')).body.meta, { count: 1000, countEstimated: true }, 'an empty page: at most the rows before it')
  t.same((await get('/users?page[size]=100&page[number]=9')).body.meta, { count: USERS }, 'the last page: exact whatever the estimate')
})

t.test('the OpenAPI document describes the meta of each strategy', async (t) => {
  const app = await documentedFastify()
  const declarations = resources.map((resource: AnyResourceDeclaration) =>
    resource.type === 'user' ? { ...resource, count: 'estimated' as const } : resource.type === 'computer' ? { ...resource, count: false } : resource)
  await app.register(jsonApi, { db, resources: declarations })
  await app.ready()
  t.teardown(() => app.close())
  const schemas = (app.swagger() as { components: { schemas: Record<string, any> } }).components.schemas
  const metaOf = (name: string): unknown => schemas[name].properties.meta
  t.same(metaOf('user.collection'), { $ref: '#/components/schemas/jsonapi.estimated-collection-meta' })
  t.same(metaOf('user.to-many-linkage-document'), { $ref: '#/components/schemas/jsonapi.estimated-collection-meta' })
  t.same(metaOf('computer.collection'), { $ref: '#/components/schemas/jsonapi.uncounted-collection-meta' })
  t.same(metaOf('group.collection'), { $ref: '#/components/schemas/jsonapi.collection-meta' })
  t.same(Object.keys(schemas['jsonapi.estimated-collection-meta'].properties), ['count', 'countEstimated', 'page'])
  t.same(Object.keys(schemas['jsonapi.estimated-collection-meta'].properties.page.properties), ['total', 'estimatedTotal', 'rangeTruncated'])
  t.same(Object.keys(schemas['jsonapi.uncounted-collection-meta'].properties), ['page'])
  t.same(Object.keys(schemas['jsonapi.collection-meta'].properties), ['count', 'page'])
})
