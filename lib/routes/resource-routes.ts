import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { documentJson } from '../document/json-text.js'
import type { ResolvedResource } from '../schema/resolved.js'
import { sendCollectionStream } from './collection-stream.js'
import { ResourceService } from '../service/resource-service.js'
import { readQuery } from '../request/read-query.js'
import { rawQuery } from '../request/raw-query.js'
import { readResourceDocument } from '../request/read-resource-document.js'
import { collectionDocument, metaDocument, singleDocumentText } from '../document/write-document.js'
import type { JsonApiAction } from '../contracts/route-config.js'
import { ifMatchHeader, preconditionOf } from './conditional.js'
import { sendCollection, sendDocument } from './send-document.js'
import { cursorReading, documentBudgets, location, registerMethodNotAllowed, requestServices, singleBudget, varyOnAccept, type RouteContext } from './route-context.js'

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

function idOf (request: FastifyRequest): string {
  return (request.params as { id: string }).id
}

/**
 * Registers the collection and detail routes of every resource, with a 405 (and `Allow`) for each method a path
 * lacks.
 */
export function registerResourceRoutes (fastify: FastifyInstance, context: RouteContext): void {
  for (const resource of context.graph.resources) {
    const detail = `${resource.path}/:id`
    const routes = resource.routes
    const table: Array<[string, HTTPMethods, boolean, Handler, JsonApiAction]> = [
      [resource.path, 'GET', routes.list, listHandler(context, resource), 'list'],
      [resource.path, 'POST', routes.create, createHandler(context, resource), 'create'],
      [detail, 'GET', routes.read, readHandler(context, resource), 'read'],
      [detail, 'PATCH', routes.update, updateHandler(context, resource), 'update'],
      [detail, 'DELETE', routes.delete, deleteHandler(context, resource), 'delete'],
    ]
    for (const path of [resource.path, detail]) {
      const enabled = table.filter(([url, , on]) => url === path && on)
      for (const [url, method, , handler, action] of enabled) {
        fastify.route({ method, url, handler, config: { jsonapi: { type: resource.type, action } }, ...context.docs.route(action, resource) })
      }
      registerMethodNotAllowed(fastify, path, enabled.map(([, method]) => method), { type: resource.type, action: 'method-not-allowed' }, context.docs)
    }
  }
}

function listHandler (context: RouteContext, resource: ResolvedResource): Handler {
  const budget = documentBudgets(context, resource).collection
  return async function listResources (request, reply) {
    const raw = rawQuery(request, context.queries)
    varyOnAccept(reply)
    const services = requestServices(context, request)
    const service = services instanceof ResourceService ? services : await services
    const query = readQuery(raw, resource, context.graph, context.limits, true, cursorReading(context, request, resource.type), context.queries)
    // Every row (`page[size]=0`): streamed batch by batch, so memory does not grow with the row count.
    if (query.page.size === 0 && service.streams) return sendCollectionStream(request, reply, context, service, resource, query, location(context, request, raw))
    const result = await service.list(resource, query)
    return sendCollection(context, reply, query, collectionDocument(result, query, location(context, request, raw), context.cursors, budget))
  }
}

function readHandler (context: RouteContext, resource: ResolvedResource): Handler {
  const budgets = documentBudgets(context, resource)
  return async function readResource (request, reply) {
    const raw = rawQuery(request, context.queries)
    const services = requestServices(context, request)
    const service = services instanceof ResourceService ? services : await services
    const query = readQuery(raw, resource, context.graph, context.limits, false, undefined, context.queries)
    const result = await service.read(resource, idOf(request), query)
    return sendDocument(reply, context.lifecycle, singleDocumentText(result, query, location(context, request, raw), false, singleBudget(budgets, query), context.cursors).text)
  }
}

function createHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function createResource (request, reply) {
    const raw = rawQuery(request, context.queries)
    const services = requestServices(context, request)
    const service = services instanceof ResourceService ? services : await services
    const query = readQuery(raw, resource, context.graph, context.limits, false, undefined, context.queries)
    const input = readResourceDocument(request.body, resource, 'create')
    const base = location(context, request, raw)
    // Rendered inside the write (its transaction, when it has one): a failure while rendering leaves nothing written.
    const { text, self } = await service.create(resource, input, query, '/data', (result) => singleDocumentText(result, query, base, false, undefined, context.cursors))
    return sendDocument(reply.code(201).header('location', self), context.lifecycle, text)
  }
}

function updateHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function updateResource (request, reply) {
    const raw = rawQuery(request, context.queries)
    const services = requestServices(context, request)
    const service = services instanceof ResourceService ? services : await services
    const id = idOf(request)
    const query = readQuery(raw, resource, context.graph, context.limits, false, undefined, context.queries)
    const precondition = preconditionOf(context, resource, id, ifMatchHeader(request))
    const input = readResourceDocument(request.body, resource, 'update', id)
    const base = location(context, request, raw)
    const { text } = await service.update(resource, id, input, query, '/data', precondition, (result) => singleDocumentText(result, query, base, false, undefined, context.cursors))
    return sendDocument(reply, context.lifecycle, text)
  }
}

function deleteHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function deleteResource (request, reply) {
    const services = requestServices(context, request)
    const service = services instanceof ResourceService ? services : await services
    const id = idOf(request)
    await service.remove(resource, id, preconditionOf(context, resource, id, ifMatchHeader(request)))
    return sendDocument(reply, context.lifecycle, documentJson(metaDocument({ message: 'Object successfully deleted' })))
  }
}
