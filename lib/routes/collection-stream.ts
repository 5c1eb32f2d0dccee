import { PassThrough } from 'node:stream'
import type { CursorCodec } from '../query/cursors.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ResolvedResource } from '../schema/resolved.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import type { QueryTree } from '../query/query-tree.js'
import type { ResourceService } from '../service/resource-service.js'
import { StreamedCollectionWriter } from '../document/stream-document.js'
import type { RequestLocation } from '../contracts/request-location.js'
import { JSONAPI_MEDIA_TYPE } from '../contracts/media-types.js'
import { documentHeaders } from './send-document.js'
import type { Lifecycle } from './route-context.js'

/** The client went away while its collection was streamed: the scan stops and its snapshot ends. */
class ClientGone extends Error {
  constructor () {
    super('the client closed the connection during a streamed response')
    this.name = 'ClientGone'
  }
}

/**
 * The client did not take what was written within the stream's deadline: the scan stops, its snapshot ends (its
 * connection goes back to the pool) and the response is cut off.
 */
class ClientTooSlow extends Error {
  constructor (milliseconds: number) {
    super(`the client read nothing of a streamed response for ${milliseconds} ms`)
    this.name = 'ClientTooSlow'
  }
}

/** What a streamed collection needs of its registration. */
export interface StreamSettings {
  readonly lifecycle: Lifecycle
  /** How long to wait for the client to read, in milliseconds. */
  readonly streamTimeout: number
  /** Signs the cursors of the `next` links of included to-many pages. */
  readonly cursors: CursorCodec
}

/**
 * Answers a collection of every row (`page[size]=0`) as a stream: the document is written batch by batch while the
 * rows are read through a cursor, so memory holds one batch whatever the number of rows. The response starts once
 * the count is known and the cursor is open, so that a failure before the first row (a bad filter value, a database
 * fault) is still an error document with its status; a failure after it aborts the response (the client sees a
 * truncated body, never a complete-looking document that lacks rows). Writing waits for the client to read
 * (backpressure); a client that goes away stops the scan.
 */
export async function sendCollectionStream (
  request: FastifyRequest,
  reply: FastifyReply,
  settings: StreamSettings,
  service: ResourceService,
  resource: ResolvedResource,
  query: QueryTree,
  location: RequestLocation,
  extra?: FilterNode,
): Promise<FastifyReply> {
  const out = new PassThrough()
  let gone = false
  out.on('close', () => { gone = true })
  const { streamTimeout } = settings
  const write = async (chunk: string): Promise<void> => {
    if (gone) throw new ClientGone()
    if (out.write(chunk)) return
    // Backpressure: the client has not taken what was written. Wait for it, but not for ever: the scan holds a
    // database connection meanwhile.
    await new Promise<void>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer)
        out.off('drain', drained)
        out.off('close', closed)
      }
      const drained = (): void => { finish(); resolve() }
      const closed = (): void => { finish(); reject(new ClientGone()) }
      const timer = setTimeout(() => { finish(); reject(new ClientTooSlow(streamTimeout)) }, streamTimeout)
      out.once('drain', drained)
      out.once('close', closed)
    })
  }

  const document = new StreamedCollectionWriter(query, location, settings.cursors)
  let count: number | undefined
  let tally = false
  let started!: () => void
  const start = new Promise<void>((resolve) => { started = resolve })
  const done = service.stream(resource, query, {
    async start (total, counting) {
      count = total
      tally = counting === true
      out.write(document.head())
      started()
    },
    async data (batch) {
      await write(document.data(batch))
    },
    async included (batch, items) {
      await write(document.included(batch, items))
    },
  }, extra)
  // Before the first byte, a failure is an ordinary error (thrown to the error handler).
  await Promise.race([start, done])
  done.then(() => {
    out.end(document.tail(tally ? document.rows : count))
  }, (error: unknown) => {
    if (error instanceof ClientTooSlow) request.log.warn({ err: error }, 'fastify-jsonapi: a streamed collection was cut off: its client stopped reading')
    else if (!(error instanceof ClientGone)) request.log.error({ err: error }, 'fastify-jsonapi: a streamed collection failed after its first byte')
    out.destroy(error instanceof Error ? error : new Error(String(error)))
    // the socket too: a client that stopped reading may never take what is still buffered for it
    if (error instanceof ClientTooSlow) request.raw.socket?.destroy()
  })
  return documentHeaders(reply, settings.lifecycle, JSONAPI_MEDIA_TYPE).send(out)
}
