import { Value } from '@sinclair/typebox/value'
import type { TSchema } from '@sinclair/typebox'
import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import { jsonApiError } from '../errors/error-codes.js'
import { findNulCharacter, registerFormats } from '../schema/compiled-input.js'
import { didYouMean } from '../schema/known-keys.js'
import { BUILTIN_OPERATORS, FIELD_OPERATORS, fieldsComparable, isBuiltinOperator, operatorApplies } from '../query/builtin-operators.js'
import {
  andNode, compareNode, customNode, existsNode, fieldCompareNode, notNode, orNode,
  type AggregateTerm, type BuiltinOperator, type CompareNode, type FieldCompareNode, type FilterNode,
} from '../schema/filter-nodes.js'
import { countKey, countPath, declaredAggregate, type CountKey } from '../schema/aggregates.js'
import type { FilterLimits } from '../contracts/query-limits.js'

/** The comparisons that read the whole text of every row they are tried on. */
const TEXT_OPERATORS: ReadonlySet<string> = new Set(['match', 'like', 'notlike', 'ilike', 'notilike', 'startswith', 'endswith'])

type RawQuery = Readonly<Record<string, unknown>>

const COMPARISON_MEMBERS = new Set(['name', 'op', 'val', 'field'])

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function show (value: unknown): string {
  const text = JSON.stringify(value)
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** The operators an attribute takes (built-in ones that apply, then its own), for an error: `; its operators: eq, ne, …`. */
function operatorChoice (op: string, attribute: ResolvedAttribute): string {
  const builtins = (Object.keys(BUILTIN_OPERATORS) as Array<keyof typeof BUILTIN_OPERATORS>).filter((name) => operatorApplies(name, attribute)
    && !attribute.operators.has(name) && (attribute.nullable || BUILTIN_OPERATORS[name].operand !== 'null'))
  const names = [...builtins, ...attribute.operators.keys()]
  if (names.length === 0) return `; '${attribute.name}' takes no operator`
  return `${didYouMean(op, names)}; its operators: ${names.join(', ')}`
}

/** The text of an integer, exactly: no fraction, exponent, sign `+`, leading zeros, hexadecimal or space. */
const INTEGER_TEXT = /^-?(?:0|[1-9]\d*)$/
/** The text of a number, exactly (JSON's number syntax). */
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/**
 * A value given as text (a simple filter, or a string `val`) as a value of `schema`, converted only where the text is
 * exactly one: `"36"` is the integer 36, but `"36.9"`, `"1e3"`, `"0x24"` and `"true"` are no integer (TypeBox's
 * `Value.Convert` would truncate them to 36, 1, 36 and 1) and stay text, which the schema then refuses: a 400, as
 * `GET /users/1e3` is a 404. A union converts to the first member the text is exactly a value of.
 */
function fromText (schema: TSchema, text: string): unknown {
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined
  if (Array.isArray(members)) {
    for (const member of members) {
      const converted = fromText(member, text)
      if (Value.Check(member, converted)) return converted
    }
    return text
  }
  switch (schema.type) {
    case 'integer': return INTEGER_TEXT.test(text) ? Number(text) : text
    case 'number': return NUMBER_TEXT.test(text) ? Number(text) : text
    case 'boolean': return text === 'true' ? true : text === 'false' ? false : text
    case 'null': return text === 'null' ? null : text
    case 'string': return text
    // arrays and objects: as TypeBox converts them
    default: return Value.Convert(schema, text)
  }
}

/** Reads one request's filters: the JSON `filter` and the simple `filter[field]` forms, ANDed. */
class FilterReader {
  #nodes = 0
  #textNodes = 0
  readonly #graph: ResourceGraph
  readonly #limits: FilterLimits
  #parameter = 'filter'

  constructor (graph: ResourceGraph, limits: FilterLimits) {
    registerFormats()
    this.#graph = graph
    this.#limits = limits
  }

  /** Counts one node; more than the limit is a 400. */
  #count (path: string): void {
    if (++this.#nodes > this.#limits.maxNodes) throw this.#fail(path, `the filter has more than ${this.#limits.maxNodes} nodes`)
  }

  /** Fails when a filter at nesting `depth` whose name takes `steps` relationship steps goes deeper than the limit. */
  #deepest (depth: number, steps: number, name: string, path: string): void {
    if (depth + steps > this.#limits.maxDepth) {
      throw this.#fail(path, `'${name}' is nested deeper than ${this.#limits.maxDepth} levels (each relationship step is a level)`)
    }
  }

  /** Counts every element of every array inside a value (`in` lists, `between` pairs, a custom operator's arrays). */
  #countValue (value: unknown, path: string): void {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        this.#count(`${path}[${index}]`)
        this.#countValue(item, `${path}[${index}]`)
      })
    } else if (isObject(value)) {
      for (const [key, item] of Object.entries(value)) this.#countValue(item, `${path}.${key}`)
    }
  }

  #fail (path: string, detail: string): Error {
    const where = path === '' ? '' : `at ${path}: `
    return jsonApiError('FJA_INVALID_QUERY_PARAMETER', { detail: `${where}${detail}`, source: { parameter: this.#parameter } })
  }

  /** The filter of each filter parameter, in the order of the query string (after `read`). */
  readonly parts: FilterPart[] = []

  read (raw: RawQuery, resource: ResolvedResource): FilterNode | undefined {
    const items: FilterNode[] = []
    for (const [name, value] of Object.entries(raw)) {
      if (name !== 'filter' && !(name.startsWith('filter[') && name.endsWith(']'))) continue
      this.#parameter = name
      if (typeof value !== 'string') throw this.#fail('', `'${name}' may be given only once`)
      if (findNulCharacter(value) !== undefined) throw this.#fail('', 'the filter contains a NUL character')
      if (name === 'filter') {
        let parsed: unknown
        try {
          parsed = JSON.parse(value)
        } catch {
          throw this.#fail('', 'the filter is not valid JSON (a URL-encoded JSON array of filter objects)')
        }
        if (!Array.isArray(parsed)) {
          throw this.#fail('', isObject(parsed)
            ? `the filter is a JSON array of filter objects: wrap the object in an array, filter=[${show(parsed)}]`
            : `the filter is a JSON array of filter objects, got ${show(parsed)}`)
        }
        if (parsed.length === 0) continue
        items.push(this.#item(parsed, resource, '', 1))
      } else {
        items.push(this.#simple(name.slice('filter['.length, -1), value, resource))
      }
      this.parts.push({ parameter: name, node: items[items.length - 1] })
    }
    return items.length === 0 ? undefined : andNode(items)
  }

  /**
   * `filter[name]=value`: equality (the attribute's own `eq` operator when it declares one), with `<relationship>_id`
   * for the related id. Each counts as a node at the first
   * level; its relationship steps (`_id` is one) nest deeper.
   */
  #simple (name: string, value: string, resource: ResolvedResource): FilterNode {
    if (name === '') throw this.#fail('', 'the field name between the brackets is empty')
    this.#count('')
    const count = this.#countName(name, resource, '', 1)
    if (count !== undefined) return compareNode(count.attribute, 'eq', this.#coerce(count.attribute, value, ''), count.aggregate)
    const steps = name.split('.')
    const last = steps.pop() as string
    this.#deepest(1, steps.length, name, '')
    const { path, owner } = this.#walk(steps, resource, '')
    const attribute = owner.attributes.get(last)
    if (attribute === undefined && last !== 'id' && last.endsWith('_id') && owner.relationships.has(last.slice(0, -3))) {
      this.#deepest(1, steps.length + 1, name, '')
      const relationship = owner.relationships.get(last.slice(0, -3)) as ResolvedRelationship
      const target = this.#graph.getResource(relationship.targetType)
      return this.#wrap([...path, relationship], compareNode(target.idAttribute, 'eq', this.#coerce(target.idAttribute, value, '')))
    }
    const resolved = this.#attribute(owner, last, '')
    // The simple form is `eq` on the attribute, whatever `eq` means there: the application's own, when it declares one.
    const custom = resolved.operators.get('eq')
    if (custom !== undefined) {
      return this.#wrap(path, customNode(resolved, custom, this.#checkValue(custom.schema, value, '', `'eq' on '${resolved.name}'`)))
    }
    if (!BUILTIN_OPERATORS.eq.kinds.includes(resolved.valueKind)) {
      throw this.#fail('', `'${name}' (${resolved.valueKind}) cannot be compared for equality; use the JSON filter`)
    }
    return this.#wrap(path, compareNode(resolved, 'eq', this.#coerce(resolved, value, ''), this.#aggregateOf(owner, resolved)))
  }

  /** The aggregate a declared aggregate attribute computes (its scopes are put in by the composer); else undefined. */
  #aggregateOf (owner: ResolvedResource, attribute: ResolvedAttribute): AggregateTerm | undefined {
    return attribute.aggregate === undefined ? undefined : declaredAggregate(this.#graph, owner, attribute)
  }

  /**
   * `count(<path>)` as a filter name at nesting `depth` (its relationship steps nest deeper): the attribute that names
   * it and its aggregate; undefined for any other name.
   */
  #countName (name: string, resource: ResolvedResource, at: string, depth: number): CountKey | undefined {
    const path = countPath(name)
    if (path === undefined) return undefined
    const key = countKey(this.#graph, resource, path)
    if (typeof key === 'string') throw this.#fail(at, `'${name}': ${key}`)
    this.#deepest(depth, key.aggregate.steps.length + 1, name, at)
    return key
  }

  /**
   * One filter at nesting `depth`: each boolean form, relationship filter or relationship step of a name nests one
   * level deeper; an array (an implicit AND) stays on its level. Every filter object counts as a node, and so does
   * every array but the outermost (`path` '').
   */
  #item (value: unknown, resource: ResolvedResource, path: string, depth: number): FilterNode {
    if (Array.isArray(value)) {
      if (path !== '') this.#count(path)
      return andNode(value.map((item, index) => this.#item(item, resource, `${path}[${index}]`, depth)))
    }
    if (depth > this.#limits.maxDepth) throw this.#fail(path, `the filter is nested deeper than ${this.#limits.maxDepth} levels`)
    this.#count(path)
    if (!isObject(value)) throw this.#fail(path, `expected a filter object or an array of them, got ${show(value)}`)
    const keys = Object.keys(value)
    for (const form of ['and', 'or'] as const) {
      if (!(form in value)) continue
      if (keys.length !== 1) throw this.#fail(path, `'${form}' must be the only member of its object`)
      const items = value[form]
      if (!Array.isArray(items) || items.length === 0) throw this.#fail(`${path}.${form}`, `'${form}' takes a non-empty array of filters`)
      const nodes = items.map((item, index) => this.#item(item, resource, `${path}.${form}[${index}]`, depth + 1))
      return form === 'and' ? andNode(nodes) : orNode(nodes)
    }
    if ('not' in value) {
      if (keys.length !== 1) throw this.#fail(path, "'not' must be the only member of its object")
      return notNode(this.#item(value.not, resource, `${path}.not`, depth + 1))
    }
    return this.#comparison(value, resource, path, depth)
  }

  #comparison (value: Record<string, unknown>, resource: ResolvedResource, path: string, depth: number): FilterNode {
    for (const key of Object.keys(value)) {
      if (!COMPARISON_MEMBERS.has(key)) throw this.#fail(`${path}.${key}`, `unknown member '${key}' (a filter has name, op and val or field)`)
    }
    const { name, op } = value
    if (typeof name !== 'string' || name === '') throw this.#fail(`${path}.name`, '`name` must be a non-empty string')
    if (typeof op !== 'string') throw this.#fail(`${path}.op`, '`op` must be a string')
    const count = this.#countName(name, resource, `${path}.name`, depth)
    let walked: { path: ResolvedRelationship[]; owner: ResolvedResource }
    let attribute: ResolvedAttribute
    if (count === undefined) {
      const steps = name.split('.')
      const last = steps.pop() as string
      this.#deepest(depth, steps.length, name, `${path}.name`)
      walked = this.#walk(steps, resource, `${path}.name`)
      const relationship = walked.owner.relationships.get(last)
      if (relationship !== undefined && !walked.owner.attributes.has(last)) {
        return this.#wrap(walked.path, this.#relationshipFilter(relationship, value, path, depth + steps.length))
      }
      attribute = this.#attribute(walked.owner, last, `${path}.name`)
    } else {
      walked = { path: [], owner: resource }
      attribute = count.attribute
    }
    const aggregate = count?.aggregate ?? this.#aggregateOf(walked.owner, attribute)
    // The comparison of the attribute (of what an aggregate computes).
    const compare = (op: BuiltinOperator, value: unknown): CompareNode => compareNode(attribute, op, value, aggregate)
    this.#countValue(value.val, `${path}.val`)
    if ('field' in value) {
      return this.#wrap(walked.path, this.#fieldComparison(attribute, walked.owner, op, value, path))
    }
    const custom = attribute.operators.get(op)
    if (custom !== undefined) {
      const operand = this.#checkValue(custom.schema, value.val, `${path}.val`, `'${op}' on '${attribute.name}'`)
      return this.#wrap(walked.path, customNode(attribute, custom, operand))
    }
    if (!isBuiltinOperator(op)) {
      throw this.#fail(`${path}.op`, `'${op}' is not an operator of '${attribute.name}'${operatorChoice(op, attribute)}`)
    }
    const { operand } = BUILTIN_OPERATORS[op]
    if (TEXT_OPERATORS.has(op) && ++this.#textNodes > this.#limits.maxTextNodes) {
      throw this.#fail(`${path}.op`, `the filter has more than ${this.#limits.maxTextNodes} text comparisons (match, like, ilike, startswith, endswith …)`)
    }
    if (!operatorApplies(op, attribute)) {
      throw this.#fail(`${path}.op`, `'${op}' is not allowed on '${attribute.name}' (${attribute.valueKind})${operatorChoice(op, attribute)}`)
    }
    const val = value.val
    const at = `${path}.val`
    if (!('val' in value) && operand !== 'null') throw this.#fail(path, `'${op}' needs a \`val\``)
    switch (operand) {
      case 'null':
        if (val !== null && val !== undefined) throw this.#fail(at, `'${op}' takes null, got ${show(val)}`)
        this.#nullable(attribute, at)
        return this.#wrap(walked.path, compare(op, null))
      case 'value':
        if (val === null) this.#nullable(attribute, at)
        return this.#wrap(walked.path, compare(op, val === null ? null : this.#coerce(attribute, val, at)))
      case 'pair':
        if (!Array.isArray(val) || val.length !== 2) throw this.#fail(at, `'between' takes [low, high], got ${show(val)}`)
        return this.#wrap(walked.path, compare(op, val.map((item, index) => this.#coerce(attribute, item, `${at}[${index}]`))))
      case 'list':
        if (!Array.isArray(val)) throw this.#fail(at, `'${op}' takes an array of values, got ${show(val)}`)
        return this.#wrap(walked.path, compare(op, val.map((item, index) => this.#coerce(attribute, item, `${at}[${index}]`))))
      case 'text':
        if (typeof val !== 'string') throw this.#fail(at, `'${op}' takes a string, got ${show(val)}`)
        return this.#wrap(walked.path, compare(op, val))
    }
  }

  #relationshipFilter (relationship: ResolvedRelationship, value: Record<string, unknown>, path: string, depth: number): FilterNode {
    const expected = relationship.toMany ? 'any' : 'has'
    if (value.op !== expected) {
      throw this.#fail(`${path}.op`, `'${relationship.name}' is a ${relationship.toMany ? 'to-many' : 'to-one'} relationship: filter it with '${expected}'`)
    }
    if ('field' in value) throw this.#fail(`${path}.field`, 'a relationship filter takes `val`, not `field`')
    const target = this.#graph.getResource(relationship.targetType)
    const where = value.val === undefined ? undefined : this.#item(value.val, target, `${path}.val`, depth + 1)
    return existsNode(relationship, target, where)
  }

  #fieldComparison (attribute: ResolvedAttribute, owner: ResolvedResource, op: string, value: Record<string, unknown>, path: string): FieldCompareNode {
    if ('val' in value) throw this.#fail(path, 'a filter takes either `val` or `field`, not both')
    if (!FIELD_OPERATORS.has(op)) throw this.#fail(`${path}.op`, `'${op}' cannot compare two fields (eq, ne, gt, ge, lt, le)`)
    if (typeof value.field !== 'string') throw this.#fail(`${path}.field`, '`field` must be the name of an attribute')
    const other = this.#attribute(owner, value.field, `${path}.field`)
    for (const [item, at] of [[attribute, `${path}.name`], [other, `${path}.field`]] as const) {
      if (item.aggregate !== undefined) throw this.#fail(at, `'${item.name}' is an aggregate: compare it with a \`val\`, not a \`field\``)
    }
    if (!fieldsComparable(attribute, other) || !BUILTIN_OPERATORS[op as 'eq'].kinds.includes(attribute.valueKind)) {
      throw this.#fail(`${path}.field`, `'${attribute.name}' (${attribute.valueKind}) cannot be compared with '${other.name}' (${other.valueKind})`)
    }
    return fieldCompareNode(attribute, op as FieldCompareNode['op'], other)
  }

  /** Follows dotted relationship steps from `resource`. */
  #walk (steps: readonly string[], resource: ResolvedResource, at: string): { path: ResolvedRelationship[]; owner: ResolvedResource } {
    const path: ResolvedRelationship[] = []
    let owner = resource
    for (const step of steps) {
      const relationship = owner.relationships.get(step)
      if (relationship === undefined) throw this.#fail(at, `'${step}' is not a relationship of '${owner.type}'`)
      path.push(relationship)
      owner = this.#graph.getResource(relationship.targetType)
    }
    return { path, owner }
  }

  /** Wraps a node of the last resource of `path` into the EXISTS nodes that lead there. */
  #wrap (path: readonly ResolvedRelationship[], node: FilterNode): FilterNode {
    let wrapped = node
    for (let index = path.length - 1; index >= 0; index--) {
      wrapped = existsNode(path[index], this.#graph.getResource(path[index].targetType), wrapped)
    }
    return wrapped
  }

  #attribute (resource: ResolvedResource, name: string, at: string): ResolvedAttribute {
    if (name === 'id') return resource.idAttribute
    const attribute = resource.attributes.get(name)
    if (attribute === undefined || attribute.hidden) {
      const hint = resource.relationships.has(name) ? ` (a relationship: use 'any'/'has' or '${name}.<field>')` : ''
      throw this.#fail(at, `'${name}' is not a field of '${resource.type}'${hint}`)
    }
    if (!attribute.filterable) throw this.#fail(at, `'${name}' of '${resource.type}' is not filterable`)
    return attribute
  }

  #nullable (attribute: ResolvedAttribute, at: string): void {
    if (!attribute.nullable) throw this.#fail(at, `'${attribute.name}' is never null`)
  }

  /** Checks (and converts, from a string) a value to the attribute's type. */
  #coerce (attribute: ResolvedAttribute, value: unknown, at: string): unknown {
    if (value === null) throw this.#fail(at, `null is not a value of '${attribute.name}' here`)
    return this.#checkValue(attribute.valueSchema, value, at, `'${attribute.name}' (${attribute.valueKind})`)
  }

  #checkValue (schema: TSchema, value: unknown, at: string, what: string): unknown {
    const converted = typeof value === 'string' ? fromText(schema, value) : value
    if (!Value.Check(schema, converted)) throw this.#fail(at, `${show(value)} is not a valid value for ${what}`)
    return converted
  }
}

/**
 * Reads the filters of a request into one filter node (undefined without filters). Every mistake is a 400 whose
 * `source.parameter` is the parameter and whose detail gives the path inside a JSON filter (`at [1].or[0].op`).
 */
export function readFilter (raw: RawQuery, resource: ResolvedResource, graph: ResourceGraph, limits: FilterLimits): FilterNode | undefined {
  return new FilterReader(graph, limits).read(raw, resource)
}

/** The filter of one filter parameter of a request (`filter`, `filter[age]`). */
export interface FilterPart {
  readonly parameter: string
  readonly node: FilterNode
}

/** The request's filter (the AND of its filter parameters) and the filter of each parameter. */
export function readFilterParts (raw: RawQuery, resource: ResolvedResource, graph: ResourceGraph, limits: FilterLimits): { readonly filter: FilterNode | undefined; readonly parts: readonly FilterPart[] } {
  const reader = new FilterReader(graph, limits)
  const filter = reader.read(raw, resource)
  return { filter, parts: reader.parts }
}
