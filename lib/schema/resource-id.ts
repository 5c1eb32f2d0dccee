import type { ResolvedResource } from './resolved.js'

const INTEGER = /^(?:0|[1-9]\d{0,9})$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const INT4_MAX = 2147483647

/**
 * Whether a string can be an id of the resource: a decimal integer in PostgreSQL `integer` range, or a UUID.
 * An id that cannot exist is a 404 without asking the database.
 */
export function isValidId (resource: ResolvedResource, id: string): boolean {
  if (resource.idKind === 'uuid') return UUID.test(id)
  return INTEGER.test(id) && Number(id) <= INT4_MAX
}
