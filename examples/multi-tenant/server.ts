/**
 * The runnable entry of the multi-tenant example: `node --import tsx examples/multi-tenant/server.ts`.
 *
 * Environment:
 * - `DATABASE_URL`: a PostgreSQL connection string; unset → embedded in-memory PGlite (empty at every start).
 * - `HOST` (default `127.0.0.1`), `PORT` (default `3001`).
 */
import type { FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { createEmbeddedDatabase } from '../../lib/index.js'
import { buildTenantApp } from './app.js'
import { migrateToLatest } from './migrations.js'

/** An open database: the Kysely instance and a function that closes it (and PGlite, when embedded). */
interface OpenDatabase {
  readonly db: Kysely<any>
  close (): Promise<void>
}

async function openDatabase (): Promise<OpenDatabase> {
  const url = process.env.DATABASE_URL
  if (url !== undefined && url !== '') {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) })
    return { db, close: () => db.destroy() }
  }
  return createEmbeddedDatabase<any>()
}

function readPort (value: string | undefined): number {
  if (value === undefined || value === '') return 3001
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
    app = await buildTenantApp({ db: database.db, logger: true })
    await app.listen({ host, port })
  } catch (error) {
    console.error(error)
    await app?.close().catch(() => {})
    await database?.close().catch(() => {})
    process.exit(1)
  }
}

await main()
