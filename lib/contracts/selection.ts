import type { ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'

/** What to read and render of one resource type, from the request's sparse fieldset. */
export interface Selection {
  /** Columns to select besides the id: stored attributes and the columns of derived ones. */
  readonly columns: readonly string[]
  /** Attributes to render. */
  readonly attributes: readonly string[]
  /** Relationships to render. */
  readonly relationships: readonly ResolvedRelationship[]
  /** Whether rendering runs the application's code: a derived attribute's `compute`. */
  readonly computes: boolean
}

const FULL = new WeakMap<ResolvedResource, Selection>()
const SPARSE = new WeakMap<ReadonlySet<string>, { readonly resource: ResolvedResource, readonly selection: Selection }>()

/**
 * The selection of a resource for a sparse fieldset (undefined: every visible field, computed once per resource).
 */
export function selectionOf (resource: ResolvedResource, fieldset: ReadonlySet<string> | undefined): Selection {
  if (fieldset !== undefined) {
    // A fieldset of a query tree kept for its query string (see `readQuery`) is the same set each time: so is its
    // selection, and the resource objects' template written for it.
    const known = SPARSE.get(fieldset)
    if (known !== undefined && known.resource === resource) return known.selection
    const selection = Object.freeze(select(resource, fieldset))
    SPARSE.set(fieldset, { resource, selection })
    return selection
  }
  let full = FULL.get(resource)
  if (full === undefined) {
    full = Object.freeze(select(resource, undefined))
    FULL.set(resource, full)
  }
  return full
}

function select (resource: ResolvedResource, fieldset: ReadonlySet<string> | undefined): Selection {
  const attributes = resource.visibleAttributes.filter((attribute) => fieldset === undefined || fieldset.has(attribute.name))
  const columns = new Set<string>()
  for (const attribute of attributes) for (const column of attribute.selects) columns.add(column)
  return {
    columns: [...columns],
    attributes: attributes.map((attribute) => attribute.name),
    relationships: [...resource.relationships.values()].filter((relationship) => fieldset === undefined || fieldset.has(relationship.name)),
    computes: attributes.some((attribute) => attribute.derived !== undefined),
  }
}
