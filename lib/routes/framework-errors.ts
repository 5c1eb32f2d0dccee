import type { Socket } from 'node:net'
import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { jsonApiError, type ErrorCode } from '../errors/error-codes.js'
import type { JsonApiError } from '../errors/json-api-error.js'

/**
 * Errors that happen before any route, and so before the plugin — which answers for its own routes only — sees the
 * request: Fastify's router refusing a URL (`frameworkErrors`), and Node's HTTP parser refusing the bytes
 * (`clientErrorHandler`). Both are options of the Fastify server the application creates; these two functions give
 * them JSON:API error documents:
 *
 * ```ts
 * const app = Fastify({ frameworkErrors: jsonApiFrameworkErrors, clientErrorHandler: jsonApiClientErrorHandler })
 * ```
 */

const MEDIA_TYPE = 'application/vnd.api+json'

/** The document of an error, as text. */
function documentOf (error: JsonApiError): string {
  return JSON.stringify({ errors: error.errors, jsonapi: { version: '1.0' } })
}

/** The router's codes, with what the client did. */
const ROUTER_ERRORS: Readonly<Record<string, readonly [ErrorCode, string]>> = {
  FST_ERR_BAD_URL: ['FJA_INVALID_URL', 'the URL path is not valid percent-encoded UTF-8'],
  FST_ERR_MAX_PARAM_LENGTH: ['FJA_URI_TOO_LONG', 'a part of the URL path (an id, say) is longer than the server accepts'],
}

/**
 * Fastify's `frameworkErrors` server option: the errors of its router — a path that is not percent-encoded UTF-8
 * (`/users/%FF`: 400 `FJA_INVALID_URL`), a path parameter longer than `maxParamLength` (414 `FJA_URI_TOO_LONG`) —
 * answered as JSON:API error documents instead of Fastify's own JSON. Any other (a failed async constraint) is the
 * server's: 500 `FJA_INTERNAL`, logged.
 */
export function jsonApiFrameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = ROUTER_ERRORS[error.code]
  if (known === undefined) request.log.error({ err: error }, 'fastify-jsonapi: the router failed the request')
  const rendered = known === undefined
    ? jsonApiError('FJA_INTERNAL', { detail: 'the server failed to handle the request' })
    : jsonApiError(known[0], { detail: known[1] })
  reply.code(rendered.statusCode).header('content-type', MEDIA_TYPE).send(documentOf(rendered))
}

/**
 * Fastify's `clientErrorHandler` server option: what Node's HTTP parser refuses before there is a request — headers
 * larger than its limit (431 `FJA_HEADERS_TOO_LARGE`), a client too slow to send its request (408
 * `FJA_REQUEST_TIMEOUT`), bytes that are not HTTP (400 `FJA_BAD_REQUEST`) — answered as a JSON:API error document on
 * the socket, which is then closed. A connection the client reset gets nothing (there is nobody to answer).
 */
export function jsonApiClientErrorHandler (error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const code: ErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'FJA_HEADERS_TOO_LARGE'
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'FJA_REQUEST_TIMEOUT'
      : 'FJA_BAD_REQUEST'
  const detail = code === 'FJA_HEADERS_TOO_LARGE' ? 'the request headers are larger than the server accepts'
    : code === 'FJA_REQUEST_TIMEOUT' ? 'the request did not arrive in time'
      : 'the request is not valid HTTP'
  const rendered = jsonApiError(code, { detail })
  const body = documentOf(rendered)
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${rendered.statusCode} ${STATUS_CODES[rendered.statusCode] ?? 'Error'}\r\nContent-Type: ${MEDIA_TYPE}\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}
