import t from 'tap'
import { readQuery, readQuery as readQueryOf } from '../../../lib/request/read-query.js'
import type { QueryLimits } from '../../../lib/contracts/query-limits.js'
import { printInclude, printSort, type IncludeNode } from '../../../lib/query/query-tree.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { JsonApiError } from '../../../lib/errors/json-api-error.js'
import { resources } from '../../../examples/app/resources.js'

const graph = resolveResources(resources)

const LIMITS: QueryLimits = {
  defaultPageSize: 30,
  maxPageSize: 1000,
  unpaged: 'allowed',
  maxIncludeDepth: 3,
  maxIncludePaths: 10, includePageSize: 10,
  sort: { maxKeys: 10, maxDepth: 3 },
  filter: { maxDepth: 8, maxNodes: 200, maxTextNodes: 5 },
}

type Raw = Record<string, string | string[]>

function read (raw: Raw, type = 'user', collection = true, limits: Partial<QueryLimits> = {}) {
  return readQuery(raw, graph.getResource(type), graph, { ...LIMITS, ...limits }, collection)
}

/** The include tree as nested plain arrays: `[name, children]`. */
function shape (nodes: readonly IncludeNode[]): unknown[] {
  return nodes.map((node) => [node.relationship, shape(node.children)])
}

interface Expected {
  readonly include: string
  readonly sort: string
  readonly page: [number, number]
  readonly fields?: Record<string, string[]>
  readonly tree?: unknown[]
}

const good: Array<[string, Raw, Expected, { type?: string; collection?: boolean; limits?: Partial<QueryLimits> }?]> = [
  ['nothing', {}, { include: '', sort: '', page: [1, 30], fields: {} }],
  ['one include', { include: 'computers' }, { include: 'computers', sort: '', page: [1, 30], tree: [['computers', []]] }],
  ['several includes', { include: 'computers,bio,group' }, { include: 'computers,bio,group', sort: '', page: [1, 30] }],
  ['nested includes share their prefix', { include: 'computers.owner,computers.user' }, {
    include: 'computers.owner,computers.user', sort: '', page: [1, 30], tree: [['computers', [['owner', []], ['user', []]]]],
  }],
  ['a path and its prefix', { include: 'computers,computers.owner' }, {
    include: 'computers.owner', sort: '', page: [1, 30], tree: [['computers', [['owner', []]]]],
  }],
  ['a repeated path', { include: 'bio,bio' }, { include: 'bio', sort: '', page: [1, 30], tree: [['bio', []]] }],
  ['three levels', { include: 'computers.owner.group' }, {
    include: 'computers.owner.group', sort: '', page: [1, 30], tree: [['computers', [['owner', [['group', []]]]]]],
  }],
  ['empty include', { include: '' }, { include: '', sort: '', page: [1, 30] }],
  ['sort keys', { sort: '-age,name' }, { include: '', sort: '-age,name', page: [1, 30] }],
  ['sort by id', { sort: '-id' }, { include: '', sort: '-id', page: [1, 30] }],
  ['sort through a to-one', { sort: 'owner.name,-serial' }, { include: '', sort: 'owner.name,-serial', page: [1, 30] }, { type: 'computer' }],
  ['page', { 'page[size]': '10', 'page[number]': '3' }, { include: '', sort: '', page: [3, 10] }],
  ['page size only', { 'page[size]': '1000' }, { include: '', sort: '', page: [1, 1000] }],
  ['page number only', { 'page[number]': '2' }, { include: '', sort: '', page: [2, 30] }],
  ['unpaged', { 'page[size]': '0', 'page[number]': '4' }, { include: '', sort: '', page: [1, 0] }],
  ['default page size from the limits', {}, { include: '', sort: '', page: [1, 5] }, { limits: { defaultPageSize: 5 } }],
  ['sparse fieldsets', { 'fields[user]': 'name,computers', 'fields[computer]': '' }, {
    include: '', sort: '', page: [1, 30], fields: { user: ['name', 'computers'], computer: [] },
  }],
  ['everything', { include: 'computers.owner', sort: '-name', 'page[size]': '2', 'fields[computer]': 'serial' }, {
    include: 'computers.owner', sort: '-name', page: [1, 2], fields: { computer: ['serial'] },
  }],
  ['application parameters pass through', { camelCase: '1', with_underscore: 'x', Include: 'nothing', 'my-param': 'y' }, {
    include: '', sort: '', page: [1, 30], fields: {},
  }],
  ['a single resource reads no page and no sort', { include: 'computers', 'fields[user]': 'name' }, {
    include: 'computers', sort: '', page: [1, 0], fields: { user: ['name'] },
  }, { collection: false }],
]

t.test('good queries and their tree', async (t) => {
  for (const [label, raw, expected, options = {}] of good) {
    const tree = read(raw, options.type, options.collection, options.limits)
    t.equal(printInclude(tree.include), expected.include, `${label}: include`)
    t.equal(printSort(tree.sort), expected.sort, `${label}: sort`)
    t.same([tree.page.number, tree.page.size], expected.page, `${label}: page`)
    if (expected.fields !== undefined) {
      t.same(Object.fromEntries([...tree.fields].map(([type, names]) => [type, [...names]])), expected.fields, `${label}: fields`)
    }
    if (expected.tree !== undefined) t.same(shape(tree.include), expected.tree, `${label}: include tree`)
    t.ok(Object.isFrozen(tree) && Object.isFrozen(tree.include) && Object.isFrozen(tree.sort) && Object.isFrozen(tree.page), `${label}: frozen`)
    // Round trip: the printed tree reads back to the same tree.
    const again = read({
      ...(expected.include === '' ? {} : { include: expected.include }),
      ...(expected.sort === '' ? {} : { sort: expected.sort }),
    }, options.type, options.collection, options.limits)
    t.equal(printInclude(again.include), expected.include, `${label}: include round trip`)
    t.equal(printSort(again.sort), expected.sort, `${label}: sort round trip`)
  }
})

t.test('sort nodes carry the attribute and the relationship path', async (t) => {
  const tree = read({ sort: '-owner.name,serial' }, 'computer')
  t.equal(tree.sort.length, 2)
  t.equal(tree.sort[0].descending, true)
  t.equal(tree.sort[0].attribute.name, 'name')
  t.equal(tree.sort[0].attribute.column, 'name')
  t.same(tree.sort[0].path.map((step) => [step.relationship.name, step.target.type]), [['owner', 'user']])
  t.equal(tree.sort[1].descending, false)
  t.same(tree.sort[1].path, [])
  t.equal(tree.sort[1].attribute, graph.getResource('computer').attributes.get('serial'))
})

const bad: Array<[Raw, string, { type?: string; collection?: boolean; limits?: Partial<QueryLimits> }?]> = [
  [{ include: 'nothing' }, 'include'],
  [{ include: 'computers.nothing' }, 'include'],
  [{ include: 'computers.owner.computers.owner' }, 'include'],
  [{ include: 'computers,' }, 'include'],
  [{ include: '.computers' }, 'include'],
  [{ include: 'Computers' }, 'include'],
  [{ include: ['computers', 'bio'] }, 'include'],
  [{ include: 'computers.owner' }, 'include', { limits: { maxIncludeDepth: 1 } }],
  [{ include: 'computers,group,bio' }, 'include', { limits: { maxIncludePaths: 2 } }],
  [{ include: 'computers,group,bio' }, 'include', { limits: { maxIncludePaths: 2 }, collection: false }],
  [{ sort: 'name,age,id' }, 'sort', { limits: { sort: { maxKeys: 2, maxDepth: 3 } } }],
  [{ sort: 'bio.user.name' }, 'sort', { limits: { sort: { maxKeys: 10, maxDepth: 1 } } }],
  [{ include: 'nothing' }, 'include', { collection: false }],
  [{ 'include[user]': 'computers' }, 'include[user]'],
  [{ 'fields[nothing]': 'name' }, 'fields[nothing]'],
  [{ 'fields[user]': 'nothing' }, 'fields[user]'],
  [{ 'fields[user]': 'name,' }, 'fields[user]'],
  [{ 'fields[user]': 'name', 'fields[computer]': 'owner,nothing' }, 'fields[computer]'],
  [{ 'fields[user]': ['name', 'age'] }, 'fields[user]'],
  [{ fields: 'name' }, 'fields'],
  [{ sort: 'nothing' }, 'sort'],
  [{ sort: 'count(group)' }, 'sort'],
  [{ sort: '-' }, 'sort'],
  [{ sort: '' }, 'sort'],
  [{ sort: 'name,' }, 'sort'],
  [{ sort: 'name,name' }, 'sort'],
  [{ sort: 'name,-name' }, 'sort'],
  [{ sort: 'computers.serial' }, 'sort'],
  [{ sort: 'group.nothing' }, 'sort'],
  [{ sort: 'nothing.name' }, 'sort'],
  [{ sort: 'computers' }, 'sort'],
  [{ sort: ['name', 'age'] }, 'sort'],
  [{ 'sort[name]': 'asc' }, 'sort[name]'],
  [{ 'page[size]': '-1' }, 'page[size]'],
  [{ 'page[size]': '1001' }, 'page[size]'],
  [{ 'page[size]': 'abc' }, 'page[size]'],
  [{ 'page[size]': '1.5' }, 'page[size]'],
  [{ 'page[size]': '1e3' }, 'page[size]'],
  [{ 'page[size]': '' }, 'page[size]'],
  [{ 'page[size]': ['1', '2'] }, 'page[size]'],
  [{ 'page[size]': '11' }, 'page[size]', { limits: { maxPageSize: 10 } }],
  [{ 'page[size]': '0' }, 'page[size]', { limits: { unpaged: 'forbidden' } }],
  [{ 'page[number]': '0' }, 'page[number]'],
  [{ 'page[number]': 'last' }, 'page[number]'],
  [{ 'page[offset]': '1' }, 'page[offset]'],
  [{ 'page[limit]': '1' }, 'page[limit]'],
  [{ page: '1' }, 'page'],
  [{ unknown: '1' }, 'unknown'],
  [{ included: 'computers' }, 'included'],
]

bad.push(
  [{ include: 'computers', 'page[computers][size]': '0' }, 'page[computers][size]'],
  [{ include: 'computers', 'page[computers][size]': '1001' }, 'page[computers][size]'],
  [{ include: 'computers', 'page[computers][size]': '2.5' }, 'page[computers][size]'],
  [{ include: 'computers', 'page[computers][size]': ['2', '3'] }, 'page[computers][size]'],
  [{ include: 'computers', 'page[posts][size]': '2' }, 'page[posts][size]'],
  [{ 'page[computers][size]': '2' }, 'page[computers][size]'],
  [{ include: 'group', 'page[group][size]': '2' }, 'page[group][size]'],
  [{ include: 'computers', 'page[nope][size]': '2' }, 'page[nope][size]'],
  [{ include: 'computers', 'page[computers][number]': '2' }, 'page[computers][number]'],
  [{ include: 'computers', 'page[computers][size]': '2' }, 'page[computers][size]', { limits: { maxPageSize: 1 } }],
)

t.test('bad queries: a 400 naming the parameter', async (t) => {
  for (const [raw, parameter, options = {}] of bad) {
    const label = `${JSON.stringify(raw)}${options.limits === undefined ? '' : ` with ${JSON.stringify(options.limits)}`}${options.collection === false ? ' (single)' : ''}`
    let thrown: unknown
    try {
      read(raw, options.type, options.collection, options.limits)
    } catch (error) {
      thrown = error
    }
    if (!t.ok(thrown instanceof JsonApiError, `${label}: JsonApiError`)) continue
    const error = thrown as JsonApiError
    t.equal(error.statusCode, 400, `${label}: 400`)
    t.equal(error.errors.length, 1, `${label}: one error`)
    t.equal(error.errors[0].code, 'FJA_INVALID_QUERY_PARAMETER', `${label}: code`)
    t.same(error.errors[0].source, { parameter }, `${label}: source.parameter`)
    t.equal(typeof error.errors[0].detail, 'string', `${label}: detail`)
  }
})

t.test('each to-many include step carries its page per owner: asked for, declared or the default', async (t) => {
  /** The include tree as nested plain arrays: `[name, size, children]`. */
  const sized = (nodes: readonly IncludeNode[]): unknown[] => nodes.map((node) => [node.relationship, node.size, sized(node.children)])
  t.same(sized(read({ include: 'computers.owner.computers,group.users,bio' }).include), [
    ['computers', 10, [['owner', undefined, [['computers', 10, []]]]]],
    ['group', undefined, [['users', 10, []]]],
    ['bio', undefined, []],
  ], 'the default on every to-many step, none on a to-one')
  t.same(sized(read({ include: 'computers.owner.computers', 'page[computers.owner.computers][size]': '3', 'page[computers][size]': '1000' }).include), [
    ['computers', 1000, [['owner', undefined, [['computers', 3, []]]]]],
  ], 'a size per path, each path as written')
  t.same(sized(read({ include: 'computers' }, 'user', false, { includePageSize: 4 }).include), [['computers', 4, []]], "the plugin's include.pageSize, on a single resource too")
  t.same(sized(read({ include: 'computers' }, 'user', true, { includePageSize: 50, maxPageSize: 20 }).include), [['computers', 20, []]], 'capped by the maximum page size')
  const declared = resolveResources(resources.map((resource) => resource.type === 'user'
    ? { ...resource, pagination: { includeSize: 2 }, relationships: { ...resource.relationships, posts: { ...resource.relationships!.posts, includeSize: 5 } } }
    : resource))
  const tree = readQuery({ include: 'computers,posts' }, declared.getResource('user'), declared, LIMITS, true).include
  t.same(sized(tree), [['computers', 2, []], ['posts', 5, []]], "the resource's pagination.includeSize, the relationship's includeSize")
})

t.test('a query string read before by a registration gives the same parsing and the same tree; anything else is read again', async (t) => {
  const { rawQuery } = await import('../../../lib/request/raw-query.js')
  const { KeptQueries } = await import('../../../lib/request/raw-query.js')
  const { CursorCodec } = await import('../../../lib/query/cursors.js')
  const request = (url: string) => ({ url }) as unknown as Parameters<typeof rawQuery>[0]
  const user = graph.getResource('user')
  const url = '/users?include=computers&fields[user]=name,computers&page[size]=5'
  // What a registration keeps (its route context's).
  const kept = new KeptQueries()
  const readQuery = (raw: Parameters<typeof readQueryOf>[0], resource: typeof user, graph: Parameters<typeof readQueryOf>[2], limits: typeof LIMITS, collection: boolean, cursors?: Parameters<typeof readQueryOf>[5]) =>
    readQueryOf(raw, resource, graph, limits, collection, cursors, kept)
  const raw = rawQuery(request(url), kept)
  t.equal(rawQuery(request(url), kept), raw, 'the same query string: the same (frozen) parsing')
  t.ok(Object.isFrozen(raw))
  t.same(Object.keys(raw), ['include', 'fields[user]', 'page[size]'], 'its parameters, and nothing else')
  t.not(rawQuery(request(url)), raw, 'without a registration\'s kept queries: parsed again')
  t.not(rawQuery(request('/users?include=computers'), kept), raw, 'another query string: another parsing')
  const tree = readQuery(raw, user, graph, LIMITS, true)
  t.equal(readQuery(rawQuery(request(url), kept), user, graph, LIMITS, true), tree, 'the same tree')
  t.equal(readQuery(rawQuery(request(url)), user, graph, LIMITS, true), tree, 'the same tree for a parsing of the same text')
  t.not(readQueryOf(raw, user, graph, LIMITS, true, undefined, new KeptQueries()), tree, 'another registration: read again')
  t.same(readQueryOf(raw, user, graph, LIMITS, true, undefined, new KeptQueries()), tree, 'the same tree as a value')
  t.same(tree.page, { kind: 'page', number: 1, size: 5 })
  t.same([...(tree.fields.get('user') ?? [])], ['name', 'computers'])
  const { selectionOf } = await import('../../../lib/contracts/selection.js')
  t.equal(selectionOf(user, tree.fields.get('user')), selectionOf(user, tree.fields.get('user')), 'one selection for the kept fieldset')
  t.same(selectionOf(user, tree.fields.get('user')).attributes, ['name'])
  const single = readQuery(raw, user, graph, LIMITS, false)
  t.not(single, tree, 'a single resource has a tree of its own')
  t.equal(readQuery(raw, user, graph, LIMITS, false), single)
  t.same(single.page, { kind: 'page', number: 1, size: 0 }, 'no page on a single resource')
  const plain = { include: 'computers' }
  t.not(readQuery(plain, user, graph, LIMITS, true), readQuery(plain, user, graph, LIMITS, true), 'a parsing that is not shared: read again')
  // A request for the cursor profile reads a cursor page from the same query string, and cursors are checked every time.
  const cursors = { codec: new CursorCodec(), collection: 'user', requested: true }
  const cursorTree = readQuery(raw, user, graph, LIMITS, true, cursors)
  t.ok(cursorTree.page.cursor, 'the profile asked for: a cursor page')
  t.not(readQuery(raw, user, graph, LIMITS, true, cursors), cursorTree, 'a cursor page is read every time')
  t.equal(readQuery(raw, user, graph, LIMITS, true, { ...cursors, requested: false }), tree, 'without the profile: the page by number kept before')
  const forged = rawQuery(request('/users?page[after]=forged'))
  t.throws(() => readQuery(forged, user, graph, LIMITS, true, { ...cursors, requested: false }), { statusCode: 400, errors: [{ source: { parameter: 'page[after]' } }] })
  t.throws(() => readQuery(forged, user, graph, LIMITS, true, { ...cursors, requested: false }), { statusCode: 400, errors: [{ source: { parameter: 'page[after]' } }] }, 'a bad cursor, every time')
  const bad = rawQuery(request('/users?include=nothing'))
  t.throws(() => readQuery(bad, user, graph, LIMITS, true), { statusCode: 400, errors: [{ source: { parameter: 'include' } }] })
  t.throws(() => readQuery(bad, user, graph, LIMITS, true), { statusCode: 400, errors: [{ source: { parameter: 'include' } }] }, 'an error is not kept')
  const long = `/users?filter[name]=${'x'.repeat(1100)}`
  t.not(rawQuery(request(long), kept), rawQuery(request(long), kept), 'a query string of more than 1,024 characters is not kept')
  t.not(readQuery(rawQuery(request(long), kept), user, graph, LIMITS, true), readQuery(rawQuery(request(long), kept), user, graph, LIMITS, true), 'nor its tree')
})
