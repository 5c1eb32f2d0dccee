import { countKey, countPath, declaredAggregate } from '../schema/aggregates.js'
import type { ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import { jsonApiError } from '../errors/error-codes.js'
import {
  includeNode, keysetKeys, pageNode, queryTree, sortNode,
  type CursorPosition, type IncludeNode, type PageNode, type QueryTree, type SortNode, type SortStep,
} from '../query/query-tree.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import { CURSOR_ERROR_TYPES, cursorContext, type CursorCodec } from '../query/cursors.js'
import { readFilterParts } from './read-filter.js'
import { includePage, type QueryLimits, type SortLimits } from '../contracts/query-limits.js'
import { queryTextOf, type KeptQueries } from './raw-query.js'

/** What cursor pagination of a collection needs to read the request's cursors. */
export interface CursorReading {
  /** Reads (and later writes) the cursors. */
  readonly codec: CursorCodec
  /**
   * The collection, as cursors are bound to it: the type of a collection route (`user`), the owner and relationship
   * of a related collection (`user/1/computers`).
   */
  readonly collection: string
  /** Whether the request's `Accept` names the cursor pagination profile (a first cursor page without cursors). */
  readonly requested: boolean
}

type RawQuery = Readonly<Record<string, unknown>>

const FAMILY = /^([a-z]+)(\[[^\]]*\])?$/
/** `page[<include path>][size]`: the page per owner of a to-many step of an include path. */
const INCLUDE_PAGE = /^page\[([^\]]*)\]\[([^\]]*)\]$/
/**
 * On the query of a relationship route rewritten by {@link linkageIncludeQuery}: what its include paths lost, the
 * relationship's name and a dot, which the paths of its `page[<path>][size]` parameters still carry.
 */
const INCLUDE_PREFIX: unique symbol = Symbol('fastify-jsonapi.includePrefix')

function invalid (parameter: string, detail: string): Error {
  return jsonApiError('FJA_INVALID_QUERY_PARAMETER', { detail, source: { parameter } })
}

function single (raw: RawQuery, parameter: string): string | undefined {
  const value = raw[parameter]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw invalid(parameter, `'${parameter}' may be given only once`)
  return value
}

/**
 * Reads the query string of a request that returns resources into a {@link QueryTree}. Every mistake is a 400
 * naming the exact parameter. Parameters whose names are not all-lowercase (application parameters) pass through.
 *
 * A collection is paginated by number (`page[number]`), or by cursor (the cursor pagination profile) when the request
 * has `page[after]` or `page[before]`, or when its `Accept` names the profile (`cursors.requested`) and it has no
 * `page[number]`. Cursors are checked here (signature, collection, sort and filter): a bad one is a 400 naming it.
 *
 * @param collection whether the request returns a collection (page and sort apply)
 * @param cursors how to read cursors, on a collection route (without it, a collection is paginated by number only)
 * @param kept the registration's kept query strings: a tree read before for the same query string is kept there
 */
export function readQuery (raw: RawQuery, resource: ResolvedResource, graph: ResourceGraph, limits: QueryLimits, collection: boolean, cursors?: CursorReading, kept?: KeptQueries): QueryTree {
  // A query string read before for this resource and kind of request: the same tree, kept by the registration (its
  // graph and limits). Not a cursor page: its cursors are checked every time.
  const text = kept === undefined ? undefined : queryTextOf(raw)
  if (text === undefined || (collection && isCursorRequest(raw, cursors))) {
    return read(raw, Object.keys(raw), resource, graph, limits, collection, cursors)
  }
  return (kept as KeptQueries).tree(`${collection ? 'collection' : 'one'}:${resource.type}:${text}`, () => read(raw, Object.keys(raw), resource, graph, limits, collection, cursors))
}

function read (raw: RawQuery, names: readonly string[], resource: ResolvedResource, graph: ResourceGraph, limits: QueryLimits, collection: boolean, cursors?: CursorReading): QueryTree {
  for (const name of names) {
    const paged = INCLUDE_PAGE.exec(name)
    if (paged !== null && paged[2] !== 'size') {
      throw invalid(name, `'${name}' is not a supported query parameter: the page of an include path has a size only, 'page[${paged[1]}][size]'`)
    }
    const family = FAMILY.exec(name)
    if (family === null) continue
    const [, base, bracket] = family
    if (base === 'fields' && bracket !== undefined) continue
    if (base === 'page' && (bracket === '[number]' || bracket === '[size]' || bracket === '[after]' || bracket === '[before]')) continue
    if ((base === 'include' || base === 'sort') && bracket === undefined) continue
    if (base === 'filter') {
      if (!collection) throw invalid(name, 'filters apply to collections only')
      continue
    }
    throw invalid(name, `'${name}' is not a supported query parameter (JSON:API reserves all-lowercase names)`)
  }
  const fields = readFields(raw, graph)
  const include = readInclude(single(raw, 'include'), resource, graph, limits, includePages(raw))
  const { filter, parts } = collection ? readFilterParts(raw, resource, graph, limits.filter) : { filter: undefined, parts: [] }
  const sort = collection ? readSort(single(raw, 'sort'), resource, graph, limits.sort) : []
  const page = !collection
    ? pageNode(1, 0)
    : isCursorRequest(raw, cursors) ? readCursorWindow(raw, resource, limits, cursors, sort, filter) : readPage(raw, resource, limits)
  return queryTree({ fields, include, filter, ...(parts.length > 0 ? { filterParts: parts } : {}), sort, page })
}

/** Whether a collection request is cursor-paginated: it has a cursor, or asks for the profile without a page number. */
function isCursorRequest (raw: RawQuery, cursors: CursorReading | undefined): boolean {
  return raw['page[after]'] !== undefined || raw['page[before]'] !== undefined || (cursors?.requested === true && raw['page[number]'] === undefined)
}

function readFields (raw: RawQuery, graph: ResourceGraph): ReadonlyMap<string, ReadonlySet<string>> {
  const fields = new Map<string, ReadonlySet<string>>()
  for (const name of Object.keys(raw)) {
    if (!name.startsWith('fields[')) continue
    const type = name.slice('fields['.length, -1)
    const resource = graph.findResource(type)
    if (resource === undefined) throw invalid(name, `'${type}' is not a resource type`)
    const value = single(raw, name) ?? ''
    const names = value === '' ? [] : value.split(',')
    for (const field of names) {
      const attribute = resource.attributes.get(field)
      if ((attribute === undefined || attribute.hidden) && !resource.relationships.has(field)) {
        throw invalid(name, `'${field}' is not a field of '${type}'`)
      }
    }
    fields.set(type, new Set(names))
  }
  return fields
}

/** The distinct paths of an `include` value and their steps, within the limits of their number and depth. */
function includePaths (value: string, limits: QueryLimits): Map<string, string[]> {
  const paths = new Set(value.split(','))
  if (paths.size > limits.maxIncludePaths) {
    throw invalid('include', `${paths.size} include paths; at most ${limits.maxIncludePaths} are allowed`)
  }
  const stepped = new Map<string, string[]>()
  for (const path of paths) {
    const steps = path.split('.')
    if (steps.length > limits.maxIncludeDepth) {
      throw invalid('include', `'${path}' is deeper than the maximum include depth of ${limits.maxIncludeDepth}`)
    }
    stepped.set(path, steps)
  }
  return stepped
}

/** A `page[<path>][size]` parameter: its name and value. */
interface IncludePage {
  readonly parameter: string
  readonly value: string
}

/**
 * The `page[<path>][size]` parameters of a query, by path (written from the resource of the request: on a relationship
 * route rewritten by {@link linkageIncludeQuery}, without the relationship's name that each must start with).
 */
function includePages (raw: RawQuery): Map<string, IncludePage> {
  const pages = new Map<string, IncludePage>()
  const prefix = (raw as { readonly [INCLUDE_PREFIX]?: string })[INCLUDE_PREFIX]
  for (const name of Object.keys(raw)) {
    const paged = INCLUDE_PAGE.exec(name)
    if (paged === null) continue
    let path = paged[1]
    if (prefix !== undefined) {
      if (`${path}.` === prefix) {
        throw invalid(name, `the page of the relationship's own linkage is 'page[size]'; 'page[<path>][size]' pages the to-many steps that follow it ('page[${path}.<relationship>][size]')`)
      }
      if (!path.startsWith(prefix)) {
        throw invalid(name, `'${path}' is not a to-many step of an include path of this request (on a relationship route each path starts with '${prefix}')`)
      }
      path = path.slice(prefix.length)
    }
    pages.set(path, { parameter: name, value: single(raw, name) ?? '' })
  }
  return pages
}

/**
 * Reads `include`: at most `maxIncludePaths` distinct paths (a path given twice counts once; `a` and `a.b` are two),
 * each at most `maxIncludeDepth` relationships long. Each to-many step gets its page per owner: its `page[<path>][size]`
 * (from 1 to the related type's maximum page size), else the relationship's `includeSize`, its owner's
 * `pagination.includeSize` or the plugin's `include.pageSize`. A `page[<path>][size]` that names no to-many step of
 * the paths is a 400 naming it.
 */
function readInclude (value: string | undefined, resource: ResolvedResource, graph: ResourceGraph, limits: QueryLimits, pages: ReadonlyMap<string, IncludePage>): IncludeNode[] {
  const root = new Map<string, Map<string, unknown>>()
  // Every step of the paths, by its path from the resource: its relationship and the type that has it.
  const steps = new Map<string, { readonly relationship: ResolvedRelationship; readonly owner: ResolvedResource }>()
  for (const [path, names] of value === undefined || value === '' ? [] : includePaths(value, limits)) {
    let owner = resource
    let level = root
    let walked = ''
    for (const step of names) {
      const relationship = owner.relationships.get(step)
      if (relationship === undefined) {
        throw invalid('include', `'${path}': '${step}' is not a relationship of '${owner.type}'`)
      }
      walked = walked === '' ? step : `${walked}.${step}`
      steps.set(walked, { relationship, owner })
      let next = level.get(step) as Map<string, Map<string, unknown>> | undefined
      if (next === undefined) {
        next = new Map()
        level.set(step, next)
      }
      level = next
      owner = graph.getResource(relationship.targetType)
    }
  }
  for (const [path, page] of pages) {
    if (steps.get(path)?.relationship.toMany !== true) throw notIncludeStep(path, page, resource, graph, steps.has(path))
  }
  const build = (level: Map<string, unknown>, prefix: string): IncludeNode[] => [...level].map(([name, children]) => {
    const path = prefix === '' ? name : `${prefix}.${name}`
    const { relationship, owner } = steps.get(path) as { relationship: ResolvedRelationship; owner: ResolvedResource }
    const size = relationship.toMany ? includeSize(relationship, owner, graph, limits, pages.get(path)) : undefined
    return includeNode(name, build(children as Map<string, unknown>, path), size)
  })
  return build(root, '')
}

/** The page per owner of a to-many include step: asked for (checked), or its default (see `includePage`). */
function includeSize (relationship: ResolvedRelationship, owner: ResolvedResource, graph: ResourceGraph, limits: QueryLimits, page: IncludePage | undefined): number {
  const { size, maxSize } = includePage(relationship, owner, graph.getResource(relationship.targetType), limits)
  if (page === undefined) return size
  if (!/^\d{1,9}$/.test(page.value)) throw invalid(page.parameter, `'${page.value}' is not a positive integer`)
  const asked = Number(page.value)
  if (asked < 1) throw invalid(page.parameter, 'must be at least 1: an included to-many relationship holds a page of its resources per owner')
  if (asked > maxSize) throw invalid(page.parameter, `must be at most ${maxSize}, the maximum page size of '${relationship.targetType}'`)
  return asked
}

/** Why a `page[<path>][size]` names no to-many step of the request's include paths. */
function notIncludeStep (path: string, page: IncludePage, resource: ResolvedResource, graph: ResourceGraph, included: boolean): Error {
  let owner = resource
  const names = path.split('.')
  for (const [index, step] of names.entries()) {
    const relationship = owner.relationships.get(step)
    if (relationship === undefined) return invalid(page.parameter, `'${step}' is not a relationship of '${owner.type}'`)
    if (index === names.length - 1 && included) {
      return invalid(page.parameter, `'${step}' is a to-one relationship: only the to-many steps of an include path are paged`)
    }
    owner = graph.getResource(relationship.targetType)
  }
  return invalid(page.parameter, `'${path}' is not an include path of this request: 'page[<path>][size]' pages a to-many step of 'include'`)
}

/**
 * The query of a relationship route that asks for `include` (`GET /users/1/relationships/computers?include=computers`),
 * rewritten as the query of the related collection: each path is written from the owner, as in JSON:API's own example
 * (`include=comments.author` on `/articles/1/relationships/comments`), so each starts with the relationship's name —
 * the resources of the linkage, included — and the rest of each path is included from them. The limits count the
 * paths as written. `page[<path>][size]` parameters keep their names (errors name them as sent): the rewritten query
 * carries the prefix their paths lose (`INCLUDE_PREFIX`). Undefined when the request asks for no include (a
 * `page[<path>][size]` then is a 400).
 */
export function linkageIncludeQuery (raw: RawQuery, relationship: string, limits: QueryLimits): RawQuery | undefined {
  const value = single(raw, 'include')
  if (value === undefined || value === '') {
    const paged = Object.keys(raw).find((name) => INCLUDE_PAGE.test(name))
    if (paged !== undefined) throw invalid(paged, `'${paged}' pages a to-many step of 'include', and this request has no 'include'`)
    return undefined
  }
  const rest = new Set<string>()
  for (const [path, [first, ...steps]] of includePaths(value, limits)) {
    if (first !== relationship) {
      throw invalid('include', `'${path}': on a relationship route an include path starts with the relationship, '${relationship}' (its resources), e.g. '${relationship}' or '${relationship}.<relationship>'`)
    }
    if (steps.length > 0) rest.add(steps.join('.'))
  }
  const rewritten: Record<string, unknown> = { ...raw }
  if (rest.size > 0) rewritten.include = [...rest].join(',')
  else delete rewritten.include
  Object.defineProperty(rewritten, INCLUDE_PREFIX, { value: `${relationship}.` })
  return Object.freeze(rewritten)
}

/** Reads `sort`: at most `maxKeys` keys, each following at most `maxDepth` to-one relationships. */
function readSort (value: string | undefined, resource: ResolvedResource, graph: ResourceGraph, limits: SortLimits): SortNode[] {
  if (value === undefined) return []
  const keys = value.split(',')
  if (keys.length > limits.maxKeys) throw invalid('sort', `${keys.length} sort keys; at most ${limits.maxKeys} are allowed`)
  const seen = new Set<string>()
  return keys.map((key) => {
    const descending = key.startsWith('-')
    const name = descending ? key.slice(1) : key
    if (name === '') throw invalid('sort', 'empty sort key')
    if (seen.has(name)) throw invalid('sort', `'${name}' is given more than once`)
    seen.add(name)
    const counted = countPath(name)
    if (counted !== undefined) {
      const key = countKey(graph, resource, counted)
      if (typeof key === 'string') throw invalid('sort', `'${name}': ${key}`)
      if (key.aggregate.steps.length > limits.maxDepth) {
        throw invalid('sort', `'${name}' follows ${key.aggregate.steps.length} to-one relationships; at most ${limits.maxDepth} are allowed`)
      }
      return sortNode([], key.attribute, descending, key.aggregate)
    }
    const steps = name.split('.')
    const last = steps.pop() as string
    if (steps.length > limits.maxDepth) {
      throw invalid('sort', `'${name}' follows ${steps.length} relationships; at most ${limits.maxDepth} are allowed`)
    }
    const path: SortStep[] = []
    let owner = resource
    for (const step of steps) {
      const relationship = owner.relationships.get(step)
      if (relationship === undefined) throw invalid('sort', `'${name}': '${step}' is not a relationship of '${owner.type}'`)
      if (relationship.toMany) throw invalid('sort', `'${name}': '${step}' is a to-many relationship; sort follows to-one relationships only`)
      owner = graph.getResource(relationship.targetType)
      path.push({ relationship, target: owner })
    }
    const attribute = last === 'id' ? owner.idAttribute : owner.attributes.get(last)
    // The key itself only when it is a path: `'owner.nope': 'nope' is not …`, but `'nope' is not …`.
    const within = steps.length === 0 ? '' : `'${name}': `
    if (attribute === undefined || attribute.hidden) throw invalid('sort', `${within}'${last}' is not an attribute of '${owner.type}'`)
    if (!attribute.sortable && attribute !== owner.idAttribute) throw invalid('sort', `${within}'${last}' of '${owner.type}' is not sortable`)
    return sortNode(path, attribute, descending, attribute.aggregate === undefined ? undefined : declaredAggregate(graph, owner, attribute))
  })
}

function readInteger (raw: RawQuery, parameter: string, minimum: number): number | undefined {
  const value = single(raw, parameter)
  if (value === undefined) return undefined
  if (!/^\d{1,9}$/.test(value)) throw invalid(parameter, `'${value}' is not a non-negative integer`)
  const number = Number(value)
  if (number < minimum) throw invalid(parameter, `must be at least ${minimum}`)
  return number
}

function readPage (raw: RawQuery, resource: ResolvedResource, limits: QueryLimits) {
  const maxPageSize = resource.pagination.maxSize ?? limits.maxPageSize
  const number = readInteger(raw, 'page[number]', 1) ?? 1
  const size = readInteger(raw, 'page[size]', 0) ?? Math.min(resource.pagination.defaultSize ?? limits.defaultPageSize, maxPageSize)
  if (size > maxPageSize) throw invalid('page[size]', `must be at most ${maxPageSize}`)
  if (size === 0) {
    if (limits.unpaged === 'forbidden') throw invalid('page[size]', 'must be at least 1: unpaged reads are turned off')
    if (limits.unpaged === 'capped') return pageNode(number, maxPageSize)
    return pageNode(1, 0)
  }
  return pageNode(number, size)
}

/** A 400 of cursor pagination: the profile's "invalid parameter value" error, or one of its typed errors. */
function cursorError (code: 'FJA_INVALID_QUERY_PARAMETER' | 'FJA_INVALID_CURSOR' | 'FJA_MAX_PAGE_SIZE_EXCEEDED', parameter: string, detail: string, type: string = CURSOR_ERROR_TYPES.invalidParameterValue, meta?: Record<string, unknown>): Error {
  return jsonApiError(code, { detail, source: { parameter }, links: { type }, ...(meta === undefined ? {} : { meta }) })
}

/**
 * Reads the page of a cursor-paginated collection (the cursor pagination profile): `page[size]` (a positive integer
 * up to the maximum; default the default size, or the maximum for a range), `page[after]` and `page[before]`
 * (cursors issued for this collection, sort and filter; both together: a range). `page[number]` does not go with
 * cursors.
 */
function readCursorWindow (raw: RawQuery, resource: ResolvedResource, limits: QueryLimits, cursors: CursorReading | undefined, sort: readonly SortNode[], filter: FilterNode | undefined): PageNode {
  const after = single(raw, 'page[after]')
  const before = single(raw, 'page[before]')
  const named = after !== undefined ? 'page[after]' : before !== undefined ? 'page[before]' : undefined
  if (cursors === undefined) {
    throw invalid(named ?? 'page[size]', 'cursor pagination is not available on this route')
  }
  if (raw['page[number]'] !== undefined) {
    throw cursorError('FJA_INVALID_QUERY_PARAMETER', 'page[number]', `page[number] cannot be combined with a cursor (${named ?? 'the cursor pagination profile'}): paginate by number or by cursor`)
  }
  const maxSize = resource.pagination.maxSize ?? limits.maxPageSize
  const given = single(raw, 'page[size]')
  let size: number
  if (given === undefined) {
    // A range (both cursors) is as long as the maximum page unless the client says otherwise (the profile).
    size = after !== undefined && before !== undefined ? maxSize : Math.min(resource.pagination.defaultSize ?? limits.defaultPageSize, maxSize)
  } else {
    if (!/^[0-9]+$/.test(given)) throw cursorError('FJA_INVALID_QUERY_PARAMETER', 'page[size]', `'${given}' is not a positive integer`)
    size = Number(given)
    if (size === 0) throw cursorError('FJA_INVALID_QUERY_PARAMETER', 'page[size]', 'must be a positive integer: a cursor page has at least one row (page[size]=0, every row, is paginated by number)')
    if (size > maxSize) {
      throw cursorError('FJA_MAX_PAGE_SIZE_EXCEEDED', 'page[size]', `${given} is more than the maximum page size, ${maxSize}`, CURSOR_ERROR_TYPES.maxSizeExceeded, { page: { maxSize } })
    }
  }
  const keys = keysetKeys(sort, resource)
  const context = cursorContext(cursors.collection, keys, filter)
  const position = (parameter: string, text: string | undefined): CursorPosition | undefined => {
    if (text === undefined) return undefined
    const decoded = cursors.codec.decode(text, context, keys.length)
    if ('problem' in decoded) throw cursorError('FJA_INVALID_CURSOR', parameter, `${parameter} is not a valid cursor here: ${decoded.problem}`)
    return decoded
  }
  return pageNode(1, size, {
    context,
    ...(after === undefined ? {} : { after: position('page[after]', after) }),
    ...(before === undefined ? {} : { before: position('page[before]', before) }),
  })
}
