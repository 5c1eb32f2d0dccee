import type { ResolvedAttribute, ResolvedResource } from '../schema/resolved.js'
import type { AggregateTerm, FilterNode, PathStep } from '../schema/filter-nodes.js'

/**
 * The immutable query tree: what a request asks for, read once from the query string. Stages below the request
 * reader (service, repository, document) see only these plain frozen objects, never the query string.
 */

/** One relationship to include, with the includes below it. */
export interface IncludeNode {
  readonly kind: 'include'
  readonly relationship: string
  readonly children: readonly IncludeNode[]
  /**
   * A to-many step: the most related resources read per owner (the request's `page[<path>][size]`, or the declared
   * or configured default). Undefined for a to-one step.
   */
  readonly size?: number
}

/** One to-one step of a sort path. */
export type SortStep = PathStep

/**
 * One sort key: an attribute of the resource or of a to-one related resource (`owner.name`), or an aggregate (a
 * declared one, or `count(…)`: its `attribute` names it, its `aggregate` computes it).
 */
export interface SortNode {
  readonly kind: 'sort'
  /** The to-one relationships leading to the attribute's resource; empty for the resource's own attribute. */
  readonly path: readonly SortStep[]
  readonly attribute: ResolvedAttribute
  readonly descending: boolean
  readonly aggregate?: AggregateTerm
  /**
   * Where the request may read the attribute on the row it is read from (its read rule, set by the composer):
   * elsewhere it orders as NULL. None: every row.
   */
  readonly guard?: FilterNode
}

/**
 * A sort value too long to carry in a cursor (see `MAX_CURSOR_VALUE_BYTES`): the cursor keeps its digest, and the
 * row the cursor points at (its id is the position's last value) gives the value back when the cursor is read.
 */
export interface ElidedValue {
  readonly digest: string
}

/** A sort key value of a position: its text as the database prints it, `null` for NULL, or elided. */
export type CursorValue = string | null | ElidedValue

/**
 * A position in a collection's order, read from a cursor (the cursor pagination profile): the sort key values of a
 * row, as the database prints them (text; `null` for NULL; {@link ElidedValue} for one too long to carry), one per
 * key of {@link keysetKeys} (the id last, never elided), and
 * where the position lies: `on` the row (the cursor of an item: after it are the rows that follow the row, before it
 * those that precede it), or in the gap just `before` or just `after` the row (the cursors of `prev` and `next` of an
 * empty page, which must include the row itself).
 */
export interface CursorPosition {
  readonly values: readonly CursorValue[]
  readonly edge: 'on' | 'before' | 'after'
}

/** Cursor pagination of a collection: a window after and/or before a position (neither: the first page). */
export interface CursorWindow {
  /**
   * What the request's cursors are bound to, and what this response's cursors will be: the collection (type, or the
   * owner and relationship of a related collection), the order and the filter, canonically written.
   */
  readonly context: string
  /** `page[after]`: the rows after this position. */
  readonly after?: CursorPosition
  /** `page[before]`: the rows before this position (read from it backwards, unless `after` is given too). */
  readonly before?: CursorPosition
}

/** A page window. `size` 0 means unpaged (every row). */
export interface PageNode {
  readonly kind: 'page'
  /** 1-based page number (1 for a cursor page). */
  readonly number: number
  readonly size: number
  /** Set when the request is cursor-paginated (the cursor pagination profile) instead of paginated by number. */
  readonly cursor?: CursorWindow
}

/** The query of one request. */
export interface QueryTree {
  /** Sparse fieldsets: type → the fields to render. A type absent from the map renders every field. */
  readonly fields: ReadonlyMap<string, ReadonlySet<string>>
  readonly include: readonly IncludeNode[]
  /** The rows to return; undefined: every row. */
  readonly filter: FilterNode | undefined
  readonly sort: readonly SortNode[]
  readonly page: PageNode
  /**
   * The filter of each filter parameter (`filter`, `filter[age]`), in the order of the query string: a value the
   * database refuses is traced to the parameter that holds it.
   */
  readonly filterParts?: ReadonlyArray<{ readonly parameter: string; readonly node: FilterNode }>
}

export function includeNode (relationship: string, children: readonly IncludeNode[] = [], size?: number): IncludeNode {
  return Object.freeze({ kind: 'include', relationship, children: Object.freeze([...children]), ...(size === undefined ? {} : { size }) })
}

export function sortNode (path: readonly SortStep[], attribute: ResolvedAttribute, descending = false, aggregate?: AggregateTerm, guard?: FilterNode): SortNode {
  return Object.freeze({ kind: 'sort', path: Object.freeze([...path]), attribute, descending, ...(aggregate === undefined ? {} : { aggregate }), ...(guard === undefined ? {} : { guard }) })
}

export function pageNode (number: number, size: number, cursor?: CursorWindow): PageNode {
  return Object.freeze({ kind: 'page', number, size, ...(cursor === undefined ? {} : { cursor: Object.freeze(cursor) }) })
}

/**
 * The keys that order a collection completely: the sort keys up to the resource's own id, which ends them (it is
 * unique: keys after it never decide), or followed by the id ascending when it is not among them. A cursor holds one
 * value per key.
 */
export function keysetKeys (sort: readonly SortNode[], resource: ResolvedResource): readonly SortNode[] {
  const id = sort.findIndex((key) => key.path.length === 0 && key.attribute === resource.idAttribute)
  return id === -1 ? [...sort, sortNode([], resource.idAttribute)] : sort.slice(0, id + 1)
}

export function queryTree (parts: Partial<QueryTree> & Pick<QueryTree, 'page'>): QueryTree {
  return Object.freeze({
    fields: parts.fields ?? new Map(),
    include: Object.freeze([...(parts.include ?? [])]),
    filter: parts.filter,
    sort: Object.freeze([...(parts.sort ?? [])]),
    page: parts.page,
    ...(parts.filterParts === undefined ? {} : { filterParts: Object.freeze([...parts.filterParts]) }),
  })
}

/** Prints an include tree back to query-string syntax (`a.b,c`). */
export function printInclude (nodes: readonly IncludeNode[]): string {
  const paths: string[] = []
  const walk = (node: IncludeNode, prefix: string): void => {
    const path = prefix === '' ? node.relationship : `${prefix}.${node.relationship}`
    if (node.children.length === 0) paths.push(path)
    for (const child of node.children) walk(child, path)
  }
  for (const node of nodes) walk(node, '')
  return paths.join(',')
}

/** Prints sort keys back to query-string syntax (`-age,name`). */
export function printSort (nodes: readonly SortNode[]): string {
  return nodes.map((node) => `${node.descending ? '-' : ''}${[...node.path.map((step) => step.relationship.name), node.attribute.name].join('.')}`).join(',')
}
