import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { JsonApiError, clientErrorOf } from '../errors/json-api-error.js'
import { jsonApiError, type ErrorCode } from '../errors/error-codes.js'
import { StorageError, storageFault } from '../contracts/repository.js'
import { faultError, type DatabaseFault } from '../errors/database-faults.js'
import { documentJson } from '../document/json-text.js'
import { JSONAPI_OBJECT } from '../document/write-document.js'
import { CURSOR_PAGINATION_PROFILE } from '../query/cursors.js'
import { CURSOR_MEDIA_TYPE, JSONAPI_MEDIA_TYPE } from '../contracts/media-types.js'

/** What the `links.type` of the profile's errors begins with. */
const PROFILE_ERRORS = `${CURSOR_PAGINATION_PROFILE}/`

const FASTIFY_CODES: Readonly<Record<string, { code: ErrorCode; detail: string; pointer?: string }>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'FJA_MALFORMED_JSON', detail: 'the request body is not valid JSON', pointer: '' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'FJA_INVALID_DOCUMENT', detail: 'the request body is empty', pointer: '' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'FJA_UNSUPPORTED_MEDIA_TYPE', detail: `send ${JSONAPI_MEDIA_TYPE} or application/json` },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'FJA_INVALID_DOCUMENT', detail: 'the Content-Length does not match the body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'FJA_PAYLOAD_TOO_LARGE', detail: 'the request body is too large' },
}

/** What kind of database fault an error is (the repository's `faultOf`), or undefined. */
export type FaultOf = (error: unknown) => DatabaseFault | undefined

/**
 * Turns anything thrown while handling a request into a {@link JsonApiError}: a fault of the database (unreachable,
 * connection lost, timeout, a conflict left after the retries), as `faultOf` recognises it, is a 503 with
 * `Retry-After: retryAfter` (seconds).
 */
export function toJsonApiError (error: unknown, retryAfter = 1, faultOf: FaultOf = storageFault): JsonApiError {
  if (error instanceof JsonApiError) return error
  const fault = faultOf(error)
  if (fault !== undefined) return faultError(fault, retryAfter)
  const fastifyError = error as Partial<FastifyError> | undefined
  const known = typeof fastifyError?.code === 'string' ? FASTIFY_CODES[fastifyError.code] : undefined
  if (known !== undefined) {
    return jsonApiError(known.code, { detail: known.detail, ...(known.pointer === undefined ? {} : { source: { pointer: known.pointer } }) })
  }
  if (error instanceof SyntaxError && fastifyError?.statusCode === 400) {
    return jsonApiError('FJA_MALFORMED_JSON', { detail: 'the request body is not valid JSON', source: { pointer: '' } })
  }
  const client = error instanceof StorageError ? undefined : clientErrorOf(error)
  if (client !== undefined) return client
  return jsonApiError('FJA_INTERNAL', { detail: 'the server failed to handle the request' })
}

/**
 * The plugin's error handler: renders every error as a JSON:API error document, sent by `send` (the plugin's
 * `sendDocument`, as every answer of the plugin). Unexpected errors become a 500 with no internals in the body and
 * are logged through `request.log.error`; database faults become a 503 with `Retry-After: retryAfter` (seconds) and
 * are logged through `request.log.warn`.
 */
export function jsonApiErrorHandler (retryAfter: number, send: (reply: FastifyReply, text: string, type: string) => FastifyReply, faultOf: FaultOf = storageFault): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return function jsonApiErrors (error, request, reply) {
    const rendered = toJsonApiError(error, retryAfter, faultOf)
    if (rendered.statusCode === 503 && !(error instanceof JsonApiError)) {
      request.log.warn({ err: error }, 'fastify-jsonapi: the database failed the request')
    } else if (rendered.statusCode >= 500) {
      request.log.error({ err: error }, 'fastify-jsonapi: request failed')
    }
    // An error of the cursor pagination profile (its `links.type`) is an answer that used the profile: its media type
    // names it, as a cursor page's does.
    const type = rendered.errors.some((item) => item.links?.type?.startsWith(PROFILE_ERRORS) === true) ? CURSOR_MEDIA_TYPE : JSONAPI_MEDIA_TYPE
    return send(reply.code(rendered.statusCode).headers(rendered.headers), documentJson({ errors: rendered.errors, jsonapi: JSONAPI_OBJECT }), type)
  }
}
