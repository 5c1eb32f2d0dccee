import type { QueryTree } from '../query/query-tree.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import type { CountStrategy, ResolvedResource } from '../schema/resolved.js'
import type { Row } from '../schema/fields.js'
import { resourceKey, type ResourceRow, type ResultSet } from '../contracts/result-set.js'
import { loadIncluded } from './load-included.js'
import { filterValuesFit } from './resource-reads.js'
import type { CollectionSink, ServiceScope } from './service-scope.js'

/** Whether collections of every row (`page[size]=0`) can be streamed: the repository reads in batches. */
export function streams (scope: ServiceScope): boolean {
  return scope.repository.scan !== undefined
}

/**
 * Every row of a collection (`page[size]=0`), in batches read through a cursor of one read-only snapshot, handed
 * to `sink` as they come: memory holds one batch, whatever the number of rows. An exact count comes first, from the
 * same snapshot; an estimated one is the number of rows written (`tally`), exact too. With includes over more than one batch, the rows are read twice: the first pass gives each batch with
 * its linkage, the second the included resources, each once and never one that is primary (only their keys are
 * kept).
 */
export async function streamCollection (scope: ServiceScope, resource: ResolvedResource, query: QueryTree, sink: CollectionSink, extra?: FilterNode, counting: CountStrategy = resource.count, batchSize = 500): Promise<void> {
  const layer = scope.composer.collection(resource, query, extra)
  const scan = scope.repository.scan
  if (scan === undefined) throw new Error('fastify-jsonapi: the repository cannot stream (no scan method)')
  const rowsOf = (rows: readonly Row[]): ResourceRow[] => rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
  await filterValuesFit(scope, scan.call(scope.repository, async (repository, batches) => {
    // Estimated: every row is written, so their number is the exact count, and costs nothing.
    await sink.start(counting === 'exact' ? await repository.count(layer) : undefined, counting === 'estimated')
    const primaryKeys = layer.include.length === 0 ? undefined : new Set<string>()
    let batchCount = 0
    let last: ResultSet | undefined
    for await (const rows of batches(layer, batchSize)) {
      const primary = rowsOf(rows)
      for (const item of primary) primaryKeys?.add(resourceKey(resource.type, item.id))
      last = await loadIncluded(repository, resource, primary, layer.include)
      batchCount++
      await sink.data(last)
    }
    if (primaryKeys === undefined) return
    // One batch holds every primary row: its included resources are the document's, no second pass needed.
    if (batchCount <= 1) {
      if (last !== undefined && last.included.length > 0) await sink.included(last, last.included)
      return
    }
    const written = new Set<string>()
    for await (const rows of batches(layer, batchSize)) {
      const result = await loadIncluded(repository, resource, rowsOf(rows), layer.include)
      const fresh = result.included.filter((item) => {
        const key = resourceKey(item.resource.type, item.id)
        if (primaryKeys.has(key) || written.has(key)) return false
        written.add(key)
        return true
      })
      if (fresh.length > 0) await sink.included(result, fresh)
    }
  }), resource, query, extra)
}
