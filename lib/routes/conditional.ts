import { hash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { ResolvedResource } from '../schema/resolved.js'
import type { ErrorSource } from '../errors/json-api-error.js'
import type { ResultSet } from '../contracts/result-set.js'
import type { Precondition } from '../service/service-scope.js'
import { singleDocumentText } from '../document/write-document.js'
import { jsonApiError } from '../errors/error-codes.js'
import { readQuery } from '../request/read-query.js'
import { NO_QUERY } from '../request/raw-query.js'
import type { RouteContext } from './route-context.js'

/**
 * Conditional requests (RFC 9110 §13): every `200` answer to a `GET` carries a strong `ETag` of the bytes sent, and
 * `If-None-Match` turns it into a `304`; writes of a resource honour `If-Match` against the `ETag` of
 * `GET /<type>/<id>`, compared and written in one transaction under a row lock.
 */

/** The strong entity tag of a representation: a hash of its bytes. */
export function entityTag (body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`
}

/** One entity tag of a list: `"xyz"` or `W/"xyz"` (the characters RFC 9110 allows between the quotes). */
const TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/

interface ParsedTag {
  readonly weak: boolean
  readonly opaque: string
}

/**
 * The tags of an `If-Match` / `If-None-Match` header: `*`, a list, or undefined when the header is absent. A value
 * that is neither is `null`.
 */
function parseTags (header: string | string[] | undefined): '*' | ParsedTag[] | undefined | null {
  if (header === undefined) return undefined
  const value = (Array.isArray(header) ? header.join(',') : header).trim()
  if (value === '*') return '*'
  const tags: ParsedTag[] = []
  for (const part of value.split(',')) {
    const item = part.trim()
    if (item === '') continue
    const match = TAG.exec(item)
    if (match === null) return null
    tags.push({ weak: match[1] !== undefined, opaque: match[2] })
  }
  return tags.length === 0 ? null : tags
}

/**
 * Whether `If-None-Match` holds the tag of the representation (weak comparison: `W/` does not matter), so that the
 * answer is a `304`. A malformed header is ignored (the full answer is never wrong).
 */
export function noneMatch (header: string | string[] | undefined, tag: string): boolean {
  const tags = parseTags(header)
  if (tags === undefined || tags === null) return false
  if (tags === '*') return true
  const opaque = tag.slice(1, -1)
  return tags.some((item) => item.opaque === opaque)
}

/**
 * The precondition of a write of `resource` `id` from the request's `If-Match`: undefined when there is none (a 428
 * when the resource requires one). The tag compared is the one `GET /<type>/<id>` answers with: the hash of the same
 * document, rendered the same way, inside the write's transaction.
 *
 * @param source where the tags came from, for the errors: the header (`If-Match`), or an operation's member
 */
export function preconditionOf (
  context: RouteContext, resource: ResolvedResource, id: string, header: string | string[] | undefined,
  source: ErrorSource = { header: 'If-Match' },
): Precondition | undefined {
  const tags = parseTags(header)
  if (tags === undefined) {
    if (resource.requireIfMatch) {
      throw jsonApiError('FJA_PRECONDITION_REQUIRED', {
        detail: `a write of '${resource.type}' needs If-Match: the ETag of GET ${resource.path}/{id} (or *)`,
        source,
      })
    }
    return undefined
  }
  if (tags === null) {
    throw jsonApiError('FJA_INVALID_HEADER', {
      detail: 'If-Match must be * or a list of entity tags ("…" or W/"…")',
      source,
    })
  }
  // The query of `GET /<type>/<id>` without parameters (kept by `readQuery` for the shared empty parsing).
  const query = readQuery(NO_QUERY, resource, context.graph, context.limits, false, undefined, context.queries)
  const path = `${resource.path}/${encodeURIComponent(id)}`
  return {
    // If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches.
    matches: tags === '*' ? '*' : (result: ResultSet) => {
      const tag = entityTag(singleDocumentText(result, query, { baseUrl: context.baseUrl, path, query: {} }).text).slice(1, -1)
      return tags.some((item) => !item.weak && item.opaque === tag)
    },
    query,
    source,
  }
}

/** `If-Match` of a request (its raw header). */
export function ifMatchHeader (request: FastifyRequest): string | string[] | undefined {
  return request.headers['if-match']
}
