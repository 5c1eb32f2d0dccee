import type { ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'

// The limits a request's query string must keep, resolved once from the plugin options: the request readers
// enforce them, the OpenAPI document states them.

/** What `page[size]=0` does: return every row, be refused (400), or return at most the maximum page size. */
export type UnpagedPolicy = 'allowed' | 'forbidden' | 'capped'

/** How many sort keys a request may give, and how far each may follow to-one relationships. */
export interface SortLimits {
  /** The most keys in `sort` (default 10). */
  readonly maxKeys: number
  /** The most relationship steps in one key (`owner.group.name` has 2; default 3). */
  readonly maxDepth: number
}

/** How large a filter may be. */
export interface FilterLimits {
  /**
   * The deepest nesting of boolean forms, relationship filters and relationship steps in names (`owner.group.name`
   * is two levels below its comparison; `group_id` one) (default 8).
   */
  readonly maxDepth: number
  /**
   * The most nodes in one request's filters (default 200): every filter object, every simple `filter[name]`, every
   * array of filters but the outermost, and every element of an array in a value (an `in` list, a `between` pair).
   */
  readonly maxNodes: number
  /** The most text-matching comparisons (`match`, the `like` family, `startswith`, `endswith`) in one request (default 5). */
  readonly maxTextNodes: number
}

/** The limits a query must keep, resolved from the plugin options. */
export interface QueryLimits {
  readonly defaultPageSize: number
  readonly maxPageSize: number
  readonly unpaged: UnpagedPolicy
  /** The most relationships in one include path (default 3). */
  readonly maxIncludeDepth: number
  /** The most distinct include paths in one request (default 10). */
  readonly maxIncludePaths: number
  /** The most related resources per owner in a to-many include step, unless declared or asked otherwise (default 10). */
  readonly includePageSize: number
  readonly sort: SortLimits
  readonly filter: FilterLimits
}

/**
 * The page per owner of a to-many include step (`owner`'s `relationship` to `target`): its default — the relationship's
 * `includeSize`, else the owner's `pagination.includeSize`, else the plugin's `include.pageSize` — and the most a
 * request may ask for with `page[<path>][size]`, the related type's maximum page size (which also caps the default).
 */
export function includePage (relationship: ResolvedRelationship, owner: ResolvedResource, target: ResolvedResource, limits: QueryLimits): { readonly size: number; readonly maxSize: number } {
  const maxSize = target.pagination.maxSize ?? limits.maxPageSize
  return { size: Math.min(relationship.includeSize ?? owner.pagination.includeSize ?? limits.includePageSize, maxSize), maxSize }
}
