import type { ResolvedRelationship } from '../schema/resolved.js'
import { jsonApiError } from '../errors/error-codes.js'

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function readIdentifier (value: unknown, relationship: ResolvedRelationship, pointer: string): string {
  if (!isObject(value) || typeof value.type !== 'string' || typeof value.id !== 'string') {
    throw jsonApiError('FJA_INVALID_DOCUMENT', {
      detail: 'a resource identifier must be an object with string `type` and `id`',
      source: { pointer },
    })
  }
  if (value.type !== relationship.targetType) {
    throw jsonApiError('FJA_TYPE_CONFLICT', {
      detail: `'${relationship.name}' relates to '${relationship.targetType}', not '${value.type}'`,
      source: { pointer: `${pointer}/type` },
    })
  }
  return value.id
}

/**
 * Reads resource linkage (the `data` of a relationship): `null` or one identifier for a to-one relationship, an
 * array of identifiers for a to-many one. A malformed linkage is a 400, an identifier of the wrong type a 409.
 *
 * @returns the related ids, or `null` when a to-one relationship is cleared
 */
export function readLinkage (data: unknown, relationship: ResolvedRelationship, pointer: string): string[] | null {
  if (relationship.toMany) {
    if (!Array.isArray(data)) {
      throw jsonApiError('FJA_INVALID_DOCUMENT', {
        detail: `'${relationship.name}' is a to-many relationship: \`data\` must be an array of resource identifiers`,
        source: { pointer },
      })
    }
    return [...new Set(data.map((item, index) => readIdentifier(item, relationship, `${pointer}/${index}`)))]
  }
  if (data === null) return null
  if (Array.isArray(data)) {
    throw jsonApiError('FJA_INVALID_DOCUMENT', {
      detail: `'${relationship.name}' is a to-one relationship: \`data\` must be a resource identifier or null`,
      source: { pointer },
    })
  }
  return [readIdentifier(data, relationship, pointer)]
}
