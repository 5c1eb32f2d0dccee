import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { Repository } from '../contracts/repository.js'
import type { RequestLocation } from '../contracts/request-location.js'
import type { JsonApiRouteConfig } from '../contracts/route-config.js'
import { ResourceService } from '../service/resource-service.js'
import type { DatabaseSettings } from '../service/service-scope.js'
import { QueryComposer } from '../service/query-composer.js'
import type { CursorReading } from '../request/read-query.js'
import type { QueryLimits } from '../contracts/query-limits.js'
import { acceptsProfile } from '../request/media-type.js'
import type { KeptQueries, RawQuery } from '../request/raw-query.js'
import { CURSOR_PAGINATION_PROFILE, type CursorCodec } from '../query/cursors.js'
import type { QueryTree } from '../query/query-tree.js'
import type { DocumentBudget } from '../document/resource-object.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { RouteDocs } from '../openapi/route-schemas.js'

// What every route of the plugin shares: the registration's context and the steps each handler takes the same way.

/** Whether the registration is closing (Fastify's \`preClose\`): every answer then closes its keep-alive connection. */
export interface Lifecycle {
  closing: boolean
}

/** What the route handlers share, resolved once at registration. */
export interface RouteContext {
  readonly graph: ResourceGraph
  /** The repository of writes, and of everything in `/operations` (the `db` option). */
  readonly repository: Repository
  /** The repository of `GET` and `HEAD` requests: one on the `readDb` option, or `repository` itself. */
  readonly readRepository: Repository
  readonly limits: QueryLimits
  /** What every link starts with: the `baseUrl` option and the registration's prefix. */
  readonly baseUrl: string
  /** The registration's prefix (`fastify.prefix`), part of every route's URL. */
  readonly prefix: string
  /** The application's `context` option: the request's context for every hook. */
  readonly contextOf: ((request: FastifyRequest) => unknown) | undefined
  /** The schemas that describe every route (OpenAPI through `@fastify/swagger`). */
  readonly docs: RouteDocs
  /** How database faults are met (retries of conflicting transactions, `Retry-After`). */
  readonly database: DatabaseSettings
  /** Signs and checks the cursors of cursor pagination (the `pagination.cursorSecret` option). */
  readonly cursors: CursorCodec
  /** Whether the registration is closing (see `sendDocument`). */
  readonly lifecycle: Lifecycle
  /** How long a streamed collection waits for its client to read, in milliseconds (`pagination.streamTimeout`). */
  readonly streamTimeout: number
  /** The longest document a read answers, in characters (`maxDocumentLength`). */
  readonly maxDocumentLength: number
  /** The query strings parsed lately and the query trees read from them (see `KeptQueries`). */
  readonly queries: KeptQueries
}

/** The budgets of the documents of reads of one type (see {@link documentBudgets}). */
export interface DocumentBudgets {
  readonly collection: DocumentBudget
  /** One resource, without and with includes. */
  readonly single: DocumentBudget
  readonly including: DocumentBudget
}

/**
 * The budgets of the documents of reads of `resource`, made once per route: past `maxDocumentLength` characters, a
 * 400 that says how to ask for less — for a collection a smaller `page[size]` (or the stream of `page[size]=0`), for
 * one resource fewer includes or fields.
 */
export function documentBudgets (context: RouteContext, resource: ResolvedResource): DocumentBudgets {
  const maxLength = context.maxDocumentLength
  const single = (parameter: string): DocumentBudget => ({
    maxLength,
    tooLarge: () => jsonApiError('FJA_DOCUMENT_TOO_LARGE', {
      detail: `the document would be longer than ${maxLength} characters of JSON: ask for fewer includes or fields`,
      source: { parameter },
    }),
  })
  return {
    collection: {
      maxLength,
      tooLarge: () => jsonApiError('FJA_DOCUMENT_TOO_LARGE', {
        detail: `the page would be longer than ${maxLength} characters of JSON: ask for a smaller page[size], for fewer fields or includes, or for every row streamed (page[size]=0)`,
        source: { parameter: 'page[size]' },
      }),
    },
    single: single(`fields[${resource.type}]`),
    including: single('include'),
  }
}

/** The budget of a read of one resource with `query`. */
export function singleBudget (budgets: DocumentBudgets, query: QueryTree): DocumentBudget {
  return query.include.length > 0 ? budgets.including : budgets.single
}

/** How a collection route reads cursors: bound to `collection` (`user`, or `user/1/computers`). */
export function cursorReading (context: RouteContext, request: FastifyRequest, collection: string): CursorReading {
  return { codec: context.cursors, collection, requested: acceptsProfile(request, CURSOR_PAGINATION_PROFILE) }
}

/**
 * Adds `Accept` to `Vary`: whether a collection request is paginated by cursor can depend on its `Accept` (the
 * profile asks for a first cursor page), so every answer of a collection route varies with it.
 */
export function varyOnAccept (reply: FastifyReply): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) reply.header('vary', 'Accept')
  else if (!/(?:^|,)\s*(?:accept|\*)\s*(?:,|$)/i.test(String(vary))) reply.header('vary', `${String(vary)}, Accept`)
}

/**
 * The services of one request, bound to its context (derived once, by the application's `context` option): every
 * read and write of the request is composed with the scopes of that context. A `GET` or `HEAD` reads through the read
 * repository (`readDb`); any other method, `/operations` included, runs every statement on `db`, so that a write reads
 * back what it wrote.
 */
export function requestServices (context: RouteContext, request: FastifyRequest): ResourceService | Promise<ResourceService> {
  const value = context.contextOf === undefined ? undefined : context.contextOf(request)
  // A context function that answers at once (not a promise): the services at once, without a turn of the queue (the
  // resource routes take them without `await`, which costs a turn even for a value that is not a promise).
  if (isThenable(value)) return Promise.resolve(value).then((settled) => servicesOf(context, request, settled))
  return servicesOf(context, request, value)
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

function servicesOf (context: RouteContext, request: FastifyRequest, value: unknown): ResourceService {
  const reads = request.method === 'GET' || request.method === 'HEAD'
  return new ResourceService(context.graph, reads ? context.readRepository : context.repository, new QueryComposer(context.graph, value), context.database)
}

const METHODS: readonly HTTPMethods[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE']

/** The request's path (within the registration's prefix) and its query, read once by the route: its document's links. */
export function location (context: RouteContext, request: FastifyRequest, query: RawQuery): RequestLocation {
  const url = request.url
  const end = url.indexOf('?')
  const pathname = end < 0 ? url : url.slice(0, end)
  const prefix = context.prefix
  return { baseUrl: context.baseUrl, path: prefix !== '' && pathname.startsWith(prefix) ? pathname.slice(prefix.length) : pathname, query }
}

/** Answers 405 with `Allow` for every method of `METHODS` a path does not serve. */
export function registerMethodNotAllowed (fastify: FastifyInstance, url: string, allowed: readonly HTTPMethods[], config: JsonApiRouteConfig, docs: RouteDocs): void {
  if (allowed.length === 0) return
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ')
  const missing = METHODS.filter((method) => !allowed.includes(method))
  if (missing.length === 0) return
  fastify.route({
    method: missing,
    url,
    config: { jsonapi: config },
    ...docs.hidden(),
    handler: async function methodNotAllowed (request) {
      throw jsonApiError('FJA_METHOD_NOT_ALLOWED', {
        detail: `${request.method} is not allowed on this URL; allowed: ${allow}`,
        headers: { allow },
      })
    },
  })
}
