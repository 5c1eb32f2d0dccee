import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { TSchema } from '@sinclair/typebox'
import type { Row } from '../schema/fields.js'
import { selectedAs, type ResolvedAttribute, type ResolvedResource } from '../schema/resolved.js'
import type { StoredResource, WriteInput } from '../schema/hooks.js'
import type { LinkageInput, ResourceInput } from '../contracts/inputs.js'
import { readValue } from '../schema/value-codec.js'
import { relocateError } from '../errors/relocate-error.js'

/** The conversions between the service's inputs and what hooks see, and the checks of what hooks return. */

type AnyInput = WriteInput<any, any>

/** What a hook sees of an input: attribute values and relationship ids (a to-one's id or null, a to-many's ids). */
export function hookInput (input: ResourceInput): AnyInput {
  const relationships: Record<string, string | string[] | null> = {}
  for (const { relationship, ids } of input.relationships) {
    relationships[relationship.name] = relationship.toMany ? [...(ids ?? [])] : ids?.[0] ?? null
  }
  return { id: input.id, attributes: { ...input.attributes }, relationships }
}

/** The compiled check of an attribute's schema, kept with its resource. */
function checkOf (resource: ResolvedResource, attribute: ResolvedAttribute): TypeCheck<TSchema> {
  return resource.memo.get('attribute-check', attribute.name, () => TypeCompiler.Compile(attribute.schema))
}

function hookError (resource: ResolvedResource, hook: string, detail: string): Error {
  return new Error(`fastify-jsonapi: the ${hook} hook of '${resource.type}' ${detail}`)
}

/**
 * The input a hook returned (or changed in place), checked: every attribute it set must be a stored attribute with a
 * value of its schema, every relationship a declared one with ids of the right shape. A mistake here is the
 * application's (a 500 naming the hook), not the client's. Relationships the client sent and the hook left as they
 * were keep their pointers into the request.
 */
export function fromHookInput (resource: ResolvedResource, hook: string, sent: ResourceInput, before: AnyInput, result: AnyInput, base: string): ResourceInput {
  if (typeof result !== 'object' || result === null || typeof result.attributes !== 'object' || typeof result.relationships !== 'object') {
    throw hookError(resource, hook, 'must return the input (or nothing), with `attributes` and `relationships` objects')
  }
  const attributes: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(result.attributes as Record<string, unknown>)) {
    if (value === undefined) continue
    const attribute = resource.attributes.get(name)
    if (attribute === undefined || attribute.column === undefined) throw hookError(resource, hook, `set '${name}', which is not a stored attribute`)
    if (value !== before.attributes[name] && !checkOf(resource, attribute).Check(value)) {
      throw hookError(resource, hook, `set '${name}' to ${JSON.stringify(value)}, which its schema does not accept`)
    }
    attributes[name] = value
  }
  const relationships: LinkageInput[] = []
  for (const [name, value] of Object.entries(result.relationships as Record<string, unknown>)) {
    if (value === undefined) continue
    const relationship = resource.relationships.get(name)
    if (relationship === undefined) throw hookError(resource, hook, `set '${name}', which is not a relationship`)
    const ids = relationship.toMany
      ? (Array.isArray(value) && value.every((id) => typeof id === 'string' || typeof id === 'number') ? [...new Set(value.map(String))] : undefined)
      : value === null ? null : typeof value === 'string' || typeof value === 'number' ? [String(value)] : undefined
    if (ids === undefined) {
      throw hookError(resource, hook, `set '${name}' to ${JSON.stringify(value)}: a ${relationship.toMany ? 'to-many takes an array of ids' : 'to-one takes an id or null'}`)
    }
    const given = sent.relationships.find((item) => item.relationship === relationship)
    const unchanged = given !== undefined && String(given.ids) === String(ids) && (given.ids === null) === (ids === null)
    const member = `${base}/relationships/${name}`
    relationships.push(unchanged ? given : { relationship, ids, pointer: `${member}/data`, member })
  }
  const id = result.id === undefined || result.id === null ? undefined : String(result.id)
  return { id, attributes, relationships }
}

/** A stored row as hooks see it: the id and every attribute's wire value. */
export function storedResource (resource: ResolvedResource, id: string, row: Row): StoredResource<any> {
  const attributes: Record<string, unknown> = {}
  for (const attribute of resource.attributes.values()) {
    // An aggregate is read with the request's scopes, not with the row: a hook counts for itself on `event.db`.
    if (attribute.aggregate !== undefined) continue
    attributes[attribute.name] = attribute.derived === undefined ? readValue(attribute, row[attribute.column ?? selectedAs(attribute)]) : attribute.derived.compute(row)
  }
  return { id, attributes }
}

/** An error of a hook whose error objects have no `source` points at `pointer`. */
export function pointUnlocated (error: unknown, pointer: string): unknown {
  return relocateError(error, (item) => ({ source: item.source ?? { pointer } }))
}
