import type { ResolvedResource } from './resolved.js'

const INTEGER = /^(?:0|[1-9]\d{0,9})$/
const BIGINT = /^(?:0|[1-9]\d{0,18})$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const INT4_MAX = 2147483647
const INT8_MAX = 9223372036854775807n

/** Whether a text has at most `max` characters (code points, as PostgreSQL counts them). */
function fits (text: string, max: number): boolean {
  if (text.length <= max) return true
  return text.length <= 2 * max && [...text].length <= max
}

/**
 * Whether a string can be an id of the resource, by its id kind: a decimal integer in PostgreSQL `integer` range, a
 * decimal integer in `bigint` range (compared exactly, as a BigInt), a UUID, or a text matching the declared pattern
 * (and length). An id that cannot exist is a 404 without asking the database.
 */
export function isValidId (resource: ResolvedResource, id: string): boolean {
  switch (resource.idKind) {
    case 'integer': return INTEGER.test(id) && Number(id) <= INT4_MAX
    case 'bigint': return BIGINT.test(id) && BigInt(id) <= INT8_MAX
    case 'uuid': return UUID.test(id)
    case 'text':
      return !id.includes('\u0000') && (resource.idMaxLength === undefined || fits(id, resource.idMaxLength)) &&
        resource.idPattern !== undefined && resource.idPattern.test(id)
  }
}
