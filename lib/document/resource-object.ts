import type { ResolvedResource } from '../schema/resolved.js'
import { readValue } from '../schema/value-codec.js'
import type { QueryTree } from '../query/query-tree.js'
import { resourceKey, type ResourceRow, type ResultSet } from '../service/result-set.js'
import { selectionOf, type Selection } from '../service/selection.js'

/** A resource identifier object. */
export interface ResourceIdentifier {
  readonly type: string
  readonly id: string
}

/** A rendered resource object. */
export interface ResourceObject extends ResourceIdentifier {
  readonly attributes: Record<string, unknown>
  readonly relationships?: Record<string, unknown>
  readonly links: { readonly self: string }
}

/** Renders resource objects for one request, reusing each type's selection. */
export class ResourceWriter {
  readonly #baseUrl: string
  readonly #query: QueryTree
  readonly #result: ResultSet
  readonly #selections = new Map<ResolvedResource, Selection>()

  constructor (baseUrl: string, query: QueryTree, result: ResultSet) {
    this.#baseUrl = baseUrl
    this.#query = query
    this.#result = result
  }

  /** The URL of a resource. */
  selfLink (resource: ResolvedResource, id: string): string {
    return `${this.#baseUrl}${resource.path}/${encodeURIComponent(id)}`
  }

  #selection (resource: ResolvedResource): Selection {
    let selection = this.#selections.get(resource)
    if (selection === undefined) {
      selection = selectionOf(resource, this.#query.fields.get(resource.type))
      this.#selections.set(resource, selection)
    }
    return selection
  }

  /** The resource object of a row: attributes of the fieldset, relationship links, linkage where included. */
  write ({ resource, id, row }: ResourceRow): ResourceObject {
    const selection = this.#selection(resource)
    const attributes: Record<string, unknown> = {}
    for (const name of selection.attributes) {
      const attribute = resource.attributes.get(name)
      if (attribute === undefined) continue
      attributes[name] = attribute.derived === undefined
        ? readValue(attribute, row[attribute.column as string])
        : attribute.derived.compute(row)
    }
    const self = this.selfLink(resource, id)
    const linkage = this.#result.linkage.get(resourceKey(resource.type, id))
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
}
