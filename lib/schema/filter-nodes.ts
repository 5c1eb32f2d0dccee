import type { AggregateFunction, FilterOperator } from './fields.js'
import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource } from './resolved.js'

/** The built-in comparison operators. */
export type BuiltinOperator =
  | 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' | 'between' | 'in_' | 'notin_' | 'is_' | 'isnot'
  | 'like' | 'notlike' | 'ilike' | 'notilike' | 'startswith' | 'endswith' | 'match'

/**
 * One to-one step of a path from a row to a related row (a sort key's `owner.name`, an aggregate's `owner.computers`).
 */
export interface PathStep {
  readonly relationship: ResolvedRelationship
  readonly target: ResolvedResource
  /**
   * The condition a related row must meet to give its value (the target's scope, set by the composer); a row that
   * does not counts as if there were none (NULL).
   */
  readonly where?: FilterNode
}

/**
 * An aggregate over a row's to-many relationship, reached through to-one `steps`: `count` of the related rows, or
 * `sum`/`min`/`max`/`avg` of their attribute `of`, over the related rows within `where` (the target's scope, set by
 * the composer). What a declared aggregate attribute and `count(…)` of the query language compute; written as a
 * correlated subquery.
 */
export interface AggregateTerm {
  readonly fn: AggregateFunction
  readonly steps: readonly PathStep[]
  readonly relationship: ResolvedRelationship
  readonly target: ResolvedResource
  readonly of: ResolvedAttribute | undefined
  readonly where: FilterNode | undefined
}

/**
 * `attribute op value`. `value` is checked and coerced to the attribute's type (`null` only where allowed). An
 * aggregate attribute (declared, or `count(…)`) compares its `aggregate`.
 */
export interface CompareNode {
  readonly kind: 'compare'
  readonly attribute: ResolvedAttribute
  readonly op: BuiltinOperator
  readonly value: unknown
  readonly aggregate?: AggregateTerm
  /**
   * Where the request may read the attribute on the row (its read rule, set by the composer): elsewhere the attribute
   * is compared as NULL (`CASE WHEN <guard> THEN <column> END`). None: every row.
   */
  readonly guard?: FilterNode
}

/** `attribute op other attribute` of the same row. */
export interface FieldCompareNode {
  readonly kind: 'field-compare'
  readonly attribute: ResolvedAttribute
  readonly op: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'
  readonly other: ResolvedAttribute
  /** The read rules of `attribute` and of `other` (see {@link CompareNode.guard}). */
  readonly guard?: FilterNode
  readonly otherGuard?: FilterNode
}

/** A custom operator of the attribute. */
export interface CustomNode {
  readonly kind: 'custom'
  readonly attribute: ResolvedAttribute
  readonly operator: FilterOperator<any>
  readonly value: unknown
  /** The attribute's read rule (see {@link CompareNode.guard}): the operator sees NULL where it does not hold. */
  readonly guard?: FilterNode
}

export interface AndNode {
  readonly kind: 'and'
  readonly items: readonly FilterNode[]
}

export interface OrNode {
  readonly kind: 'or'
  readonly items: readonly FilterNode[]
}

export interface NotNode {
  readonly kind: 'not'
  readonly item: FilterNode
}

/**
 * Some related row (through `relationship`) matches `where` (any related row when undefined). Compiled to an
 * `EXISTS` subquery: it never duplicates rows, and `not` over it keeps the rows with no related row.
 */
export interface ExistsNode {
  readonly kind: 'exists'
  readonly relationship: ResolvedRelationship
  readonly target: ResolvedResource
  readonly where: FilterNode | undefined
}

/**
 * The row is linked to the owner `ownerId` through the owner's `relationship` (the rows of a related collection
 * `/<owner>/<id>/<relationship>`). Built by the service, never parsed from a query string.
 */
export interface LinkedToNode {
  readonly kind: 'linked-to'
  readonly owner: ResolvedResource
  readonly relationship: ResolvedRelationship
  readonly ownerId: string
}

/** Every row (`true`) or none (`false`); what a scope of "everything" or "nothing" is. */
export interface ConstantNode {
  readonly kind: 'constant'
  readonly value: boolean
}

/**
 * The row's `relationship` links to one of `ids` (`null`: links to none). Compares linkage only, without reading
 * the related rows (so without their scope): for server-side conditions such as a scope (`owner_id = $1`), never
 * parsed from a query string.
 */
export interface ReferencesNode {
  readonly kind: 'references'
  readonly relationship: ResolvedRelationship
  readonly target: ResolvedResource
  readonly ids: readonly string[] | null
}

/** A node of the filter tree. */
export type FilterNode =
  | CompareNode | FieldCompareNode | CustomNode | AndNode | OrNode | NotNode | ExistsNode | LinkedToNode | ConstantNode | ReferencesNode

/** The kinds of filter node; a stage that handles filters dispatches on every one. */
export type FilterNodeKind = FilterNode['kind']

export function compareNode (attribute: ResolvedAttribute, op: BuiltinOperator, value: unknown, aggregate?: AggregateTerm): CompareNode {
  return Object.freeze({ kind: 'compare', attribute, op, value, ...(aggregate === undefined ? {} : { aggregate }) })
}

/**
 * A comparison whose operands are NULL on the rows where the request may not read them: `guard` for the attribute,
 * `otherGuard` for a field comparison's other attribute (undefined: readable on every row).
 */
export function guardedNode<N extends CompareNode | FieldCompareNode | CustomNode> (node: N, guard: FilterNode | undefined, otherGuard?: FilterNode): N {
  if (guard === undefined && otherGuard === undefined) return node
  return Object.freeze({ ...node, ...(guard === undefined ? {} : { guard }), ...(otherGuard === undefined ? {} : { otherGuard }) })
}

export function aggregateTerm (fn: AggregateFunction, steps: readonly PathStep[], relationship: ResolvedRelationship, target: ResolvedResource, of: ResolvedAttribute | undefined, where: FilterNode | undefined): AggregateTerm {
  return Object.freeze({ fn, steps: Object.freeze(steps.map((step) => Object.freeze({ ...step }))), relationship, target, of, where })
}

export function fieldCompareNode (attribute: ResolvedAttribute, op: FieldCompareNode['op'], other: ResolvedAttribute): FieldCompareNode {
  return Object.freeze({ kind: 'field-compare', attribute, op, other })
}

export function customNode (attribute: ResolvedAttribute, operator: FilterOperator<any>, value: unknown): CustomNode {
  return Object.freeze({ kind: 'custom', attribute, operator, value })
}

/** AND of the items; a single item stands for itself. */
export function andNode (items: readonly FilterNode[]): FilterNode {
  return items.length === 1 ? items[0] : Object.freeze({ kind: 'and', items: Object.freeze([...items]) })
}

export function orNode (items: readonly FilterNode[]): OrNode {
  return Object.freeze({ kind: 'or', items: Object.freeze([...items]) })
}

export function notNode (item: FilterNode): NotNode {
  return Object.freeze({ kind: 'not', item })
}

export function existsNode (relationship: ResolvedRelationship, target: ResolvedResource, where: FilterNode | undefined): ExistsNode {
  return Object.freeze({ kind: 'exists', relationship, target, where })
}

export function linkedToNode (owner: ResolvedResource, relationship: ResolvedRelationship, ownerId: string): LinkedToNode {
  return Object.freeze({ kind: 'linked-to', owner, relationship, ownerId })
}

export function constantNode (value: boolean): ConstantNode {
  return value ? TRUE : FALSE
}

const TRUE: ConstantNode = Object.freeze({ kind: 'constant', value: true })
const FALSE: ConstantNode = Object.freeze({ kind: 'constant', value: false })

export function referencesNode (relationship: ResolvedRelationship, target: ResolvedResource, ids: readonly string[] | null): ReferencesNode {
  return Object.freeze({ kind: 'references', relationship, target, ids: ids === null ? null : Object.freeze([...ids]) })
}

type Printed = Record<string, unknown> | Array<Record<string, unknown>>

const PRINTERS: { [K in FilterNodeKind]: (node: Extract<FilterNode, { kind: K }>) => Printed } = {
  compare: (node) => ({ name: node.attribute.name, op: node.op, val: node.value }),
  'field-compare': (node) => ({ name: node.attribute.name, op: node.op, field: node.other.name }),
  custom: (node) => ({ name: node.attribute.name, op: node.operator.name, val: node.value }),
  and: (node) => ({ and: node.items.map(printFilter) }),
  or: (node) => ({ or: node.items.map(printFilter) }),
  not: (node) => ({ not: printFilter(node.item) }),
  exists: (node) => ({
    name: node.relationship.name,
    op: node.relationship.toMany ? 'any' : 'has',
    ...(node.where === undefined ? {} : { val: printFilter(node.where) }),
  }),
  'linked-to': (node) => ({ linkedTo: { type: node.owner.type, id: node.ownerId, relationship: node.relationship.name } }),
  constant: (node) => ({ constant: node.value }),
  references: (node) => ({ references: { relationship: node.relationship.name, ids: node.ids } }),
}

/**
 * Prints a filter tree back to the JSON filter syntax (relationship filters in their nested `any`/`has` form), so
 * that `filter=<JSON.stringify(printFilter(tree))>` reads back to an equal tree. (`linked-to` nodes, which only the
 * service builds, print as `{"linkedTo": {type, id, relationship}}`; `constant` and `references` nodes, which only
 * server code builds, as `{"constant": true}` and `{"references": {relationship, ids}}`.)
 */
export function printFilter (node: FilterNode): Printed {
  return (PRINTERS[node.kind] as (node: FilterNode) => Printed)(node)
}
