import type { CompiledQuery, DatabaseConnection, Driver, TransactionSettings } from 'kysely'
import type { SingleStatements } from './statement-runner.js'
import { TransactionStatements, type SavepointSyntax } from './transaction-statements.js'

/** The hooks Kysely's dialect configurations take for a connection (`PostgresDialectConfig`, `MysqlDialectConfig`). */
export interface ConnectionHooks {
  readonly onCreateConnection?: (connection: DatabaseConnection) => Promise<void>
  readonly onReserveConnection?: (connection: DatabaseConnection) => Promise<void>
}

/** A client of a pool, with a callback: an error, or the client. */
export type Borrowed<Client> = (error: unknown, client: Client | undefined) => void

/** A connection of a {@link PooledDriver}: the pool's client it runs on, and the way to give that client back. */
export interface PooledConnection<Client> extends DatabaseConnection {
  readonly client: Client
  release (): void
}

/**
 * What the library's drivers on a pool share (`JsonApiPostgresDriver` on `pg`, `JsonApiMysqlDriver` on `mysql2`):
 * Kysely's `Driver` contract with one connection object per client of the pool, borrowed and given back with
 * callbacks, the dialect's connection hooks, and single statements outside transactions without Kysely's executor
 * (see `statementRunnerOf`). A driver says how its pool lends a client, how a statement is sent on one, and the SQL of
 * its transactions.
 */
export abstract class PooledDriver<Client, Pool, Connection extends PooledConnection<Client>> extends TransactionStatements implements Driver, SingleStatements {
  readonly #hooks: ConnectionHooks
  readonly #pool: Pool | (() => Promise<Pool>)
  readonly #connections = new WeakMap<object, Connection>()
  #ready: Pool | undefined
  #destroyed = false
  readonly available: boolean

  constructor (pool: Pool | (() => Promise<Pool>), hooks: ConnectionHooks, syntax: SavepointSyntax) {
    super(syntax)
    this.#pool = pool
    this.#hooks = { onCreateConnection: hooks.onCreateConnection, onReserveConnection: hooks.onReserveConnection }
    this.available = hooks.onCreateConnection === undefined && hooks.onReserveConnection === undefined
  }

  /** Lends a client of the pool, through `borrowed`. */
  protected abstract borrow (pool: Pool, borrowed: Borrowed<Client>): void
  /** Gives a client back to the pool. */
  protected abstract giveBack (client: Client): void
  /** Sends one statement on a client, answering its rows once. */
  protected abstract send (client: Client, query: CompiledQuery, answer: (error: unknown, rows: unknown[] | undefined) => void): void
  /** The connection object of a client the driver meets for the first time. */
  protected abstract connect (client: Client): Connection
  /** Ends the pool. */
  protected abstract end (pool: Pool): Promise<void>
  abstract beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void>

  async init (): Promise<void> {
    const pool = this.#pool
    this.#ready = typeof pool === 'function' ? await (pool as () => Promise<Pool>)() : pool
  }

  /**
   * One statement outside a transaction, with callbacks: a client borrowed, the statement sent, the client given
   * back whatever happened (a statement that failed, a unique violation say, leaves its client usable; one that broke
   * is dropped by the pool itself). The first statement on a client Kysely has not met yet, and any statement before
   * Kysely has initialised the driver, goes through `viaKysely` instead, so that Kysely sets the connection up as it
   * does for its own (its `log` option wraps the connection's `executeQuery`, which a logged connection then runs
   * here too: the same log events).
   */
  run (query: CompiledQuery, mapError: (error: unknown) => unknown, viaKysely: (query: CompiledQuery) => Promise<unknown[]>): Promise<unknown[]> {
    const pool = this.#ready
    if (pool === undefined) {
      if (this.#destroyed) return Promise.reject(mapError(new Error('driver has already been destroyed')))
      return viaKysely(query).catch((error: unknown) => { throw mapError(error) })
    }
    return new Promise((resolve, reject) => {
      try {
        this.borrow(pool, (error, client) => {
          if (error !== undefined && error !== null) {
            reject(mapError(error))
            return
          }
          if (client === undefined || client === null) {
            reject(mapError(new Error('the pool gave no connection')))
            return
          }
          const connection = this.#connections.get(client as object)
          if (connection === undefined) {
            this.giveBack(client)
            viaKysely(query).then(resolve, (failure: unknown) => { reject(mapError(failure)) })
          } else if (Object.hasOwn(connection, 'executeQuery')) {
            // Kysely's log wraps a connection's own `executeQuery` when it first meets it.
            connection.executeQuery(query).then((result) => {
              this.giveBack(client)
              resolve(result.rows)
            }, (failure: unknown) => {
              this.giveBack(client)
              reject(mapError(failure))
            })
          } else {
            // The driver answers once, so the client is given back once.
            this.send(client, query, (failure, rows) => {
              this.giveBack(client)
              if (failure !== undefined && failure !== null) reject(mapError(failure))
              else resolve(rows ?? [])
            })
          }
        })
      } catch (thrown) {
        // A pool answers through the callback; anything it throws is a failure of this statement too.
        reject(mapError(thrown))
      }
    })
  }

  /**
   * A connection of the pool, borrowed with the pool's callback form (its promise form would wrap it in one more
   * promise): one promise per checkout, two more only when the dialect has connection hooks.
   */
  acquireConnection (): Promise<DatabaseConnection> {
    const pool = this.#ready
    if (pool === undefined) return Promise.reject(new Error('driver has already been destroyed'))
    return new Promise((resolve, reject) => {
      this.borrow(pool, (error, client) => {
        if (error !== undefined && error !== null) {
          reject(error)
        } else if (client === undefined || client === null) {
          reject(new Error('the pool gave no connection'))
        } else if (this.#ready === undefined) {
          // Destroyed while the client was on its way.
          this.giveBack(client)
          reject(new Error('driver has already been destroyed'))
        } else {
          const known = this.#connections.get(client as object)
          const connection = known ?? this.connect(client)
          if (known === undefined) this.#connections.set(client as object, connection)
          const { onCreateConnection, onReserveConnection } = this.#hooks
          if ((known !== undefined || onCreateConnection === undefined) && onReserveConnection === undefined) resolve(connection)
          else resolve(this.#runHooks(connection, known === undefined))
        }
      })
    })
  }

  /**
   * The dialect's hooks: neither pool has an asynchronous one for a new client, so `onCreateConnection` runs when a
   * client is first seen. A hook that fails gives the client back (Kysely never receives the connection, so never
   * releases it), and a client whose `onCreateConnection` failed is met as a new one the next time.
   */
  async #runHooks (connection: Connection, created: boolean): Promise<DatabaseConnection> {
    try {
      if (created && this.#hooks.onCreateConnection !== undefined) await this.#hooks.onCreateConnection(connection)
      if (this.#hooks.onReserveConnection !== undefined) await this.#hooks.onReserveConnection(connection)
    } catch (error) {
      if (created) this.#connections.delete(connection.client as object)
      connection.release()
      throw error
    }
    return connection
  }

  releaseConnection (connection: DatabaseConnection): Promise<void> {
    (connection as Connection).release()
    return RELEASED
  }

  async destroy (): Promise<void> {
    const pool = this.#ready
    this.#destroyed = true
    if (pool === undefined) return
    this.#ready = undefined
    await this.end(pool)
  }
}

/** What `releaseConnection` answers: giving a client back to the pool is synchronous. */
const RELEASED: Promise<void> = Promise.resolve()
