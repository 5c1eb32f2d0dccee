import type { IncludeLayer, Repository } from '../contracts/repository.js'
import type { ResolvedResource } from '../schema/resolved.js'
import { resourceKey, type IncludedPage, type ResourceRow, type ResultSet } from '../contracts/result-set.js'

const NOTHING_INCLUDED: readonly ResourceRow[] = Object.freeze([])
const NO_LINKAGE: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>> = new Map()

type Totals = Pick<ResultSet, 'count' | 'estimatedCount' | 'hasMore' | 'cursor'>

/**
 * Completes primary rows (all of `resource`) into a {@link ResultSet}: one query per include step, batched over every
 * owner row of that step (never one query per row), each reading only the related rows its layer lets the request
 * see; a to-many step reads a page of each owner's related rows (its layer's `page`), and notes each owner's total
 * beside its linkage (`ResultSet.pages`). Without includes the result set is answered at once, not as a promise (an
 * `await` of it, or an async function returning it, then takes no extra turns of the microtask queue).
 */
export function loadIncluded (
  repository: Repository,
  resource: ResolvedResource,
  primary: readonly ResourceRow[],
  include: readonly IncludeLayer[],
  totals: Totals = {},
): ResultSet | Promise<ResultSet> {
  if (include.length === 0) return { primary, included: NOTHING_INCLUDED, linkage: NO_LINKAGE, ...totals }
  return loadSteps(repository, resource, primary, include, totals)
}

/** The ids of some rows, each once, in order. */
function distinctIds (rows: readonly ResourceRow[]): string[] {
  if (rows.length === 1) return [rows[0].id]
  return [...new Set(rows.map((item) => item.id))]
}

/** Whether a step of `include`, at any depth, reads rows of type `type` (what the keys of included rows name). */
function reaches (include: readonly IncludeLayer[], type: string): boolean {
  return include.some(({ layer }) => layer.resource.type === type || reaches(layer.include, type))
}

async function loadSteps (
  repository: Repository,
  resource: ResolvedResource,
  primary: readonly ResourceRow[],
  include: readonly IncludeLayer[],
  totals: Totals,
): Promise<ResultSet> {
  // A primary row is never included as well: only a step that reaches the primary type can meet one.
  const primaryKeys = reaches(include, resource.type) ? new Set(primary.map((item) => resourceKey(item.resource.type, item.id))) : undefined
  const included = new Map<string, ResourceRow>()
  const linkage = new Map<string, Map<string, string[]>>()
  let pages: Map<string, Map<string, IncludedPage>> | undefined

  const follow = async (owner: ResolvedResource, owners: readonly ResourceRow[], steps: readonly IncludeLayer[]): Promise<void> => {
    if (owners.length === 0) return
    for (const { relationship, layer } of steps) {
      const target = layer.resource
      const ownerIds = distinctIds(owners)
      const related = await repository.findRelated(owner, relationship, ownerIds, layer)
      const ids = new Map<string, string[]>()
      for (const id of ownerIds) ids.set(id, [])
      // A paged step: its size, and each owner's total as its rows report it.
      const paging = layer.page?.limit === undefined ? undefined : { size: layer.page.limit, totals: new Map<string, number>() }
      // The related rows, each once, are the owners of the next steps: kept only when there are next steps.
      const next = layer.include.length > 0 ? new Map<string, ResourceRow>() : undefined
      for (const { ownerId, row, total } of related) {
        const id = String(row[target.idColumn])
        ids.get(ownerId)?.push(id)
        if (total !== undefined) paging?.totals.set(ownerId, total)
        const key = resourceKey(target.type, id)
        const item = { resource: target, id, row }
        next?.set(key, item)
        if (primaryKeys?.has(key) !== true && !included.has(key)) included.set(key, item)
      }
      for (const [ownerId, relatedIds] of ids) {
        const key = resourceKey(owner.type, ownerId)
        let entry = linkage.get(key)
        if (entry === undefined) {
          entry = new Map()
          linkage.set(key, entry)
        }
        if (paging === undefined) {
          entry.set(relationship.name, relatedIds)
          continue
        }
        // An owner reached by two paths through the same relationship shows the larger of its two pages.
        let paged = (pages ??= new Map()).get(key)
        if (paged === undefined) {
          paged = new Map()
          pages.set(key, paged)
        }
        const { size, totals } = paging
        const shown = paged.get(relationship.name)
        if (shown !== undefined && shown.size >= size) continue
        entry.set(relationship.name, relatedIds)
        // Without a total (a repository that read every related row, ignoring the page): they are all in the linkage.
        paged.set(relationship.name, { related: target, count: totals.get(ownerId) ?? relatedIds.length, size })
      }
      if (next !== undefined) await follow(target, [...next.values()], layer.include)
    }
  }

  await follow(resource, primary, include)
  return { primary, included: [...included.values()], linkage, ...(pages === undefined ? {} : { pages }), ...totals }
}
