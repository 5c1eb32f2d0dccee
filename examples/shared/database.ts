/**
 * Opens an example's database: PostgreSQL through `pg` when `DATABASE_URL` is set, an embedded
 * in-memory PGlite otherwise (fresh at every start).
 *
 * On PostgreSQL the pool is the library's `createPostgresDatabase`: a connection the server drops never crashes the
 * process, a request waits at most `DATABASE_CONNECTION_TIMEOUT` ms (default 5000) for a connection and a statement
 * runs at most `STATEMENT_TIMEOUT` ms (default 10000; `0` turns it off) — past either, the request is a 503.
 */
import type { Kysely, KyselyConfig } from 'kysely'
import { createPostgresDatabase } from '../../lib/index.js'
import { createEmbeddedDatabase } from '../../lib/embedded.js'

/** An open database: the Kysely instance and a function that closes it (and PGlite, when embedded). */
export interface OpenDatabase {
  readonly db: Kysely<any>
  close (): Promise<void>
}

export interface OpenDatabaseOptions {
  readonly log?: KyselyConfig['log']
  /** Told about a pooled connection the server dropped while no request held it (PostgreSQL only). */
  readonly onConnectionError?: (error: Error) => void
}

function milliseconds (name: string, fallback: number): number {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`${name} must be a number of milliseconds, got "${value}"`)
  return parsed
}

export async function openDatabase (options: OpenDatabaseOptions = {}): Promise<OpenDatabase> {
  const url = process.env.DATABASE_URL
  if (url !== undefined && url !== '') {
    const statementTimeout = milliseconds('STATEMENT_TIMEOUT', 10_000)
    return await createPostgresDatabase<any>({
      connectionString: url,
      statementTimeout: statementTimeout === 0 ? undefined : statementTimeout,
      connectionTimeout: milliseconds('DATABASE_CONNECTION_TIMEOUT', 5000),
      onConnectionError: options.onConnectionError,
      log: options.log,
    })
  }
  const { db, close } = await createEmbeddedDatabase<any>({ log: options.log })
  return { db, close }
}
