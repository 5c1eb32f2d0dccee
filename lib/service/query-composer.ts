import type { ResolvedAttribute, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { IncludeNode, QueryTree, SortNode } from '../query/query-tree.js'
import { sortNode } from '../query/query-tree.js'
import { aggregateTerm, andNode, compareNode, constantNode, existsNode, guardedNode, type AggregateTerm, type FilterNode } from '../schema/filter-nodes.js'
import { declaredAggregate } from '../schema/aggregates.js'
import { transformFilter } from '../query/transform-filter.js'
import { filterBuilderOf } from '../schema/filter-builder.js'
import type { IncludeLayer, LinkTargets, PageWindow, QueryLayer, RequiredRow, SelectedAggregate, SelectedRule, WriteTarget } from '../contracts/repository.js'
import { selectionOf, type Selection } from '../contracts/selection.js'

const NO_INCLUDES: readonly IncludeLayer[] = Object.freeze([])
const NO_AGGREGATES: readonly SelectedAggregate[] = Object.freeze([])
const NO_RULES: readonly SelectedRule[] = Object.freeze([])
const EVERY_ROW = constantNode(true)

function isFilterNode (value: unknown): value is FilterNode {
  return typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string'
}

/**
 * The one place where a request's query tree and its context become what the repository runs. Every read and every
 * write of a type goes through here, so the type's scope (its `scope` hook, evaluated once per request) is ANDed into
 * every statement that reaches the type: the rows of a collection or a detail, the related rows of an include at
 * any depth, relationship filters (`EXISTS`) and to-one sort paths of other types, counts, the rows an `UPDATE` or a
 * `DELETE` may touch, and the link targets a write checks.
 */
export class QueryComposer {
  readonly #graph: ResourceGraph
  readonly #context: unknown
  /** Each type's scope, expanded (see {@link QueryComposer.scope}); made when a type has a scope. */
  #scopes: Map<ResolvedResource, FilterNode | undefined> | undefined
  /** Each type's scope as its hook returned it; made when a type has a scope. */
  #raw: Map<ResolvedResource, FilterNode | undefined> | undefined
  /** Each field rule's condition for this request (`<type>.<attribute>.<read|write>`); made when a rule is asked for. */
  #rules: Map<string, FilterNode | undefined> | undefined

  constructor (graph: ResourceGraph, context: unknown) {
    this.#graph = graph
    this.#context = context
  }

  /** The request's context. */
  get context (): unknown {
    return this.#context
  }

  /** The scope of a type for this request: undefined when the request may see every row. */
  scope (resource: ResolvedResource): FilterNode | undefined {
    if (resource.hooks.scope === undefined) return undefined
    const scopes = this.#scopes ??= new Map()
    if (!scopes.has(resource)) scopes.set(resource, this.#expand(resource, [resource]))
    return scopes.get(resource)
  }

  /** What the type's `scope` hook returns, normalised (undefined: every row); evaluated once per request. */
  #own (resource: ResolvedResource): FilterNode | undefined {
    const hook = resource.hooks.scope
    if (hook === undefined) return undefined
    const raw = this.#raw ??= new Map()
    if (raw.has(resource)) return raw.get(resource)
    const result: unknown = hook.call(resource.hooks, this.#context, filterBuilderOf(this.#graph, resource))
    let scope: FilterNode | undefined
    if (result === undefined || result === true) scope = undefined
    else if (result === false) scope = constantNode(false)
    else if (isFilterNode(result)) scope = result.kind === 'constant' && result.value ? undefined : result
    else throw new Error(`fastify-jsonapi: the scope of '${resource.type}' must return a condition (built with \`where\`), true or false`)
    raw.set(resource, scope)
    return scope
  }

  /**
   * Where the request may read (`read`) or write (`write`) an attribute of a row of `resource`: a condition on the row,
   * `constant false` for no row, undefined for every row (no rule, or a rule that returned true). The attribute's
   * rule is called once per request; its condition reaches other types within their scopes, as a scope does.
   */
  rule (resource: ResolvedResource, attribute: ResolvedAttribute, kind: 'read' | 'write'): FilterNode | undefined {
    const rule = resource.rules.size === 0 ? undefined : resource.rules.get(attribute.name)?.[kind]
    if (rule === undefined) return undefined
    const rules = this.#rules ??= new Map()
    const key = `${resource.type}.${attribute.name}.${kind}`
    if (rules.has(key)) return rules.get(key)
    const result: unknown = rule(this.#context, filterBuilderOf(this.#graph, resource))
    let condition: FilterNode | undefined
    if (result === true) condition = undefined
    else if (result === false) condition = constantNode(false)
    else if (isFilterNode(result)) condition = result.kind === 'constant' && result.value ? undefined : this.#scopeInside(result, [])
    else throw new Error(`fastify-jsonapi: the ${kind} rule of '${resource.type}.${attribute.name}' must return a condition (built with \`where\`), true or false`)
    rules.set(key, condition)
    return condition
  }

  /**
   * A client's filter over rows of `resource` whose comparisons see an attribute as NULL on the rows where the request
   * may not read it (its read rule), at every depth of relationship filters: no row is selected by a value the request
   * may not read.
   */
  #guarded (resource: ResolvedResource, node: FilterNode): FilterNode {
    return transformFilter(node, {
      compare: (compare) => guardedNode(compare, this.rule(resource, compare.attribute, 'read')),
      custom: (custom) => guardedNode(custom, this.rule(resource, custom.attribute, 'read')),
      'field-compare': (fields) => guardedNode(fields, this.rule(resource, fields.attribute, 'read'), this.rule(resource, fields.other, 'read')),
      // The related rows' comparisons are guarded by the related type's rules.
      exists: (exists) => {
        const where = exists.where === undefined ? undefined : this.#guarded(exists.target, exists.where)
        return where === exists.where ? exists : existsNode(exists.relationship, exists.target, where)
      },
    })
  }

  /**
   * The read rules of the attributes a selection renders, each selected with the rows (see `QueryLayer.rules`). A rule
   * that is false for the whole request is not selected: a row without its decision never shows the attribute.
   */
  #readRules (resource: ResolvedResource, selection: Selection): readonly SelectedRule[] {
    if (resource.readRuled.length === 0) return NO_RULES
    let rules: SelectedRule[] | undefined
    for (const attribute of resource.readRuled) {
      if (!selection.attributes.includes(attribute.name)) continue
      const where = this.rule(resource, attribute, 'read') ?? EVERY_ROW
      if (where.kind === 'constant' && !where.value) continue
      (rules ??= []).push({ attribute, where })
    }
    return rules ?? NO_RULES
  }

  /**
   * The type's own scope with the scopes of the types its relationship conditions reach (a task visible only when its
   * project is: `where.has('project')`). `path` holds the types being expanded: where scopes reach each other in a
   * cycle, the repeated type's own condition is used without expanding it again.
   */
  #expand (resource: ResolvedResource, path: readonly ResolvedResource[]): FilterNode | undefined {
    const own = this.#own(resource)
    return own === undefined ? undefined : this.#scopeInside(own, path)
  }

  /**
   * `condition` on rows of `resource`, ANDed with the type's scope, and with the scope of each type the condition
   * reaches through a relationship filter.
   */
  where (resource: ResolvedResource, condition?: FilterNode): FilterNode | undefined {
    const scope = this.scope(resource)
    const scoped = condition === undefined ? undefined : this.#scopeInside(condition, [])
    if (scope === undefined) return scoped
    return scoped === undefined ? scope : andNode([scope, scoped])
  }

  /** The scope of a type a condition reaches, inside the expansion of the scopes of `path` (see {@link #expand}). */
  #reached (target: ResolvedResource, path: readonly ResolvedResource[]): FilterNode | undefined {
    return path.length === 0
      ? this.scope(target)
      : path.includes(target) ? this.#own(target) : this.#expand(target, [...path, target])
  }

  #scopeInside (condition: FilterNode, path: readonly ResolvedResource[]): FilterNode {
    return transformFilter(condition, {
      exists: (node, rewrite) => {
        const inner = node.where === undefined ? undefined : rewrite(node.where)
        const target = node.target
        const scope = this.#reached(target, path)
        const where = scope === undefined ? inner : inner === undefined ? scope : andNode([scope, inner])
        return where === node.where ? node : existsNode(node.relationship, target, where)
      },
      compare: (node) => {
        if (node.aggregate === undefined) return node
        const aggregate = this.#aggregate(node.aggregate, path)
        return aggregate === node.aggregate ? node : guardedNode(compareNode(node.attribute, node.op, node.value, aggregate), node.guard)
      },
    })
  }

  /**
   * An aggregate that counts (or sums …) only the related rows within their type's scope, reached through to-one
   * steps within theirs. (An aggregate's own `where` is only ever a scope: the query language has no condition inside.)
   */
  #aggregate (term: AggregateTerm, path: readonly ResolvedResource[] = []): AggregateTerm {
    const where = this.#reached(term.target, path)
    const steps = term.steps.map((step) => ({ ...step, where: this.#reached(step.target, path) }))
    if (where === undefined && steps.every((step) => step.where === undefined)) return term
    return aggregateTerm(term.fn, steps, term.relationship, term.target, term.of, where)
  }

  /**
   * Sort keys whose to-one steps only take values from rows within the step's scope, whose aggregates count within
   * theirs, and whose attribute orders as NULL where the request may not read it (its read rule).
   */
  #sort (resource: ResolvedResource, keys: readonly SortNode[]): readonly SortNode[] {
    return keys.map((key) => {
      const aggregate = key.aggregate === undefined ? undefined : this.#aggregate(key.aggregate)
      const owner = key.path.length === 0 ? resource : key.path[key.path.length - 1].target
      const guard = this.rule(owner, key.attribute, 'read')
      if (aggregate === key.aggregate && guard === undefined && key.path.every((step) => this.scope(step.target) === undefined)) return key
      return sortNode(key.path.map((step) => ({ ...step, where: this.scope(step.target) })), key.attribute, key.descending, aggregate, guard)
    })
  }

  /** The aggregates a selection renders, each within the scopes it reaches, as a layer selects them. */
  #aggregates (resource: ResolvedResource, selection: Selection): readonly SelectedAggregate[] {
    if (selection.aggregates.length === 0) return NO_AGGREGATES
    return selection.aggregates.map((attribute) => ({ attribute, term: this.#aggregate(declaredAggregate(this.#graph, resource, attribute)) }))
  }

  /**
   * The include layers below rows of `resource`: relationships left out of its sparse fieldset are not followed. A
   * to-many step reads a page of each owner's related rows (its node's `size`).
   */
  includes (resource: ResolvedResource, nodes: readonly IncludeNode[], query: QueryTree): readonly IncludeLayer[] {
    if (nodes.length === 0) return NO_INCLUDES
    const rendered = selectionOf(resource, query.fields.get(resource.type)).relationships
    const layers: IncludeLayer[] = []
    for (const node of nodes) {
      const relationship = rendered.find((item) => item.name === node.relationship)
      if (relationship === undefined) continue
      const target = this.#graph.getResource(relationship.targetType)
      const selection = selectionOf(target, query.fields.get(target.type))
      layers.push({
        relationship,
        layer: {
          resource: target,
          where: this.scope(target),
          sort: [],
          page: node.size === undefined ? undefined : { offset: 0, limit: node.size },
          columns: selection.columns,
          aggregates: this.#aggregates(target, selection),
          rules: this.#readRules(target, selection),
          include: this.includes(target, node.children, query),
        },
      })
    }
    return layers
  }

  /**
   * A page of a collection: the client's filter (and `extra`, the link to the owner of a related collection), its
   * sort and page, its fieldset and includes.
   *
   * @param probe read one row more than the page (to tell an uncounted collection whether a next page exists)
   */
  collection (resource: ResolvedResource, query: QueryTree, extra?: FilterNode, probe = 0): QueryLayer {
    const { size, number } = query.page
    // The client's filter sees what the request may read; `extra` is the service's own condition.
    const filter = query.filter === undefined ? undefined : this.#guarded(resource, query.filter)
    const condition = extra === undefined ? filter : filter === undefined ? extra : andNode([extra, filter])
    const page: PageWindow = size === 0 ? { offset: 0, limit: undefined } : { offset: (number - 1) * size, limit: size + probe }
    const selection = selectionOf(resource, query.fields.get(resource.type))
    return {
      resource,
      where: this.where(resource, condition),
      sort: this.#sort(resource, query.sort),
      page,
      columns: selection.columns,
      aggregates: this.#aggregates(resource, selection),
      rules: this.#readRules(resource, selection),
      include: this.includes(resource, query.include, query),
    }
  }

  /** One resource by id, with the fieldset and includes of the query. */
  detail (resource: ResolvedResource, id: string, query: QueryTree, columns?: readonly string[]): QueryLayer {
    const selection = selectionOf(resource, query.fields.get(resource.type))
    return {
      resource,
      where: this.where(resource, compareNode(resource.idAttribute, 'eq', id)),
      sort: [],
      page: undefined,
      columns: columns ?? selection.columns,
      aggregates: this.#aggregates(resource, selection),
      rules: this.#readRules(resource, selection),
      include: this.includes(resource, query.include, query),
    }
  }

  /**
   * The rows of `ids` the request may see (only their ids); with `condition` (a field rule's, as {@link rule} gave
   * it), only those where it holds.
   */
  existing (resource: ResolvedResource, ids: readonly string[], condition?: FilterNode): QueryLayer {
    const byId = this.where(resource, compareNode(resource.idAttribute, 'in_', [...ids]))
    return {
      resource,
      where: condition === undefined ? byId : andNode([byId as FilterNode, condition]),
      sort: [],
      page: undefined,
      columns: [],
      include: NO_INCLUDES,
    }
  }

  /** A related row, linked to an owner the request can see, as far as the request may see it. */
  related (resource: ResolvedResource, columns: readonly string[]): QueryLayer {
    return { resource, where: this.scope(resource), sort: [], page: undefined, columns, include: NO_INCLUDES }
  }

  /** A row a write addresses: written only when it is within the type's scope. */
  target (resource: ResolvedResource, id: string): WriteTarget {
    return { resource, id, scope: this.scope(resource) }
  }

  /** A row a write requires (a foreign key's target): it must exist within its scope. */
  required (resource: ResolvedResource, id: string): RequiredRow {
    return { resource, id, scope: this.scope(resource) }
  }

  /** The rows a link change addresses: only rows within the type's scope are linked or unlinked. */
  links (resource: ResolvedResource, ids: readonly string[]): LinkTargets {
    return { resource, ids, scope: this.scope(resource) }
  }
}
