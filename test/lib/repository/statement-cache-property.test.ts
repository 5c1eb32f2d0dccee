/**
 * The statement cache by property: a statement served from the cache is the statement a fresh compilation writes.
 * Generated requests of the example app — filters with every operator, nested `and`/`or`/`not`, relationship
 * filters, comparisons between fields, NULLs and values alike, simple `filter[name]` forms, sorts through to-one
 * relationships, fieldsets, includes, pages, related collections, the scopes and field rules of an acting user — run against the app
 * with the cache and without it, on one database; each must run the same statements with the same parameters and
 * answer the same document. The cache of the first app learns from every request before (and evicts: it is bounded),
 * so most requests of a shape seen before are served from it.
 *
 * The seed is random and printed; replay with `FC_SEED=<seed>`, change the number of requests with
 * `FC_STATEMENT_RUNS=<n>` (default 2,000).
 */
import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { openCacheApps } from '../../helpers/cache-apps.js'
import { injectJsonApi } from '../../helpers/test-app.js'

const RUNS = Number(process.env.FC_STATEMENT_RUNS ?? '2000')
const SEED = process.env.FC_SEED === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(process.env.FC_SEED)
t.comment(`seed ${SEED} (replay: FC_SEED=${SEED} npx tap test/lib/repository/statement-cache-property.test.ts)`)

const { db, counter, cached, uncached } = await openCacheApps(t.teardown)

await db.insertInto('groups').values([{ name: 'engineers' }, { name: 'poets' }]).execute()
await db.insertInto('users').values([
  { name: 'ada', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', age: 36, group_id: 1, phone: 'ada' },
  { name: 'grace', first_name: 'Grace', last_name: 'Grace', email: null, age: 85, group_id: 1, phone: 'x' },
  { name: 'linus', email: 'linus@example.com', age: 54, group_id: 2 },
  { name: '100%_sure', age: null, group_id: null },
]).execute()
await db.insertInto('computers').values([
  { serial: 'A1', name: 'analytical engine', owner_id: 1 },
  { serial: 'B2', name: 'harvard mark', owner_id: 2 },
  { serial: null, name: 'univac', owner_id: 2 },
  { serial: 'C4', name: null, owner_id: null },
]).execute()
await db.insertInto('posts').values([{ title: 'notes', body: 'engine', user_id: 1 }, { title: 'cobol', body: 'moth', user_id: 2 }]).execute()
await db.insertInto('notes').values([{ text: 'ada\'s', owner_id: 1 }, { text: 'grace\'s', owner_id: 2 }]).execute()

// ---------------------------------------------------------------------------------------------------------------
// Generators: few distinct values, so that values alike (and shapes alike) are common.

const TEXT = fc.constantFrom('ada', 'grace', 'A%', '100%_sure', 'x', '')
const INTEGER = fc.constantFrom(0, 36, 54, 85, 100)
const TEXT_OPS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'like', 'notlike', 'ilike', 'notilike', 'startswith', 'endswith', 'match'] as const
const ORDER_OPS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const

/** A comparison of one of `names` (text attributes) or of `integers` (integer attributes). */
function comparison (names: readonly string[], integers: readonly string[]): fc.Arbitrary<unknown> {
  const text = fc.constantFrom(...names)
  const options: Array<fc.Arbitrary<unknown>> = [
    fc.record({ name: text, op: fc.constantFrom(...TEXT_OPS), val: TEXT }),
    fc.record({ name: text, op: fc.constantFrom('in_', 'notin_'), val: fc.array(TEXT, { minLength: 1, maxLength: 3 }) }),
    fc.record({ name: text, op: fc.constant('between'), val: fc.tuple(TEXT, TEXT) }),
    fc.record({ name: text, op: fc.constantFrom('is_', 'isnot'), val: fc.constant(null) }),
  ]
  if (names.length > 1) options.push(fc.record({ name: text, op: fc.constantFrom(...ORDER_OPS), field: text }))
  if (integers.length > 0) {
    const integer = fc.constantFrom(...integers)
    options.push(
      fc.record({ name: integer, op: fc.constantFrom(...ORDER_OPS), val: INTEGER }),
      fc.record({ name: integer, op: fc.constantFrom('in_', 'notin_'), val: fc.array(INTEGER, { minLength: 1, maxLength: 3 }) }),
      fc.record({ name: integer, op: fc.constant('between'), val: fc.tuple(INTEGER, INTEGER) }),
      fc.record({ name: integer, op: fc.constantFrom('is_', 'isnot'), val: fc.constant(null) }),
    )
  }
  return fc.oneof(...options)
}

// `phone` has a read rule (its own user's only): its comparisons bind the rule's values before their own.
const userComparison = comparison(['name', 'first_name', 'last_name', 'email', 'status', 'phone'], ['age'])
const computerComparison = comparison(['serial', 'name'], [])
const groupComparison = comparison(['name'], [])

/** A filter node of users: comparisons, boolean forms, relationship filters (to-many `any`, to-one `has`). */
const userNode: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    userComparison,
    userComparison,
    fc.record({ or: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ and: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('node') }),
    fc.record({ name: fc.constant('computers'), op: fc.constantFrom('any', 'has'), val: computerComparison }),
    fc.record({ name: fc.constant('group'), op: fc.constant('has'), val: groupComparison }),
  ),
})).node

const computerNode: fc.Arbitrary<unknown> = fc.oneof(
  computerComparison,
  fc.record({ or: fc.array(computerComparison, { minLength: 1, maxLength: 2 }) }),
  fc.record({ name: fc.constant('owner'), op: fc.constant('has'), val: userComparison }),
)

const SIMPLE_USER = fc.oneof(
  fc.tuple(fc.constantFrom('name', 'email', 'status'), TEXT).map(([name, value]) => `filter[${name}]=${encodeURIComponent(value)}`),
  fc.tuple(fc.constant('age'), INTEGER).map(([name, value]) => `filter[${name}]=${value}`),
  fc.constantFrom('filter[group_id]=1', 'filter[group_id]=2', 'filter[computers.serial]=A1', 'filter[group.name]=poets'),
)

function parameters (parts: ReadonlyArray<string | undefined>): string {
  const given = parts.filter((part): part is string => part !== undefined && part !== '')
  return given.length === 0 ? '' : `?${given.join('&')}`
}

const jsonFilter = (node: fc.Arbitrary<unknown>) => fc.array(node, { minLength: 1, maxLength: 2 })
  .map((nodes) => `filter=${encodeURIComponent(JSON.stringify(nodes))}`)

const page = fc.option(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }))
  .map(([size, number]) => `page[size]=${size}&page[number]=${number}`), { nil: undefined })

const userCollection = fc.record({
  filter: fc.option(fc.oneof(jsonFilter(userNode), SIMPLE_USER), { nil: undefined }),
  sort: fc.option(fc.uniqueArray(fc.constantFrom('name', '-name', 'age', '-age', 'group.name', '-email', 'id', 'phone'), { minLength: 1, maxLength: 3, selector: (key) => key.replace(/^-/, '') })
    .map((keys) => `sort=${keys.join(',')}`), { nil: undefined }),
  fields: fc.option(fc.subarray(['name', 'email', 'age', 'phone', 'group', 'computers']).map((fields) => `fields[user]=${fields.join(',')}`), { nil: undefined }),
  include: fc.option(fc.subarray(['computers', 'group', 'posts', 'notes', 'computers.owner'], { minLength: 1 }).map((paths) => `include=${paths.join(',')}`), { nil: undefined }),
  page,
}).map((parts) => `/users${parameters([parts.filter, parts.sort, parts.fields, parts.include, parts.page])}`)

const computerCollection = fc.record({
  filter: fc.option(jsonFilter(computerNode), { nil: undefined }),
  sort: fc.option(fc.constantFrom('sort=serial', 'sort=-owner.name', 'sort=owner.age,-name', 'sort=owner.phone'), { nil: undefined }),
  include: fc.option(fc.constantFrom('include=owner', 'include=owner.group'), { nil: undefined }),
  page,
}).map((parts) => `/computers${parameters([parts.filter, parts.sort, parts.include, parts.page])}`)

const detail = fc.tuple(fc.constantFrom('users', 'computers'), fc.integer({ min: 1, max: 5 }), fc.constantFrom('', '?include=computers', '?include=owner', '?fields[user]=name'))
  .map(([type, id, query]) => `/${type}/${id}${query}`)

const related = fc.tuple(fc.integer({ min: 1, max: 5 }), fc.constantFrom('computers', 'relationships/computers', 'notes', 'group'), fc.option(jsonFilter(computerComparison), { nil: undefined }))
  .map(([id, path, filter]) => `/users/${id}/${path}${path === 'computers' && filter !== undefined ? `?${filter}` : ''}`)

const request = fc.record({
  url: fc.oneof(userCollection, userCollection, computerCollection, detail, related),
  user: fc.constantFrom(undefined, '1', '2'),
})

// ---------------------------------------------------------------------------------------------------------------

/** The statements (text and parameters) a request ran, sorted (a page and its count finish in either order), and its answer. */
async function run (fastify: FastifyInstance, url: string, user: string | undefined) {
  counter.reset()
  const response = await injectJsonApi(fastify, 'GET', url, { headers: user === undefined ? {} : { 'x-user-id': user } })
  const ran = counter.statements.map((statement, index) => JSON.stringify([statement, counter.parameters[index]])).sort()
  return { ran, status: response.status, body: response.body }
}

t.test(`${RUNS} generated requests: the same statements, parameters and documents with the cache and without`, async (t) => {
  let statements = 0
  let succeeded = 0
  await fc.assert(fc.asyncProperty(request, async ({ url, user }) => {
    const withCache = await run(cached, url, user)
    const without = await run(uncached, url, user)
    statements += withCache.ran.length
    if (withCache.status === 200) succeeded++
    // A difference fails the property: fast-check shrinks it to the smallest request that shows it.
    return isDeepStrictEqual(withCache.ran, without.ran) && withCache.status === without.status && isDeepStrictEqual(withCache.body, without.body)
  }), { numRuns: RUNS, seed: SEED })
  t.pass('every request: the same statements and parameters, status and document')
  t.ok(succeeded > RUNS / 4, `${succeeded} of ${RUNS} requests answered 200, running ${statements} statements`)
})
