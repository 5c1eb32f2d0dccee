import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import type { Pool, PoolClient, PoolConfig } from 'pg'

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
  const pool = new pg.Pool({
    connectionTimeoutMillis: connectionTimeout,
    ...options.pool,
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
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: options.log })
  let closing: Promise<void> | undefined
  return {
    db,
    pool,
    close () {
      closing ??= db.destroy()
      return closing
    },
  }
}
