import type { FastifyReply } from 'fastify'
import { CURSOR_MEDIA_TYPE, JSONAPI_MEDIA_TYPE } from '../contracts/media-types.js'
import type { QueryTree } from '../query/query-tree.js'
import { documentJson } from '../document/json-text.js'
import { entityTag, noneMatch } from './conditional.js'
import type { Lifecycle, RouteContext } from './route-context.js'

/**
 * Prepares the headers every answer of the plugin carries: its media type as it is, and `Connection: close` while the
 * registration is closing (a request in flight finishes, and its keep-alive connection does not outlive the close).
 */
export function documentHeaders (reply: FastifyReply, lifecycle: Lifecycle, type: string): FastifyReply {
  reply.header('content-type', type)
  if (lifecycle.closing && reply.request.raw.httpVersionMajor < 2) reply.header('connection', 'close')
  return reply
}

/**
 * Sends the text of a JSON:API document with its media type (`type`, the plain JSON:API media type by default). A
 * `200` to a `GET` or `HEAD` carries the strong `ETag` of the text's UTF-8 bytes, and becomes a `304` without a body
 * when `If-None-Match` holds it (RFC 9110 §13.1.2).
 *
 * `reply.send` appends `; charset=utf-8` to a JSON media type of a text body unless the reply has a serializer of
 * its own, and JSON:API forbids parameters on its media type other than `ext` and `profile`: the text goes through
 * `asIs`, the serializer that leaves it as it is. Every answer of the plugin goes through here (the error handler's
 * too), so no `onSend` hook is needed; an `onSend` hook of the application sees the document's text.
 */
export function sendDocument (reply: FastifyReply, lifecycle: Lifecycle, text: string, type: string = JSONAPI_MEDIA_TYPE): FastifyReply {
  documentHeaders(reply, lifecycle, type)
  const method = reply.request.method
  if (reply.statusCode === 200 && (method === 'GET' || method === 'HEAD')) {
    const tag = entityTag(text)
    reply.header('etag', tag)
    if (noneMatch(reply.request.headers['if-none-match'], tag)) return reply.code(304).send()
  }
  return reply.serializer(asIs).send(text)
}

function asIs (text: string): string {
  return text
}

/** Sends a collection document (a page of resources or of linkage): a cursor page names the profile in its `Content-Type`. */
export function sendCollection (context: RouteContext, reply: FastifyReply, query: QueryTree, document: Record<string, unknown>): FastifyReply {
  return sendDocument(reply, context.lifecycle, documentJson(document), query.page.cursor === undefined ? JSONAPI_MEDIA_TYPE : CURSOR_MEDIA_TYPE)
}
