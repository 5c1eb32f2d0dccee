/**
 * The life of an example server: open the database, migrate it, build the app, listen; a failure at start prints it
 * and exits 1.
 *
 * SIGINT/SIGTERM shut down gracefully: the server stops accepting connections, answers requests that arrive on open
 * connections meanwhile with 503, lets every request in flight finish (its transaction commits or rolls back), then
 * closes the database and exits 0. If that takes longer than `SHUTDOWN_TIMEOUT` ms (default 10000), it exits 1.
 *
 * Environment: `HOST` (default `127.0.0.1`), `PORT` (default: the example's), `DATABASE_URL` (see `database.ts`).
 */
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { openDatabase, type OpenDatabase } from './database.js'

/** What an example contributes to its server. */
export interface ExampleServer {
  readonly defaultPort: number
  readonly migrate: (db: Kysely<any>) => Promise<void>
  /** Runs after the migrations (the example app's demo data). */
  readonly prepare?: (db: Kysely<any>) => Promise<void>
  readonly build: (db: Kysely<any>) => Promise<FastifyInstance>
}

function readPort (value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got "${value}"`)
  return port
}

/** Starts an example server and keeps it running until a signal stops it. */
export async function runServer (example: ExampleServer): Promise<void> {
  const host = process.env.HOST !== undefined && process.env.HOST !== '' ? process.env.HOST : '127.0.0.1'
  const port = readPort(process.env.PORT, example.defaultPort)

  let database: OpenDatabase | undefined
  let app: FastifyInstance | undefined
  let stopping = false

  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return
    stopping = true
    app?.log.info({ signal }, 'shutting down: draining requests in flight')
    const timeout = Number(process.env.SHUTDOWN_TIMEOUT ?? '10000')
    setTimeout(() => {
      console.error(`shutdown took longer than ${timeout} ms; exiting`)
      process.exit(1)
    }, Number.isFinite(timeout) && timeout > 0 ? timeout : 10_000).unref()
    try {
      await app?.close()
      await database?.close()
      process.exit(0)
    } catch (error) {
      console.error(error)
      process.exit(1)
    }
  }
  process.once('SIGINT', (signal) => { void stop(signal) })
  process.once('SIGTERM', (signal) => { void stop(signal) })

  try {
    database = await openDatabase({
      // A pooled connection the server dropped (a restart, a failover): the pool opens a new one when needed.
      onConnectionError: (error) => {
        if (app !== undefined) app.log.warn({ err: error }, 'a database connection was dropped')
        else console.warn(`a database connection was dropped: ${error.message}`)
      },
    })
    await example.migrate(database.db)
    await example.prepare?.(database.db)
    app = await example.build(database.db)
    await app.listen({ host, port })
  } catch (error) {
    console.error(error)
    await app?.close().catch(() => {})
    await database?.close().catch(() => {})
    process.exit(1)
  }
}
