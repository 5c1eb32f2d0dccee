import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'

/** What to read and render of one resource type, from the request's sparse fieldset. */
export interface Selection {
  /**
   * Columns to select besides the id: stored attributes, the columns of derived ones, the names computed ones are
   * selected as.
   */
  readonly columns: readonly string[]
  /** The aggregate attributes to render (selected by the layer, each with its scopes). */
  readonly aggregates: readonly ResolvedAttribute[]
  /** Attributes to render. */
  readonly attributes: readonly string[]
  /** Relationships to render. */
  readonly relationships: readonly ResolvedRelationship[]
  /** Whether rendering runs the application's code: a derived attribute's `compute`. */
  readonly computes: boolean
  /** What the selection is, as a value: its resource's type, attributes and relationships (what caches key on). */
  readonly key: string
}

/** The memo key of the selection of every visible field (a fieldset's key is its names: never this). */
const EVERY_FIELD = '\u0000every field'

/**
 * The selection of a resource for a sparse fieldset (undefined: every visible field), made once per fieldset and kept
 * with the resource (see `Memo`), by the names of the fieldset.
 */
export function selectionOf (resource: ResolvedResource, fieldset: ReadonlySet<string> | undefined): Selection {
  const key = fieldset === undefined ? EVERY_FIELD : [...fieldset].join(',')
  return resource.memo.get('selection', key, () => Object.freeze(select(resource, fieldset)))
}

function select (resource: ResolvedResource, fieldset: ReadonlySet<string> | undefined): Selection {
  const attributes = resource.visibleAttributes.filter((attribute) => fieldset === undefined ? attribute.inDefaultFieldset : fieldset.has(attribute.name))
  const columns = new Set<string>()
  for (const attribute of attributes) for (const column of attribute.selects) columns.add(column)
  const relationships = [...resource.relationships.values()].filter((relationship) => fieldset === undefined || fieldset.has(relationship.name))
  const names = attributes.map((attribute) => attribute.name)
  return {
    columns: Object.freeze([...columns]),
    attributes: Object.freeze(names),
    relationships: Object.freeze(relationships),
    aggregates: Object.freeze(attributes.filter((attribute) => attribute.aggregate !== undefined)),
    computes: attributes.some((attribute) => attribute.derived !== undefined),
    key: `${resource.type}:${names.join(',')}:${relationships.map((relationship) => relationship.name).join(',')}`,
  }
}
