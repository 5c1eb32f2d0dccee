import fastifyPlugin from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { Kysely } from 'kysely'
import { OPTION_KEYS, type JsonApiOptions } from './options.js'
import { registrationWarnings, resolveResources } from './schema/resolve-resources.js'
import { unknownKey, unknownKeyMessage } from './schema/known-keys.js'
import { KyselyRepository } from './repository/kysely/kysely-repository.js'
import { faultOf, type Repository } from './contracts/repository.js'
import { engineOf } from './repository/kysely/engine-of.js'
import { escapePointerToken } from './schema/compiled-input.js'
import { jsonApiErrorHandler } from './routes/error-handler.js'
import { JSONAPI_MEDIA_TYPE } from './contracts/media-types.js'
import { jsonApiError } from './errors/error-codes.js'
import { negotiate } from './request/media-type.js'
import { registerResourceRoutes } from './routes/resource-routes.js'
import type { Lifecycle, RouteContext } from './routes/route-context.js'
import { registerRelationshipRoutes } from './routes/relationship-routes.js'
import { registerOperationsRoute, type OperationsSettings } from './routes/operations-route.js'
import type { QueryLimits } from './contracts/query-limits.js'
import type { DatabaseSettings } from './service/service-scope.js'
import { RouteDocs } from './openapi/route-schemas.js'
import { CursorCodec, MIN_SECRET_BYTES, type CursorSecret } from './query/cursors.js'
import { sendDocument } from './routes/send-document.js'
import { KeptQueries } from './request/raw-query.js'

/** An invalid plugin option; thrown at registration. */
export class JsonApiOptionsError extends Error {
  readonly code = 'FJA_INVALID_OPTIONS'
  constructor (message: string) {
    super(`fastify-jsonapi: ${message}`)
    this.name = 'JsonApiOptionsError'
  }
}

/**
 * Every key of the options, and of each options object in them, must be one the plugin (or Fastify's `register`)
 * reads: a misspelt option fails here instead of being silently ignored.
 */
function checkOptionKeys (options: JsonApiOptions): void {
  if (typeof options !== 'object' || options === null) throw new JsonApiOptionsError('the options must be an object')
  const known = [...OPTION_KEYS.options, ...OPTION_KEYS.fastify]
  const key = unknownKey(options, known)
  if (key !== undefined) throw new JsonApiOptionsError(unknownKeyMessage(key, known, 'the plugin'))
  for (const name of ['pagination', 'include', 'sort', 'filter', 'operations', 'openapi', 'database'] as const) {
    const value: unknown = options[name]
    if (value === undefined) continue
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JsonApiOptionsError(`\`${name}\` must be an object`)
    const inner = unknownKey(value, OPTION_KEYS[name])
    if (inner !== undefined) throw new JsonApiOptionsError(unknownKeyMessage(inner, OPTION_KEYS[name], `'${name}'`))
  }
  if (options.checkDatabaseSchema !== undefined && typeof options.checkDatabaseSchema !== 'boolean') {
    throw new JsonApiOptionsError('`checkDatabaseSchema` must be true or false')
  }
}

/** An integer option of at least `minimum` (1 by default), or its fallback when it is not given. */
function integerOption (name: string, value: number | undefined, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < minimum) {
    throw new JsonApiOptionsError(`\`${name}\` must be a ${minimum === 1 ? 'positive' : 'non-negative'} integer`)
  }
  return value
}

function resolveLimits (options: JsonApiOptions): QueryLimits {
  const maxPageSize = integerOption('pagination.maxSize', options.pagination?.maxSize, 1000)
  const defaultPageSize = integerOption('pagination.defaultSize', options.pagination?.defaultSize, 30)
  if (defaultPageSize > maxPageSize) throw new JsonApiOptionsError('`pagination.defaultSize` must not exceed `pagination.maxSize`')
  const unpaged = options.pagination?.unpaged ?? 'allowed'
  if (!['allowed', 'forbidden', 'capped'].includes(unpaged)) {
    throw new JsonApiOptionsError("`pagination.unpaged` must be 'allowed', 'forbidden' or 'capped'")
  }
  // `include.maxDepth` and the older `maxIncludeDepth` name the same limit: either may be given, or both alike.
  const legacyDepth = integerOption('maxIncludeDepth', options.maxIncludeDepth, 3)
  const maxIncludeDepth = integerOption('include.maxDepth', options.include?.maxDepth, legacyDepth)
  if (options.maxIncludeDepth !== undefined && maxIncludeDepth !== legacyDepth) {
    throw new JsonApiOptionsError('`include.maxDepth` and `maxIncludeDepth` are the same limit: give one of them')
  }
  const includePageSize = integerOption('include.pageSize', options.include?.pageSize, Math.min(10, maxPageSize))
  if (includePageSize > maxPageSize) throw new JsonApiOptionsError('`include.pageSize` must not exceed `pagination.maxSize`')
  return Object.freeze({
    defaultPageSize,
    maxPageSize,
    unpaged,
    maxIncludeDepth,
    maxIncludePaths: integerOption('include.maxPaths', options.include?.maxPaths, 10),
    includePageSize,
    sort: Object.freeze({
      maxKeys: integerOption('sort.maxKeys', options.sort?.maxKeys, 10),
      maxDepth: integerOption('sort.maxDepth', options.sort?.maxDepth, 3),
    }),
    filter: Object.freeze({
      maxDepth: integerOption('filter.maxDepth', options.filter?.maxDepth, 8),
      maxNodes: integerOption('filter.maxNodes', options.filter?.maxNodes, 200),
      maxTextNodes: integerOption('filter.maxTextNodes', options.filter?.maxTextNodes, 5, 0),
    }),
  })
}

/**
 * The cursor codec: signed with `pagination.cursorSecret` (the first of a list signs, every one verifies), or with a
 * random key of this process when none is given.
 */
function resolveCursors (options: JsonApiOptions): CursorCodec {
  const given = options.pagination?.cursorSecret
  if (given === undefined) return new CursorCodec()
  const secrets: readonly unknown[] = Array.isArray(given) ? given : [given]
  const valid = (secret: unknown): secret is CursorSecret => (typeof secret === 'string' && Buffer.byteLength(secret, 'utf8') >= MIN_SECRET_BYTES) ||
    (secret instanceof Uint8Array && secret.byteLength >= MIN_SECRET_BYTES)
  if (secrets.length === 0 || !secrets.every(valid)) {
    throw new JsonApiOptionsError(`\`pagination.cursorSecret\` must be a secret of at least ${MIN_SECRET_BYTES} bytes (a string or bytes), or a non-empty list of them`)
  }
  return new CursorCodec(secrets)
}

function resolveDatabase (options: JsonApiOptions): DatabaseSettings {
  const database = options.database ?? {}
  return Object.freeze({
    retries: integerOption('database.retries', database.retries, 3, 0),
    retryAfter: integerOption('database.retryAfter', database.retryAfter, 1, 0),
  })
}

function resolveErrorStatuses (options: JsonApiOptions): readonly number[] {
  const errors = options.openapi?.errors ?? []
  if (!Array.isArray(errors) || errors.some((status) => !Number.isInteger(status) || status < 400 || status > 599)) {
    throw new JsonApiOptionsError('`openapi.errors` must be a list of HTTP error statuses (400–599)')
  }
  return errors
}

function resolveOperations (options: JsonApiOptions): OperationsSettings | undefined {
  const operations = options.operations ?? {}
  if (operations.enabled === false) return undefined
  const path = operations.path ?? '/operations'
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9_\-./]*$/.test(path) || path.includes(':')) {
    throw new JsonApiOptionsError('`operations.path` must be a path starting with `/`')
  }
  return Object.freeze({ path, maxOperations: integerOption('operations.maxOperations', operations.maxOperations, 100) })
}

/** Whether a value looks like a Kysely instance (duck-typed: another copy of Kysely is one too). */
function isKysely (value: unknown): value is Kysely<any> {
  if (typeof value !== 'object' || value === null) return false
  const kysely = value as Record<string, unknown>
  return ['selectFrom', 'insertInto', 'transaction', 'executeQuery', 'getExecutor'].every((name) => typeof kysely[name] === 'function')
}

/**
 * The repository of writes (and of everything in `/operations`), and the one `GET`/`HEAD` requests read with: a
 * Kysely repository on `readDb` when it is given, the same repository otherwise.
 */
function resolveRepositories (options: JsonApiOptions): { repository: Repository, readRepository: Repository } {
  if (options.db === undefined && options.repository === undefined) {
    throw new JsonApiOptionsError('pass your Kysely instance as `db` (or a `repository`)')
  }
  if (options.db !== undefined && !isKysely(options.db)) throw new JsonApiOptionsError('`db` must be a Kysely instance')
  const repository = options.repository ?? new KyselyRepository(options.db!)
  if (options.readDb === undefined) return { repository, readRepository: repository }
  if (options.db === undefined || options.repository !== undefined) {
    throw new JsonApiOptionsError('`readDb` needs `db` and the default repository: reads of GET requests go to `readDb`, everything else to `db` (a custom `repository` chooses its databases itself)')
  }
  if (!isKysely(options.readDb)) throw new JsonApiOptionsError('`readDb` must be a Kysely instance (a read-only one, on a replica say)')
  return { repository, readRepository: new KyselyRepository(options.readDb) }
}

/**
 * Where a JSON text holds what Fastify's body parser refuses as prototype poisoning — a member named `__proto__`, or
 * a `constructor` object with a `prototype` member —, and what to say of it; undefined for text that is not JSON (a
 * malformed body) or holds none. Only called for a body the parser refused.
 */
function poisonedMember (text: string): { readonly pointer: string, readonly detail: string } | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const walk = (value: unknown, pointer: string): { pointer: string, detail: string } | undefined => {
    if (typeof value !== 'object' || value === null) return undefined
    for (const [key, member] of Object.entries(value)) {
      const at = `${pointer}/${escapePointerToken(key)}`
      if (key === '__proto__') return { pointer: at, detail: 'a member named `__proto__` is refused (it could change the prototype of the objects built from the body)' }
      if (key === 'constructor' && typeof member === 'object' && member !== null && Object.prototype.hasOwnProperty.call(member, 'prototype')) {
        return { pointer: at, detail: 'a `constructor` member with a `prototype` is refused (it could change the prototype of the objects built from the body)' }
      }
      const found = walk(member, at)
      if (found !== undefined) return found
    }
    return undefined
  }
  try {
    return walk(parsed, '')
  } catch {
    // nested too deep to walk (the parser refused it for that): no poisoned member found
    return undefined
  }
}

/**
 * A warning about the application's setup, where it will be seen: its logger, or, for a Fastify without one (which
 * drops `log.warn`), a process warning on stderr with `code`.
 */
function warnLoudly (fastify: FastifyInstance, message: string, code: string): void {
  if (fastify.log.level === undefined) process.emitWarning(message, { code })
  else fastify.log.warn(message)
}

const plugin: FastifyPluginAsync<JsonApiOptions> = async function jsonApiPlugin (fastify: FastifyInstance, options: JsonApiOptions) {
  checkOptionKeys(options)
  const { repository, readRepository } = resolveRepositories(options)
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '')
  const graph = resolveResources(options.resources)
  for (const warning of registrationWarnings(graph)) warnLoudly(fastify, warning, 'FJA_DECLARATION_WARNING')
  if (options.context !== undefined && typeof options.context !== 'function') {
    throw new JsonApiOptionsError('`context` must be a function of the request')
  }
  const limits = resolveLimits(options)
  const database = resolveDatabase(options)
  const operations = resolveOperations(options)
  const taken = graph.resources.find((resource) => resource.path === operations?.path)
  if (taken !== undefined) {
    throw new JsonApiOptionsError(`\`operations.path\` '${operations?.path}' is the path of resource '${taken.type}': choose another, or turn the endpoint off`)
  }
  const docs = new RouteDocs({ graph, limits, prefix: fastify.prefix, operations: operations !== undefined,
    errors: [...resolveErrorStatuses(options), ...(options.context === undefined ? [] : [401, 403])],
  })
  docs.register(fastify)
  // Set by `preClose`: from then on, every answer closes its keep-alive connection (see `documentHeaders`).
  const lifecycle: Lifecycle = { closing: false }
  const context: RouteContext = Object.freeze({
    graph,
    repository,
    readRepository,
    limits,
    // Links are the base URL, the registration's prefix, and a path of the plugin's own (`/users/1`).
    baseUrl: `${baseUrl}${fastify.prefix}`,
    prefix: fastify.prefix,
    contextOf: options.context,
    docs,
    database,
    cursors: resolveCursors(options),
    lifecycle,
    streamTimeout: integerOption('pagination.streamTimeout', options.pagination?.streamTimeout, 30_000),
    maxDocumentLength: integerOption('maxDocumentLength', options.maxDocumentLength, 16 * 1024 * 1024),
    queries: new KeptQueries(),
  })

  // At ready, unless turned off: the tables and columns the declarations name must exist (a custom repository without
  // `db` has no Kysely instance to ask). A misspelt foreign key fails the start, naming the resource and field, instead
  // of answering 500s. By default a database that cannot be reached then is only a warning: it may come up later.
  const db = options.db
  if (options.checkDatabaseSchema !== false && db !== undefined) {
    const strict = options.checkDatabaseSchema === true
    const engine = engineOf(db)
    fastify.addHook('onReady', async function jsonApiCheckDatabaseSchema () {
      try {
        await engine.checkSchema(db, graph)
      } catch (error) {
        if (strict || engine.fault(error) === undefined) throw error
        warnLoudly(fastify, `fastify-jsonapi: could not check the database schema at ready (${(error as Error).message}); set checkDatabaseSchema: true to fail the start instead`, 'FJA_SCHEMA_UNCHECKED')
      }
    })
  }

  // At ready, a Kysely repository (the default one, or one of the application's) reads which relationships the
  // database's foreign keys enforce, so that a create linking to rows without a scope is a plain INSERT (see
  // `EnforcedForeignKeys`). Without it (a database down at ready), creates check their related rows in their own
  // statement, as correct and a little slower.
  if (repository instanceof KyselyRepository) {
    const log = fastify.log
    fastify.addHook('onReady', async function jsonApiReadForeignKeys () {
      try {
        await repository.readForeignKeys(graph)
      } catch (error) {
        log.warn({ err: error }, 'fastify-jsonapi: could not read the foreign key constraints; creates check their related rows in their own statement')
      }
    })
  }

  // Every answer, an error's too, is sent by `sendDocument`: the JSON:API media type without the charset Fastify
  // would append, the ETag of a read and its 304, and `Connection: close` while closing. No `onSend` hook: running
  // one per request cost more than the rest of sending.
  fastify.setErrorHandler(jsonApiErrorHandler(database.retryAfter, (reply, text, type) => sendDocument(reply, lifecycle, text, type), (error) => faultOf(repository, error)))
  // A graceful close: Fastify stops accepting connections and answers new requests 503; a request in flight finishes,
  // and its response closes its keep-alive connection, so that the close does not wait for the client to hang up.
  fastify.addHook('preClose', function jsonApiClosing (done) {
    lifecycle.closing = true
    done()
  })
  // Both JSON media types read an empty body as no body (a DELETE may carry a Content-Type and nothing else); a
  // write without a body is then a 400 of the document reader, with its pointer.
  const parseJson = fastify.getDefaultJsonParser('error', 'error')
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser([JSONAPI_MEDIA_TYPE, 'application/json'], { parseAs: 'string' }, function parseJsonBody (request, body, done) {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined)
    parseJson(request, body as string, (error, value) => {
      // Valid JSON that Fastify's parser refuses on purpose (prototype poisoning) is not "not valid JSON": say why.
      const poisoned = error === null ? undefined : poisonedMember(body as string)
      if (poisoned === undefined) done(error, value)
      else done(jsonApiError('FJA_INVALID_DOCUMENT', { detail: poisoned.detail, source: { pointer: poisoned.pointer } }), undefined)
    })
  })
  fastify.addHook('onRequest', function jsonApiNegotiation (request, _reply, done) {
    try {
      negotiate(request)
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  })
  if (options.notFoundHandler ?? true) {
    fastify.setNotFoundHandler(async function jsonApiNotFound (request) {
      throw jsonApiError('FJA_ROUTE_NOT_FOUND', { detail: `no route for ${request.method} ${request.url.split('?')[0]}` })
    })
  }
  registerResourceRoutes(fastify, context)
  registerRelationshipRoutes(fastify, context)
  if (operations !== undefined) registerOperationsRoute(fastify, context, operations)
}

/**
 * The fastify-jsonapi plugin: registers, for every declared resource, the JSON:API collection and resource routes,
 * the error handler, content negotiation and the JSON:API body parser, all in the plugin's own encapsulated scope.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import { jsonApi } from 'fastify-jsonapi'
 * import { createEmbeddedDatabase } from 'fastify-jsonapi/embedded'
 * import { user, computer } from './resources.js'
 *
 * const app = Fastify()
 * const { db } = await createEmbeddedDatabase()
 * await app.register(jsonApi, { db, resources: [user, computer] })
 * // GET /users, POST /users, GET|PATCH|DELETE /users/:id …
 * ```
 */
export const jsonApi = fastifyPlugin(plugin, {
  fastify: '5.x',
  name: 'fastify-jsonapi',
  encapsulate: true,
})
