import { ruleSelectedAs, selectedAs, type ResolvedResource } from '../../lib/schema/resolved.js'
import { readValue } from '../../lib/schema/value-codec.js'
import type { QueryTree } from '../../lib/query/query-tree.js'
import { resourceKey, type ResourceRow, type ResultSet } from '../../lib/contracts/result-set.js'
import { cursorContext, type CursorCodec } from '../../lib/query/cursors.js'
import { keysetKeys } from '../../lib/query/query-tree.js'
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
 * fieldset, relationship links, linkage where included, the count and `next` link of an included page), which
 * `JSON.stringify` writes. The library writes resource objects straight to text (`ResourceWriter.json`); the property
 * tests compare that text with this object's. `codec` signs the cursors of `next` links.
 */
export function resourceObjectOf (baseUrl: string, query: QueryTree, result: ResultSet, { resource, id, row }: ResourceRow, codec?: CursorCodec): ResourceObject {
  const selection = selectionOf(resource, query.fields.get(resource.type))
  const attributes: Record<string, unknown> = {}
  for (const name of selection.attributes) {
    const attribute = resource.attributes.get(name)
    if (attribute === undefined) continue
    // A read rule's decision for the row (see `QueryLayer.rules`): the attribute only where it is 1.
    if (resource.readRuled.includes(attribute) && Number(row[ruleSelectedAs(attribute)]) !== 1) continue
    attributes[name] = attribute.derived === undefined ? readValue(attribute, row[attribute.column ?? selectedAs(attribute)]) : attribute.derived.compute(row)
  }
  const self = selfLinkOf(baseUrl, resource, id)
  const linkage = result.linkage.get(resourceKey(resource.type, id))
  const pages = result.pages?.get(resourceKey(resource.type, id))
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
        const page = pages?.get(relationship.name)
        if (page !== undefined) {
          if (page.count > ids.length && ids.length > 0) {
            if (codec === undefined) throw new Error('the oracle needs the codec for a next link')
            const cursor = codec.encode({ values: [ids[ids.length - 1]], edge: 'on' }, cursorContext(`${resource.type}/${id}/relationships/${relationship.name}`, keysetKeys([], page.related), undefined))
            ;(entry.links as Record<string, string>).next = `${self}/relationships/${relationship.name}?page%5Bsize%5D=${page.size}&page%5Bafter%5D=${cursor}`
          }
          entry.meta = { count: page.count }
        }
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
