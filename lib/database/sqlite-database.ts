import { Kysely, type KyselyConfig, type SqliteDatabase as KyselySqliteDatabase } from 'kysely'
import { JsonApiSqliteDialect } from './sqlite-driver.js'

/** Options of {@link createSqliteDatabase}. */
export interface SqliteDatabaseOptions {
  /** The database file, or `:memory:` (the default) for a database that lives as long as the process holds it. */
  readonly filename?: string
  /**
   * How long a statement waits for a lock another connection holds on the database (SQLite's `busy_timeout`, in
   * milliseconds; default 5000). Past it, the statement fails with `SQLITE_BUSY`: the request is retried, then a 503.
   */
  readonly busyTimeout?: number
  /** Passed to Kysely (e.g. `log`). */
  readonly log?: KyselyConfig['log']
}

/** A SQLite database: the Kysely instance, and a function that closes it (and the file). */
export interface SqliteDatabase<DB> {
  readonly db: Kysely<DB>
  readonly close: () => Promise<void>
}

/**
 * Creates a Kysely instance on SQLite through `better-sqlite3` (an optional peer dependency: `npm install
 * better-sqlite3@12`), set up as the library needs it: foreign keys enforced (`PRAGMA foreign_keys = ON`: SQLite's
 * default is off, and a relationship could then point at a row that is gone), a file database in WAL mode (readers
 * do not wait for the writer), and a `busy_timeout`. SQLite runs one statement at a time on its one connection:
 * Kysely queues the others, and a transaction holds the database until it ends. The instance runs on
 * {@link JsonApiSqliteDialect}: each statement text is prepared once and kept.
 *
 * @example
 * ```ts
 * const { db, close } = await createSqliteDatabase<DB>({ filename: 'data/app.db' })
 * await app.register(jsonApi, { db, resources })
 * app.addHook('onClose', close)
 * ```
 */
export async function createSqliteDatabase<DB = any> (options: SqliteDatabaseOptions = {}): Promise<SqliteDatabase<DB>> {
  const { filename = ':memory:', busyTimeout = 5000 } = options
  let Database: new (filename: string) => KyselySqliteDatabase & { pragma: (source: string) => unknown }
  try {
    const imported = await import('better-sqlite3') as unknown as { default?: unknown }
    Database = (imported.default ?? imported) as typeof Database
  } catch (error) {
    throw new Error('fastify-jsonapi: createSqliteDatabase needs the package better-sqlite3 (npm install better-sqlite3@12)', { cause: error })
  }
  const database = new Database(filename)
  try {
    database.pragma('foreign_keys = ON')
    database.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeout))}`)
    if (filename !== ':memory:' && filename !== '') database.pragma('journal_mode = WAL')
  } catch (error) {
    database.close()
    throw error
  }
  const db = new Kysely<DB>({ dialect: new JsonApiSqliteDialect({ database }), log: options.log })
  let closed: Promise<void> | undefined
  return {
    db,
    // Kysely's driver closes the database; once, however often it is called.
    close: () => (closed ??= db.destroy()),
  }
}
