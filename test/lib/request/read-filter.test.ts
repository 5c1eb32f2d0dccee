import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineResource } from '../../../lib/index.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { readFilter } from '../../../lib/request/read-filter.js'
import { printFilter } from '../../../lib/schema/filter-nodes.js'
import { BUILTIN_OPERATORS } from '../../../lib/query/builtin-operators.js'
import { JsonApiError } from '../../../lib/errors/json-api-error.js'

/** A resource with one attribute of every value kind. */
const sample = defineResource({
  type: 'sample',
  attributes: {
    text: { schema: Type.String() },
    maybe_text: { schema: Type.Union([Type.String(), Type.Null()]) },
    count: { schema: Type.Integer() },
    ratio: { schema: Type.Number() },
    flag: { schema: Type.Boolean() },
    day: { schema: Type.String({ format: 'date' }) },
    moment: { schema: Type.String({ format: 'date-time' }) },
    tags: { schema: Type.Array(Type.String()) },
    doc: { schema: Type.Record(Type.String(), Type.Unknown()) },
    secret: { schema: Type.String(), hidden: true },
    unsortable: { schema: Type.String(), filterable: false },
  },
  relationships: {
    parts: { kind: 'to-many', type: 'part', inverse: 'sample' },
  },
})
const part = defineResource({
  type: 'part',
  attributes: { label: { schema: Type.String() } },
  relationships: { sample: { kind: 'to-one', type: 'sample', foreignKey: 'sample_id' } },
})
const graph = resolveResources([sample, part])
const resource = graph.getResource('sample')
const limits = { maxDepth: 8, maxNodes: 200, maxTextNodes: 5 }

function read (filter: unknown) {
  return readFilter({ filter: JSON.stringify(filter) }, resource, graph, limits)
}

function failure (raw: Record<string, string>): { parameter?: string; detail?: string } {
  try {
    readFilter(raw, resource, graph, limits)
  } catch (error) {
    if (error instanceof JsonApiError) return { parameter: error.errors[0].source?.parameter, detail: error.errors[0].detail }
    throw error
  }
  throw new Error(`no error for ${JSON.stringify(raw)}`)
}

const VALUES: Record<string, unknown> = {
  text: 'a', maybe_text: 'a', count: 3, ratio: 1.5, flag: true, day: '2020-01-02', moment: '2020-01-02T03:04:05Z', tags: ['a'], doc: { a: 1 },
}

t.test('every built-in operator is allowed exactly on the kinds of its whitelist', async (t) => {
  for (const [op, { kinds, operand }] of Object.entries(BUILTIN_OPERATORS)) {
    for (const [name, value] of Object.entries(VALUES)) {
      const attribute = resource.attributes.get(name)
      if (attribute === undefined) throw new Error(name)
      const val = operand === 'null' ? null : operand === 'pair' ? [value, value] : operand === 'list' ? [value] : operand === 'text' ? 'x%' : value
      const allowed = kinds.includes(attribute.valueKind) && (operand !== 'null' || attribute.nullable)
      if (allowed) {
        t.same(printFilter(read([{ name, op, val }]) as never), { name, op, val }, `${op} on ${name} (${attribute.valueKind}) round-trips`)
      } else {
        const { parameter } = failure({ filter: JSON.stringify([{ name, op, val }]) })
        t.equal(parameter, 'filter', `${op} on ${name} (${attribute.valueKind}) is refused`)
      }
    }
  }
})

t.test('values are coerced to the attribute type', async (t) => {
  t.same(printFilter(read([{ name: 'count', op: 'eq', val: '12' }]) as never), { name: 'count', op: 'eq', val: 12 })
  t.same(printFilter(read([{ name: 'ratio', op: 'gt', val: '0.5' }]) as never), { name: 'ratio', op: 'gt', val: 0.5 })
  t.same(printFilter(read([{ name: 'flag', op: 'eq', val: 'false' }]) as never), { name: 'flag', op: 'eq', val: false })
  t.same(printFilter(readFilter({ 'filter[flag]': 'true', 'filter[count]': '7' }, resource, graph, limits) as never), { and: [{ name: 'flag', op: 'eq', val: true }, { name: 'count', op: 'eq', val: 7 }] })
  t.equal(failure({ filter: JSON.stringify([{ name: 'moment', op: 'gt', val: '2020-01-02' }]) }).parameter, 'filter', 'a date is not a date-time')
  t.equal(failure({ 'filter[flag]': 'maybe' }).parameter, 'filter[flag]')
})

t.test('the nested form round-trips, and the dotted form reads to the nested one', async (t) => {
  const nested = [{ or: [{ name: 'parts', op: 'any', val: { not: { name: 'label', op: 'startswith', val: 'x' } } }, { and: [{ name: 'count', op: 'ge', field: 'ratio' }, { name: 'maybe_text', op: 'is_', val: null }] }] }]
  t.same([printFilter(read(nested) as never)], nested)
  t.same(printFilter(read([{ name: 'parts.label', op: 'eq', val: 'x' }]) as never), { name: 'parts', op: 'any', val: { name: 'label', op: 'eq', val: 'x' } })
  t.same(printFilter(read([{ name: 'parts.sample.parts.label', op: 'eq', val: 'x' }]) as never), {
    name: 'parts', op: 'any', val: { name: 'sample', op: 'has', val: { name: 'parts', op: 'any', val: { name: 'label', op: 'eq', val: 'x' } } },
  })
  t.same(printFilter(readFilter({ 'filter[parts.label]': 'y' }, resource, graph, limits) as never), { name: 'parts', op: 'any', val: { name: 'label', op: 'eq', val: 'y' } })
  t.same(printFilter(readFilter({ 'filter[sample_id]': '4' }, graph.getResource('part'), graph, limits) as never), { name: 'sample', op: 'has', val: { name: 'id', op: 'eq', val: 4 } })
  t.equal(read([]), undefined)
})

t.test('hidden, unfilterable, derived and unknown fields are refused with the path of the mistake', async (t) => {
  const cases: Array<[unknown, RegExp]> = [
    [[{ name: 'secret', op: 'eq', val: 'x' }], /^at \[0\]\.name: 'secret' is not a field/],
    [[{ name: 'unsortable', op: 'eq', val: 'x' }], /^at \[0\]\.name: 'unsortable' of 'sample' is not filterable/],
    [[{ name: 'count', op: 'eq', field: 'text' }], /^at \[0\]\.field: /],
    [[{ name: 'count', op: 'ge', field: 'ratio' }, { not: { or: [{ name: 'tags', op: 'like', val: 'x' }] } }], /^at \[1\]\.not\.or\[0\]\.op: /],
    [[{ name: 'parts', op: 'any', val: [{ name: 'label', op: 'eq', val: 'x' }, { name: 'nope', op: 'eq', val: 1 }] }], /^at \[0\]\.val\[1\]\.name: /],
  ]
  for (const [filter, detail] of cases) {
    t.match(failure({ filter: JSON.stringify(filter) }).detail, detail, JSON.stringify(filter))
  }
})

t.test('the limits are configurable', async (t) => {
  const tight = { maxDepth: 2, maxNodes: 3, maxTextNodes: 5 }
  t.ok(readFilter({ filter: JSON.stringify([{ not: { name: 'count', op: 'eq', val: 1 } }]) }, resource, graph, tight))
  t.throws(() => readFilter({ filter: JSON.stringify([{ not: { not: { name: 'count', op: 'eq', val: 1 } } }]) }, resource, graph, tight), JsonApiError)
  t.throws(() => readFilter({ filter: JSON.stringify([1, 2, 3, 4].map((val) => ({ name: 'count', op: 'eq', val }))) }, resource, graph, tight), JsonApiError)
})

t.test('relationship steps of names are levels; simple filters, value elements and nested arrays are nodes', async (t) => {
  const limited = (raw: Record<string, string>, maxDepth: number, maxNodes: number, on = resource) => {
    try {
      readFilter(raw, on, graph, { maxDepth, maxNodes, maxTextNodes: 5 })
      return 'ok'
    } catch (error) {
      if (!(error instanceof JsonApiError)) throw error
      return `${error.errors[0].source?.parameter} ${error.errors[0].detail}`
    }
  }
  const json = (filter: unknown) => ({ filter: JSON.stringify(filter) })
  t.equal(limited(json([{ name: 'parts.label', op: 'eq', val: 'x' }]), 2, 200), 'ok')
  t.equal(limited(json([{ name: 'parts.label', op: 'eq', val: 'x' }]), 1, 200), "filter at [0].name: 'parts.label' is nested deeper than 1 levels (each relationship step is a level)")
  t.equal(limited(json([{ name: 'parts.sample', op: 'has', val: { name: 'count', op: 'eq', val: 1 } }]), 3, 200), 'ok')
  t.equal(limited(json([{ name: 'parts.sample', op: 'has', val: { name: 'count', op: 'eq', val: 1 } }]), 2, 200), 'filter at [0].val: the filter is nested deeper than 2 levels')
  t.equal(limited({ 'filter[parts.label]': 'x' }, 2, 200), 'ok')
  t.match(limited({ 'filter[parts.label]': 'x' }, 1, 200), /^filter\[parts\.label\] 'parts\.label' is nested deeper than 1 levels/)
  t.equal(limited({ 'filter[sample_id]': '1' }, 2, 200, graph.getResource('part')), 'ok')
  t.match(limited({ 'filter[sample_id]': '1' }, 1, 200, graph.getResource('part')), /^filter\[sample_id\] .* deeper than 1 levels/)
  t.equal(limited({ 'filter[count]': '1', 'filter[flag]': 'true' }, 8, 2), 'ok')
  t.equal(limited({ 'filter[count]': '1', 'filter[flag]': 'true', 'filter[text]': 'a' }, 8, 2), 'filter[text] the filter has more than 2 nodes')
  t.equal(limited(json([{ name: 'count', op: 'between', val: [1, 2] }]), 8, 3), 'ok')
  t.equal(limited(json([{ name: 'count', op: 'in_', val: [1, 2, 3] }]), 8, 3), 'filter at [0].val[2]: the filter has more than 3 nodes')
  t.equal(limited(json([[{ name: 'count', op: 'eq', val: 1 }]]), 8, 2), 'ok')
  t.equal(limited(json([[[{ name: 'count', op: 'eq', val: 1 }]]]), 8, 2), 'filter at [0][0][0]: the filter has more than 2 nodes')
  t.equal(limited(json([{ not: [{ name: 'count', op: 'eq', val: 1 }] }]), 8, 2), 'filter at [0].not[0]: the filter has more than 2 nodes')
})
