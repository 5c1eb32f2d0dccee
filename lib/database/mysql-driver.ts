import {
  CompiledQuery, MysqlAdapter, MysqlDialect,
  type DatabaseConnection, type DialectAdapter, type Driver, type MysqlDialectConfig, type MysqlPool,
  type QueryResult, type TransactionSettings,
} from 'kysely'
import { offeringSingleStatements } from './statement-runner.js'
import { PooledDriver, type Borrowed, type PooledConnection } from './pooled-driver.js'

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
    return offeringSingleStatements(new ReturningMysqlAdapter(), this.#driver)
  }
}

/** Kysely's MySQL adapter, saying the engine has RETURNING. */
class ReturningMysqlAdapter extends MysqlAdapter {
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

/** The driver of {@link JsonApiMysqlDialect}: Kysely's `Driver` contract on a `mysql2` pool. */
class JsonApiMysqlDriver extends PooledDriver<RawConnection, MysqlPool, JsonApiMysqlConnection> {
  constructor (config: MysqlDialectConfig) {
    super(config.pool, config, { quote: '`', release: 'release savepoint' })
  }

  protected borrow (pool: MysqlPool, borrowed: Borrowed<RawConnection>): void {
    (pool.getConnection as unknown as (callback: Borrowed<RawConnection>) => void)(borrowed)
  }

  protected giveBack (client: RawConnection): void {
    // Whatever happened: a connection that broke is dropped by the pool itself.
    client.release()
  }

  protected send (client: RawConnection, query: CompiledQuery, answer: (error: unknown, rows: unknown[] | undefined) => void): void {
    client.query(query.sql, query.parameters, (error, result) => {
      answer(error, Array.isArray(result) ? result : [])
    })
  }

  protected connect (client: RawConnection): JsonApiMysqlConnection {
    return new JsonApiMysqlConnection(client)
  }

  protected end (pool: MysqlPool): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      pool.end((error) => { if (error !== undefined && error !== null) reject(error); else resolve() })
    })
  }

  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const characteristics = this.characteristics(settings)
    // MySQL's `set transaction` sets the characteristics of the next transaction of the session.
    if (characteristics.length > 0) await connection.executeQuery(CompiledQuery.raw(`set transaction ${characteristics.join(', ')}`))
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }
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
class JsonApiMysqlConnection implements PooledConnection<RawConnection> {
  readonly client: RawConnection

  constructor (client: RawConnection) {
    this.client = client
  }

  executeQuery<R> (query: CompiledQuery): Promise<QueryResult<R>> {
    return new Promise((resolve, reject) => {
      this.client.query(query.sql, query.parameters, (error, result) => {
        if (error !== undefined && error !== null) reject(error)
        else resolve(resultOf<R>(result))
      })
    })
  }

  /** The rows of a statement, `chunkSize` at a time, as `mysql2` streams them. */
  async * streamQuery<R> (query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer')
    const stream = this.client.query(query.sql, query.parameters).stream({ objectMode: true })
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
    this.client.release()
  }
}
