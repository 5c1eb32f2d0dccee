import { Type } from '@sinclair/typebox'
import type { ResolvedAttribute, ResolvedResource, ResourceGraph } from './resolved.js'
import { aggregateTerm, type AggregateTerm, type PathStep } from './filter-nodes.js'

/**
 * The aggregate a declared aggregate attribute of `resource` computes, over every related row (the composer puts the
 * scopes in): kept with the resource, by the attribute's name. The path was checked at registration.
 */
export function declaredAggregate (graph: ResourceGraph, resource: ResolvedResource, attribute: ResolvedAttribute): AggregateTerm {
  return resource.memo.get('aggregate-term', attribute.name, () => {
    const spec = attribute.aggregate
    if (spec === undefined) throw new Error(`fastify-jsonapi: '${resource.type}.${attribute.name}' is not an aggregate`)
    const walked = walk(graph, resource, spec.path)
    if (typeof walked === 'string') throw new Error(`fastify-jsonapi: '${resource.type}.${attribute.name}': ${walked}`)
    const of = spec.of === undefined ? undefined : walked.target.attributes.get(spec.of)
    return aggregateTerm(spec.fn, walked.steps, walked.relationship, walked.target, of, undefined)
  })
}

/** `count(<path>)` of the query language on `resource`: the attribute that names it and the aggregate it computes. */
export interface CountKey {
  readonly attribute: ResolvedAttribute
  readonly aggregate: AggregateTerm
}

/** The name of a count of the query language, `count(owner.computers)`: its path, or undefined for any other name. */
export function countPath (name: string): string | undefined {
  return name.startsWith('count(') && name.endsWith(')') ? name.slice('count('.length, -1) : undefined
}

/**
 * `count(<path>)` on `resource`: the path's to-one relationships, then a to-many one (or why it is not such a path),
 * kept with the resource by the path once it is known to be one.
 */
export function countKey (graph: ResourceGraph, resource: ResolvedResource, path: string): CountKey | string {
  const steps = path.split('.')
  const walked = walk(graph, resource, steps)
  if (typeof walked === 'string') return walked
  return resource.memo.get('count-key', path, () => Object.freeze({
    attribute: countAttribute(path, walked.steps.length > 0),
    aggregate: aggregateTerm('count', walked.steps, walked.relationship, walked.target, undefined, undefined),
  }))
}

/** Follows to-one relationships, then one to-many relationship, from `resource`. */
function walk (graph: ResourceGraph, resource: ResolvedResource, path: readonly string[]): { steps: PathStep[], relationship: PathStep['relationship'], target: ResolvedResource } | string {
  if (path.length === 0 || path.some((step) => step === '')) return `'${path.join('.')}' is not a relationship path`
  const steps: PathStep[] = []
  let owner = resource
  for (let index = 0; index < path.length; index++) {
    const name = path[index]
    const relationship = owner.relationships.get(name)
    if (relationship === undefined) return `'${name}' is not a relationship of '${owner.type}'`
    const target = graph.getResource(relationship.targetType)
    const last = index === path.length - 1
    if (last && !relationship.toMany) return `'${name}' is a to-one relationship of '${owner.type}': count() counts a to-many relationship`
    if (!last && relationship.toMany) return `'${name}' is a to-many relationship of '${owner.type}': only the last step of count() may be to-many`
    if (last) return { steps, relationship, target }
    steps.push({ relationship, target })
    owner = target
  }
  throw new Error('unreachable')
}

/** The attribute a `count(…)` is, for the query language: an integer, filterable and sortable, never stored or rendered. */
function countAttribute (path: string, throughToOne: boolean): ResolvedAttribute {
  const schema = Type.Integer()
  return Object.freeze({
    name: `count(${path})`,
    schema,
    column: undefined,
    required: false,
    readOnly: true,
    createOnly: false,
    hidden: false,
    filterable: true,
    sortable: true,
    // Through a to-one step a row may have no related row to count from: no count (NULL).
    nullable: throughToOne,
    hasDefault: false,
    defaultValue: undefined,
    derived: undefined,
    format: 'integer',
    valueKind: 'integer',
    valueSchema: schema,
    operators: new Map(),
    selects: Object.freeze([]),
    computed: undefined,
    aggregate: Object.freeze({ fn: 'count', path: Object.freeze(path.split('.')), of: undefined }),
    inDefaultFieldset: false,
  })
}
