import { StorageError, storageFault } from '../contracts/repository.js'
import type { ResolvedResource } from '../schema/resolved.js'
import type { ErrorSource } from '../errors/json-api-error.js'
import { jsonApiError, type ErrorCode } from '../errors/error-codes.js'
import type { DatabaseFault } from '../errors/database-faults.js'

/** What the service was doing when storage failed, to point the client at the right member. */
export interface WriteContext {
  readonly resource: ResolvedResource
  readonly action: 'create' | 'update' | 'delete' | 'link'
  /** The pointer of the resource object in the request (`/data`). */
  readonly base: string
}

/** Whether the failing constraint belongs to the resource's own table (not a join table or a related table). */
function onOwnTable (error: StorageError, resource: ResolvedResource): boolean {
  return error.table === undefined || error.table === resource.table.split('.').pop()
}

/**
 * The member a failed column stands for: the id, an attribute or a relationship stored in the row (`field`); for a
 * column of the type's own table that no declaration names (a NOT NULL column the application fills itself, or
 * forgot), the resource object, with the column named (`column`); for a failure of the own table that names no
 * column (a check constraint, an index entry too large), the resource object.
 */
function sourceOf (error: StorageError, context: WriteContext): { source?: ErrorSource; field?: string; column?: string } {
  const { resource, base } = context
  if (!onOwnTable(error, resource)) return {}
  for (const column of error.columns) {
    if (column === resource.idColumn) return { source: { pointer: `${base}/id` }, field: 'id' }
    for (const attribute of resource.attributes.values()) {
      if (attribute.column === column && !attribute.hidden) return { source: { pointer: `${base}/attributes/${attribute.name}` }, field: attribute.name }
    }
    for (const relationship of resource.relationships.values()) {
      if (relationship.storage.kind === 'foreign-key' && relationship.storage.column === column) {
        return { source: { pointer: `${base}/relationships/${relationship.name}` }, field: relationship.name }
      }
    }
  }
  // A column no field writes, or none the database named (a check constraint, an index entry too large): the
  // resource object.
  const column = error.columns[0]
  return column === undefined ? { source: { pointer: base } } : { source: { pointer: base }, column }
}

/** What a missing value of the id means: a client that must send one, or a server that assigns none. */
function missingId (resource: ResolvedResource): string {
  return resource.clientIds === 'forbidden'
    ? `a new '${resource.type}' gets no id: clients may not send one (clientIds: 'forbidden') and the database assigns none`
    : `a new '${resource.type}' needs an id: send it as \`data.id\``
}

type ClientKind = Exclude<StorageError['kind'], DatabaseFault>

const CODES: Record<ClientKind, ErrorCode> = {
  unique: 'FJA_UNIQUE_VIOLATION',
  'foreign-key': 'FJA_FOREIGN_KEY_VIOLATION',
  'not-null': 'FJA_NOT_NULL_VIOLATION',
  check: 'FJA_CONSTRAINT_VIOLATION',
  'invalid-value': 'FJA_INVALID_VALUE',
  'out-of-range': 'FJA_VALIDATION',
  'too-long': 'FJA_VALIDATION',
}

/**
 * Turns a {@link StorageError} into the JSON:API error the client should see (409 for conflicts, 422 for missing or
 * invalid values, 400 for values the database cannot read), pointing at the member involved when the storage says
 * which column failed. Any other error, and a fault of the database (unavailable, timeout, conflict), is returned
 * unchanged.
 */
export function explainStorageError (error: unknown, context: WriteContext): unknown {
  // A fault of the database itself is not about the request: the error handler answers 503.
  if (!(error instanceof StorageError) || storageFault(error) !== undefined) return error
  const kind = error.kind as ClientKind
  const { source, field, column } = sourceOf(error, context)
  const what = field !== undefined ? ` ('${field}')` : column !== undefined ? ` (column '${column}', which no field of '${context.resource.type}' writes)` : ''
  const type = context.resource.type
  // A constraint of another table (a join table's unique pair, a related row's key) is about a link, not this type.
  const own = onOwnTable(error, context.resource)
  const details: Record<ClientKind, string> = {
    unique: own ? `another '${type}' already has this value${what}` : `the change would duplicate a link of this '${type}' that must be unique`,
    'foreign-key': context.action === 'delete'
      ? `the '${type}' is still referenced by other resources`
      : `a related resource${what} does not exist or is still referenced`,
    'not-null': field === 'id' ? missingId(context.resource) : `a required value${what} is missing`,
    check: `a value${what} breaks a constraint of '${type}'`,
    'invalid-value': `a value${what} is not valid for its type`,
    'out-of-range': `a number${what} is out of the range its column can store`,
    'too-long': `a value${what} is too long`,
  }
  return jsonApiError(CODES[kind], {
    detail: details[kind],
    ...(source === undefined ? {} : { source }),
    ...(column === undefined ? {} : { meta: { column } }),
  })
}
