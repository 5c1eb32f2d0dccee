import {
  CompiledQuery, SqliteAdapter, SqliteDialect,
  type DatabaseConnection, type DialectAdapter, type Driver, type QueryResult, type SqliteDatabase,
  type SqliteDialectConfig, type SqliteStatement,
} from 'kysely'
import { offeringSingleStatements, type SingleStatements } from './statement-runner.js'
import { TransactionStatements } from './transaction-statements.js'

/**
 * Kysely's SQLite dialect on a `better-sqlite3` database, with the library's driver: every statement Kysely runs —
 * the repository's reads and writes, transactions, your own queries on the same instance — is prepared once per
 * statement text and kept (at most {@link PreparedStatements.LIMIT} texts, the least recently used dropped first),
 * where Kysely's own driver prepares each statement again every time it runs. The SQL, the results (`rows`,
 * `numAffectedRows`, `insertId`), the errors and the one connection, taken by one transaction or statement at a time,
 * are those of Kysely's `SqliteDialect`, which this extends: the adapter, the query compiler and the introspector are
 * Kysely's.
 *
 * `createSqliteDatabase` makes its Kysely instance with it; give it to your own:
 *
 * ```ts
 * const db = new Kysely<DB>({ dialect: new JsonApiSqliteDialect({ database: new Database('app.db') }) })
 * ```
 *
 * Its adapter also offers the repository single statements outside transactions: `better-sqlite3` runs a statement
 * synchronously, so while no transaction holds the connection a statement runs at once, without Kysely's executor
 * and its promises (see `statementRunnerOf`); while one does, it waits for it as Kysely's statements do.
 *
 * A prepared statement keeps what `better-sqlite3` settles when it prepares (`safeIntegers` from the database's
 * `defaultSafeIntegers`): set those before the first statement.
 */
export class JsonApiSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig
  /** The driver made last: Kysely asks for the driver, then the adapter, when an instance is made. */
  #driver: JsonApiSqliteDriver | undefined

  constructor (config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver (): Driver {
    this.#driver = new JsonApiSqliteDriver(this.#config)
    return this.#driver
  }

  override createAdapter (): DialectAdapter {
    return offeringSingleStatements(new SqliteAdapter(), this.#driver)
  }
}

/**
 * The one connection's turn: a transaction or a statement of Kysely's holds it from `acquireConnection` to
 * `releaseConnection`; the others wait in order.
 */
class Turn {
  #held = false
  readonly #waiting: Array<() => void> = []

  get held (): boolean {
    return this.#held
  }

  take (): Promise<void> {
    if (!this.#held) {
      this.#held = true
      return Promise.resolve()
    }
    return new Promise((resolve) => { this.#waiting.push(resolve) })
  }

  /** Gives the turn to the next waiting, or frees it. */
  give (): void {
    const next = this.#waiting.shift()
    if (next === undefined) this.#held = false
    else next()
  }
}

/** The statements a database has prepared, by text: at most {@link LIMIT}, the least recently used dropped first. */
class PreparedStatements {
  static readonly LIMIT = 500
  readonly #database: SqliteDatabase
  readonly #statements = new Map<string, SqliteStatement>()

  constructor (database: SqliteDatabase) {
    this.#database = database
  }

  of (sql: string): SqliteStatement {
    const statements = this.#statements
    const kept = statements.get(sql)
    if (kept !== undefined) {
      // Moved to the end: the first entry is the least recently used.
      statements.delete(sql)
      statements.set(sql, kept)
      return kept
    }
    const made = this.#database.prepare(sql)
    if (statements.size >= PreparedStatements.LIMIT) statements.delete(statements.keys().next().value as string)
    statements.set(sql, made)
    return made
  }
}

/** The driver of {@link JsonApiSqliteDialect}: Kysely's `Driver` contract on one `better-sqlite3` database. */
class JsonApiSqliteDriver extends TransactionStatements implements Driver, SingleStatements {
  readonly #config: SqliteDialectConfig
  readonly #turn = new Turn()
  #database: SqliteDatabase | undefined
  #connection: JsonApiSqliteConnection | undefined
  /** Whether Kysely has taken the connection once (its `log` option wraps the connection's `executeQuery` then). */
  #met = false
  readonly available = true

  constructor (config: SqliteDialectConfig) {
    super({ quote: '"', release: 'release' })
    this.#config = Object.freeze({ ...config })
  }

  async init (): Promise<void> {
    const database = this.#config.database
    this.#database = typeof database === 'function' ? await database() : database
    this.#connection = new JsonApiSqliteConnection(this.#database)
    if (this.#config.onCreateConnection !== undefined) await this.#config.onCreateConnection(this.#connection)
  }

  /**
   * One statement outside a transaction: at once while nothing holds the connection (`better-sqlite3` runs it
   * synchronously, so nothing else runs between its start and its end), else — and before Kysely has initialised
   * the driver or taken the connection once — through `viaKysely`, which waits for the connection's turn.
   */
  run (query: CompiledQuery, mapError: (error: unknown) => unknown, viaKysely: (query: CompiledQuery) => Promise<unknown[]>): Promise<unknown[]> {
    const connection = this.#connection
    if (connection === undefined || !this.#met || this.#turn.held) {
      return viaKysely(query).catch((error: unknown) => { throw mapError(error) })
    }
    if (Object.hasOwn(connection, 'executeQuery')) {
      // Kysely's log wraps a connection's own `executeQuery` when it first meets it.
      return connection.executeQuery(query).then((result) => result.rows, (error: unknown) => { throw mapError(error) })
    }
    try {
      return Promise.resolve(connection.run(query).rows)
    } catch (error) {
      return Promise.reject(mapError(error))
    }
  }

  async acquireConnection (): Promise<DatabaseConnection> {
    await this.#turn.take()
    const connection = this.#connection
    if (connection === undefined) {
      this.#turn.give()
      throw new Error('driver has already been destroyed')
    }
    this.#met = true
    return connection
  }

  async beginTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }

  async releaseConnection (): Promise<void> {
    this.#turn.give()
  }

  async destroy (): Promise<void> {
    const database = this.#database
    this.#database = undefined
    this.#connection = undefined
    database?.close()
  }
}

/** The one `better-sqlite3` database as a Kysely `DatabaseConnection`. */
class JsonApiSqliteConnection implements DatabaseConnection {
  readonly #database: SqliteDatabase
  readonly #prepared: PreparedStatements

  constructor (database: SqliteDatabase) {
    this.#database = database
    this.#prepared = new PreparedStatements(database)
  }

  /** Runs a statement synchronously: the rows of one that answers rows, else what it changed. */
  run<R> (query: CompiledQuery): QueryResult<R> {
    const statement = this.#prepared.of(query.sql)
    if (statement.reader) return { rows: statement.all(query.parameters) as R[] }
    const { changes, lastInsertRowid } = statement.run(query.parameters)
    return {
      rows: [],
      numAffectedRows: changes === undefined || changes === null ? undefined : BigInt(changes),
      insertId: lastInsertRowid === undefined || lastInsertRowid === null ? undefined : BigInt(lastInsertRowid),
    }
  }

  executeQuery<R> (query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(this.run<R>(query))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /**
   * The rows of a reading statement, `chunkSize` at a time, from a statement prepared for this stream alone (a
   * statement that is iterating cannot run anything else until the iteration ends).
   */
  async * streamQuery<R> (query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer')
    const statement = this.#database.prepare(query.sql)
    if (!statement.reader) throw new Error('a stream needs a statement that answers rows')
    const iterator = statement.iterate(query.parameters) as IterableIterator<R>
    let rows: R[] = []
    try {
      for (const row of iterator) {
        rows.push(row)
        if (rows.length === chunkSize) {
          yield { rows }
          rows = []
        }
      }
      if (rows.length > 0) yield { rows }
    } finally {
      iterator.return?.()
    }
  }
}
