import t from 'tap'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { countKey, countPath, declaredAggregate } from '../../../lib/schema/aggregates.js'
import { selectionOf } from '../../../lib/contracts/selection.js'
import { printFilter, compareNode } from '../../../lib/schema/filter-nodes.js'
import { resources } from '../../../examples/app/resources.js'

const graph = resolveResources(resources)
const user = graph.getResource('user')
const computer = graph.getResource('computer')
const parent = graph.getResource('parent')

t.test('countPath reads `count(<path>)` and nothing else', async (t) => {
  t.equal(countPath('count(computers)'), 'computers')
  t.equal(countPath('count(owner.computers)'), 'owner.computers')
  t.equal(countPath('count()'), '')
  for (const name of ['computers', 'count(computers', 'count computers', 'Count(computers)', 'xcount(computers)']) t.equal(countPath(name), undefined, name)
})

t.test('countKey: to-one steps then one to-many relationship, kept with the resource as a value', async (t) => {
  const key = countKey(graph, user, 'computers')
  if (typeof key === 'string') throw new Error(key)
  t.equal(key.attribute.name, 'count(computers)')
  t.equal(key.attribute.valueKind, 'integer')
  t.equal(key.attribute.nullable, false, 'a row always has a count')
  t.ok(Object.isFrozen(key.aggregate) && Object.isFrozen(key.attribute))
  t.equal(countKey(graph, user, 'computers'), key, 'the same key each time')
  t.same({ fn: key.aggregate.fn, steps: key.aggregate.steps.length, relationship: key.aggregate.relationship.name, target: key.aggregate.target.type }, { fn: 'count', steps: 0, relationship: 'computers', target: 'computer' })
  const through = countKey(graph, computer, 'owner.computers')
  if (typeof through === 'string') throw new Error(through)
  t.equal(through.aggregate.steps[0].relationship.name, 'owner')
  t.equal(through.attribute.nullable, true, 'through a to-one step there may be no row to count from')
  const kids = countKey(graph, parent, 'kids')
  if (typeof kids === 'string') throw new Error(kids)
  t.equal(kids.aggregate.relationship.storage.kind, 'join')
  t.same(printFilter(compareNode(kids.attribute, 'ge', 2, kids.aggregate)), { name: 'count(kids)', op: 'ge', val: 2 }, 'printed back as it is read')
})

t.test('countKey says why a path is not one', async (t) => {
  t.equal(countKey(graph, user, 'group'), "'group' is a to-one relationship of 'user': count() counts a to-many relationship")
  t.equal(countKey(graph, user, 'nope'), "'nope' is not a relationship of 'user'")
  t.equal(countKey(graph, user, 'computers.owner'), "'computers' is a to-many relationship of 'user': only the last step of count() may be to-many")
  t.equal(countKey(graph, user, ''), "'' is not a relationship path")
  t.equal(countKey(graph, user, 'group.'), "'group.' is not a relationship path")
})

t.test('declared aggregates: their term, and not in the default fieldset', async (t) => {
  const attribute = user.attributes.get('computer_count')
  if (attribute === undefined) throw new Error('no computer_count')
  const term = declaredAggregate(graph, user, attribute)
  t.equal(term.relationship.name, 'computers')
  t.equal(term.where, undefined, 'no scope until the composer puts one in')
  t.equal(declaredAggregate(graph, user, attribute), term, 'kept with the resource')
  t.notOk(selectionOf(user, undefined).attributes.includes('computer_count'))
  t.ok(selectionOf(user, undefined).attributes.includes('display_name'), 'a computed attribute is')
  t.same(selectionOf(user, new Set(['computer_count'])).aggregates.map((item) => item.name), ['computer_count'])
  t.same(selectionOf(user, new Set(['display_name'])).columns, ['__fja_display_name'], 'a computed attribute is selected under its own name')
})
