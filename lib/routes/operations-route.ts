import type { FastifyInstance } from 'fastify'
import { documentJson } from '../document/json-text.js'
import { readOperations } from '../request/read-operations.js'
import { runOperations } from '../service/operations-runner.js'
import { readResourceObject } from '../request/read-resource-document.js'
import { readLinkage } from '../request/read-linkage.js'
import type { OperationReaders } from '../contracts/inputs.js'
import { operationsDocument } from '../document/operations-document.js'
import { ATOMIC_EXTENSION } from '../contracts/media-types.js'
import { pageNode, queryTree } from '../query/query-tree.js'
import { JSONAPI_MEDIA_TYPE } from '../contracts/media-types.js'
import { registerMethodNotAllowed, requestServices, type RouteContext } from './route-context.js'
import { preconditionOf } from './conditional.js'
import { sendDocument } from './send-document.js'

const RESULT_QUERY = queryTree({ page: pageNode(1, 0) })

/** The operations endpoint's resolved settings. */
export interface OperationsSettings {
  readonly path: string
  readonly maxOperations: number
}

/**
 * Registers `POST <path>` for atomic operations: 200 with `atomic:results`, or 204 without a body when every
 * operation is a remove. The response names the atomic extension in its media type when the request did.
 */
/** The request stage's readers of what an operation's \`data\` holds, for the service that runs the batch. */
const READERS: OperationReaders = Object.freeze({ resourceObject: readResourceObject, linkage: readLinkage })

export function registerOperationsRoute (fastify: FastifyInstance, context: RouteContext, settings: OperationsSettings): void {
  fastify.route({
    method: 'POST',
    url: settings.path,
    config: { jsonapi: { action: 'operations' } },
    ...context.docs.operations(),
    handler: async function runAtomicOperations (request, reply) {
      // One context for the whole batch: every operation runs with the same scopes and hooks' context.
      const service = await requestServices(context, request)
      const operations = readOperations(request.body, context.graph, settings.maxOperations)
      // `meta.ifMatch` of an operation: its precondition, as If-Match of the route it stands for
      const onlyRemovals = operations.every((operation) => operation.op === 'remove' && operation.ref?.relationship === undefined)
      // The document is written inside the batch's transaction: a failure while rendering leaves nothing written.
      const text = await runOperations(context.graph, service, operations, READERS,
        (resource, id, ifMatch) => preconditionOf(context, resource, id, ifMatch, { pointer: '/meta/ifMatch' }),
        (results) => onlyRemovals ? undefined : documentJson(operationsDocument(results, RESULT_QUERY, context.baseUrl)))
      if (text === undefined) return reply.code(204).send()
      const atomic = (request.headers['content-type'] ?? '').includes(ATOMIC_EXTENSION)
      return sendDocument(reply, context.lifecycle, text, atomic ? `${JSONAPI_MEDIA_TYPE}; ext="${ATOMIC_EXTENSION}"` : JSONAPI_MEDIA_TYPE)
    },
  })
  registerMethodNotAllowed(fastify, settings.path, ['POST'], { action: 'method-not-allowed' }, context.docs)
}
