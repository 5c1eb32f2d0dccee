/**
 * Opens an example's database and migrates it, by `DATABASE_URL`: PostgreSQL through `pg` (`postgres://…`), MariaDB
 * through `mysql2` (`mysql://…`), SQLite through `better-sqlite3` (`sqlite:<file>`, `sqlite::memory:`), or, unset, an
 * embedded in-memory PGlite, fresh at every start (it starts from the example's prepared data directory, see
 * `prepared-database.ts`).
 *
 * On a server the pool is the library's (`createPostgresDatabase`, `createMysqlDatabase`): a connection the server
 * drops never crashes the process, a request waits at most `DATABASE_CONNECTION_TIMEOUT` ms (default 5000) for a
 * connection and a statement runs at most `STATEMENT_TIMEOUT` ms (default 10000; `0` turns it off) — past either, the
 * request is a 503.
 */
import { relative } from 'node:path'
import type { Kysely, KyselyConfig } from 'kysely'
import { createMysqlDatabase, createPostgresDatabase, createSqliteDatabase } from '../../lib/index.js'
import type { ExampleSchema } from './example-schemas.js'
import { openPreparedDatabase } from './prepared-database.js'

/** An open, migrated database: the Kysely instance and a function that closes it (and PGlite, when embedded). */
export interface OpenDatabase {
  readonly db: Kysely<any>
  close (): Promise<void>
  /**
   * Which database it is, for people to read: `PostgreSQL user@host:5432, database example` (never a password), or
   * the embedded one.
   */
  readonly description: string
}

export interface OpenDatabaseOptions {
  /** The example's schema: its migrations run on the database before it is answered. */
  readonly schema: ExampleSchema
  readonly log?: KyselyConfig['log']
  /** Told about a pooled connection the server dropped while no request held it (PostgreSQL only). */
  readonly onConnectionError?: (error: Error) => void
  /** Told what went wrong without stopping the start (embedded only: a prepared data directory not kept). */
  readonly warn?: (message: string) => void
  /** Told, before it takes its seconds, that the embedded database is prepared afresh. */
  readonly preparing?: (file: string) => void
}

function milliseconds (name: string, fallback: number): number {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a number of milliseconds, got "${value}"`)
  return parsed
}

/**
 * A PostgreSQL connection string for people to read, `PostgreSQL user@host:5432, database example`: no password, no
 * parameters.
 */
export function describePostgres (url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'PostgreSQL (DATABASE_URL)'
  }
  const host = parsed.host !== '' ? parsed.host : parsed.searchParams.get('host') ?? 'localhost'
  const user = parsed.username !== '' ? `${decodeURIComponent(parsed.username)}@` : ''
  const name = decodeURIComponent(parsed.pathname.slice(1))
  return `PostgreSQL ${user}${host}${name === '' ? '' : `, database ${name}`}`
}

/** A MariaDB/MySQL URL for people to read, `MariaDB/MySQL user@host:3306, database example`: no password. */
export function describeMysql (url: string): string {
  return describePostgres(url).replace(/^PostgreSQL/, 'MariaDB/MySQL')
}

/**
 * The SQLite file of a `DATABASE_URL` of the form `sqlite:<path>` (`sqlite:./app.db`, `sqlite:data/app.db`), or
 * `:memory:` for `sqlite::memory:`; undefined for any other URL.
 */
export function sqliteFilename (url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
  return path === '' ? undefined : path
}

/** The forms of `DATABASE_URL` the examples accept, for the message that refuses another. */
export const DATABASE_URL_FORMS = 'postgres://… or postgresql://… (PostgreSQL), mysql://user:password@host:port/database (MariaDB or MySQL), sqlite:<file> or sqlite::memory: (SQLite); unset: the embedded PGlite'

/** A database opened by one of the library's helpers, migrated; closed again when its migration fails. */
async function migrated (options: OpenDatabaseOptions, opened: { db: Kysely<any>, close: () => Promise<void> }, description: string): Promise<OpenDatabase> {
  try {
    await options.schema.migrate(opened.db)
  } catch (error) {
    await opened.close().catch(() => {})
    throw error
  }
  return { db: opened.db, close: opened.close, description }
}

export async function openDatabase (options: OpenDatabaseOptions): Promise<OpenDatabase> {
  const url = process.env.DATABASE_URL
  const sqlite = url === undefined ? undefined : sqliteFilename(url)
  if (sqlite !== undefined) {
    const opened = await createSqliteDatabase<any>({ filename: sqlite, log: options.log })
    return migrated(options, opened, sqlite === ':memory:' ? 'SQLite in memory' : `SQLite ${sqlite}`)
  }
  if (url !== undefined && url !== '' && !/^(postgres(ql)?|mysql):\/\//.test(url)) {
    throw new Error(`DATABASE_URL is not one of the accepted forms: ${DATABASE_URL_FORMS}`)
  }
  if (url !== undefined && url !== '') {
    // The same bounds on both servers: a statement timeout, a bounded wait for a connection, idle failures reported.
    const statementTimeout = milliseconds('STATEMENT_TIMEOUT', 10_000)
    const bounds = {
      statementTimeout: statementTimeout === 0 ? undefined : statementTimeout,
      connectionTimeout: milliseconds('DATABASE_CONNECTION_TIMEOUT', 5000),
      onConnectionError: options.onConnectionError,
      log: options.log,
    }
    return url.startsWith('mysql:')
      ? migrated(options, await createMysqlDatabase<any>({ uri: url, ...bounds }), describeMysql(url))
      : migrated(options, await createPostgresDatabase<any>({ connectionString: url, ...bounds }), describePostgres(url))
  }
  const { log, warn, preparing } = options
  const { database, file, origin } = await openPreparedDatabase(options.schema, { log, warn, preparing })
  const where = relative(process.cwd(), file)
  const from = origin === 'loaded'
    ? `started from ${where}`
    : origin === 'written' ? `prepared afresh, kept in ${where}` : 'prepared afresh'
  return { db: database.db, close: database.close, description: `embedded PGlite in memory (${from})` }
}
