import type { ResolvedResource } from '../schema/resolved.js'
import type { LinkageInput, ResourceInput } from '../contracts/inputs.js'
import type { JsonApiErrorInit } from '../errors/json-api-error.js'
import { JsonApiError } from '../errors/json-api-error.js'
import { errorInit, jsonApiError } from '../errors/error-codes.js'
import { readLinkage } from './read-linkage.js'
import { escapePointerToken } from '../schema/compiled-input.js'

const DATA_MEMBERS = new Set(['type', 'id', 'lid', 'attributes', 'relationships', 'links', 'meta'])

/**
 * The deepest nesting of arrays and objects in the value of an attribute (`{"a": [1]}` is 2). Writing a value (as
 * JSON text, or as the driver's array literal) and rendering it recurse once per level: far deeper values, which a
 * body within Fastify's size limit can hold, would exhaust the stack. Deeper is a 422 at the attribute.
 */
export const MAX_VALUE_DEPTH = 64

/** Whether arrays and objects nest in `value` more than `limit` levels deep (without recursion: the value may be deep). */
function nestsDeeperThan (value: object, limit: number): boolean {
  const pending: Array<readonly [object, number]> = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next
    if (depth > limit) return true
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1])
    }
  }
  return false
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function notDocument (pointer: string, detail: string): JsonApiError {
  return jsonApiError('FJA_INVALID_DOCUMENT', { detail, source: { pointer } })
}

/**
 * Reads the body of a create (`POST <path>`) or update (`PATCH <path>/<id>`) request: structure (400), type and id
 * (409, 403), then attributes and relationships (422, one error object per field).
 *
 * @param base the pointer of the resource object in the request (`/data`, or `/atomic:operations/0/data`)
 */
export function readResourceDocument (body: unknown, resource: ResolvedResource, mode: 'create' | 'update', pathId?: string, implied?: ReadonlySet<string>): ResourceInput {
  if (body === undefined) throw notDocument('', 'the request body is empty: send a document with a `data` member')
  if (!isObject(body)) throw notDocument('', 'the request body must be a JSON object with a `data` member')
  if (!('data' in body)) throw notDocument('', 'the request body has no `data` member')
  return readResourceObject(body.data, resource, mode, '/data', pathId, implied)
}

/**
 * Reads one resource object (the `data` of a write body) at `base`.
 *
 * @param implied relationships the request sets by other means (the URL of a related route), so not required here
 */
export function readResourceObject (data: unknown, resource: ResolvedResource, mode: 'create' | 'update', base: string, pathId?: string, implied?: ReadonlySet<string>): ResourceInput {
  if (!isObject(data)) throw notDocument(base, '`data` must be a resource object')
  for (const member of Object.keys(data)) {
    if (!DATA_MEMBERS.has(member)) throw notDocument(`${base}/${escapePointerToken(member)}`, `'${member}' is not a member of a resource object`)
  }
  if (typeof data.type !== 'string') throw notDocument(`${base}/type`, '`type` is required and must be a string')
  if (data.type !== resource.type) {
    throw jsonApiError('FJA_TYPE_CONFLICT', {
      detail: `the type '${data.type}' does not match this endpoint's type '${resource.type}'`,
      source: { pointer: `${base}/type` },
    })
  }
  const id = readId(data, resource, mode, base, pathId)
  const problems: JsonApiErrorInit[] = []
  const attributes = readAttributes(data, resource, mode, base, problems)
  const relationships = readRelationships(data, resource, mode, base, problems, implied)
  if (problems.length > 0) throw JsonApiError.many(problems)
  return { id, attributes, relationships }
}

function readId (data: Record<string, unknown>, resource: ResolvedResource, mode: 'create' | 'update', base: string, pathId?: string): string | undefined {
  const id = data.id
  if (id !== undefined && typeof id !== 'string') throw notDocument(`${base}/id`, '`id` must be a string')
  if (mode === 'update') {
    if (id === undefined) throw notDocument(`${base}/id`, '`id` is required to update a resource')
    if (pathId !== undefined && id !== pathId) {
      throw jsonApiError('FJA_ID_CONFLICT', {
        detail: `the id '${id}' does not match the id '${pathId}' of the URL`,
        source: { pointer: `${base}/id` },
      })
    }
    return id
  }
  if (id === undefined) {
    if (resource.clientIds === 'required') {
      throw jsonApiError('FJA_MISSING_FIELD', {
        detail: `'${resource.type}' resources need a client-generated id`,
        source: { pointer: base },
        meta: { field: 'id' },
      })
    }
    return undefined
  }
  if (resource.clientIds === 'forbidden') {
    throw jsonApiError('FJA_CLIENT_ID_FORBIDDEN', {
      detail: `'${resource.type}' resources do not accept client-generated ids`,
      source: { pointer: `${base}/id` },
    })
  }
  return id
}

function readAttributes (data: Record<string, unknown>, resource: ResolvedResource, mode: 'create' | 'update', base: string, problems: JsonApiErrorInit[]): Record<string, unknown> {
  const raw = data.attributes ?? {}
  if (!isObject(raw)) throw notDocument(`${base}/attributes`, '`attributes` must be an object')
  const pointer = data.attributes === undefined ? base : `${base}/attributes`
  const schema = mode === 'create' ? resource.inputs.createSchema : resource.inputs.updateSchema
  const accepted: Record<string, unknown> = {}
  /** Attributes sent with a value refused here: the schema must not call them missing too. */
  let refused: Set<string> | undefined
  for (const name of Object.keys(raw)) {
    const value = raw[name]
    const attribute = resource.attributes.get(name)
    const inSchema = Object.prototype.hasOwnProperty.call(schema.properties, name)
    // A hidden attribute that clients cannot write either does not exist for them: it is an unknown field (below),
    // so that an error does not reveal it.
    const secret = attribute !== undefined && attribute.hidden && attribute.readOnly
    if (attribute !== undefined && !secret && !inSchema && (attribute.readOnly || (mode === 'update' && attribute.createOnly))) {
      problems.push(errorInit('FJA_READ_ONLY_FIELD', {
        detail: attribute.readOnly ? `'${name}' is set by the server and cannot be written` : `'${name}' can only be set when the resource is created`,
        source: { pointer: `${base}/attributes/${escapePointerToken(name)}` },
      }))
      continue
    }
    const refusal = typeof value === 'object' && value !== null
      ? nestsDeeperThan(value, MAX_VALUE_DEPTH) ? `nests arrays and objects more than ${MAX_VALUE_DEPTH} levels deep` : undefined
      // An integer JSON could not read exactly (beyond 2^53) would be stored as another number.
      : attribute?.format === 'integer' && typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)
        ? "is beyond Number.MAX_SAFE_INTEGER and cannot be read exactly: an integer this large is declared Type.String({ format: 'int64' })"
        : undefined
    if (refusal !== undefined) {
      problems.push(errorInit('FJA_VALIDATION', {
        detail: `'${name}' ${refusal}`,
        source: { pointer: `${base}/attributes/${escapePointerToken(name)}` },
      }))
      refused ??= new Set()
      refused.add(name)
      continue
    }
    accepted[name] = value
  }
  const check = mode === 'create' ? resource.inputs.create : resource.inputs.update
  for (const problem of check.check(accepted)) {
    if (problem.kind === 'missing' && refused?.has(problem.field) === true) continue
    if (problem.kind === 'missing') {
      problems.push(errorInit('FJA_MISSING_FIELD', {
        detail: `the attribute '${problem.field}' is required`,
        source: { pointer },
        meta: { field: problem.field },
      }))
    } else if (problem.kind === 'unknown') {
      const detail = resource.relationships.has(problem.field)
        ? `'${problem.field}' is a relationship of '${resource.type}': send it in \`relationships\``
        : `'${problem.field}' is not an attribute of '${resource.type}'`
      problems.push(errorInit('FJA_UNKNOWN_FIELD', { detail, source: { pointer: `${base}/attributes${problem.path}` } }))
    } else {
      problems.push(errorInit('FJA_VALIDATION', {
        detail: `'${problem.field}' ${problem.message.charAt(0).toLowerCase()}${problem.message.slice(1)}`,
        source: { pointer: `${base}/attributes${problem.path}` },
      }))
    }
  }
  return accepted
}

function readRelationships (data: Record<string, unknown>, resource: ResolvedResource, mode: 'create' | 'update', base: string, problems: JsonApiErrorInit[], implied?: ReadonlySet<string>): LinkageInput[] {
  const raw = data.relationships ?? {}
  if (!isObject(raw)) throw notDocument(`${base}/relationships`, '`relationships` must be an object')
  const inputs: LinkageInput[] = []
  for (const name of Object.keys(raw)) {
    const value = raw[name]
    const pointer = `${base}/relationships/${escapePointerToken(name)}`
    const relationship = resource.relationships.get(name)
    if (relationship === undefined) {
      const detail = resource.attributes.has(name)
        ? `'${name}' is an attribute of '${resource.type}': send it in \`attributes\``
        : `'${name}' is not a relationship of '${resource.type}'`
      problems.push(errorInit('FJA_UNKNOWN_FIELD', { detail, source: { pointer } }))
      continue
    }
    if (!isObject(value) || !('data' in value)) throw notDocument(pointer, 'a relationship must be an object with a `data` member')
    inputs.push({ relationship, ids: readLinkage(value.data, relationship, `${pointer}/data`), pointer: `${pointer}/data`, member: pointer })
  }
  if (mode === 'create') {
    for (const relationship of resource.relationships.values()) {
      if (!relationship.required || implied?.has(relationship.name) === true) continue
      const given = inputs.find((input) => input.relationship === relationship)
      if (given === undefined) {
        problems.push(errorInit('FJA_REQUIRED_RELATIONSHIP', {
          detail: `the relationship '${relationship.name}' is required`,
          source: { pointer: data.relationships === undefined ? base : `${base}/relationships` },
          meta: { field: relationship.name },
        }))
      }
    }
  }
  return inputs
}
