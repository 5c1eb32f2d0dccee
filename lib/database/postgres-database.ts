import { Kysely, type KyselyConfig } from 'kysely'
import type { ClientBase, Pool, PoolClient, PoolConfig } from 'pg'
import { JsonApiPostgresDialect } from './postgres-driver.js'

/** Options of {@link createPostgresDatabase}. */
export interface PostgresDatabaseOptions {
  /** The server: `postgres://user:password@host:5432/database`. Or give the pieces in `pool`. */
  readonly connectionString?: string
  /**
   * The longest a statement may run, in milliseconds (PostgreSQL's `statement_timeout`, set on every connection of
   * the pool); a statement that runs longer is cancelled by the server and the request answered 503. Default: none.
   */
  readonly statementTimeout?: number
  /**
   * The longest a request waits for a connection of the pool, in milliseconds (default 5000); then the request is
   * answered 503 instead of waiting for ever while the database is unreachable or the pool exhausted.
   */
  readonly connectionTimeout?: number
  /** Any other `pg.Pool` option (`max`, `ssl`, `host`, `user`, `application_name` …). */
  readonly pool?: PoolConfig
  /**
   * Called with an error of a connection that no request was using at the time (an idle connection the server
   * terminated, a network failure): the connection is dropped and the pool opens a new one when it needs one.
   * Default: a process warning. Never rethrow here: it is an event listener.
   */
  readonly onConnectionError?: (error: Error) => void
  /** Passed to Kysely (e.g. `log`). */
  readonly log?: KyselyConfig['log']
}

/** A PostgreSQL database: the Kysely instance, its `pg` pool, and a function that closes them. */
export interface PostgresDatabase<DB> {
  readonly db: Kysely<DB>
  readonly pool: Pool
  /** Waits for the pool's connections to be released, then closes them (safe to call twice). */
  readonly close: () => Promise<void>
}

function warn (error: Error): void {
  process.emitWarning(`fastify-jsonapi: a PostgreSQL connection failed and was dropped: ${error.message}`, { code: 'FJA_DATABASE_CONNECTION' })
}

/** A `pg` client class: `pg.Client`, or a subclass of it (what `pg.Pool` takes as its `Client`). */
export type PgClientClass = new (...args: any[]) => ClientBase

/** What marks a class `withCallbackQueries` made: wrapping it again returns it as it is. */
const CALLBACK_QUERIES: unique symbol = Symbol.for('fastify-jsonapi.callbackQueries')

/**
 * A subclass of a `pg` client class whose promise queries given as text (`client.query(text, values)` without a
 * callback, the way Kysely's `PostgresDialect` calls it) are built with their callback, as `pool.query` builds them;
 * the answer is the same promise of the same result, and an error is rejected with the same stack trace pg gives it.
 * Every other call (a config object, a callback, a cursor) goes to pg's own `query` as it is.
 *
 * Why: `pg` builds a promise query's `Query` object first and sets its callback afterwards. On Node 20, the results
 * of queries built that way outlive the young generation: with pages of 20 users, the server promoted about 1 MB
 * into the old generation per young collection, and each young collection cost 5× as long as it did with the same
 * queries built with their callback. That was 30–40 µs of garbage collection per request, a tenth of the CPU of a
 * list request (measured: `docs/performance.md`, "Where the CPU goes"). {@link createPostgresDatabase} uses it;
 * pass it to a pool of your own as its `Client`:
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * const pool = new pg.Pool({ connectionString, Client: withCallbackQueries(pg.Client) })
 * const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
 * ```
 */
export function withCallbackQueries<C extends PgClientClass> (Base: C): C {
  if (typeof Base !== 'function' || typeof (Base.prototype as Partial<ClientBase> | undefined)?.query !== 'function') {
    throw new TypeError('fastify-jsonapi: `withCallbackQueries` takes a pg client class (pg.Client)')
  }
  if ((Base as unknown as Record<symbol, unknown>)[CALLBACK_QUERIES] === true) return Base
  // A class with its own `query`: typed loosely, as pg's overloads are many; every call it does not handle goes to
  // pg's own `query` as it is.
  const Derived = class extends (Base as unknown as new (...args: any[]) => LooseClient) {
    static readonly [CALLBACK_QUERIES] = true

    override query (config: unknown, values?: unknown, callback?: unknown): unknown {
      // Only a query given as text: pg would write the callback into a config object, which its caller may reuse.
      if (typeof config !== 'string' || callback !== undefined || typeof values === 'function') return super.query(config, values, callback)
      return new Promise((resolve, reject) => {
        super.query(config, values, (error: Error | null, result: unknown) => { if (error) reject(error); else resolve(result) })
      }).catch((error: unknown) => {
        // As pg does: a stack trace that leads back to the application, not to the socket that read the answer.
        if (error instanceof Error) Error.captureStackTrace(error)
        throw error
      })
    }
  }
  Object.defineProperty(Derived, 'name', { value: Base.name })
  return Derived as unknown as C
}

/** A client with pg's `query`, typed loosely. */
interface LooseClient {
  query (config: unknown, values?: unknown, callback?: unknown): unknown
}

type PoolClass = typeof Pool

/**
 * A subclass of pg's `Pool` whose connection timeout arms a timer only for a checkout that may have to wait.
 *
 * pg-pool arms one (`setTimeout`, `unref`, `clearTimeout` at the checkout) for every checkout of a pool with a
 * `connectionTimeoutMillis`, even when an idle connection is certain to be handed over on the next tick: when there
 * are more idle connections than checkouts waiting, as there are for nearly every statement of a pool that is not
 * exhausted. That timer cost about 6 µs of CPU per `POST /computers` of the benchmark (one statement): a third of
 * what the create then cost over the plain `pg` reference (`docs/performance.md`, eighth round). Such a checkout is
 * queued as pg-pool queues it without a timeout, so it is served first on the next tick; every other checkout (a
 * pool exhausted, a connection to open) keeps its timer, and still fails after `connectionTimeoutMillis`.
 *
 * `end` waits one tick before it ends the pool: a checkout queued without a timer is then served (and its
 * connection waited for) instead of being left in the queue of an ended pool for ever.
 */
function withTimersOnlyWhenWaiting (Base: PoolClass): PoolClass {
  const Derived = class extends Base {
    override connect (...args: any[]): any {
      const options = this.options
      const timeout = options.connectionTimeoutMillis
      if (timeout === undefined || timeout === 0 || this.idleCount <= this.waitingCount) return (super.connect as (...all: any[]) => unknown)(...args)
      // pg-pool reads the option only while it queues the checkout, synchronously.
      options.connectionTimeoutMillis = 0
      try {
        return (super.connect as (...all: any[]) => unknown)(...args)
      } finally {
        options.connectionTimeoutMillis = timeout
      }
    }

    override end (...args: any[]): any {
      const ended = new Promise<void>((resolve) => { process.nextTick(resolve) }).then(() => super.end())
      const callback = args[0] as ((error?: Error) => void) | undefined
      if (typeof callback !== 'function') return ended
      ended.then(() => { callback() }, callback)
      return undefined
    }
  }
  Object.defineProperty(Derived, 'name', { value: Base.name })
  return Derived
}

/**
 * Creates a Kysely instance on a `pg` pool made to survive a bad day of the database:
 * - the pool and every one of its connections listen for `error`, so a connection the server terminates (a failover,
 *   a restart, `pg_terminate_backend`, an idle timeout of a proxy) never crashes the process with an unhandled
 *   `error` event: the connection is dropped and the next request opens a new one;
 * - a request waits for a connection at most `connectionTimeout` ms (then 503), and a statement runs at most
 *   `statementTimeout` ms when it is set (then 503).
 *
 * A pool of your own needs the same listeners: `pool.on('error', …)` and
 * `pool.on('connect', (client) => client.on('error', …))` (see docs/production.md).
 *
 * @example
 * ```ts
 * const { db, close } = await createPostgresDatabase<DB>({ connectionString: process.env.DATABASE_URL, statementTimeout: 5000 })
 * await app.register(jsonApi, { db, resources })
 * app.addHook('onClose', close)
 * ```
 */
export async function createPostgresDatabase<DB = any>(options: PostgresDatabaseOptions = {}): Promise<PostgresDatabase<DB>> {
  const { statementTimeout, connectionTimeout = 5000 } = options
  for (const [name, value] of [['statementTimeout', statementTimeout], ['connectionTimeout', connectionTimeout]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new TypeError(`fastify-jsonapi: \`${name}\` must be a non-negative integer (milliseconds)`)
  }
  const pg = (await import('pg')).default
  const onError = options.onConnectionError ?? warn
  const pool = new (withTimersOnlyWhenWaiting(pg.Pool))({
    connectionTimeoutMillis: connectionTimeout,
    ...options.pool,
    Client: withCallbackQueries(options.pool?.Client ?? pg.Client),
    ...(options.connectionString === undefined ? {} : { connectionString: options.connectionString }),
    ...(statementTimeout === undefined ? {} : { statement_timeout: statementTimeout }),
  })
  // Every connection reports its own errors, idle or held by a request (between the statements of a transaction,
  // where the request's next statement then fails). The pool re-emits an idle connection's error: without a
  // listener that would be an unhandled `error` event; the connection's own listener has reported it already.
  pool.on('connect', (client: PoolClient) => {
    client.on('error', (error) => { onError(error) })
  })
  pool.on('error', () => {})
  const db = new Kysely<DB>({ dialect: new JsonApiPostgresDialect({ pool }), log: options.log })
  let closing: Promise<void> | undefined
  return {
    db,
    pool,
    close () {
      // Kysely ends the pool only when it has initialised its driver: a pool that no statement used stays open
      // otherwise (and keeps the process alive for its idle timeout).
      closing ??= db.destroy().then(() => pool.ending ? undefined : pool.end())
      return closing
    },
  }
}
