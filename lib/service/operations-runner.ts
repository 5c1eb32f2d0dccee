import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { Operation, OperationReaders, OperationRef } from '../contracts/inputs.js'
import { pageNode, queryTree } from '../query/query-tree.js'
import { jsonApiError } from '../errors/error-codes.js'
import { relocateError } from '../errors/relocate-error.js'
import { clientErrorOf } from '../errors/json-api-error.js'
import type { ResourceService } from './resource-service.js'
import type { Precondition } from './service-scope.js'
import { RelationshipService } from './relationship-service.js'
import type { ResultSet } from '../contracts/result-set.js'

/** The results' query: every field, nothing included. */
const RESULT_QUERY = queryTree({ page: pageNode(1, 0) })

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The resources added in a batch by their local id. */
class LidTable {
  readonly #entries = new Map<string, { type: string; id: string }>()

  define (lid: string, type: string, id: string): void {
    this.#entries.set(lid, { type, id })
  }

  has (lid: string): boolean {
    return this.#entries.has(lid)
  }

  /** The id of a lid of `type`; a 422 pointing at the lid when unknown or of another type. */
  resolve (lid: string, type: string, pointer: string): string {
    const entry = this.#entries.get(lid)
    if (entry === undefined) {
      throw jsonApiError('FJA_UNKNOWN_LID', { detail: `no earlier operation added a resource with lid '${lid}'`, source: { pointer } })
    }
    if (entry.type !== type) {
      throw jsonApiError('FJA_UNKNOWN_LID', { detail: `the lid '${lid}' is a '${entry.type}', not a '${type}'`, source: { pointer } })
    }
    return entry.id
  }

  /** An identifier with its lid replaced by the id (identifiers with an id, or malformed ones, stay as they are). */
  identifier (value: unknown, pointer: string): unknown {
    if (!isObject(value) || value.id !== undefined || typeof value.lid !== 'string' || typeof value.type !== 'string') return value
    const { lid, ...rest } = value
    return { ...rest, id: this.resolve(lid as string, value.type, `${pointer}/lid`) }
  }

  /** Resource linkage with every lid replaced. */
  linkage (data: unknown, pointer: string): unknown {
    return Array.isArray(data) ? data.map((item, index) => this.identifier(item, `${pointer}/${index}`)) : this.identifier(data, pointer)
  }

  /** A resource object's relationships with every lid replaced. */
  relationships (data: Record<string, unknown>, base: string): Record<string, unknown> {
    if (!isObject(data.relationships)) return data
    const relationships: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(data.relationships)) {
      relationships[name] = isObject(value) && 'data' in value ? { ...value, data: this.linkage(value.data, `${base}/relationships/${name}/data`) } : value
    }
    return { ...data, relationships }
  }
}

/**
 * Adds the operation to an error: pointers into the request (`/atomic:operations/<i>/…`, where a service or a hook
 * pointed into the resource document `/data/…`), and `meta` with the operation's index, op, ref and data summary.
 */
function locate (error: unknown, operation: Operation): unknown {
  const data = isObject(operation.data) ? operation.data : undefined
  const meta: Record<string, unknown> = { operation: operation.index, op: operation.op }
  if (operation.ref !== undefined) {
    const { resource, id, lid, relationship } = operation.ref
    meta.ref = { type: resource.type, ...(id === undefined ? {} : { id }), ...(lid === undefined ? {} : { lid }), ...(relationship === undefined ? {} : { relationship: relationship.name }) }
  }
  if (data !== undefined && operation.ref?.relationship === undefined) {
    meta.data = { type: data.type, ...(data.id === undefined ? {} : { id: data.id }), ...(data.lid === undefined ? {} : { lid: data.lid }) }
  }
  const fallback = operation.ref !== undefined ? `${operation.base}/ref` : `${operation.base}/data`
  // Every error points into the request, also one whose source is a header or a parameter (a hook's 401 naming the
  // header that identifies the user): the pointer says which operation failed, the header or parameter stays beside it.
  return relocateError(clientErrorOf(error) ?? error, (item) => {
    const pointer = item.source?.pointer
    const located = pointer === undefined ? fallback : pointer.startsWith('/atomic:operations') ? pointer : `${operation.base}${pointer}`
    return { source: { ...item.source, pointer: located }, meta }
  })
}

/**
 * Runs the operations of an atomic request in order, in one transaction, through the same service functions as
 * the regular routes: if one fails, none of them persists. `lid`s of added resources can be used by any later
 * operation wherever an id could be.
 *
 * @returns one result per operation: the resource of an add or update, `null` for a remove or relationship operation
 */
/**
 * The precondition of an operation on an existing resource, from its `meta.ifMatch` (undefined: none); the route
 * renders the tags as `GET /<type>/<id>` would.
 */
export type OperationPrecondition = (resource: ResolvedResource, id: string, ifMatch: string | undefined) => Precondition | undefined

export function runOperations<T = Array<ResultSet | null>> (
  graph: ResourceGraph, service: ResourceService, operations: readonly Operation[], readers: OperationReaders,
  conditions: OperationPrecondition = () => undefined, finish: (results: Array<ResultSet | null>) => T = (results) => results as T,
): Promise<T> {
  // `finish` (the route renders the document there) runs inside the transaction: a failure while rendering rolls
  // the whole batch back.
  return service.transaction(async (resources) => {
    const relationships = new RelationshipService(graph, resources)
    const lids = new LidTable()
    const results: Array<ResultSet | null> = []
    for (const operation of operations) {
      try {
        results.push(await runOne(operation, readers, resources, relationships, lids, conditions))
      } catch (error) {
        throw locate(error, operation)
      }
    }
    return finish(results)
  })
}

function refId (ref: OperationRef, lids: LidTable): string {
  return ref.id ?? lids.resolve(ref.lid as string, ref.resource.type, '/ref/lid')
}

async function runOne (
  operation: Operation, readers: OperationReaders, resources: ResourceService, relationships: RelationshipService, lids: LidTable, conditions: OperationPrecondition,
): Promise<ResultSet | null> {
  const { op, ref, resource } = operation
  if (ref?.relationship !== undefined) {
    const relationship = ref.relationship
    const ownerId = refId(ref, lids)
    const input = { relationship, ids: readers.linkage(lids.linkage(operation.data, '/data'), relationship, '/data'), pointer: '/data', member: '/data' }
    const precondition = conditions(ref.resource, ownerId, operation.ifMatch)
    if (op === 'update') {
      await relationships.replace(ref.resource, ownerId, input, precondition)
    } else if (!relationship.toMany) {
      // Refused only for an owner the request can see: else the 404, as on the relationship route.
      await resources.assertVisible(ref.resource, ownerId)
      throw jsonApiError('FJA_TO_ONE_MEMBERS', { detail: `'${relationship.name}' is a to-one relationship: ${op} cannot add or remove members; update it instead`, source: { pointer: '/ref/relationship' } })
    } else {
      await relationships.changeMembers(ref.resource, ownerId, input, op, precondition)
    }
    return null
  }
  if (op === 'remove') {
    const id = refId(ref as OperationRef, lids)
    await resources.remove(resource, id, conditions(resource, id, operation.ifMatch))
    return null
  }
  const data = operation.data as Record<string, unknown>
  if (data.lid !== undefined && typeof data.lid !== 'string') {
    throw jsonApiError('FJA_INVALID_DOCUMENT', { detail: '`lid` must be a string', source: { pointer: '/data/lid' } })
  }
  if (op === 'add') {
    const lid = data.lid as string | undefined
    if (lid !== undefined && lids.has(lid)) {
      throw jsonApiError('FJA_DUPLICATE_LID', { detail: `the lid '${lid}' is already used by an earlier operation`, source: { pointer: '/data/lid' } })
    }
    const { lid: _lid, ...rest } = lids.relationships(data, '/data')
    const input = readers.resourceObject(rest, resource, 'create', '/data')
    const result = await resources.create(resource, input, RESULT_QUERY)
    if (lid !== undefined) lids.define(lid, resource.type, result.primary[0].id)
    return result
  }
  if (data.id === null) throw jsonApiError('FJA_VALIDATION', { detail: '`id` must not be null: give the id of the resource to update', source: { pointer: '/data/id' } })
  const dataId = typeof data.id === 'string' ? data.id : typeof data.lid === 'string' ? lids.resolve(data.lid, resource.type, '/data/lid') : undefined
  const targetId = ref === undefined ? undefined : refId(ref, lids)
  if (dataId !== undefined && targetId !== undefined && dataId !== targetId) {
    throw jsonApiError('FJA_ID_CONFLICT', { detail: `\`data\` names '${dataId}' but \`ref\` names '${targetId}'`, source: { pointer: '/data/id' } })
  }
  const id = dataId ?? targetId
  if (id === undefined) {
    throw jsonApiError('FJA_MISSING_FIELD', { detail: 'an update needs the resource: `data.id`, `data.lid` or a `ref`', source: { pointer: '/data' }, meta: { field: 'id' } })
  }
  const { lid: _lid, ...rest } = lids.relationships(data, '/data')
  const precondition = conditions(resource, id, operation.ifMatch)
  const input = readers.resourceObject({ ...rest, id }, resource, 'update', '/data', id)
  return resources.update(resource, id, input, RESULT_QUERY, '/data', precondition)
}
