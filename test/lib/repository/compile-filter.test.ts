/**
 * One walk for a statement's SQL and its shape key (lib/repository/kysely/compile-filter.ts, `writeFilter`): by
 * property, over generated filter trees of every node kind and nesting (comparisons with every built-in operator,
 * NULLs, empty and single lists, comparisons between fields, relationship filters of every storage, linkage,
 * constants, custom operators) in reads of rows, counts and related rows:
 *
 * - the parameters Kysely compiles are the shape's values, in order;
 * - every two statements of the same key have the same SQL text;
 * - a statement has no key exactly when its filter holds a custom operator.
 *
 * No database: the statements are compiled by Kysely for PostgreSQL and caught before they run. The seed is random
 * and printed; replay with `FC_SEED=<seed>`, change the number of trees with `FC_FILTER_RUNS=<n>` (default 3,000).
 */
import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import fc from 'fast-check'
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery } from 'kysely'
import { KyselyRepository } from '../../../lib/index.js'
import type { QueryLayer } from '../../../lib/contracts/repository.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import type { ResolvedResource } from '../../../lib/schema/resolved.js'
import {
  andNode, compareNode, constantNode, customNode, existsNode, fieldCompareNode, linkedToNode, notNode, orNode, referencesNode,
  type BuiltinOperator, type FilterNode,
} from '../../../lib/schema/filter-nodes.js'
import { countShape, relatedShape, selectShape, type StatementShape } from '../../../lib/repository/kysely/statement-cache.js'
import { resources } from '../../../examples/app/resources.js'
import { POSTGRES } from '../../../lib/repository/kysely/postgres-engine.js'

const RUNS = Number(process.env.FC_FILTER_RUNS ?? '3000')
const SEED = process.env.FC_SEED === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(process.env.FC_SEED)
t.comment(`seed ${SEED} (replay: FC_SEED=${SEED} npx tap test/lib/repository/compile-filter.test.ts)`)

const graph = resolveResources(resources)
const user = graph.getResource('user')
const computer = graph.getResource('computer')
const parent = graph.getResource('parent')
const child = graph.getResource('child')

/** Kysely for PostgreSQL on a driver that runs nothing: every statement it is given is kept, compiled. */
const compiled: CompiledQuery[] = []
const db = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (kysely) => new PostgresIntrospector(kysely),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
  log: (event) => { compiled.push(event.query) },
})
t.teardown(() => db.destroy())
const repository = new KyselyRepository(db, { cacheStatements: false })

// ---------------------------------------------------------------------------------------------------------------
// Generators: few distinct values, so that keys (and values alike) repeat.

const TEXT = fc.constantFrom('ada', 'A%', '100%_sure', '')
const INTEGER = fc.constantFrom(0, 36, 85)
const ID = fc.constantFrom('1', '2', '3')
const IDS = fc.oneof(fc.constant(null), fc.array(ID, { maxLength: 3 }))
const TEXT_OPS: BuiltinOperator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'like', 'notlike', 'ilike', 'notilike', 'startswith', 'endswith', 'match']
const ORDER_OPS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const

/** The text and integer attributes of each resource, and the types its relationships lead to. */
const TEXTS: Record<string, readonly string[]> = { user: ['name', 'email'], computer: ['serial', 'name'], parent: ['name'], child: ['name'] }
const INTEGERS: Record<string, readonly string[]> = { user: ['age'], computer: [], parent: [], child: [] }
/** Owners that link to rows of each resource (`linked-to`): the owner's type and its relationship. */
const LINKED: Record<string, ReadonlyArray<readonly [ResolvedResource, string]>> = {
  user: [[graph.getResource('group'), 'users'], [computer, 'owner']],
  computer: [[user, 'computers']],
  parent: [[child, 'guardians']],
  child: [[parent, 'kids']],
}

function comparison (resource: ResolvedResource): fc.Arbitrary<FilterNode> {
  const attribute = (name: string) => resource.attributes.get(name)!
  const texts = fc.constantFrom(...TEXTS[resource.type]).map(attribute)
  const options: Array<fc.Arbitrary<FilterNode>> = [
    fc.tuple(texts, fc.constantFrom(...TEXT_OPS), TEXT).map(([at, op, value]) => compareNode(at, op, value)),
    fc.tuple(texts, fc.constantFrom<BuiltinOperator>('eq', 'ne', 'is_', 'isnot')).map(([at, op]) => compareNode(at, op, null)),
    fc.tuple(texts, fc.constantFrom<BuiltinOperator>('in_', 'notin_'), fc.array(TEXT, { maxLength: 3 })).map(([at, op, value]) => compareNode(at, op, value)),
    fc.tuple(texts, TEXT, TEXT).map(([at, low, high]) => compareNode(at, 'between', [low, high])),
    fc.tuple(texts, fc.constantFrom(...ORDER_OPS), texts).map(([at, op, other]) => fieldCompareNode(at, op, other)),
    fc.boolean().map(constantNode),
  ]
  const integers = INTEGERS[resource.type]
  if (integers.length > 0) {
    const numbers = fc.constantFrom(...integers).map(attribute)
    options.push(fc.tuple(numbers, fc.constantFrom(...ORDER_OPS), INTEGER).map(([at, op, value]) => compareNode(at, op, value)))
    options.push(fc.tuple(numbers, fc.array(INTEGER, { minLength: 1, maxLength: 3 })).map(([at, value]) => compareNode(at, 'in_', value)))
  }
  if (resource === user) {
    // The example app's custom operator on `words`: its SQL is the application's, never cached.
    const words = attribute('words')
    const operator = words.operators.values().next().value!
    options.push(fc.array(TEXT, { minLength: 1, maxLength: 2 }).map((value) => customNode(words, operator, value)))
  }
  return fc.oneof(...options)
}

const TYPES: Record<string, ResolvedResource> = { user, computer, parent, child }

/** A filter tree over `resource`, at most `depth` levels of relationships deep. */
function filter (resource: ResolvedResource, depth: number): fc.Arbitrary<FilterNode> {
  const relationships = [...resource.relationships.values()].filter((relationship) => relationship.targetType in TYPES)
  const tree = fc.letrec<{ node: FilterNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      comparison(resource),
      fc.array(tie('node'), { maxLength: 3 }).map((items) => andNode(items)),
      fc.array(tie('node'), { maxLength: 3 }).map((items) => orNode(items)),
      tie('node').map(notNode),
      ...(relationships.length === 0
        ? []
        : [
            fc.tuple(fc.constantFrom(...relationships), IDS).map(([relationship, ids]) => referencesNode(relationship, TYPES[relationship.targetType], ids)),
            fc.constantFrom(...relationships).chain((relationship) => {
              const target = TYPES[relationship.targetType]
              const where = depth === 0 ? fc.constant(undefined) : fc.option(filter(target, depth - 1), { nil: undefined })
              return where.map((inner) => existsNode(relationship, target, inner))
            }),
          ]),
      fc.tuple(fc.constantFrom(...LINKED[resource.type]), ID).map(([[owner, name], id]) =>
        linkedToNode(owner, owner.relationships.get(name)!, id)),
    ),
  }))
  return tree.node
}

/** A filter that holds an application's operator. */
function holdsCustom (node: FilterNode | undefined): boolean {
  if (node === undefined) return false
  switch (node.kind) {
    case 'custom': return true
    case 'and':
    case 'or': return node.items.some(holdsCustom)
    case 'not': return holdsCustom(node.item)
    case 'exists': return holdsCustom(node.where)
    default: return false
  }
}

const statement = fc.constantFrom('user', 'computer', 'parent', 'child').chain((type) => fc.record({
  type: fc.constant(type),
  where: fc.option(filter(TYPES[type], 2), { nil: undefined, freq: 8 }),
  kind: fc.constantFrom('select', 'count', 'related'),
  page: fc.option(fc.record({ offset: fc.constantFrom(0, 20), limit: fc.constantFrom(undefined, 10) }), { nil: undefined }),
  owners: fc.array(ID, { minLength: 1, maxLength: 2 }),
}))

/** The owner and relationship whose related rows are of each type (`findRelated`). */
const RELATED: Record<string, readonly [ResolvedResource, string]> = {
  user: [graph.getResource('group'), 'users'],
  computer: [user, 'computers'],
  parent: [child, 'guardians'],
  child: [parent, 'kids'],
}

const texts = new Map<string, string>()
let keyed = 0
/** The node kinds and relationship storages the generated trees held. */
const seen = new Set<string>()

function tally (node: FilterNode | undefined): void {
  if (node === undefined) return
  seen.add(node.kind)
  if ('relationship' in node) seen.add(`${node.kind}:${node.relationship.storage.kind}`)
  if (node.kind === 'and' || node.kind === 'or') node.items.forEach(tally)
  if (node.kind === 'not') tally(node.item)
  if (node.kind === 'exists') tally(node.where)
}

await t.test('a statement of a known key is the statement a fresh compilation writes', async (t) => {
  await fc.assert(fc.asyncProperty(statement, async ({ type, where, kind, page, owners }) => {
    const resource = TYPES[type]
    tally(where)
    const layer: QueryLayer = { resource, where, sort: [], page, columns: TEXTS[resource.type], include: [] } as unknown as QueryLayer
    let shape: StatementShape | undefined
    compiled.length = 0
    if (kind === 'select') {
      shape = selectShape(POSTGRES, layer)
      await repository.findMany(layer)
    } else if (kind === 'count') {
      shape = countShape(POSTGRES, layer)
      // No rows to count: only the statement matters.
      await repository.count(layer).catch(() => {})
    } else {
      const [owner, name] = RELATED[resource.type]
      const relationship = owner.relationships.get(name)!
      shape = relatedShape(POSTGRES, owner, relationship, owners, layer)
      await repository.findRelated(owner, relationship, owners, layer)
    }
    if (compiled.length !== 1) throw new Error(`expected one statement, got ${compiled.length}`)
    const query = compiled[0]
    if (shape === undefined) {
      if (!holdsCustom(where)) throw new Error(`no key for a statement without a custom operator: ${query.sql}`)
      return
    }
    if (holdsCustom(where)) throw new Error(`a key for a statement with a custom operator: ${query.sql}`)
    if (!isDeepStrictEqual([...query.parameters], [...shape.values])) {
      throw new Error(`parameters ${JSON.stringify(query.parameters)} are not the key's values ${JSON.stringify(shape.values)} in ${query.sql}`)
    }
    keyed++
    const known = texts.get(shape.key)
    if (known === undefined) texts.set(shape.key, query.sql)
    else if (known !== query.sql) throw new Error(`one key, two texts:\n${known}\n${query.sql}`)
  }), { numRuns: RUNS, seed: SEED })
  t.pass(`${RUNS} statements, ${keyed} with a key, ${texts.size} distinct keys`)
  t.ok(texts.size < keyed, 'keys repeat: some statements were checked against an earlier one of their key')
  const kinds = ['compare', 'field-compare', 'custom', 'and', 'or', 'not', 'constant']
  for (const kind of ['references', 'exists', 'linked-to']) kinds.push(...['foreign-key', 'inverse', 'join'].map((storage) => `${kind}:${storage}`))
  t.same(kinds.filter((kind) => !seen.has(kind)), [], 'every node kind of every storage was generated')
})

t.test('cannot: a filter with a subquery over an unaliased table', async (t) => {
  const { FilterCompiler, AliasCounter } = await import('../../../lib/repository/kysely/compile-filter.js')
  const computers = user.relationships.get('computers')!
  t.throws(() => new FilterCompiler(POSTGRES).filter(existsNode(computers, computer, undefined), user, '', new AliasCounter()), /needs its table aliased/)
})
