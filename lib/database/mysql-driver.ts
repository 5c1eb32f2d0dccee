import {
  CompiledQuery, MysqlAdapter, MysqlDialect,
  type DatabaseConnection, type DialectAdapter, type Driver, type MysqlDialectConfig, type MysqlPool,
  type QueryResult, type TransactionSettings,
} from 'kysely'
import { SINGLE_STATEMENTS, type SingleStatements } from './statement-runner.js'

/**
 * Kysely's MySQL dialect on a `mysql2` pool, with the library's driver and an adapter that says the engine has
 * `RETURNING` (MariaDB's `INSERT … RETURNING` and `DELETE … RETURNING`: Kysely's own MySQL dialect drops the rows a
 * statement returns, MySQL having none). The SQL, the connections, the results (`rows`, `insertId`,
 * `numAffectedRows`, `numChangedRows`) and the errors are those of Kysely's `MysqlDialect`, which this extends: the
 * query compiler and the introspector are Kysely's.
 *
 * `createMysqlDatabase` makes its Kysely instance with it; give it to your own (on MariaDB 10.6 or newer):
 *
 * ```ts
 * const db = new Kysely<DB>({ dialect: new JsonApiMysqlDialect({ pool: mysql2.createPool({ uri }) }) })
 * ```
 *
 * Its adapter also offers the repository single statements outside transactions sent through the same driver
 * without Kysely's executor (see `statementRunnerOf`): a connection borrowed, the statement, the connection given
 * back, with callbacks. Not when the dialect has `onCreateConnection` or `onReserveConnection` hooks: then every
 * statement goes through Kysely, which runs them.
 */
export class JsonApiMysqlDialect extends MysqlDialect {
  readonly #config: MysqlDialectConfig
  /** The driver made last: Kysely asks for the driver, then the adapter, when an instance is made. */
  #driver: JsonApiMysqlDriver | undefined

  constructor (config: MysqlDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver (): Driver {
    this.#driver = new JsonApiMysqlDriver(this.#config)
    return this.#driver
  }

  override createAdapter (): DialectAdapter {
    return new JsonApiMysqlAdapter(this.#driver)
  }
}

/** Kysely's MySQL adapter, saying the engine has RETURNING, and offering its driver's single statements. */
class JsonApiMysqlAdapter extends MysqlAdapter {
  readonly [SINGLE_STATEMENTS]: SingleStatements | undefined

  constructor (driver: JsonApiMysqlDriver | undefined) {
    super()
    this[SINGLE_STATEMENTS] = driver
  }

  override get supportsReturning (): boolean {
    return true
  }
}

/** A `mysql2` pool connection as the driver uses it. */
interface RawConnection {
  query (sql: string, parameters: readonly unknown[], callback: (error: unknown, result: unknown) => void): void
  query (sql: string, parameters: readonly unknown[]): { stream: (options: { objectMode: true }) => AsyncIterable<unknown> }
  release (): void
}

/** The pool's callback form of `getConnection`, with the connection as the driver uses it. */
type GetConnection = (callback: (error: unknown, connection: RawConnection | undefined) => void) => void

/** The driver of {@link JsonApiMysqlDialect}: Kysely's `Driver` contract on a `mysql2` pool. */
class JsonApiMysqlDriver implements Driver, SingleStatements {
  readonly #config: MysqlDialectConfig
  readonly #connections = new WeakMap<RawConnection, JsonApiMysqlConnection>()
  #pool: MysqlPool | undefined
  #destroyed = false
  readonly available: boolean

  constructor (config: MysqlDialectConfig) {
    this.#config = Object.freeze({ ...config })
    this.available = config.onCreateConnection === undefined && config.onReserveConnection === undefined
  }

  async init (): Promise<void> {
    const pool = this.#config.pool
    this.#pool = typeof pool === 'function' ? await pool() : pool
  }

  /**
   * One statement outside a transaction, with callbacks: a connection borrowed, the statement sent, the connection
   * given back whatever happened (a connection that broke is dropped by the pool itself). A connection Kysely has
   * not met yet, and any statement before Kysely has initialised the driver, goes through `viaKysely` instead, so
   * that Kysely sets the connection up as it does for its own (its `log` option wraps the connection's
   * `executeQuery`, which a logged connection then runs here too: the same log events).
   */
  run (query: CompiledQuery, mapError: (error: unknown) => unknown, viaKysely: (query: CompiledQuery) => Promise<unknown[]>): Promise<unknown[]> {
    const pool = this.#pool
    if (pool === undefined) {
      if (this.#destroyed) return Promise.reject(mapError(new Error('driver has already been destroyed')))
      return viaKysely(query).catch((error: unknown) => { throw mapError(error) })
    }
    return new Promise((resolve, reject) => {
      try {
        (pool.getConnection as unknown as GetConnection)((error, raw) => {
          if (error !== undefined && error !== null) {
            reject(mapError(error))
            return
          }
          if (raw === undefined) {
            reject(mapError(new Error('the pool gave no connection')))
            return
          }
          const connection = this.#connections.get(raw)
          if (connection === undefined) {
            raw.release()
            viaKysely(query).then(resolve, (failure: unknown) => { reject(mapError(failure)) })
          } else if (Object.hasOwn(connection, 'executeQuery')) {
            // Kysely's log wraps a connection's own `executeQuery` when it first meets it.
            connection.executeQuery(query).then((result) => {
              raw.release()
              resolve(result.rows)
            }, (failure: unknown) => {
              raw.release()
              reject(mapError(failure))
            })
          } else {
            raw.query(query.sql, query.parameters, (failure, result) => {
              raw.release()
              if (failure !== undefined && failure !== null) reject(mapError(failure))
              else resolve(Array.isArray(result) ? result : [])
            })
          }
        })
      } catch (thrown) {
        reject(mapError(thrown))
      }
    })
  }

  acquireConnection (): Promise<DatabaseConnection> {
    const pool = this.#pool
    if (pool === undefined) return Promise.reject(new Error('driver has already been destroyed'))
    return new Promise((resolve, reject) => {
      (pool.getConnection as unknown as GetConnection)((error, raw) => {
        if (error !== undefined && error !== null) {
          reject(error)
        } else if (raw === undefined) {
          reject(new Error('the pool gave no connection'))
        } else if (this.#pool === undefined) {
          // Destroyed while the connection was on its way.
          raw.release()
          reject(new Error('driver has already been destroyed'))
        } else {
          const known = this.#connections.get(raw)
          const connection = known ?? new JsonApiMysqlConnection(raw)
          if (known === undefined) this.#connections.set(raw, connection)
          const { onCreateConnection, onReserveConnection } = this.#config
          if ((known !== undefined || onCreateConnection === undefined) && onReserveConnection === undefined) resolve(connection)
          else resolve(this.#hooks(connection, known === undefined))
        }
      })
    })
  }

  /**
   * The dialect's hooks: `mysql2` has no asynchronous one for a new connection, so `onCreateConnection` runs when a
   * connection is first seen. A hook that fails gives the connection back to the pool (Kysely never receives it, so
   * never releases it), and a connection whose `onCreateConnection` failed is met as a new one the next time.
   */
  async #hooks (connection: JsonApiMysqlConnection, created: boolean): Promise<DatabaseConnection> {
    try {
      if (created && this.#config.onCreateConnection !== undefined) await this.#config.onCreateConnection(connection)
      if (this.#config.onReserveConnection !== undefined) await this.#config.onReserveConnection(connection)
    } catch (error) {
      if (created) this.#connections.delete(connection.raw)
      connection.release()
      throw error
    }
    return connection
  }

  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const characteristics = [
      ...(settings.isolationLevel === undefined ? [] : [`isolation level ${settings.isolationLevel}`]),
      ...(settings.accessMode === undefined ? [] : [settings.accessMode]),
    ]
    // MySQL's `set transaction` sets the characteristics of the next transaction of the session.
    if (characteristics.length > 0) await connection.executeQuery(CompiledQuery.raw(`set transaction ${characteristics.join(', ')}`))
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }

  async commitTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async savepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(savepointQuery('savepoint', name))
  }

  async rollbackToSavepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(savepointQuery('rollback to', name))
  }

  async releaseSavepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(savepointQuery('release savepoint', name))
  }

  async releaseConnection (connection: DatabaseConnection): Promise<void> {
    (connection as JsonApiMysqlConnection).release()
  }

  async destroy (): Promise<void> {
    const pool = this.#pool
    this.#destroyed = true
    if (pool === undefined) return
    this.#pool = undefined
    await new Promise<void>((resolve, reject) => {
      pool.end((error) => { if (error !== undefined && error !== null) reject(error); else resolve() })
    })
  }
}

/** `savepoint <name>` and the others: the name quoted as MySQL quotes an identifier. */
function savepointQuery (command: 'savepoint' | 'rollback to' | 'release savepoint', name: string): CompiledQuery {
  return CompiledQuery.raw(`${command} \`${name.replace(/`/g, '``')}\``)
}

/** What `mysql2` answers for a statement that returns no rows. */
interface ResultHeader {
  readonly insertId?: number | string | bigint | null
  readonly affectedRows?: number | string | bigint | null
  readonly changedRows?: number | string | bigint | null
}

/** Kysely's result of a statement: the rows of one that answers rows, what a write changed otherwise. */
function resultOf<R> (result: unknown): QueryResult<R> {
  if (Array.isArray(result)) return { rows: result as R[] }
  if (typeof result !== 'object' || result === null || !('insertId' in result) || !('affectedRows' in result)) return { rows: [] }
  const { insertId, affectedRows, changedRows } = result as ResultHeader
  return {
    rows: [],
    insertId: insertId === undefined || insertId === null || String(insertId) === '0' ? undefined : BigInt(insertId),
    numAffectedRows: affectedRows === undefined || affectedRows === null ? undefined : BigInt(affectedRows),
    numChangedRows: changedRows === undefined || changedRows === null ? undefined : BigInt(changedRows),
  }
}

/** One `mysql2` pool connection as a Kysely `DatabaseConnection`. */
class JsonApiMysqlConnection implements DatabaseConnection {
  readonly raw: RawConnection

  constructor (raw: RawConnection) {
    this.raw = raw
  }

  executeQuery<R> (query: CompiledQuery): Promise<QueryResult<R>> {
    return new Promise((resolve, reject) => {
      this.raw.query(query.sql, query.parameters, (error, result) => {
        if (error !== undefined && error !== null) reject(error)
        else resolve(resultOf<R>(result))
      })
    })
  }

  /** The rows of a statement, `chunkSize` at a time, as `mysql2` streams them. */
  async * streamQuery<R> (query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer')
    const stream = this.raw.query(query.sql, query.parameters).stream({ objectMode: true })
    let rows: R[] = []
    try {
      for await (const row of stream) {
        rows.push(row as R)
        if (rows.length === chunkSize) {
          yield { rows }
          rows = []
        }
      }
    } catch (error) {
      // A stream the reader left early ends with this error: not a failure of the statement.
      if ((error as { code?: unknown } | null)?.code === 'ERR_STREAM_PREMATURE_CLOSE') return
      throw error
    }
    if (rows.length > 0) yield { rows }
  }

  release (): void {
    this.raw.release()
  }
}
