import type { ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { Operation, OperationRef } from '../contracts/inputs.js'
import { jsonApiError } from '../errors/error-codes.js'

/** The member of an atomic operations document. */
export const OPERATIONS_MEMBER = 'atomic:operations'

const MEMBERS = new Set(['op', 'ref', 'data', 'meta', 'href'])

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function malformed (pointer: string, detail: string): Error {
  return jsonApiError('FJA_INVALID_DOCUMENT', { detail, source: { pointer } })
}

/** An operation's `meta.ifMatch`: a string when present (an `add` has no existing resource to compare). */
function ifMatchOf (item: Record<string, unknown>, base: string): string | undefined {
  const meta = item.meta
  if (meta === undefined) return undefined
  if (!isObject(meta)) throw malformed(`${base}/meta`, '`meta` must be an object')
  const value = meta.ifMatch
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw malformed(`${base}/meta/ifMatch`, '`meta.ifMatch` must be a string: * or entity tags, as in If-Match')
  if (item.op === 'add' && item.ref === undefined) throw malformed(`${base}/meta/ifMatch`, 'an add operation creates a resource: there is nothing for `meta.ifMatch` to compare with')
  return value
}

function resourceOf (graph: ResourceGraph, type: unknown, pointer: string): ResolvedResource {
  if (typeof type !== 'string') throw malformed(pointer, '`type` is required and must be a string')
  const resource = graph.findResource(type)
  if (resource === undefined) throw jsonApiError('FJA_RESOURCE_NOT_FOUND', { detail: `'${type}' is not a resource type`, source: { pointer } })
  return resource
}

function readRef (graph: ResourceGraph, ref: unknown, pointer: string): OperationRef {
  if (!isObject(ref)) throw malformed(pointer, '`ref` must be an object with `type` and `id` or `lid`')
  for (const member of Object.keys(ref)) {
    if (!['type', 'id', 'lid', 'relationship'].includes(member)) throw malformed(`${pointer}/${member}`, `'${member}' is not a member of a ref`)
  }
  const resource = resourceOf(graph, ref.type, `${pointer}/type`)
  if (ref.id === null) throw jsonApiError('FJA_VALIDATION', { detail: '`id` must not be null', source: { pointer: `${pointer}/id` } })
  if (ref.id !== undefined && typeof ref.id !== 'string') throw malformed(`${pointer}/id`, '`id` must be a string')
  if (ref.lid !== undefined && typeof ref.lid !== 'string') throw malformed(`${pointer}/lid`, '`lid` must be a string')
  if ((ref.id === undefined) === (ref.lid === undefined)) throw malformed(pointer, 'a ref needs exactly one of `id` and `lid`')
  let relationship: ResolvedRelationship | undefined
  if (ref.relationship !== undefined) {
    if (typeof ref.relationship !== 'string') throw malformed(`${pointer}/relationship`, '`relationship` must be a string')
    relationship = resource.relationships.get(ref.relationship)
    if (relationship === undefined) {
      throw jsonApiError('FJA_ROUTE_NOT_FOUND', { detail: `'${resource.type}' has no relationship '${ref.relationship}'`, source: { pointer: `${pointer}/relationship` } })
    }
  }
  return { resource, id: ref.id as string | undefined, lid: ref.lid as string | undefined, relationship }
}

/**
 * Reads the structure of an atomic operations document (JSON:API's atomic extension): at least one and at most
 * `maxOperations` operations, each with a known `op`, a well-formed `ref` where one is needed, and `data` where
 * one is needed. `href` is not supported. Every mistake is a 400 pointing into the request (413 beyond the
 * maximum).
 */
export function readOperations (body: unknown, graph: ResourceGraph, maxOperations: number): Operation[] {
  if (body === undefined) throw malformed('', `the request body is empty: send a document with an \`${OPERATIONS_MEMBER}\` array`)
  if (!isObject(body)) throw malformed('', `the request body must be a JSON object with an \`${OPERATIONS_MEMBER}\` array`)
  for (const member of Object.keys(body)) {
    if (member !== OPERATIONS_MEMBER && member !== 'meta' && member !== 'jsonapi') throw malformed(`/${member}`, `'${member}' is not a member of an operations document`)
  }
  const list = body[OPERATIONS_MEMBER]
  if (!Array.isArray(list) || list.length === 0) throw malformed(`/${OPERATIONS_MEMBER}`, `\`${OPERATIONS_MEMBER}\` must be a non-empty array of operations`)
  if (list.length > maxOperations) {
    throw jsonApiError('FJA_TOO_MANY_OPERATIONS', {
      detail: `${list.length} operations: at most ${maxOperations} are allowed in one request`,
      source: { pointer: `/${OPERATIONS_MEMBER}` },
    })
  }
  return list.map((item, index) => readOperation(item, index, graph))
}

function readOperation (item: unknown, index: number, graph: ResourceGraph): Operation {
  const base = `/${OPERATIONS_MEMBER}/${index}`
  if (!isObject(item)) throw malformed(base, 'an operation must be an object')
  for (const member of Object.keys(item)) {
    if (!MEMBERS.has(member)) throw malformed(`${base}/${member}`, `'${member}' is not a member of an operation`)
  }
  if ('href' in item) throw malformed(`${base}/href`, '`href` is not supported: address the resource with `ref`')
  const op = item.op
  if (op !== 'add' && op !== 'update' && op !== 'remove') throw malformed(`${base}/op`, '`op` must be "add", "update" or "remove"')
  const ref = item.ref === undefined ? undefined : readRef(graph, item.ref, `${base}/ref`)
  const hasData = 'data' in item
  if (ref?.relationship !== undefined) {
    if (!hasData) throw malformed(base, 'a relationship operation needs `data` (resource linkage)')
    return { index, op, base, ref, resource: ref.resource, data: item.data, hasData, ifMatch: ifMatchOf(item, base) }
  }
  if (op === 'remove') {
    if (ref === undefined) throw malformed(base, 'a remove operation needs a `ref`')
    if (hasData) throw malformed(`${base}/data`, 'a remove operation takes no `data`')
    return { index, op, base, ref, resource: ref.resource, data: undefined, hasData, ifMatch: ifMatchOf(item, base) }
  }
  if (!hasData || !isObject(item.data)) throw malformed(`${base}${hasData ? '/data' : ''}`, `an ${op} operation needs \`data\`: a resource object`)
  if (op === 'add' && ref !== undefined) throw malformed(`${base}/ref`, 'an add operation takes a `ref` only to add to a relationship')
  const resource = resourceOf(graph, item.data.type, `${base}/data/type`)
  if (ref !== undefined && ref.resource !== resource) {
    throw jsonApiError('FJA_TYPE_CONFLICT', { detail: `\`data.type\` '${resource.type}' does not match \`ref.type\` '${ref.resource.type}'`, source: { pointer: `${base}/data/type` } })
  }
  return { index, op, base, ref, resource, data: item.data, hasData, ifMatch: ifMatchOf(item, base) }
}
