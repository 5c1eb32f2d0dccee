import type { ResolvedResource } from '../../lib/schema/resolved.js'
import { readValue } from '../../lib/schema/value-codec.js'
import type { QueryTree } from '../../lib/query/query-tree.js'
import { resourceKey, type ResourceRow, type ResultSet } from '../../lib/contracts/result-set.js'
import { selectionOf } from '../../lib/contracts/selection.js'

/** A rendered resource object, as the oracle builds it. */
export interface ResourceObject {
  readonly type: string
  readonly id: string
  readonly attributes: Record<string, unknown>
  readonly relationships?: Record<string, unknown>
  readonly links: { readonly self: string }
}

/**
 * The test oracle of the document writer: a row's resource object built as a plain object (attributes of the
 * fieldset, relationship links, linkage where included), which `JSON.stringify` writes. The library writes resource
 * objects straight to text (`ResourceWriter.json`); the property tests compare that text with this object's.
 */
export function resourceObjectOf (baseUrl: string, query: QueryTree, result: ResultSet, { resource, id, row }: ResourceRow): ResourceObject {
  const selection = selectionOf(resource, query.fields.get(resource.type))
  const attributes: Record<string, unknown> = {}
  for (const name of selection.attributes) {
    const attribute = resource.attributes.get(name)
    if (attribute === undefined) continue
    attributes[name] = attribute.derived === undefined ? readValue(attribute, row[attribute.column as string]) : attribute.derived.compute(row)
  }
  const self = selfLinkOf(baseUrl, resource, id)
  const linkage = result.linkage.get(resourceKey(resource.type, id))
  const object: { -readonly [K in keyof ResourceObject]: ResourceObject[K] } = { type: resource.type, id, attributes, links: { self } }
  if (selection.relationships.length > 0) {
    const relationships: Record<string, unknown> = {}
    for (const relationship of selection.relationships) {
      const entry: Record<string, unknown> = {
        links: { self: `${self}/relationships/${relationship.name}`, related: `${self}/${relationship.name}` },
      }
      const ids = linkage?.get(relationship.name)
      if (ids !== undefined) {
        const target = relationship.targetType
        entry.data = relationship.toMany ? ids.map((relatedId) => ({ type: target, id: relatedId })) : ids.length === 0 ? null : { type: target, id: ids[0] }
      }
      relationships[relationship.name] = entry
    }
    object.relationships = relationships
  }
  return object
}

/** The URL of a resource. */
export function selfLinkOf (baseUrl: string, resource: ResolvedResource, id: string): string {
  return `${baseUrl}${resource.path}/${encodeURIComponent(id)}`
}
