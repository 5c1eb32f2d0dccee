import type { ResolvedRelationship } from '../schema/resolved.js'
import type { LinkageInput } from '../contracts/inputs.js'
import { jsonApiError } from '../errors/error-codes.js'
import { readLinkage } from './read-linkage.js'

/**
 * Reads the body of a relationship route (`/<type>/<id>/relationships/<relationship>`): a document whose `data`
 * is resource linkage. Not a document or not linkage → 400 with a pointer; an identifier of the wrong type → 409.
 */
export function readRelationshipDocument (body: unknown, relationship: ResolvedRelationship): LinkageInput {
  if (body === undefined) {
    throw jsonApiError('FJA_INVALID_DOCUMENT', { detail: 'the request body is empty: send a document with a `data` member', source: { pointer: '' } })
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw jsonApiError('FJA_INVALID_DOCUMENT', { detail: 'the request body must be a JSON object with a `data` member', source: { pointer: '' } })
  }
  if (!('data' in body)) throw jsonApiError('FJA_INVALID_DOCUMENT', { detail: 'the request body has no `data` member', source: { pointer: '' } })
  return { relationship, ids: readLinkage((body as { data: unknown }).data, relationship, '/data'), pointer: '/data', member: '/data' }
}
