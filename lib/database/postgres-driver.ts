import {
  CompiledQuery, PostgresAdapter, PostgresDialect,
  type DatabaseConnection, type DialectAdapter, type Driver, type PostgresCursorConstructor, type PostgresDialectConfig, type PostgresPool,
  type QueryResult, type TransactionSettings,
} from 'kysely'
import type { PoolClient } from 'pg'
import { prepareValueOrWarn, statementSender, type StatementSender } from './rows-query.js'
import { offeringSingleStatements } from './statement-runner.js'
import { PooledDriver, type Borrowed } from './pooled-driver.js'

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
    return offeringSingleStatements(new PostgresAdapter(), this.#driver)
  }
}

/** A `pg` client as the driver uses it: pg's own, or a stand-in (PGlite's) with the same `query` and `release`. */
type Client = PoolClient

/** The driver of {@link JsonApiPostgresDialect}: Kysely's `Driver` contract on a `pg` pool. */
class JsonApiPostgresDriver extends PooledDriver<Client, PostgresPool, JsonApiPostgresConnection> {
  readonly #cursor: PostgresCursorConstructor | null
  readonly #send: StatementSender = statementSender(prepareValueOrWarn())

  constructor (config: PostgresDialectConfig) {
    super(config.pool, config, { quote: '"', release: 'release' })
    this.#cursor = config.cursor ?? null
  }

  protected borrow (pool: PostgresPool, borrowed: Borrowed<Client>): void {
    // pg-pool's callback form of `connect` (its promise form wraps it in one more promise).
    (pool.connect as unknown as (callback: Borrowed<Client>) => void)(borrowed)
  }

  protected giveBack (client: Client): void {
    // `release()` without the error, as Kysely's own driver does: a client that broke is dropped by pg-pool itself.
    client.release()
  }

  protected send (client: Client, query: CompiledQuery, answer: (error: unknown, rows: unknown[] | undefined) => void): void {
    this.#send(client, query, answer)
  }

  protected connect (client: Client): JsonApiPostgresConnection {
    return new JsonApiPostgresConnection(client, this.#cursor, this.#send)
  }

  protected async end (pool: PostgresPool): Promise<void> {
    await pool.end()
  }

  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const characteristics = this.characteristics(settings)
    await connection.executeQuery(CompiledQuery.raw(characteristics.length === 0 ? 'begin' : `start transaction ${characteristics.join(' ')}`))
  }
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
