import {
  CompiledQuery, PostgresAdapter, PostgresDialect,
  type DatabaseConnection, type DialectAdapter, type Driver, type PostgresCursorConstructor, type PostgresDialectConfig, type PostgresPool,
  type QueryResult, type TransactionSettings,
} from 'kysely'
import type { PoolClient } from 'pg'
import { prepareValueOrWarn, statementSender, type StatementSender } from './rows-query.js'
import { SINGLE_STATEMENTS, type SingleStatements } from './statement-runner.js'

/**
 * Kysely's PostgreSQL dialect on a `pg` pool (or PGlite's `node-postgres` pool), with the library's driver: every
 * statement Kysely runs — the repository's reads and writes, transactions, keyset pages, the cursor of a streamed
 * read, your own queries on the same instance — goes to `pg` as one query object that decodes its rows with a decoder
 * kept per statement text (see {@link RowsQuery}), and each connection is borrowed and given back with callbacks.
 * The SQL, the connections, the results (rows as pg's type parsers make them, `numAffectedRows`) and the errors are
 * those of Kysely's own `PostgresDialect`, which this extends: the adapter, the query compiler and the introspector
 * are Kysely's.
 *
 * `createPostgresDatabase` and `createEmbeddedDatabase` make their Kysely instance with it; give it to your own:
 *
 * ```ts
 * const db = new Kysely<DB>({ dialect: new JsonApiPostgresDialect({ pool: new pg.Pool({ connectionString }) }) })
 * ```
 *
 * Its adapter also offers the repository single statements outside transactions sent through the same driver
 * without Kysely's executor (see `statementRunnerOf`): a few microseconds less per statement. Not when the dialect
 * has `onCreateConnection` or `onReserveConnection` hooks: then every statement goes through Kysely, which runs them.
 *
 * A `pg` without the internals it relies on (`pg/lib/utils`'s `prepareValue`, a client's protocol connection), or a
 * client that pipelines or asks for binary results, gets pg's own `Query`, with a callback: the same answers.
 */
export class JsonApiPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig
  /** The driver made last: Kysely asks for the driver, then the adapter, when an instance is made. */
  #driver: JsonApiPostgresDriver | undefined

  constructor (config: PostgresDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver (): Driver {
    this.#driver = new JsonApiPostgresDriver(this.#config)
    return this.#driver
  }

  override createAdapter (): DialectAdapter {
    return new JsonApiPostgresAdapter(this.#driver)
  }
}

/** Kysely's PostgreSQL adapter, offering its driver's single statements to the repository. */
class JsonApiPostgresAdapter extends PostgresAdapter {
  readonly [SINGLE_STATEMENTS]: SingleStatements | undefined

  constructor (driver: JsonApiPostgresDriver | undefined) {
    super()
    this[SINGLE_STATEMENTS] = driver
  }
}

/** A `pg` client as the driver uses it: pg's own, or a stand-in (PGlite's) with the same `query` and `release`. */
type Client = PoolClient

/** What `releaseConnection` answers: giving a client back to the pool is synchronous. */
const RELEASED: Promise<void> = Promise.resolve()

/** The driver of {@link JsonApiPostgresDialect}: Kysely's `Driver` contract on a `pg` pool. */
class JsonApiPostgresDriver implements Driver, SingleStatements {
  readonly #config: PostgresDialectConfig
  readonly #connections = new WeakMap<Client, JsonApiPostgresConnection>()
  readonly #send: StatementSender = statementSender(prepareValueOrWarn())
  #pool: PostgresPool | undefined
  #destroyed = false
  readonly available: boolean

  constructor (config: PostgresDialectConfig) {
    this.#config = Object.freeze({ ...config })
    this.available = config.onCreateConnection === undefined && config.onReserveConnection === undefined
  }

  async init (): Promise<void> {
    const pool = this.#config.pool
    this.#pool = typeof pool === 'function' ? await pool() : pool
  }

  /**
   * One statement outside a transaction, with callbacks: a connection borrowed, the statement sent, the connection
   * given back (`release()` without the error, as `releaseConnection` does: a statement that failed, a unique
   * violation say, leaves its connection usable; one that broke is dropped by the pool itself). The first statement
   * on a connection Kysely has not met yet, and any statement before Kysely has initialised the driver, goes through
   * `viaKysely` instead, so that Kysely sets the connection up as it does for its own (its `log` option wraps the
   * connection's `executeQuery`, which a logged connection then runs here too: the same log events).
   */
  run (query: CompiledQuery, mapError: (error: unknown) => unknown, viaKysely: (query: CompiledQuery) => Promise<unknown[]>): Promise<unknown[]> {
    const pool = this.#pool
    if (pool === undefined) {
      if (this.#destroyed) return Promise.reject(mapError(new Error('driver has already been destroyed')))
      return viaKysely(query).catch((error: unknown) => { throw mapError(error) })
    }
    return new Promise((resolve, reject) => {
      try {
        (pool.connect as unknown as (callback: (error: Error | undefined, client: Client | undefined) => void) => void)((error, client) => {
          if (error !== undefined && error !== null) {
            reject(mapError(error))
            return
          }
          if (client === undefined) {
            reject(mapError(new Error('the pool gave no connection')))
            return
          }
          const connection = this.#connections.get(client)
          if (connection === undefined) {
            client.release()
            viaKysely(query).then(resolve, (failure: unknown) => { reject(mapError(failure)) })
          } else if (Object.hasOwn(connection, 'executeQuery')) {
            // Kysely's log wraps a connection's own `executeQuery` when it first meets it.
            connection.executeQuery(query).then((result) => {
              client.release()
              resolve(result.rows)
            }, (failure: unknown) => {
              client.release()
              reject(mapError(failure))
            })
          } else {
            // The sender answers once, so the connection is given back once.
            this.#send(client, query, (failure, rows) => {
              client.release()
              if (failure) reject(mapError(failure))
              else resolve(rows ?? [])
            })
          }
        })
      } catch (thrown) {
        // pg-pool answers through the callback; anything it throws is a failure of this statement too.
        reject(mapError(thrown))
      }
    })
  }

  /**
   * A connection of the pool, borrowed with pg-pool's callback form of `connect` (its promise form wraps it in one
   * more promise): one promise per checkout, two more only when the dialect has connection hooks.
   */
  acquireConnection (): Promise<DatabaseConnection> {
    const pool = this.#pool
    if (pool === undefined) return Promise.reject(new Error('driver has already been destroyed'))
    return new Promise((resolve, reject) => {
      (pool.connect as unknown as (callback: (error: Error | undefined, client: Client | undefined) => void) => void)((error, client) => {
        if (error !== undefined && error !== null) {
          reject(error)
        } else if (client === undefined) {
          reject(new Error('the pool gave no connection'))
        } else if (this.#pool === undefined) {
          // Destroyed while the connection was on its way.
          client.release()
          reject(new Error('driver has already been destroyed'))
        } else {
          const known = this.#connections.get(client)
          const connection = known ?? this.#connect(client)
          const { onCreateConnection, onReserveConnection } = this.#config
          if ((known !== undefined || onCreateConnection === undefined) && onReserveConnection === undefined) resolve(connection)
          else resolve(this.#hooks(connection, known === undefined))
        }
      })
    })
  }

  #connect (client: Client): JsonApiPostgresConnection {
    const connection = new JsonApiPostgresConnection(client, this.#config.cursor ?? null, this.#send)
    this.#connections.set(client, connection)
    return connection
  }

  /**
   * The dialect's hooks: pg has none for a new connection, so `onCreateConnection` runs when a client is first seen.
   * A hook that fails gives the client back to the pool (Kysely never receives the connection, so never releases it),
   * and a client whose `onCreateConnection` failed is met as a new one the next time.
   */
  async #hooks (connection: JsonApiPostgresConnection, created: boolean): Promise<DatabaseConnection> {
    try {
      if (created && this.#config.onCreateConnection !== undefined) await this.#config.onCreateConnection(connection)
      if (this.#config.onReserveConnection !== undefined) await this.#config.onReserveConnection(connection)
    } catch (error) {
      if (created) this.#connections.delete(connection.client)
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
    await connection.executeQuery(CompiledQuery.raw(characteristics.length === 0 ? 'begin' : `start transaction ${characteristics.join(' ')}`))
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
    await connection.executeQuery(savepointQuery('release', name))
  }

  releaseConnection (connection: DatabaseConnection): Promise<void> {
    (connection as JsonApiPostgresConnection).release()
    return RELEASED
  }

  async destroy (): Promise<void> {
    const pool = this.#pool
    this.#destroyed = true
    if (pool === undefined) return
    this.#pool = undefined
    await pool.end()
  }
}

/** `savepoint <name>`, `rollback to <name>`, `release <name>`: the name quoted as PostgreSQL quotes an identifier. */
function savepointQuery (command: 'savepoint' | 'rollback to' | 'release', name: string): CompiledQuery {
  return CompiledQuery.raw(`${command} "${name.replace(/"/g, '""')}"`)
}

/** The commands whose tag counts the rows they changed (`UPDATE 3`, `INSERT 0 3`): `numAffectedRows`. */
const COUNTED = /^(?:INSERT \d+|UPDATE|DELETE|MERGE) (\d+)$/

/** Kysely's result of a statement: its rows, and for a write the rows it changed (as Kysely's own driver answers). */
function resultOf<R> (rows: unknown[] | undefined, tag: string | undefined): QueryResult<R> {
  // Only a tag that starts as a counted command does (I, U, D, M): a read's tag is not matched at all.
  const first = tag === undefined ? 0 : tag.charCodeAt(0)
  const counted = first === 73 || first === 85 || first === 68 || first === 77 ? COUNTED.exec(tag as string) : null
  return counted === null ? { rows: (rows ?? []) as R[] } : { rows: (rows ?? []) as R[], numAffectedRows: BigInt(counted[1]) }
}

/** One `pg` client as a Kysely `DatabaseConnection`. */
class JsonApiPostgresConnection implements DatabaseConnection {
  readonly #client: Client
  readonly #cursor: PostgresCursorConstructor | null
  readonly #send: StatementSender

  constructor (client: Client, cursor: PostgresCursorConstructor | null, send: StatementSender) {
    this.#client = client
    this.#cursor = cursor
    this.#send = send
  }

  executeQuery<R> (query: CompiledQuery): Promise<QueryResult<R>> {
    return new Promise((resolve, reject) => {
      this.#send(this.#client, query, (failure, rows, tag) => {
        if (failure) reject(failure)
        else resolve(resultOf<R>(rows, tag))
      })
    })
  }

  async * streamQuery<R> (query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.#cursor === null) throw new Error('a stream needs the `cursor` option of the dialect (pg-cursor)')
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer')
    const cursor = this.#client.query(new this.#cursor(query.sql, [...query.parameters]) as never) as unknown as { read (rows: number): Promise<R[]>, close (): Promise<void> }
    try {
      for (;;) {
        const rows = await cursor.read(chunkSize)
        if (rows.length === 0) break
        yield { rows }
      }
    } finally {
      await cursor.close()
    }
  }

  /** The `pg` client this connection runs on. */
  get client (): Client {
    return this.#client
  }

  release (): void {
    this.#client.release()
  }
}
