import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { documentJson } from '../document/json-text.js'
import type { ResolvedRelationship, ResolvedResource } from '../schema/resolved.js'
import { RelationshipService } from '../service/relationship-service.js'
import { linkageIncludeQuery, readQuery } from '../request/read-query.js'
import { rawQuery } from '../request/raw-query.js'
import { readResourceDocument } from '../request/read-resource-document.js'
import { readRelationshipDocument } from '../request/read-relationship-document.js'
import { collectionDocument, linkageData, linkageDocument, metaDocument, singleDocumentText } from '../document/write-document.js'
import { jsonApiError } from '../errors/error-codes.js'
import { sendCollectionStream } from './collection-stream.js'
import { sendCollection, sendDocument } from './send-document.js'
import { cursorReading, documentBudgets, location, registerMethodNotAllowed, requestServices, singleBudget, varyOnAccept, type RouteContext } from './route-context.js'
import type { JsonApiAction } from '../contracts/route-config.js'
import { ifMatchHeader, preconditionOf } from './conditional.js'

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
type Route = [HTTPMethods, boolean, Handler, JsonApiAction, OnRequest?]
type OnRequest = (request: FastifyRequest) => Promise<void>

function idOf (request: FastifyRequest): string {
  return (request.params as { id: string }).id
}

/** The relationship service of one request (bound to its context). */
async function relationshipsOf (context: RouteContext, request: FastifyRequest): Promise<RelationshipService> {
  return new RelationshipService(context.graph, await requestServices(context, request))
}

/**
 * Registers, for every relationship of every resource, the related-resource route `<path>/:id/<name>` and the
 * relationship route `<path>/:id/relationships/<name>`, with 405s for the methods a route lacks and a 404 for
 * relationship names that do not exist.
 */
export function registerRelationshipRoutes (fastify: FastifyInstance, context: RouteContext): void {
  for (const owner of context.graph.resources) {
    if (owner.relationships.size === 0 || !owner.routes.read) continue
    for (const relationship of owner.relationships.values()) {
      const target = context.graph.getResource(relationship.targetType)
      const related: Route[] = [
        ['GET', true, readRelated(context, owner, relationship), 'read-related'],
        ['POST', target.routes.create, createRelated(context, owner, relationship, target), 'create-related'],
        ['PATCH', !relationship.toMany && target.routes.update, updateRelated(context, owner, relationship, target), 'update-related'],
        ['DELETE', !relationship.toMany && target.routes.delete, deleteRelated(context, owner, relationship), 'delete-related'],
      ]
      const writable = owner.routes.update
      const linkage: Route[] = [
        ['GET', true, readLinkage(context, owner, relationship), 'read-relationship'],
        ['PATCH', writable, replaceLinkage(context, owner, relationship), 'replace-relationship'],
        relationship.toMany
          ? ['POST', writable, changeMembers(context, owner, relationship, 'add'), 'add-relationship']
          : ['POST', writable, refused, 'add-relationship', toOneForbidden(context, owner, relationship)],
        relationship.toMany
          ? ['DELETE', writable, changeMembers(context, owner, relationship, 'remove'), 'remove-relationship']
          : ['DELETE', writable, refused, 'remove-relationship', toOneForbidden(context, owner, relationship)],
      ]
      for (const [url, routes] of [[`${owner.path}/:id/${relationship.name}`, related], [`${owner.path}/:id/relationships/${relationship.name}`, linkage]] as const) {
        const enabled = routes.filter(([, on]) => on)
        for (const [method, , handler, action, onRequest] of enabled) {
          const config = { jsonapi: { type: owner.type, action, relationship: relationship.name } }
          fastify.route({ method, url, handler, config, ...context.docs.route(action, owner, relationship), ...(onRequest === undefined ? {} : { onRequest }) })
        }
        registerMethodNotAllowed(fastify, url, enabled.map(([method]) => method), { type: owner.type, action: 'method-not-allowed', relationship: relationship.name }, context.docs)
      }
    }
    const unknown = async function unknownRelationship (request: FastifyRequest): Promise<never> {
      const name = (request.params as { relationship: string }).relationship
      throw jsonApiError('FJA_ROUTE_NOT_FOUND', { detail: `'${owner.type}' has no relationship '${name}'` })
    }
    for (const url of [`${owner.path}/:id/:relationship`, `${owner.path}/:id/relationships/:relationship`]) {
      fastify.route({ method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'], url, handler: unknown, config: { jsonapi: { type: owner.type, action: 'unknown-relationship' } }, ...context.docs.hidden() })
    }
  }
}

function relatedPath (owner: ResolvedResource, id: string, relationship: ResolvedRelationship): string {
  return `${owner.path}/${encodeURIComponent(id)}/${relationship.name}`
}

function readRelated (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship): Handler {
  const target = context.graph.getResource(relationship.targetType)
  const budgets = documentBudgets(context, target)
  return async function readRelatedResource (request, reply) {
    const raw = rawQuery(request, context.queries)
    if (relationship.toMany) varyOnAccept(reply)
    const service = await relationshipsOf(context, request)
    const cursors = relationship.toMany ? cursorReading(context, request, `${owner.type}/${idOf(request)}/${relationship.name}`) : undefined
    const query = readQuery(raw, target, context.graph, context.limits, relationship.toMany, cursors, context.queries)
    if (relationship.toMany && query.page.size === 0 && service.resources.streams) {
      const linked = await service.relatedCollection(owner, idOf(request), relationship)
      return sendCollectionStream(request, reply, context, service.resources, target, query, location(context, request, raw), linked)
    }
    const result = await service.readRelated(owner, idOf(request), relationship, query)
    const budget = relationship.toMany ? budgets.collection : singleBudget(budgets, query)
    if (relationship.toMany) return sendCollection(context, reply, query, collectionDocument(result, query, location(context, request, raw), context.cursors, budget))
    return sendDocument(reply, context.lifecycle, singleDocumentText(result, query, location(context, request, raw), true, budget, context.cursors).text)
  }
}

function createRelated (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource): Handler {
  const implied = new Set(relationship.storage.kind === 'inverse' ? [relationship.storage.inverseName] : [])
  return async function createRelatedResource (request, reply) {
    const raw = rawQuery(request, context.queries)
    const service = await relationshipsOf(context, request)
    const query = readQuery(raw, target, context.graph, context.limits, false, undefined, context.queries)
    const input = readResourceDocument(request.body, target, 'create', undefined, implied)
    const base = location(context, request, raw)
    // Rendered inside the write's transaction: a failure while rendering leaves nothing written.
    const { text, self } = await service.createRelated(owner, idOf(request), relationship, input, query, (result) => singleDocumentText(result, query, base, false, undefined, context.cursors))
    return sendDocument(reply.code(201).header('location', self), context.lifecycle, text)
  }
}

function updateRelated (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource): Handler {
  return async function updateRelatedResource (request, reply) {
    const raw = rawQuery(request, context.queries)
    const service = await relationshipsOf(context, request)
    const query = readQuery(raw, target, context.graph, context.limits, false, undefined, context.queries)
    const base = location(context, request, raw)
    const { text } = await service.updateRelated(owner, idOf(request), relationship, (relatedId) => readResourceDocument(request.body, target, 'update', relatedId), query,
      (result) => singleDocumentText(result, query, base, true, undefined, context.cursors))
    return sendDocument(reply, context.lifecycle, text)
  }
}

function deleteRelated (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship): Handler {
  return async function deleteRelatedResource (request, reply) {
    const service = await relationshipsOf(context, request)
    await service.deleteRelated(owner, idOf(request), relationship)
    return sendDocument(reply, context.lifecycle, documentJson(metaDocument({ message: 'Object successfully deleted' })))
  }
}

function readLinkage (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship): Handler {
  const target = context.graph.getResource(relationship.targetType)
  const budgets = documentBudgets(context, target)
  return async function readRelationship (request, reply) {
    const raw = rawQuery(request, context.queries)
    if (relationship.toMany) varyOnAccept(reply)
    const service = await relationshipsOf(context, request)
    const cursors = relationship.toMany ? cursorReading(context, request, `${owner.type}/${idOf(request)}/relationships/${relationship.name}`) : undefined
    // With `include`, the related collection's query (the linkage's resources included, and what follows them).
    const including = linkageIncludeQuery(raw, relationship.name, context.limits)
    const query = readQuery(including ?? raw, target, context.graph, context.limits, relationship.toMany, cursors, context.queries)
    if (including === undefined && query.fields.size > 0) {
      throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', {
        detail: 'a relationship document without include has no resource objects: fields do not apply',
        source: { parameter: Object.keys(raw).find((name) => name.startsWith('fields[')) ?? 'fields' },
      })
    }
    const id = idOf(request)
    const here = location(context, request, raw)
    const related = relatedPath(owner, id, relationship)
    if (including === undefined) {
      const result = await service.readLinkage(owner, id, relationship, query)
      return sendCollection(context, reply, query, linkageDocument(result, relationship.toMany, target.type, query, here, related, context.cursors))
    }
    const result = await service.readRelated(owner, id, relationship, query)
    const budget = relationship.toMany ? budgets.collection : singleBudget(budgets, query)
    return sendCollection(context, reply, query, linkageDocument(result, relationship.toMany, target.type, query, here, related, context.cursors, { budget }))
  }
}

function replaceLinkage (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship): Handler {
  return async function replaceRelationship (request, reply) {
    const raw = rawQuery(request, context.queries)
    const service = await relationshipsOf(context, request)
    const id = idOf(request)
    readQuery(raw, context.graph.getResource(relationship.targetType), context.graph, context.limits, false, undefined, context.queries)
    const precondition = preconditionOf(context, owner, id, ifMatchHeader(request))
    const input = readRelationshipDocument(request.body, relationship)
    await service.replace(owner, id, input, precondition)
    const here = location(context, request, raw)
    return sendDocument(reply, context.lifecycle, documentJson({
      links: { self: `${here.baseUrl}${here.path}`, related: `${here.baseUrl}${relatedPath(owner, id, relationship)}` },
      data: linkageData(relationship.targetType, relationship.toMany, input.ids ?? []),
      ...metaDocument({ message: 'Relationship successfully updated' }),
    }))
  }
}

function changeMembers (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship, mode: 'add' | 'remove'): Handler {
  return async function changeRelationshipMembers (request, reply) {
    const service = await relationshipsOf(context, request)
    const id = idOf(request)
    const precondition = preconditionOf(context, owner, id, ifMatchHeader(request))
    const input = readRelationshipDocument(request.body, relationship)
    await service.changeMembers(owner, id, input, mode, precondition)
    const message = mode === 'add' ? 'Relationship successfully created' : 'Relationship successfully updated'
    return sendDocument(reply, context.lifecycle, documentJson(metaDocument({ message })))
  }
}

/**
 * POST and DELETE of a to-one relationship route are refused in `onRequest`, before the body is even parsed: a
 * to-one has no members, whatever the body says. The refusal (403) is only for an owner the request can see; for
 * one it cannot see, or that does not exist, the answer is the 404, as for every write of an existing resource.
 */
function toOneForbidden (context: RouteContext, owner: ResolvedResource, relationship: ResolvedRelationship): OnRequest {
  return async function toOneMembers (request) {
    const services = await requestServices(context, request)
    await services.assertVisible(owner, idOf(request))
    throw jsonApiError('FJA_TO_ONE_MEMBERS', {
      detail: `'${relationship.name}' is a to-one relationship: ${request.method} cannot add or remove members; PATCH it with an identifier or null`,
    })
  }
}

/** The handler of a route whose `onRequest` always refuses. */
const refused: Handler = async function refusedEarlier () {
  throw new Error('unreachable: refused in onRequest')
}
