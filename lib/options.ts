import type { FastifyRequest, RegisterOptions } from 'fastify'
import type { Kysely } from 'kysely'
import { keyList } from './schema/known-keys.js'
import type { AnyResourceDeclaration } from './schema/declaration.js'
import type { JsonApiContext } from './schema/hooks.js'
import type { Repository } from './contracts/repository.js'

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
  /**
   * A read-only Kysely instance (a streaming replica, say) for the reads of `GET` and `HEAD` requests of the resource,
   * related and relationship routes, streamed collections (`page[size]=0`) included. Everything else runs on `db`:
   * every write and the document it answers with (read in the write's transaction), the preconditions of writes, and
   * the whole `/operations` endpoint, reads included. Needs `db` and the default repository (not with `repository`).
   * A replica lags: a client may not see its own write on its next `GET` (see docs/deployment.md).
   */
  readonly readDb?: Kysely<any>
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
  /** Limits of `include`: how many paths, how deep (see docs/querying.md, "Limits"). */
  readonly include?: IncludeOptions
  /** Limits of `sort`: how many keys, how many relationship steps in one. */
  readonly sort?: SortOptions
  /** Limits of the filters (the JSON `filter` and the simple `filter[name]` ones together). */
  readonly filter?: FilterOptions
  /**
   * The longest document a read answers, in characters of JSON text (default 16777216, 16 Mi): the resource objects of
   * a page, a resource and what it includes. Past it the read is a 400 that says how to ask for less (a smaller
   * `page[size]`, fewer fields or includes, or every row streamed with `page[size]=0`, which this does not bound), so
   * that one request cannot make the server build a string of hundreds of megabytes (or one longer than a JavaScript
   * string can be). The rows are read before they are written: bound the size of your columns too.
   */
  readonly maxDocumentLength?: number
  /** The atomic operations endpoint (JSON:API's atomic extension). */
  readonly operations?: OperationsOptions
  /**
   * Include paths: maximum number of relationships in one path (default 3). The same limit as `include.maxDepth`,
   * kept for compatibility; give one of the two (both only with the same value).
   */
  readonly maxIncludeDepth?: number
  /** What the routes' OpenAPI description says beyond what the declarations tell (see docs/openapi.md). */
  readonly openapi?: OpenApiOptions
  /** How the plugin meets faults of the database (see docs/production.md). */
  readonly database?: DatabaseOptions
  /**
   * Register a JSON:API 404 handler for unknown routes (default true). Turn it off when the application sets its
   * own not-found handler.
   */
  readonly notFoundHandler?: boolean
  /**
   * Check at `ready()` that the database has every table (or view) and column the declarations name: each resource's
   * table, id column and attribute columns (derived attributes' columns too), foreign keys, the target tables' keys of
   * inverse relationships, join tables and their columns. Everything missing is listed in one `DatabaseSchemaError`
   * thrown by `ready()`, naming the resource and field that need each. One query through `db` at startup; needs `db`
   * (a custom `repository` without `db` is not checked).
   *
   * - unset (the default): checked; a database that cannot be reached at `ready()` is a warning (the routes answer 503
   *   until it can), not a failure;
   * - `true`: checked, and `ready()` fails when the database cannot be reached too;
   * - `false`: not checked.
   */
  readonly checkDatabaseSchema?: boolean
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
  /**
   * How long, in milliseconds, a streamed collection (`page[size]=0`) waits for the client to take what was written
   * (default 30000). A stream is read through a cursor in a transaction that holds a database connection; a client
   * that stops reading would hold it for ever. Past the deadline the read stops, its transaction ends and the
   * connection goes back to the pool, and the response is cut off (the client sees a truncated body).
   */
  readonly streamTimeout?: number
  /**
   * The secret that signs the cursors of cursor pagination (HMAC-SHA256): a string or bytes of at least 32 bytes, or
   * a list of them (the first signs new cursors, every one is accepted: rotate by putting the new secret first). By
   * default a random key of the process (of this registration): cursors then stop working when the process restarts,
   * and one instance refuses the cursors of another. Give every instance of an application the same secret.
   */
  readonly cursorSecret?: string | Uint8Array | ReadonlyArray<string | Uint8Array>
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

/** Limits of `include`; beyond either, a request is a 400 naming `include`. */
export interface IncludeOptions {
  /** The most relationships in one include path, `a.b.c` being 3 (default 3). Also settable as `maxIncludeDepth`. */
  readonly maxDepth?: number
  /**
   * The most include paths in one request (default 10). Distinct paths count as written: a path given twice counts
   * once, `a` and `a.b` count as two.
   */
  readonly maxPaths?: number
  /**
   * The most related resources of one owner in a to-many step of an include path (default 10): each owner's page of
   * the relationship, in the related type's order by id, with `meta.count` and a `links.next` to the rest. A
   * resource's `pagination.includeSize` and a relationship's `includeSize` override it; a request sets it per path
   * with `page[<path>][size]`, up to the related type's maximum page size.
   */
  readonly pageSize?: number
}

/** Limits of `sort`; beyond either, a request is a 400 naming `sort`. */
export interface SortOptions {
  /** The most sort keys in one request (default 10). */
  readonly maxKeys?: number
  /** The most to-one relationship steps in one sort key, `owner.group.name` being 2 (default 3). */
  readonly maxDepth?: number
}

/** Limits of the filters; beyond either, a request is a 400 naming the parameter (`filter`, `filter[name]`). */
export interface FilterOptions {
  /**
   * The deepest nesting (default 8): each `and`/`or`/`not`, relationship filter (`any`/`has`) and relationship step
   * of a name (`computers.owner.name` two, `filter[group_id]` one) is a level; a top-level filter is at level 1.
   */
  readonly maxDepth?: number
  /**
   * The most filter nodes in one request (default 200): every filter object, every simple `filter[name]`, every
   * array of filters but the outermost (`[[…]]`, `{"and": [[…]]}`), and every element of an array in a value (each
   * value of an `in` list).
   */
  readonly maxNodes?: number
  /**
   * The most text-matching comparisons in one request (default 5): `match`, `like`, `notlike`, `ilike`, `notilike`,
   * `startswith` and `endswith`. Each reads the whole text of every row it is tried on (`match` builds its words,
   * `ilike` lowercases it), so they cost far more than the other nodes `maxNodes` counts.
   */
  readonly maxTextNodes?: number
}

/** How the plugin meets faults of the database. */
export interface DatabaseOptions {
  /**
   * How many times a write whose transaction failed with a serialization failure or a deadlock (`40001`, `40P01`)
   * is run again before the client gets a 503 (default 3; 0 turns retrying off). The database rolled the failed
   * attempt back, so nothing is applied twice; hooks run again with the new attempt.
   */
  readonly retries?: number
  /** The `Retry-After` (seconds) of a 503 for a database fault (default 1). */
  readonly retryAfter?: number
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

/**
 * The keys of every options object, checked at registration (an unknown key is a `JsonApiOptionsError`). Each list
 * must hold exactly the keys of its interface, or it does not compile.
 */
export const OPTION_KEYS = {
  options: keyList<JsonApiOptions>()([
    'db', 'readDb', 'repository', 'resources', 'context', 'baseUrl', 'pagination', 'include', 'sort', 'filter', 'operations',
    'maxIncludeDepth', 'maxDocumentLength', 'openapi', 'database', 'notFoundHandler', 'checkDatabaseSchema',
  ]),
  /** What Fastify's `register(plugin, options)` reads itself and leaves in the plugin's options. */
  fastify: keyList<RegisterOptions>()(['prefix', 'logLevel', 'logSerializers']),
  pagination: keyList<PaginationOptions>()(['defaultSize', 'maxSize', 'unpaged', 'streamTimeout', 'cursorSecret']),
  include: keyList<IncludeOptions>()(['maxDepth', 'maxPaths', 'pageSize']),
  sort: keyList<SortOptions>()(['maxKeys', 'maxDepth']),
  filter: keyList<FilterOptions>()(['maxDepth', 'maxNodes', 'maxTextNodes']),
  operations: keyList<OperationsOptions>()(['enabled', 'path', 'maxOperations']),
  openapi: keyList<OpenApiOptions>()(['errors']),
  database: keyList<DatabaseOptions>()(['retries', 'retryAfter']),
} as const
