/**
 * Compiled statements by shape (lib/repository/kysely/statement-cache.ts): a statement of a known shape reuses its
 * SQL with new values. The cache may only skip work: with it, every request runs exactly the statements (text and
 * parameters) and answers exactly the documents it does without it. Checked here request by request, on pairs of
 * requests of the same shape with different values (the second is served from the cache), over every kind of filter
 * node, scopes, includes, pages and creates.
 */
import t from 'tap'
import { CompiledQuery } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { KyselyRepository } from '../../../lib/index.js'
import { StatementCache } from '../../../lib/repository/kysely/statement-cache.js'
import { resources } from '../../../examples/app/resources.js'
import { openCacheApps } from '../../helpers/cache-apps.js'
import { injectJsonApi } from '../../helpers/test-app.js'
import { Memo } from '../../../lib/schema/memo.js'
import { POSTGRES } from '../../../lib/repository/kysely/postgres-engine.js'
import { engineOf } from '../../../lib/repository/kysely/engine-of.js'

t.test('a shape is learned from a compilation with distinct values, then served without compiling', async (t) => {
  const cache = new StatementCache(2)
  let compiled = 0
  const compile = (sql: string, parameters: unknown[]) => () => {
    compiled++
    return CompiledQuery.raw(sql, parameters)
  }
  const first = cache.query({ key: 'a', values: [1, 'x'] }, compile('select $1, $2', [1, 'x']))
  t.equal(first.sql, 'select $1, $2')
  t.equal(compiled, 1)
  const second = cache.query({ key: 'a', values: [2, 'y'] }, compile('never', []))
  t.equal(compiled, 1, 'the second statement of the shape is not compiled')
  t.equal(second.sql, 'select $1, $2')
  t.same(second.parameters, [2, 'y'], 'with its own values')

  t.equal(cache.query(undefined, compile('select 1', [])).sql, 'select 1', 'no shape: compiled')
  t.equal(compiled, 2)

  // Parameters that are not the shape's values in order: the shape is compiled every time.
  cache.query({ key: 'b', values: [1, 2] }, compile('select $1, $2', [2, 1]))
  cache.query({ key: 'b', values: [3, 4] }, compile('select $1, $2', [4, 3]))
  t.equal(compiled, 4, 'a shape whose values do not match its parameters is never served from the cache')

  // Which values are alike is part of a shape's key (the shape functions write `?0 ?1 ?0`): learned from values
  // alike in places, a statement serves only values alike in the same places.
  const cacheOfTwo = new StatementCache(2)
  compiled = 0
  cacheOfTwo.query({ key: 'c', values: [7, 7] }, compile('select $1, $2', [7, 7]))
  cacheOfTwo.query({ key: 'c', values: [8, 8] }, compile('never', []))
  t.equal(compiled, 1, 'learned from values alike, served to values alike in the same places')
  t.same(cacheOfTwo.query({ key: 'c', values: [[1, 2], [1, 2]] }, compile('never', [])).parameters, [[1, 2], [1, 2]])
  // Bounded: the oldest shape goes first.
  cacheOfTwo.query({ key: 'd', values: [1] }, compile('select $1 as d', [1]))
  cacheOfTwo.query({ key: 'e', values: [1] }, compile('select $1 as e', [1]))
  t.equal(cacheOfTwo.size, 2)
  compiled = 0
  cacheOfTwo.query({ key: 'c', values: [3, 3] }, compile('select $1, $2', [3, 3]))
  t.equal(compiled, 1, 'the oldest shape was dropped and is compiled again')

  const off = new StatementCache(0)
  off.query({ key: 'a', values: [1] }, compile('select $1', [1]))
  t.equal(off.size, 0, 'a cache of no shapes learns none')
})

// ---------------------------------------------------------------------------------------------------------------
// The example app twice on one database: with the cache (the default) and without.

const { db, counter, cached, uncached } = await openCacheApps(t.teardown)

await db.insertInto('groups').values([{ name: 'engineers' }, { name: 'poets' }]).execute()
await db.insertInto('users').values([
  { name: 'ada', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', age: 36, birth_date: '1815-12-10', group_id: 1, words: ['analytical'] },
  { name: 'grace', first_name: 'Grace', email: null, age: 85, birth_date: '1906-12-09', group_id: 1, words: ['cobol'] },
  { name: 'linus', email: 'linus@example.com', age: 54, group_id: 2, words: [] },
  { name: '100%_sure', age: 0, group_id: null, words: ['odd'] },
]).execute()
await db.insertInto('computers').values([
  { serial: 'A1', name: 'analytical engine', owner_id: 1 },
  { serial: 'B2', name: 'harvard mark', owner_id: 2 },
  { serial: 'B3', name: 'univac', owner_id: 2 },
  { serial: 'C4', name: 'minix box', owner_id: 3 },
]).execute()
await db.insertInto('posts').values([{ title: 'notes', body: 'engine', user_id: 1 }, { title: 'cobol', body: 'moth', user_id: 2 }]).execute()

/** The filter parameter of a JSON filter. */
function filter (value: unknown): string {
  return `filter=${encodeURIComponent(JSON.stringify(value))}`
}

/**
 * Pairs of GETs of the same shape with different values: the first teaches the cache, the second is served from it.
 * Each covers a kind of filter node or statement.
 */
/** The served requests of {@link PAIRS} whose lists hold another number of values than their teacher's. */
const LIST_COUNTS = new Set([
  '/users?include=computers,posts&page[size]=3',
  `/users?${filter([{ name: 'name', op: 'in_', val: ['grace'] }])}`,
  `/users?${filter([{ name: 'name', op: 'notin_', val: ['grace', 'x'] }])}`,
])

const PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['/users/1', '/users/2'],
  ['/users/1?include=computers', '/users/2?include=computers'],
  ['/users?page[size]=2', '/users?page[size]=3'],
  ['/users?page[size]=2&page[number]=3', '/users?page[size]=1&page[number]=3'],
  ['/users?include=computers,posts&page[size]=2', '/users?include=computers,posts&page[size]=3'],
  ['/users?sort=-age,name&page[size]=2', '/users?sort=-age,name&page[size]=3'],
  [`/users?${filter([{ name: 'name', op: 'eq', val: 'ada' }])}`, `/users?${filter([{ name: 'name', op: 'eq', val: 'grace' }])}`],
  [`/users?${filter([{ name: 'email', op: 'ne', val: 'x@example.com' }])}`, `/users?${filter([{ name: 'email', op: 'ne', val: 'ada@example.com' }])}`],
  [`/users?${filter([{ name: 'age', op: 'between', val: [1, 60] }])}`, `/users?${filter([{ name: 'age', op: 'between', val: [31, 90] }])}`],
  [`/users?${filter([{ name: 'name', op: 'in_', val: ['ada', 'linus'] }])}`, `/users?${filter([{ name: 'name', op: 'in_', val: ['grace'] }])}`],
  [`/users?${filter([{ name: 'name', op: 'notin_', val: ['ada'] }])}`, `/users?${filter([{ name: 'name', op: 'notin_', val: ['grace', 'x'] }])}`],
  [`/users?${filter([{ name: 'name', op: 'startswith', val: '100%' }])}`, `/users?${filter([{ name: 'name', op: 'startswith', val: 'gr' }])}`],
  [`/users?${filter([{ name: 'name', op: 'endswith', val: 'a' }])}`, `/users?${filter([{ name: 'name', op: 'endswith', val: '_sure' }])}`],
  [`/users?${filter([{ name: 'name', op: 'ilike', val: '%A%' }])}`, `/users?${filter([{ name: 'name', op: 'ilike', val: 'L%' }])}`],
  [`/users?${filter([{ name: 'email', op: 'is_', val: null }, { name: 'age', op: 'gt', val: 1 }])}`, `/users?${filter([{ name: 'email', op: 'is_', val: null }, { name: 'age', op: 'gt', val: 50 }])}`],
  [`/users?${filter([{ name: 'first_name', op: 'match', val: 'ada' }])}`, `/users?${filter([{ name: 'first_name', op: 'match', val: 'grace' }])}`],
  [`/users?${filter([{ name: 'first_name', op: 'eq', field: 'last_name' }, { name: 'age', op: 'lt', val: 99 }])}`, `/users?${filter([{ name: 'first_name', op: 'eq', field: 'last_name' }, { name: 'age', op: 'lt', val: 40 }])}`],
  [`/users?${filter([{ or: [{ name: 'name', op: 'eq', val: 'ada' }, { not: { name: 'age', op: 'ge', val: 50 } }] }])}`, `/users?${filter([{ or: [{ name: 'name', op: 'eq', val: 'linus' }, { not: { name: 'age', op: 'ge', val: 10 } }] }])}`],
  [`/users?${filter([{ name: 'computers', op: 'any', val: { name: 'serial', op: 'eq', val: 'B2' } }])}`, `/users?${filter([{ name: 'computers', op: 'any', val: { name: 'serial', op: 'eq', val: 'A1' } }])}`],
  [`/computers?${filter([{ name: 'owner', op: 'has', val: { name: 'group', op: 'has', val: { name: 'name', op: 'eq', val: 'engineers' } } }])}`, `/computers?${filter([{ name: 'owner', op: 'has', val: { name: 'group', op: 'has', val: { name: 'name', op: 'eq', val: 'poets' } } }])}`],
  ['/users?filter[group_id]=1', '/users?filter[group_id]=2'],
  ['/users?filter[computers.serial]=A1', '/users?filter[computers.serial]=C4'],
  ['/users/1/computers', '/users/2/computers'],
  ['/users/2/relationships/computers', '/users/3/relationships/computers'],
  ['/computers/1/owner', '/computers/2/owner'],
]

/** The statements (text and parameters) a request ran, and its answer. */
async function run (fastify: FastifyInstance, url: string, options: { body?: unknown; headers?: Record<string, string> } = {}, method: 'GET' | 'POST' = 'GET') {
  counter.reset()
  const response = await injectJsonApi(fastify, method, url, options)
  // Statements that run in parallel (a page and its count) are logged in the order they finish: compare them sorted.
  const ran = counter.statements.map((statement, index) => ({ statement, parameters: counter.parameters[index] }))
    .sort((a, b) => a.statement.localeCompare(b.statement) || JSON.stringify(a.parameters).localeCompare(JSON.stringify(b.parameters)))
  return { statements: ran.map((item) => item.statement), parameters: ran.map((item) => item.parameters), status: response.status, body: response.body }
}

/** Counts the statements Kysely compiles (what the cache spares). */
let compilations = 0
const query = StatementCache.prototype.query
StatementCache.prototype.query = function (shape, compile) {
  return query.call(this, shape, () => {
    compilations++
    return compile()
  })
}
t.teardown(() => { StatementCache.prototype.query = query })

t.test('the cache changes no statement and no document, and spares the compilation of a known shape', async (t) => {
  for (const [teach, served] of PAIRS) {
    await run(cached, teach)
    compilations = 0
    const withCache = await run(cached, served)
    const spared = compilations
    const without = await run(uncached, served)
    t.equal(withCache.status, 200, `${served}: 200`)
    t.same(withCache.statements, without.statements, `${served}: the same statements`)
    t.same(withCache.parameters, without.parameters, `${served}: with the same parameters`)
    t.same(withCache.body, without.body, `${served}: the same document`)
      // Where the engine binds a list one parameter per value, another number of values (of `in_`, of the owners an
    // include reads) is another statement, compiled once for that number.
    const otherCount = LIST_COUNTS.has(served) && engineOf(db).listParameters === 'each'
    if (otherCount) t.ok(spared > 0, `${served}: another number of values, compiled for it`)
    else t.equal(spared, 0, `${served}: no statement compiled (${withCache.statements.length} from the cache)`)
  }
})

t.test('scoped reads: the scope\'s values are parameters like any other', async (t) => {
  // The example app scopes `note`s to the acting user (X-User-Id): each user's notes, one shape.
  await db.insertInto('notes').values([{ text: 'ada\'s', user_id: 1 }, { text: 'grace\'s', user_id: 2 }]).execute().catch(() => {})
  for (const url of ['/notes', '/users/1?include=notes']) {
    await run(cached, url, { headers: { 'x-user-id': '1' } })
    const withCache = await run(cached, url, { headers: { 'x-user-id': '2' } })
    const without = await run(uncached, url, { headers: { 'x-user-id': '2' } })
    t.same(withCache.statements, without.statements, `${url}: the same statements`)
    t.same(withCache.parameters, without.parameters, `${url}: with the same parameters`)
    t.same(withCache.body, without.body, `${url}: the same document for user 2`)
  }
})

t.test('a create with a related row: one statement, from the cache the second time', async (t) => {
  const body = (serial: string, owner: string) => ({ data: { type: 'computer', attributes: { serial, name: `n-${serial}` }, relationships: { owner: { data: { type: 'user', id: owner } } } } })
  await run(cached, '/computers', { body: body('X1', '1') }, 'POST')
  compilations = 0
  const withCache = await run(cached, '/computers', { body: body('X2', '2') }, 'POST')
  t.equal(withCache.status, 201)
  t.equal(compilations, 0, 'not compiled')
  t.equal(withCache.statements.length, 1)
  const without = await run(uncached, '/computers', { body: body('X3', '2') }, 'POST')
  t.same(withCache.statements, without.statements, 'the same statement')
  t.same(withCache.parameters.map((list) => list.map((value) => value === 'X2' ? 'X3' : value === 'n-X2' ? 'n-X3' : value)), without.parameters, 'the same parameters but the new values')
  t.equal(withCache.body.data.relationships.owner.links.related, `/computers/${withCache.body.data.id}/owner`)
  const missing = await run(cached, '/computers', { body: body('X4', '999') }, 'POST')
  t.equal(missing.status, 404, 'a missing owner is still a 404')
  t.equal((await db.selectFrom('computers').select('id').where('serial', '=', 'X4').execute()).length, 0, 'and nothing was written')
})

t.test('a Kysely instance with plugins compiles every statement', async (t) => {
  const { CamelCasePlugin } = await import('kysely')
  const repository = new KyselyRepository(db.withPlugin(new CamelCasePlugin()))
  compilations = 0
  await repository.count({ resource: { table: 'users' } as never, where: undefined, sort: [], page: undefined, columns: [], include: [] })
  t.equal(compilations, 0, 'no cache is consulted')
})

t.test('values alike in some places are a shape of their own', async (t) => {
  // `filter[group_id]=1` beside `filter[age]=1`: the two ones are alike; with 2 and 1 they are not.
  const alike = `/users?filter[group_id]=1&${filter([{ name: 'age', op: 'ne', val: 1 }])}`
  const unlike = `/users?filter[group_id]=2&${filter([{ name: 'age', op: 'ne', val: 1 }])}`
  await run(cached, alike)
  compilations = 0
  const withCache = await run(cached, unlike)
  t.not(compilations, 0, 'a statement learned from alike values is not reused for unlike ones')
  const without = await run(uncached, unlike)
  t.same(withCache.parameters, without.parameters)
  t.same(withCache.body, without.body)
})

t.test('an estimated count: the plan statement of a shape is compiled once', async (t) => {
  const repository = new KyselyRepository(db)
  const { resolveResources } = await import('../../../lib/schema/resolve-resources.js')
  const { compareNode } = await import('../../../lib/schema/filter-nodes.js')
  const user = resolveResources(resources).getResource('user')
  const layer = (age: number) => ({ resource: user, where: compareNode(user.attributes.get('age')!, 'gt', age), sort: [], page: undefined, columns: [], include: [] })
  await repository.estimateCount(layer(10))
  compilations = 0
  counter.reset()
  const estimate = await repository.estimateCount(layer(20))
  t.equal(compilations, 0, 'the second plan of the shape is not compiled')
  t.match(counter.statements[0], engineOf(db).id === 'postgres'
    ? /^explain \(format json\) select 1 as "one" from "users" where "age" > \$1$/
    // Engines without estimates count exactly (docs/databases.md).
    : /^select count\(\*\) as fja_count from \(select 1 as [`"]one[`"] from [`"]users[`"] where [`"]age[`"] > \?\) as fja_rows$/)
  t.same(counter.parameters[0], [20])
  t.ok(Number.isInteger(estimate) && estimate >= 0, 'a non-negative integer')
})

t.test('insert shapes: values all different share a key, values alike in some places have their own', async (t) => {
  const { insertShape } = await import('../../../lib/repository/kysely/statement-cache.js')
  const computer = { table: 'computers', idColumn: 'id', type: 'computer', memo: new Memo() } as never
  const names = ['owner_id', 'serial', 'name']
  const returning = ['id', 'serial']
  const shape = (owner: unknown, serial: unknown, name: unknown): { key: string, values: readonly unknown[] } => insertShape(POSTGRES, computer, { owner_id: owner, serial, name }, names, returning)
  const distinct = shape('1', 'A', 'B')
  t.same(distinct.values, ['1', 'A', 'B'], 'the values in the order of the names')
  t.equal(shape('2', 'C', 'D').key, distinct.key, 'other values, all different: the same shape')
  t.equal(shape('1', null, 'B').key, distinct.key, 'a null among them is a value like any other')
  const alike = shape('1', 'A', 'A')
  t.not(alike.key, distinct.key, 'two values alike: another shape')
  t.equal(shape('7', 'Z', 'Z').key, alike.key, 'alike in the same places: that shape again')
  t.not(shape('A', 'A', 'B').key, alike.key, 'alike in other places: another one')
  t.not(shape('1', [1, 2], [1, 2]).key, distinct.key, 'arrays are alike by their content')
  t.equal(shape('1', [1, 2], [1, 3]).key, distinct.key)
  t.not(insertShape(POSTGRES, computer, { owner_id: '1', serial: 'A' }, ['owner_id', 'serial'], returning).key, distinct.key, 'other columns: another shape')
  t.not(insertShape(POSTGRES, computer, { owner_id: '1', serial: 'A', name: 'B' }, names, ['id']).key, distinct.key, 'other columns returned: another shape')
  // A key kept with the resource is reused for the same columns only: other columns, in another order, other returned columns.
  const reordered = insertShape(POSTGRES, computer, { owner_id: '1', serial: 'A', name: 'B' }, ['serial', 'owner_id', 'name'], returning)
  t.not(reordered.key, distinct.key, 'the same columns in another order: another shape')
  t.same(reordered.values, ['A', '1', 'B'])
  const renamed = insertShape(POSTGRES, computer, { owner_id: '1', serial: 'A', label: 'B' }, ['owner_id', 'serial', 'label'], returning)
  t.not(renamed.key, distinct.key, 'as many columns, one of them another: another shape')
  t.equal(shape('3', 'E', 'F').key, distinct.key, 'and back to the first columns: the first shape')
  t.not(insertShape(POSTGRES, computer, { owner_id: '1', serial: 'A', name: 'B' }, names, ['id', 'name']).key, distinct.key, 'as many returned columns, one of them another: another shape')
  t.equal(insertShape(POSTGRES, computer, { owner_id: '1', serial: 'A', name: 'B' }, [...names], [...returning]).key, distinct.key, 'equal arrays, not the same ones: the same shape')
  const other = { table: 'laptops', idColumn: 'id', type: 'laptop', memo: new Memo() } as never
  t.not(insertShape(POSTGRES, other, { owner_id: '1', serial: 'A', name: 'B' }, names, returning).key, distinct.key, 'another table: another shape')
  t.equal(shape('4', 'G', 'H').key, distinct.key)
  const many = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`c${index}`, index]))
  const wide = insertShape(POSTGRES, computer, many, Object.keys(many), returning)
  t.equal(wide.values.length, 20, 'more values than the precomputed keys go')
  t.equal(insertShape(POSTGRES, computer, Object.fromEntries(Object.keys(many).map((name, index) => [name, index + 100])), Object.keys(many), returning).key, wide.key)
})

t.test('kept keys: a read by id alone and the related rows of a relationship take the key the shape writer writes', async (t) => {
  const { selectShape, relatedShape } = await import('../../../lib/repository/kysely/statement-cache.js')
  const { resolveResources } = await import('../../../lib/schema/resolve-resources.js')
  const { andNode, compareNode, constantNode } = await import('../../../lib/schema/filter-nodes.js')
  const { sortNode } = await import('../../../lib/query/query-tree.js')
  const graph = resolveResources(resources)
  const user = graph.getResource('user')
  const computer = graph.getResource('computer')
  const computers = user.relationships.get('computers')!
  const owner = computer.relationships.get('owner')!
  const columns = ['name', 'email']
  const byId = (id: unknown, parts: Record<string, unknown> = {}) => selectShape(POSTGRES, { resource: user, where: compareNode(user.idAttribute, 'eq', id), sort: [], page: undefined, columns, include: [], ...parts })!
  const first = byId('1')
  t.same(first.values, ['1'])
  const kept = byId('2')
  t.equal(kept.key, first.key, 'another id: the same key')
  t.same(kept.values, ['2'], 'with its own value')
  t.equal(byId('3', { columns: [...columns] }).key, first.key, 'the same columns in another array: the key the writer writes')
  t.not(byId('3', { columns: ['name'] }).key, first.key, 'other columns: another key')
  t.not(byId(null).key, first.key, 'a null id: another key (is null)')
  t.not(byId('3', { page: { offset: 0, limit: 1 } }).key, first.key, 'a window: another key')
  t.not(byId('3', { sort: [sortNode([], user.attributes.get('name')!)] }).key, first.key, 'an order: another key')
  t.not(byId('3', { where: andNode([compareNode(user.idAttribute, 'eq', '3'), constantNode(true)]) }).key, first.key, 'a scope beside the id: another key')
  t.not(byId('3', { where: compareNode(user.idAttribute, 'ne', '3') }).key, first.key, 'another operator: another key')
  const sameColumns = selectShape(POSTGRES, { resource: computer, where: compareNode(computer.idAttribute, 'eq', '1'), sort: [], page: undefined, columns, include: [] })!
  t.not(sameColumns.key, first.key, 'another type with the same columns array: its own key')
  t.equal(byId('4').key, first.key, 'and the first type keeps its key')

  const layer = (parts: Record<string, unknown> = {}) => ({ resource: computer, where: undefined, sort: [], page: undefined, columns: ['serial'], include: [], ...parts })
  const shared = layer()
  const one = relatedShape(POSTGRES, user, computers, ['1'], shared)!
  t.same(one.values, ['1'])
  t.equal(relatedShape(POSTGRES, user, computers, ['2'], shared)!.key, one.key, 'one owner: the same key')
  const several = relatedShape(POSTGRES, user, computers, ['1', '2'], shared)!
  t.not(several.key, one.key, 'several owners: another key')
  t.same(several.values, [['1', '2']], 'the ids as one array')
  const again = relatedShape(POSTGRES, user, computers, ['3', '4', '5'], shared)!
  t.equal(again.key, several.key)
  t.same(again.values, [['3', '4', '5']])
  t.equal(relatedShape(POSTGRES, user, computers, ['6'], layer())!.key, one.key, 'another layer of the same columns: the key the writer writes')
  t.not(relatedShape(POSTGRES, user, computers, ['6'], layer({ columns: ['name'] }))!.key, one.key, 'other columns: another key')
  t.not(relatedShape(POSTGRES, user, computers, ['6'], layer({ where: constantNode(true) }))!.key, one.key, 'a scope: another key')
  t.not(relatedShape(POSTGRES, computer, owner, ['6'], layer({ resource: user }))!.key, one.key, 'another relationship: another key')
  t.equal(relatedShape(POSTGRES, user, computers, ['7'], shared)!.key, one.key)
  const paged = relatedShape(POSTGRES, user, computers, ['1'], layer({ page: { offset: 0, limit: 10 } }))!
  t.not(paged.key, one.key, 'a page per owner: another key')
  t.same(paged.values, ['1', 10], 'the id, then the last rank of the page')
  t.equal(relatedShape(POSTGRES, user, computers, ['2'], layer({ page: { offset: 0, limit: 3 } }))!.key, paged.key, 'another size: the same key')
  const pagedSeveral = relatedShape(POSTGRES, user, computers, ['1', '2'], layer({ page: { offset: 0, limit: 3 } }))!
  t.not(pagedSeveral.key, paged.key)
  t.same(pagedSeveral.values, [['1', '2'], 3])
  t.not(relatedShape(POSTGRES, user, computers, ['1'], layer({ page: { offset: 5, limit: 3 } }))!.key, paged.key, 'an offset: another key')
  const lateral = relatedShape(POSTGRES, user, computers, ['1'], layer({ page: { offset: 0, limit: 10 } }), true)!
  t.not(lateral.key, paged.key, 'pages read by LATERAL: another key')
  t.same(lateral.values, ['1', 10], 'the id, then the limit')
  t.equal(relatedShape(POSTGRES, user, computers, ['1'], layer({ page: { offset: 0, limit: 10 } }), false)!.key, paged.key, 'the window form keeps its key')
  const lateralScoped = relatedShape(POSTGRES, user, computers, ['1'], layer({ page: { offset: 2, limit: 10 }, where: constantNode(true) }), true)!
  t.same(lateralScoped.values, ['1', 10, 2], 'the id, the wheres of the count and the page, the limit, the offset')
})
