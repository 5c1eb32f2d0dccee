import { Kysely, type KyselyConfig, type MysqlPool, type MysqlPoolConnection } from 'kysely'
import { JsonApiMysqlDialect } from './mysql-driver.js'

/** Options of {@link createMysqlDatabase}. */
export interface MysqlDatabaseOptions {
  /** The server: `mysql://user:password@host:3306/database`. Or give the pieces in `pool`. */
  readonly uri?: string
  /**
   * The longest a statement may run, in milliseconds (MariaDB's `max_statement_time`, MySQL's `max_execution_time`
   * for reads, set on every connection of the pool); past it the server stops the statement and the request is
   * answered 503. Default: none.
   */
  readonly statementTimeout?: number
  /**
   * The longest a request waits for a connection of the pool, in milliseconds (default 5000), and the longest a new
   * connection may take to open; then the request is answered 503 instead of waiting while the server is
   * unreachable or the pool exhausted.
   */
  readonly connectionTimeout?: number
  /** Any other `mysql2` pool option (`connectionLimit`, `ssl`, `host`, `user` …). */
  readonly pool?: Record<string, unknown>
  /**
   * Called with an error of a connection that no request was using (an idle connection the server closed, a network
   * failure): the pool drops it and opens another when it needs one. Default: a process warning. Never rethrow here.
   */
  readonly onConnectionError?: (error: Error) => void
  /** Passed to Kysely (e.g. `log`). */
  readonly log?: KyselyConfig['log']
}

/** A MariaDB/MySQL database: the Kysely instance, and a function that closes its pool. */
export interface MysqlDatabase<DB> {
  readonly db: Kysely<DB>
  /** Waits for the pool's connections to be released, then closes them (safe to call twice). */
  readonly close: () => Promise<void>
}

interface Mysql2Pool extends MysqlPool {
  on: (event: 'connection', listener: (connection: Mysql2Connection) => void) => void
}

interface Mysql2Connection {
  on: (event: 'error', listener: (error: Error) => void) => void
  query: (sql: string, values: unknown[], callback: (error: (Error & { errno?: number }) | null) => void) => void
}

function warn (error: Error): void {
  process.emitWarning(`fastify-jsonapi: a MariaDB/MySQL connection failed and was dropped: ${error.message}`, { code: 'FJA_DATABASE_CONNECTION' })
}

/** A request for a connection, answered once: by the pool, or by the timeout. */
interface Wait {
  readonly since: number
  readonly callback: (error: NodeJS.ErrnoException | null, connection: MysqlPoolConnection) => void
}

/**
 * A pool whose `getConnection` gives up after `timeout` ms with an error the repository reads as "unavailable"
 * (`mysql2` waits for a free connection for ever). A connection that arrives after that goes back to the pool. The
 * requests that wait are kept in the order they came, and one timer, armed for the oldest, answers those whose time
 * is up: no timer per request.
 */
function timedPool (pool: MysqlPool, timeout: number): MysqlPool {
  const waits = new Set<Wait>()
  let timer: NodeJS.Timeout | undefined
  const expire = (): void => {
    timer = undefined
    const now = performance.now()
    for (const wait of waits) {
      const left = wait.since + timeout - now
      if (left > 0) {
        timer = setTimeout(expire, Math.ceil(left))
        break
      }
      waits.delete(wait)
      const error = Object.assign(new Error(`fastify-jsonapi: no MariaDB/MySQL connection within ${timeout} ms`), { code: 'FJA_CONNECTION_TIMEOUT' })
      wait.callback(error, undefined as unknown as MysqlPoolConnection)
    }
  }
  return {
    getConnection (callback) {
      const wait: Wait = { since: performance.now(), callback }
      waits.add(wait)
      timer ??= setTimeout(expire, timeout)
      pool.getConnection((error, connection) => {
        if (!waits.delete(wait)) {
          if (error === null || error === undefined) connection.release()
          return
        }
        callback(error, connection)
      })
    },
    end: (callback) => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      pool.end(callback)
    },
  }
}

/**
 * Creates a Kysely instance on MariaDB (10.6 or newer) or MySQL (8.0 or newer) through a `mysql2` pool (an optional
 * peer dependency: `npm install mysql2`), set up as the library needs it:
 *
 * - values come back as they do from PostgreSQL: `bigint` and `decimal` as exact strings (`supportBigNumbers`,
 *   `bigNumberStrings`), `date` as `YYYY-MM-DD` (`dateStrings: ['DATE']`), date-times in UTC (`timezone: 'Z'`), JSON
 *   as its text (`jsonStrings`), text in `utf8mb4` (every Unicode character, 4-byte ones too);
 * - an `UPDATE` counts the rows it matched, not only those it changed (`mysql2`'s default `FOUND_ROWS` flag, which
 *   the repository relies on: keep it in a pool of your own);
 * - Kysely's `insertInto(…).returning(…).execute()` gives the rows MariaDB returns (Kysely's own MySQL dialect
 *   drops them: MySQL has no RETURNING): the instance runs on {@link JsonApiMysqlDialect};
 * - a connection that fails while idle never crashes the process (`onConnectionError`), a request waits at most
 *   `connectionTimeout` ms for a connection, and statements stop after `statementTimeout` ms.
 *
 * @example
 * ```ts
 * const { db, close } = await createMysqlDatabase<DB>({ uri: 'mysql://app@127.0.0.1:3306/app' })
 * await app.register(jsonApi, { db, resources })
 * app.addHook('onClose', close)
 * ```
 */
export async function createMysqlDatabase<DB = any> (options: MysqlDatabaseOptions = {}): Promise<MysqlDatabase<DB>> {
  let createPool: (config: Record<string, unknown>) => Mysql2Pool
  try {
    const imported = await import('mysql2') as unknown as { createPool?: unknown, default?: { createPool?: unknown } }
    createPool = (imported.createPool ?? imported.default?.createPool) as typeof createPool
  } catch (error) {
    throw new Error('fastify-jsonapi: createMysqlDatabase needs the package mysql2 (npm install mysql2)', { cause: error })
  }
  const { connectionTimeout = 5000, statementTimeout, onConnectionError = warn } = options
  const pool = createPool({
    ...(options.uri === undefined ? {} : { uri: options.uri }),
    connectTimeout: connectionTimeout,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: ['DATE'],
    // JSON as its text, which the repository parses: mysql2 would parse a \`json\` column itself, and a JSON string
    // value ("hello") would then be indistinguishable from the text of a column that holds JSON.
    jsonStrings: true,
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    ...options.pool,
  })
  pool.on('connection', (connection) => {
    // mysql2 listens for one error of a pooled connection; a second one, unheard, would end the process.
    connection.on('error', onConnectionError)
    if (statementTimeout !== undefined && statementTimeout > 0) {
      connection.query('set session max_statement_time = ?', [statementTimeout / 1000], (error) => {
        if (error?.errno === 1193) connection.query('set session max_execution_time = ?', [Math.ceil(statementTimeout)], () => {})
      })
    }
  })
  const db = new Kysely<DB>({ dialect: new JsonApiMysqlDialect({ pool: timedPool(pool, connectionTimeout) }), log: options.log })
  let closed: Promise<void> | undefined
  return {
    db,
    close: () => (closed ??= db.destroy()),
  }
}
