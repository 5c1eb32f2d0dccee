import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { ResourceService } from '../service/resource-service.js'
import { readQuery, type QueryLimits } from '../request/read-query.js'
import { readResourceDocument } from '../request/read-resource-document.js'
import { collectionDocument, metaDocument, singleDocument, type RequestLocation } from '../document/write-document.js'
import { JSONAPI_MEDIA_TYPE } from '../errors/error-handler.js'
import { jsonApiError } from '../errors/error-codes.js'

/** What the route handlers share, resolved once at registration. */
export interface RouteContext {
  readonly graph: ResourceGraph
  readonly service: ResourceService
  readonly limits: QueryLimits
  readonly baseUrl: string
}

type Query = Record<string, unknown>
type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

const METHODS: readonly HTTPMethods[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE']

/** The request's path and query, for the links of its document. */
export function location (context: RouteContext, request: FastifyRequest): RequestLocation {
  const path = request.url.split('?')[0]
  return { baseUrl: context.baseUrl, path, query: request.query as Query }
}

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
    const table: Array<[string, HTTPMethods, boolean, Handler]> = [
      [resource.path, 'GET', routes.list, listHandler(context, resource)],
      [resource.path, 'POST', routes.create, createHandler(context, resource)],
      [detail, 'GET', routes.read, readHandler(context, resource)],
      [detail, 'PATCH', routes.update, updateHandler(context, resource)],
      [detail, 'DELETE', routes.delete, deleteHandler(context, resource)],
    ]
    for (const path of [resource.path, detail]) {
      const enabled = table.filter(([url, , on]) => url === path && on)
      for (const [url, method, , handler] of enabled) fastify.route({ method, url, handler })
      registerMethodNotAllowed(fastify, path, enabled.map(([, method]) => method))
    }
  }
}

/** Answers 405 with `Allow` for every method of `METHODS` a path does not serve. */
export function registerMethodNotAllowed (fastify: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  if (allowed.length === 0) return
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ')
  const missing = METHODS.filter((method) => !allowed.includes(method))
  if (missing.length === 0) return
  fastify.route({
    method: missing,
    url,
    handler: async function methodNotAllowed (request) {
      throw jsonApiError('FJA_METHOD_NOT_ALLOWED', {
        detail: `${request.method} is not allowed on this URL; allowed: ${allow}`,
        headers: { allow },
      })
    },
  })
}

function listHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function listResources (request, reply) {
    const query = readQuery(request.query as Query, resource, context.graph, context.limits, true)
    const result = await context.service.list(resource, query)
    return reply.type(JSONAPI_MEDIA_TYPE).send(collectionDocument(result, query, location(context, request)))
  }
}

function readHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function readResource (request, reply) {
    const query = readQuery(request.query as Query, resource, context.graph, context.limits, false)
    const result = await context.service.read(resource, idOf(request), query)
    return reply.type(JSONAPI_MEDIA_TYPE).send(singleDocument(result, query, location(context, request)))
  }
}

function createHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function createResource (request, reply) {
    const query = readQuery(request.query as Query, resource, context.graph, context.limits, false)
    const input = readResourceDocument(request.body, resource, 'create')
    const result = await context.service.create(resource, input, query)
    const document = singleDocument(result, query, location(context, request))
    const self = (document.links as { self: string }).self
    return reply.code(201).header('location', self).type(JSONAPI_MEDIA_TYPE).send(document)
  }
}

function updateHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function updateResource (request, reply) {
    const id = idOf(request)
    const query = readQuery(request.query as Query, resource, context.graph, context.limits, false)
    const input = readResourceDocument(request.body, resource, 'update', id)
    const result = await context.service.update(resource, id, input, query)
    return reply.type(JSONAPI_MEDIA_TYPE).send(singleDocument(result, query, location(context, request)))
  }
}

function deleteHandler (context: RouteContext, resource: ResolvedResource): Handler {
  return async function deleteResource (request, reply) {
    await context.service.remove(resource, idOf(request))
    return reply.type(JSONAPI_MEDIA_TYPE).send(metaDocument({ message: 'Object successfully deleted' }))
  }
}
