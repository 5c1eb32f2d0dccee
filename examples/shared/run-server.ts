/**
 * The life of an example server: open the database, migrate it, build the app, listen, and say where everything is;
 * a failure at start prints it and exits 1.
 *
 * Once the port accepts requests, Fastify logs its own `Server listening at …` line, then the example prints its
 * own, on stdout: the URL it listens on, the paths of its API, its OpenAPI document and interactive documentation when
 * it serves them, and the database it runs on (never a password). They come in that order when the app logs through
 * `process.stdout` (`logger: { stream: process.stdout }`), as the examples do.
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
import type { ExampleSchema } from './example-schemas.js'

/** What an example contributes to its server. */
export interface ExampleServer {
  /** What it is called in the line printed once it listens: `example app`. */
  readonly name: string
  readonly defaultPort: number
  /** Its schema: the database is migrated to it before anything else. */
  readonly schema: ExampleSchema
  /** Its resource declarations: the paths of their collections are printed once it listens. */
  readonly resources: ReadonlyArray<{ readonly type: string, readonly path?: string }>
  /** What a request needs, printed with them (a header, say). */
  readonly apiNote?: string
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

/** The origin to print: a wildcard address (`0.0.0.0`, `::`) is reachable as `localhost`. */
function printableOrigin (app: FastifyInstance): string {
  const origin = new URL(app.listeningOrigin)
  if (origin.hostname === '0.0.0.0' || origin.hostname === '[::]') origin.hostname = 'localhost'
  return origin.origin
}

/** The lines printed once the example listens: where its API, documents and database are. */
function whereThingsAre (example: ExampleServer, app: FastifyInstance, database: OpenDatabase): string[] {
  const origin = printableOrigin(app)
  // A declaration without a path is served at `/<type>`, as the plugin does.
  const api = example.resources.map((resource, index) => `${index === 0 ? origin : ''}${resource.path ?? `/${resource.type}`}`)
  if (app.hasRoute({ method: 'POST', url: '/operations' })) api.push('POST /operations')
  const lines = [
    `fastify-jsonapi ${example.name} listening on ${origin}`,
    `  API       ${api.join(', ')}${example.apiNote === undefined ? '' : ` (${example.apiNote})`}`,
  ]
  if (app.hasRoute({ method: 'GET', url: '/docs' })) lines.push(`  docs      ${origin}/docs`)
  if (app.hasRoute({ method: 'GET', url: '/openapi.json' })) lines.push(`  OpenAPI   ${origin}/openapi.json`)
  lines.push(`  database  ${database.description}`)
  return lines
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
      schema: example.schema,
      warn: (message) => { console.warn(`warning: ${message}`) },
      preparing: () => {
        console.log(`preparing the embedded database of the ${example.name} (its first start, or its migrations changed): a few seconds`)
      },
      // A pooled connection the server dropped (a restart, a failover): the pool opens a new one when needed.
      onConnectionError: (error) => {
        if (app !== undefined) app.log.warn({ err: error }, 'a database connection was dropped')
        else console.warn(`a database connection was dropped: ${error.message}`)
      },
    })
    await example.prepare?.(database.db)
    app = await example.build(database.db)
    await app.listen({ host, port })
    console.log(whereThingsAre(example, app, database).join('\n'))
  } catch (error) {
    console.error(error)
    await app?.close().catch(() => {})
    await database?.close().catch(() => {})
    process.exit(1)
  }
}
