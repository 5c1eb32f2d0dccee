import { pageNode, queryTree, type QueryTree } from '../query/query-tree.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import { StorageError, type QueryLayer, type Repository } from '../contracts/repository.js'
import type { CountStrategy, ResolvedResource } from '../schema/resolved.js'
import type { StoredResource } from '../schema/hooks.js'
import { isValidId } from '../schema/resource-id.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { ResultSet } from '../contracts/result-set.js'
import { loadIncluded } from './load-included.js'
import { readCursorPage } from './cursor-page.js'
import { storedResource } from './write-hooks.js'
import { notFound, type ServiceScope } from './service-scope.js'

// Reading resources for one request (its scope): collections (pages by number or cursor, with their size), one
// resource, and the checks of existence that writes make. Every read is composed by the request's composer.

/** A query with every field and nothing included. */
const PLAIN_QUERY = queryTree({ page: pageNode(1, 0) })

/**
 * A value the database refused in a read: a client's filter value that the column's type cannot hold, or one too
 * large for what the database builds from it (SQLSTATE class 54).
 */
function refusedValue (error: unknown): boolean {
  return error instanceof StorageError && (error.kind === 'invalid-value' || error.kind === 'out-of-range' || error.kind === 'too-long')
}

/** What a page shows of its collection's size: rows before it, its own rows, whether rows follow it. */
interface PageExtent {
  /** Rows before the page: their number when `exactBefore`, else the least there are. */
  readonly before: number
  readonly exactBefore: boolean
  readonly rows: number
  readonly more: boolean
}

/**
 * The size an estimated collection reports: the exact number when the page shows it (no row follows it and the rows
 * before it are known: a last page by number, or a cursor page that is both first and last) — which a `last` link
 * may then follow — else the estimate, raised to at least the rows the page proves exist (a planner's estimate can
 * lag behind the table).
 */
function sizeOf (estimate: number, page: PageExtent): Pick<ResultSet, 'count' | 'estimatedCount'> {
  if (page.exactBefore && !page.more) return { count: page.before + page.rows }
  return { estimatedCount: Math.max(estimate, page.before + page.rows + (page.more ? 1 : 0)) }
}

/**
 * A page of a collection, its size (by the resource's count strategy), and its includes. `extra` narrows the
 * collection further (the link to the owner of a related collection).
 *
 * - `exact`: a `count(*)` beside the page.
 * - `estimated`: the repository's estimate beside the page (a plan, not a scan), and one row more than the page,
 *   which tells whether a next page exists; the exact number where the page shows it (see {@link sizeOf}). A
 *   repository that cannot estimate counts exactly.
 * - `none`: one row more than the page, which tells whether a next page exists.
 *
 * @param counting how to tell the collection's size (the resource's `count` setting by default)
 */
export async function listCollection (scope: ServiceScope, resource: ResolvedResource, query: QueryTree, extra?: FilterNode, counting: CountStrategy = resource.count): Promise<ResultSet> {
  const { size, cursor } = query.page
  const repository = scope.repository
  // Estimated: every row of `page[size]=0` is read, so their number is the count; a repository that cannot
  // estimate counts.
  const strategy: CountStrategy | 'rows' = counting !== 'estimated' ? counting
    : size === 0 ? 'rows'
      : repository.estimateCount === undefined ? 'exact' : 'estimated'
  const total = (layer: QueryLayer): Promise<number> | undefined => {
    if (strategy === 'exact') return Promise.resolve().then(() => repository.count(layer))
    if (strategy === 'estimated') return Promise.resolve().then(() => (repository.estimateCount as NonNullable<Repository['estimateCount']>).call(repository, layer))
    return undefined
  }
  if (cursor !== undefined) {
    // A cursor page (keyset): one statement whatever its depth, beside the count.
    const layer = scope.composer.collection(resource, query, extra)
    const [page, counted] = await filterValuesFit(scope, Promise.all([
      Promise.resolve().then(() => readCursorPage(repository, layer, cursor, size)),
      total(layer),
    ]), resource, query, extra)
    const primary = page.rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
    const totals = strategy === 'estimated'
      ? sizeOf(counted as number, { before: page.result.prev === undefined ? 0 : 1, exactBefore: page.result.prev === undefined, rows: page.rows.length, more: page.result.next !== undefined })
      : { count: counted }
    return loadIncluded(repository, resource, primary, layer.include, { ...totals, cursor: page.result })
  }
  // Without an exact count, one row more than the page tells whether a next page exists.
  const probe = strategy !== 'exact' && size > 0 ? 1 : 0
  const layer = scope.composer.collection(resource, query, extra, probe)
  const [found, counted] = await filterValuesFit(scope, Promise.all([
    Promise.resolve().then(() => repository.findMany(layer)),
    total(layer),
  ]), resource, query, extra)
  const rows = probe === 1 && found.length > size ? found.slice(0, size) : found
  const primary = rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
  const hasMore = found.length > rows.length
  let totals: Pick<ResultSet, 'count' | 'estimatedCount' | 'hasMore'>
  if (strategy === 'exact') {
    totals = { count: counted }
  } else if (strategy === 'rows') {
    totals = { count: rows.length }
  } else if (strategy === 'estimated') {
    const offset = (query.page.number - 1) * size
    totals = {
      ...(rows.length === 0 && offset > 0
        // A page beyond the last: at most `offset` rows.
        ? { estimatedCount: Math.min(counted as number, offset) }
        : sizeOf(counted as number, { before: offset, exactBefore: true, rows: rows.length, more: hasMore })),
      hasMore,
    }
  } else {
    totals = { hasMore }
  }
  return loadIncluded(repository, resource, primary, layer.include, totals)
}

/**
 * The only client values a read binds are filter values (ids and page numbers are checked first): a value the
 * column's type cannot hold (an integer beyond its range, say) is a 400 of the filter parameter that holds it, not a
 * database error.
 */
export async function filterValuesFit<T> (scope: ServiceScope, read: Promise<T>, resource: ResolvedResource, query: QueryTree, extra: FilterNode | undefined): Promise<T> {
  try {
    return await read
  } catch (error) {
    if (!refusedValue(error)) throw error
    throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', {
      detail: 'a filter value does not fit the type of its column',
      source: { parameter: await refusingParameter(scope, resource, query, extra) },
    })
  }
}

/**
 * The filter parameter that holds a value the database refused: the only one, or, of several, the first whose
 * filter alone is refused too (a count under it; only on this error path).
 */
async function refusingParameter (scope: ServiceScope, resource: ResolvedResource, query: QueryTree, extra: FilterNode | undefined): Promise<string> {
  const parts = query.filterParts ?? []
  if (parts.length <= 1) return parts[0]?.parameter ?? 'filter'
  for (const part of parts) {
    try {
      await scope.repository.count(scope.composer.collection(resource, queryTree({ ...query, filter: part.node }), extra))
    } catch (error) {
      if (refusedValue(error)) return part.parameter
      throw error
    }
  }
  return parts[0].parameter
}

/** One resource and its includes; 404 when it does not exist or the request may not see it. */
export async function readResource (scope: ServiceScope, resource: ResolvedResource, id: string, query: QueryTree): Promise<ResultSet> {
  if (!isValidId(resource, id)) throw notFound(resource, id)
  const layer = scope.composer.detail(resource, id, query)
  const [row] = await scope.repository.findMany(layer)
  if (row === undefined) throw notFound(resource, id)
  return loadIncluded(scope.repository, resource, [{ resource, id: String(row[resource.idColumn]), row }], layer.include)
}

/** Whether the request can see the resource; 404 when not. */
export async function assertVisible (scope: ServiceScope, resource: ResolvedResource, id: string): Promise<void> {
  if (!isValidId(resource, id) || (await scope.repository.findMany(scope.composer.existing(resource, [id]))).length === 0) {
    throw notFound(resource, id)
  }
}

/** A resource as stored, every attribute read, within the scope; 404 when the request cannot see it. */
export async function currentResource (scope: ServiceScope, resource: ResolvedResource, id: string): Promise<StoredResource<any>> {
  const [row] = await scope.repository.findMany(scope.composer.detail(resource, id, PLAIN_QUERY, resource.allColumns))
  if (row === undefined) throw notFound(resource, id)
  return storedResource(resource, id, row)
}
