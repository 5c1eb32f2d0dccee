import type { Static } from '@sinclair/typebox'
import type { AttributeDeclarations, RelationshipDeclarations } from './fields.js'
import type { ResolvedAttribute, ResolvedResource, ResourceGraph } from './resolved.js'
import {
  andNode, compareNode, constantNode, existsNode, notNode, orNode, referencesNode,
  type BuiltinOperator, type FilterNode,
} from './filter-nodes.js'
import { countKey, declaredAggregate } from './aggregates.js'

/** The names a condition may compare: every attribute (hidden ones too) and `id`. */
export type ConditionName<A extends AttributeDeclarations> = (keyof A & string) | 'id'

/** The value a condition compares a name with: the attribute's non-null wire value; an id as string or number. */
export type ConditionValue<A extends AttributeDeclarations, K> =
  K extends 'id' ? string | number : K extends keyof A ? NonNullable<Static<A[K]['schema']>> : never

/** An id of a related resource. */
export type RelatedId = string | number

/**
 * Builds conditions (filter nodes) over one resource type, typed from its declaration: what a `scope` returns. Every
 * value is bound as a parameter; names are checked against the declaration when the condition is built.
 *
 * @example
 * ```ts
 * scope: (context, where) => where.or(
 *   where.eq('published', true),
 *   where.references('author', context.user.id),
 * )
 * ```
 */
export interface FilterBuilder<A extends AttributeDeclarations, R extends RelationshipDeclarations> {
  /** `name = value`; `null` → `name IS NULL`. */
  eq<K extends ConditionName<A>>(name: K, value: ConditionValue<A, K> | null): FilterNode
  /** `name <> value`; `null` → `name IS NOT NULL`. */
  ne<K extends ConditionName<A>>(name: K, value: ConditionValue<A, K> | null): FilterNode
  gt<K extends ConditionName<A>>(name: K, value: ConditionValue<A, K>): FilterNode
  ge<K extends ConditionName<A>>(name: K, value: ConditionValue<A, K>): FilterNode
  lt<K extends ConditionName<A>>(name: K, value: ConditionValue<A, K>): FilterNode
  le<K extends ConditionName<A>>(name: K, value: ConditionValue<A, K>): FilterNode
  /** `name` is one of `values` (none: no row). */
  in<K extends ConditionName<A>>(name: K, values: ReadonlyArray<ConditionValue<A, K>>): FilterNode
  /** `name` is none of `values`. */
  notIn<K extends ConditionName<A>>(name: K, values: ReadonlyArray<ConditionValue<A, K>>): FilterNode
  /** Any built-in operator of the query language (`like`, `between` …) with its value. */
  compare<K extends ConditionName<A>>(name: K, op: BuiltinOperator, value: unknown): FilterNode
  /**
   * How many rows of a to-many relationship the row has, compared with `value`: `count('computers', 'ge', 2)`. The
   * related type's own scope applies: a row it cannot see is not counted. (A declared aggregate attribute is compared
   * by its name, with `eq`, `gt` ….)
   */
  count<K extends keyof R & string>(relationship: K, op: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le', value: number): FilterNode
  and(...conditions: FilterNode[]): FilterNode
  or(...conditions: FilterNode[]): FilterNode
  not(condition: FilterNode): FilterNode
  /**
   * Some related row exists (that matches `where`, built over the related type). The related type's own scope applies
   * too: a row it cannot see does not count.
   */
  has<K extends keyof R & string>(relationship: K, where?: (related: FilterBuilder<AttributeDeclarations, RelationshipDeclarations>) => FilterNode): FilterNode
  /**
   * The relationship links to `ids` (one id, several, or `null` for none), comparing linkage only: `owner_id = $1`
   * for a foreign key, without reading the related table.
   */
  references<K extends keyof R & string>(relationship: K, ids: RelatedId | readonly RelatedId[] | null): FilterNode
  /** Every row. */
  all(): FilterNode
  /** No row. */
  none(): FilterNode
}

function fail (resource: ResolvedResource, detail: string): Error {
  return new Error(`fastify-jsonapi: a condition on '${resource.type}': ${detail}`)
}

/**
 * The {@link FilterBuilder} of a resource, built once per resource and kept with it (it holds no state). A name that is not an
 * attribute, `id` or a relationship of the resource throws (a programming error, not a client's).
 */
export function filterBuilderOf (graph: ResourceGraph, resource: ResolvedResource): FilterBuilder<any, any> {
  return resource.memo.get('filter-builder', '', () => Object.freeze(createFilterBuilder(graph, resource)))
}

function createFilterBuilder (graph: ResourceGraph, resource: ResolvedResource): FilterBuilder<any, any> {
  const attribute = (name: string): ResolvedAttribute => {
    const found = name === 'id' ? resource.idAttribute : resource.attributes.get(name)
    if (found === undefined || (found.column === undefined && found.computed === undefined && found.aggregate === undefined)) {
      throw fail(resource, `'${name}' is not a stored, computed or aggregate attribute`)
    }
    return found
  }
  // An aggregate attribute compares what it computes (the composer puts the related type's scope in).
  const node = (found: ResolvedAttribute, op: BuiltinOperator, raw: unknown): FilterNode =>
    compareNode(found, op, raw, found.aggregate === undefined ? undefined : declaredAggregate(graph, resource, found))
  const value = (name: string, raw: unknown): unknown => {
    if (raw === undefined) throw fail(resource, `the value of '${name}' is undefined`)
    return name === 'id' && raw !== null ? String(raw) : raw
  }
  const relationship = (name: string) => {
    const found = resource.relationships.get(name)
    if (found === undefined) throw fail(resource, `'${name}' is not a relationship`)
    return found
  }
  const compare = (op: BuiltinOperator) => (name: string, raw: unknown): FilterNode => node(attribute(name), op, value(name, raw))
  const list = (name: string, values: readonly unknown[]): unknown[] => {
    if (!Array.isArray(values)) throw fail(resource, `'${name}' needs an array of values`)
    return values.map((item) => value(name, item))
  }
  return {
    eq: compare('eq'),
    ne: compare('ne'),
    gt: compare('gt'),
    ge: compare('ge'),
    lt: compare('lt'),
    le: compare('le'),
    in: (name, values) => node(attribute(name), 'in_', list(name, values)),
    notIn: (name, values) => node(attribute(name), 'notin_', list(name, values)),
    compare: (name, op, raw) => node(attribute(name), op, raw),
    count (name, op, raw) {
      const key = countKey(graph, resource, name)
      if (typeof key === 'string') throw fail(resource, key)
      if (!Number.isInteger(raw)) throw fail(resource, `the count of '${name}' is compared with an integer, not ${String(raw)}`)
      return compareNode(key.attribute, op, raw, key.aggregate)
    },
    and: (...conditions) => conditions.length === 0 ? constantNode(true) : andNode(conditions),
    or: (...conditions) => conditions.length === 0 ? constantNode(false) : orNode(conditions),
    not: (condition) => notNode(condition),
    has (name, where) {
      const found = relationship(name)
      const target = graph.getResource(found.targetType)
      return existsNode(found, target, where === undefined ? undefined : where(filterBuilderOf(graph, target)))
    },
    references (name, ids) {
      const found = relationship(name)
      const target = graph.getResource(found.targetType)
      if (ids === null) return referencesNode(found, target, null)
      const list = (Array.isArray(ids) ? ids : [ids]) as RelatedId[]
      if (list.some((id) => id === undefined || id === null)) throw fail(resource, `an id of '${name}' is missing`)
      return referencesNode(found, target, list.map(String))
    },
    all: () => constantNode(true),
    none: () => constantNode(false),
  }
}
