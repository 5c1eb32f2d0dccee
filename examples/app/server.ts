/**
 * The `npm start` entry of the example application.
 *
 * Environment:
 * - `DATABASE_URL`: a PostgreSQL connection string; unset → embedded in-memory PGlite.
 * - `SEED=1`: load the demo data set (only into an empty database).
 * - `HOST` (default `127.0.0.1`), `PORT` (default `3000`).
 */
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { openDatabase, type OpenDatabase } from './database.js'
import { migrateToLatest } from './migrations.js'
import { seed } from './seed.js'

function readPort (value: string | undefined): number {
  if (value === undefined || value === '') return 3000
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got "${value}"`)
  return port
}

async function main (): Promise<void> {
  const host = process.env.HOST !== undefined && process.env.HOST !== '' ? process.env.HOST : '127.0.0.1'
  const port = readPort(process.env.PORT)

  let database: OpenDatabase | undefined
  let app: FastifyInstance | undefined
  let stopping = false

  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return
    stopping = true
    app?.log.info({ signal }, 'shutting down')
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
    database = await openDatabase()
    await migrateToLatest(database.db)
    if (process.env.SEED === '1') await seed(database.db)
    app = await buildApp({ db: database.db, logger: true })
    await app.listen({ host, port })
  } catch (error) {
    console.error(error)
    await app?.close().catch(() => {})
    await database?.close().catch(() => {})
    process.exit(1)
  }
}

await main()
