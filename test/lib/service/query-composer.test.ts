import t from 'tap'
import { Type } from '@sinclair/typebox'
import { compareNode, defineResourceFor, printFilter, transformFilter, type FilterNode } from '../../../lib/index.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { readFilter } from '../../../lib/request/read-filter.js'
import { readQuery } from '../../../lib/request/read-query.js'
import { QueryComposer } from '../../../lib/service/query-composer.js'
import { filterBuilderOf } from '../../../lib/schema/filter-builder.js'

interface Context { readonly team: string | undefined }
const define = defineResourceFor<Context>()
let scopeCalls = 0

const graph = resolveResources([
  define({
    type: 'team',
    attributes: { name: { schema: Type.String() } },
    relationships: { projects: { kind: 'to-many', type: 'project', inverse: 'team' } },
  }),
  define({
    type: 'project',
    attributes: { name: { schema: Type.String() }, team_id: { schema: Type.String(), hidden: true } },
    relationships: {
      team: { kind: 'to-one', type: 'team', foreignKey: 'owner_team' },
      tasks: { kind: 'to-many', type: 'task', inverse: 'project' },
    },
    hooks: {
      scope (context, where) {
        scopeCalls++
        return context.team === undefined ? false : where.eq('team_id', context.team)
      },
    },
  }),
  define({
    type: 'task',
    attributes: { title: { schema: Type.String() }, done: { schema: Type.Boolean() } },
    relationships: { project: { kind: 'to-one', type: 'project', foreignKey: 'project_id' } },
    hooks: { scope: (_context, where) => where.has('project') },
  }),
])
const [team, project, task] = ['team', 'project', 'task'].map((type) => graph.getResource(type))
const limits = { defaultPageSize: 30, maxPageSize: 100, unpaged: 'allowed' as const, maxIncludeDepth: 3, maxIncludePaths: 10, includePageSize: 10, sort: { maxKeys: 10, maxDepth: 3 }, filter: { maxDepth: 8, maxNodes: 200, maxTextNodes: 5 } }

function printed (node: FilterNode | undefined): unknown {
  return node === undefined ? undefined : printFilter(node)
}

t.test('the scope of a type is evaluated once per request (composer), and false/true/undefined normalised', async (t) => {
  scopeCalls = 0
  const composer = new QueryComposer(graph, { team: 'red' })
  t.same(printed(composer.scope(project)), { name: 'team_id', op: 'eq', val: 'red' })
  composer.scope(project)
  composer.where(project, undefined)
  t.equal(scopeCalls, 1)
  t.same(printed(new QueryComposer(graph, { team: undefined }).scope(project)), { constant: false })
  t.equal(new QueryComposer(graph, {}).scope(team), undefined, 'a type without a scope')
})

t.test('a relationship filter reaching a scoped type carries that type\'s scope, at every depth', async (t) => {
  const composer = new QueryComposer(graph, { team: 'red' })
  const filter = readFilter({ filter: JSON.stringify([{ name: 'projects', op: 'any', val: { name: 'tasks.title', op: 'eq', val: 'x' } }]) }, team, graph, limits.filter)
  t.same(printed(composer.where(team, filter)), {
    name: 'projects',
    op: 'any',
    val: {
      and: [
        { name: 'team_id', op: 'eq', val: 'red' },
        {
          name: 'tasks',
          op: 'any',
          val: { and: [{ name: 'project', op: 'has', val: { name: 'team_id', op: 'eq', val: 'red' } }, { name: 'title', op: 'eq', val: 'x' }] },
        },
      ],
    },
  })
  t.same(printed(composer.where(task, undefined)), { name: 'project', op: 'has', val: { name: 'team_id', op: 'eq', val: 'red' } },
    'a scope reaching another type carries that type\'s scope (a task is visible when its project is)')
  const anyProject = readFilter({ filter: JSON.stringify([{ name: 'projects', op: 'any' }]) }, team, graph, limits.filter)
  t.same(printed(composer.where(team, anyProject)), { name: 'projects', op: 'any', val: { name: 'team_id', op: 'eq', val: 'red' } })
})

t.test('a layer composes the scope into the condition, the sort steps and every include', async (t) => {
  const composer = new QueryComposer(graph, { team: 'blue' })
  const query = readQuery({ sort: '-project.name', include: 'project.team' }, task, graph, limits, true)
  const layer = composer.collection(task, query)
  t.same(printed(layer.where), { name: 'project', op: 'has', val: { name: 'team_id', op: 'eq', val: 'blue' } })
  t.same(printed(layer.sort[0].path[0].where), { name: 'team_id', op: 'eq', val: 'blue' }, 'the sort step reads only visible projects')
  t.same(layer.page, { offset: 0, limit: 30 })
  t.equal(layer.include[0].relationship.name, 'project')
  t.same(printed(layer.include[0].layer.where), { name: 'team_id', op: 'eq', val: 'blue' })
  t.equal(layer.include[0].layer.include[0].layer.where, undefined, 'teams have no scope')
  const detail = composer.detail(project, '7', query)
  t.same(printed(detail.where), { and: [{ name: 'team_id', op: 'eq', val: 'blue' }, { name: 'id', op: 'eq', val: '7' }] })
  t.same(composer.target(project, '7'), { resource: project, id: '7', scope: composer.scope(project) })
})

t.test('scopes that reach each other in a cycle are expanded until the cycle closes', async (t) => {
  const cyclic = resolveResources([
    define({
      type: 'a',
      attributes: { open: { schema: Type.Boolean() } },
      relationships: { b: { kind: 'to-one', type: 'b', foreignKey: 'b_id' } },
      hooks: { scope: (_context, where) => where.or(where.eq('open', true), where.has('b')) },
    }),
    define({
      type: 'b',
      attributes: { open: { schema: Type.Boolean() } },
      relationships: { a: { kind: 'to-one', type: 'a', foreignKey: 'a_id' } },
      hooks: { scope: (_context, where) => where.has('a') },
    }),
  ])
  const composer = new QueryComposer(cyclic, {})
  t.same(printed(composer.scope(cyclic.getResource('a'))), {
    or: [{ name: 'open', op: 'eq', val: true }, { name: 'b', op: 'has', val: { name: 'a', op: 'has', val: { or: [{ name: 'open', op: 'eq', val: true }, { name: 'b', op: 'has' }] } } }],
  })
})

t.test('transformFilter rewrites the kinds it names and shares what it does not change', async (t) => {
  const filter = readFilter({ filter: JSON.stringify([{ or: [{ name: 'title', op: 'eq', val: 'a' }, { not: { name: 'done', op: 'eq', val: true } }] }]) }, task, graph, limits.filter) as FilterNode
  t.equal(transformFilter(filter, {}), filter, 'nothing to rewrite: the same tree')
  const rewritten = transformFilter(filter, {
    compare: (node) => node.attribute.name === 'done' ? compareNode(node.attribute, 'ne', false) : node,
  })
  t.same(printFilter(rewritten), { or: [{ name: 'title', op: 'eq', val: 'a' }, { not: { name: 'done', op: 'ne', val: false } }] })
  t.equal((rewritten as unknown as { items: FilterNode[] }).items[0], (filter as unknown as { items: FilterNode[] }).items[0], 'unchanged subtrees are shared')
})

t.test('the condition builder checks names when the condition is built', async (t) => {
  const where = filterBuilderOf(graph, project)
  t.same(printFilter(where.references('team', ['1', 2])), { references: { relationship: 'team', ids: ['1', '2'] } })
  t.same(printFilter(where.or()), { constant: false })
  t.same(printFilter(where.and()), { constant: true })
  t.same(printFilter(where.in('id', [1, '2'])), { name: 'id', op: 'in_', val: ['1', '2'] })
  t.throws(() => where.eq('nope' as never, 'x' as never), /'nope' is not a stored, computed or aggregate attribute/)
  t.throws(() => where.count('team' as never, 'ge', 1), /'team' is a to-one relationship/)
  t.throws(() => where.count('nope' as never, 'ge', 1), /'nope' is not a relationship/)
  t.throws(() => where.has('nope' as never), /'nope' is not a relationship/)
  t.throws(() => where.eq('name' as never, undefined as never), /undefined/)
})

t.test('field rules: evaluated once per request, guarding the client\'s filter and sort, selected with the rows', async (t) => {
  let ruleCalls = 0
  const ruled = resolveResources([
    define({
      type: 'crew',
      attributes: { name: { schema: Type.String() } },
      relationships: { members: { kind: 'to-many', type: 'member', inverse: 'crew' } },
    }),
    define({
      type: 'member',
      attributes: { name: { schema: Type.String() }, phone: { schema: Type.String() }, salary: { schema: Type.Integer() }, odd: { schema: Type.String() } },
      relationships: { crew: { kind: 'to-one', type: 'crew', foreignKey: 'crew_id' } },
      rules: {
        phone: {
          read (context, where) {
            ruleCalls++
            return context.team === undefined ? false : where.eq('name', context.team)
          },
        },
        salary: { read: (context) => context.team === 'boss', write: () => false },
        odd: { read: () => 'yes' as unknown as boolean },
      },
    }),
  ])
  const [crew, member] = ['crew', 'member'].map((type) => ruled.getResource(type))
  const phone = member.attributes.get('phone')!
  const composer = new QueryComposer(ruled, { team: 'ada' })
  t.same(printed(composer.rule(member, phone, 'read')), { name: 'name', op: 'eq', val: 'ada' })
  composer.rule(member, phone, 'read')
  t.equal(ruleCalls, 1, 'once per request')
  t.equal(composer.rule(member, phone, 'write'), undefined, 'no write rule: every row')
  t.equal(new QueryComposer(ruled, { team: 'boss' }).rule(member, member.attributes.get('salary')!, 'read'), undefined, 'true: every row')
  t.same(printed(composer.rule(member, member.attributes.get('salary')!, 'read')), { constant: false }, 'false: no row')
  t.same(printed(composer.rule(member, member.attributes.get('salary')!, 'write')), { constant: false })
  t.same(printed(new QueryComposer(ruled, { team: undefined }).rule(member, phone, 'read')), { constant: false })
  t.throws(() => composer.rule(member, member.attributes.get('odd')!, 'read'), /the read rule of 'member.odd' must return a condition/)

  const query = readQuery({
    filter: JSON.stringify([{ or: [{ name: 'phone', op: 'eq', val: '1' }, { name: 'name', op: 'eq', field: 'phone' }] }]),
    sort: '-phone,name',
    'fields[member]': 'name,phone',
  }, member, ruled, limits, true)
  const layer = composer.collection(member, query)
  const where = layer.where as any
  t.same(printed(where.items[0].guard), { name: 'name', op: 'eq', val: 'ada' }, 'a comparison of the phone is guarded')
  t.equal(where.items[1].guard, undefined, 'a field comparison: `name` has no rule')
  t.same(printed(where.items[1].otherGuard), { name: 'name', op: 'eq', val: 'ada' }, '… its other attribute, `phone`, has')
  t.same(printed(layer.sort[0].guard), { name: 'name', op: 'eq', val: 'ada' }, 'the sort by the phone is guarded')
  t.equal(layer.sort[1].guard, undefined)
  t.same(layer.rules?.map((rule) => [rule.attribute.name, printed(rule.where)]), [['phone', { name: 'name', op: 'eq', val: 'ada' }]], 'the rule is selected with the rows')
  const all = composer.collection(member, readQuery({ 'fields[member]': 'name' }, member, ruled, limits, true))
  t.same(all.rules, [], 'a fieldset without the phone selects no rule')

  const related = readFilter({ filter: JSON.stringify([{ name: 'members', op: 'any', val: { name: 'phone', op: 'eq', val: '1' } }]) }, crew, ruled, limits.filter)
  const guarded = composer.collection(crew, readQuery({ filter: JSON.stringify([printFilter(related!)]) }, crew, ruled, limits, true)).where as any
  t.same(printed(guarded.where.guard), { name: 'name', op: 'eq', val: 'ada' }, 'a relationship filter is guarded with the related type\'s rule')
})
