import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { AnyResourceDeclaration } from './schema/declaration.js'
import type { JsonApiContext } from './schema/hooks.js'
import type { Repository } from './repository/repository.js'

/**
 * Options of the `jsonApi` plugin.
 *
 * @example
 * ```ts
 * await app.register(jsonApi, {
 *   db,                         // your Kysely<DB> instance
 *   resources: [user, computer],
 *   pagination: { defaultSize: 30, maxSize: 1000 },
 * })
 * ```
 */
export interface JsonApiOptions {
  /** The Kysely instance the default repository uses. Required unless `repository` is given. */
  readonly db?: Kysely<any>
  /** A repository to use instead of the Kysely one (the storage seam). */
  readonly repository?: Repository
  /** The resource declarations. Types and paths must be unique. */
  readonly resources: readonly AnyResourceDeclaration[]
  /**
   * Derives the request's context, once per request (once per `/operations` batch), before anything else of the
   * request is read: every hook of that request receives it. Throw a `JsonApiError` here to refuse the request (a
   * 401 for an unknown identity, say). Do asynchronous work (loading the user, their memberships) here: scopes are
   * synchronous.
   *
   * @example
   * ```ts
   * context: async (request) => ({ user: await usersByToken(request.headers.authorization) })
   * ```
   */
  readonly context?: (request: FastifyRequest) => JsonApiContext | Promise<JsonApiContext>
  /** Prepended to every link (`https://api.example.com`); links are relative paths by default. */
  readonly baseUrl?: string
  /** Pagination defaults for every resource. */
  readonly pagination?: PaginationOptions
  /** Limits of the JSON filter. */
  readonly filter?: FilterOptions
  /** The atomic operations endpoint (JSON:API's atomic extension). */
  readonly operations?: OperationsOptions
  /** Include paths: maximum number of relationships in one path (default 3). */
  readonly maxIncludeDepth?: number
  /** What the routes' OpenAPI description says beyond what the declarations tell (see docs/openapi.md). */
  readonly openapi?: OpenApiOptions
  /**
   * Register a JSON:API 404 handler for unknown routes (default true). Turn it off when the application sets its
   * own not-found handler.
   */
  readonly notFoundHandler?: boolean
}

/** Pagination settings. */
export interface PaginationOptions {
  /** Page size when the client sends no `page[size]` (default 30). */
  readonly defaultSize?: number
  /** The largest `page[size]` a client may ask for (default 1000); larger → 400. */
  readonly maxSize?: number
  /**
   * What `page[size]=0` does: `allowed` (default) returns every row, `forbidden` answers 400, `capped` returns a
   * page of the maximum size.
   */
  readonly unpaged?: 'allowed' | 'forbidden' | 'capped'
}

/** The atomic operations endpoint. */
export interface OperationsOptions {
  /** Serve it (default true). */
  readonly enabled?: boolean
  /** Its path (default `/operations`). */
  readonly path?: string
  /** The most operations in one request (default 100); more is a 413. */
  readonly maxOperations?: number
}

/** Limits of the JSON filter. */
export interface FilterOptions {
  /** The deepest nesting of `and`/`or`/`not` and relationship filters (default 8). */
  readonly maxDepth?: number
  /** The most filter nodes in one request (default 200). */
  readonly maxNodes?: number
}

/** The OpenAPI description of the plugin's routes. */
export interface OpenApiOptions {
  /**
   * Error statuses your own code may answer on every route (a Fastify hook that answers 401 or 429, a `context` or a
   * resource hook that throws a 409): each is documented with the JSON:API error document. 401 and 403 are documented
   * anyway when there is a `context` option.
   */
  readonly errors?: readonly number[]
}
