import type { IncludeNode, QueryTree } from '../query/query-tree.js'
import type { Repository } from '../repository/repository.js'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import { resourceKey, type ResourceRow, type ResultSet } from './result-set.js'
import { selectionOf } from './selection.js'

/**
 * Completes primary rows into a {@link ResultSet}: one query per include path step, batched over every owner row
 * of that step (never one query per row). A relationship left out of its owner's sparse fieldset is not followed.
 */
export async function loadIncluded (
  repository: Repository,
  graph: ResourceGraph,
  primary: readonly ResourceRow[],
  query: QueryTree,
  totals: Pick<ResultSet, 'count' | 'hasMore'> = {},
): Promise<ResultSet> {
  const primaryKeys = new Set(primary.map((item) => resourceKey(item.resource.type, item.id)))
  const included = new Map<string, ResourceRow>()
  const linkage = new Map<string, Map<string, string[]>>()

  const follow = async (resource: ResolvedResource, owners: readonly ResourceRow[], nodes: readonly IncludeNode[]): Promise<void> => {
    if (owners.length === 0 || nodes.length === 0) return
    const rendered = new Set(selectionOf(resource, query.fields.get(resource.type)).relationships.map((relationship) => relationship.name))
    for (const node of nodes) {
      if (!rendered.has(node.relationship)) continue
      const relationship = resource.relationships.get(node.relationship)
      if (relationship === undefined) continue
      const target = graph.getResource(relationship.targetType)
      const ownerIds = [...new Set(owners.map((owner) => owner.id))]
      const related = await repository.findRelated(resource, relationship, target, ownerIds, selectionOf(target, query.fields.get(target.type)).columns)
      const ids = new Map<string, string[]>(ownerIds.map((id) => [id, []]))
      const next = new Map<string, ResourceRow>()
      for (const { ownerId, row } of related) {
        const id = String(row[target.idColumn])
        ids.get(ownerId)?.push(id)
        const key = resourceKey(target.type, id)
        const item = { resource: target, id, row }
        next.set(key, item)
        if (!primaryKeys.has(key) && !included.has(key)) included.set(key, item)
      }
      for (const [ownerId, relatedIds] of ids) {
        const key = resourceKey(resource.type, ownerId)
        let entry = linkage.get(key)
        if (entry === undefined) {
          entry = new Map()
          linkage.set(key, entry)
        }
        entry.set(relationship.name, relatedIds)
      }
      await follow(target, [...next.values()], node.children)
    }
  }

  const byType = new Map<ResolvedResource, ResourceRow[]>()
  for (const item of primary) {
    const rows = byType.get(item.resource) ?? []
    rows.push(item)
    byType.set(item.resource, rows)
  }
  for (const [resource, rows] of byType) await follow(resource, rows, query.include)
  return { primary, included: [...included.values()], linkage, ...totals }
}
