/**
 * What both benchmark servers share, so that they differ only in how they answer requests: the same `pg` pool
 * settings, the same Kysely dialect (for the servers that use Kysely), the same listen address, and the same start/stop protocol with `bench/run.ts`.
 *
 * Protocol: the server reads the database URL from `BENCH_DATABASE_URL`, listens on 127.0.0.1 on a free port, and
 * prints one line of JSON to stdout, `{"port":<n>}`. On SIGUSR2 it prints the CPU time the process has used so far,
 * `{"cpu":<µs>}`. On SIGTERM or SIGINT it closes Fastify and the pool and exits 0 (a clean exit, so that
 * `node --cpu-prof` writes its profile).
 *
 * Nothing of fastify-jsonapi is imported here.
 */
import type { FastifyInstance } from 'fastify'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'

/** The size of each server's connection pool (as many as autocannon's default connections). */
export const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 10)

/**
 * How long an idle connection of each server's pool stays open (ms). A server waits while the others are measured:
 * up to 2 × (servers − 1) slices between two of its own (the order, then the reverse), 12 s with four servers. At
 * pg-pool's default (10 s), the servers at the ends of the order, and only they, then opened their connections
 * again in every other slice (`BENCH_IDLE_TIMEOUT=10000` shows it). A minute covers every wait of a run.
 */
export const IDLE_TIMEOUT = Number(process.env.BENCH_IDLE_TIMEOUT ?? 60_000)

/** The `pg.Pool` settings of every server. */
export const POOL_SETTINGS = { max: POOL_SIZE, idleTimeoutMillis: IDLE_TIMEOUT } as const

/** The benchmark database's URL, from `bench/run.ts`. */
export function benchDatabaseUrl (): string {
  const connectionString = process.env.BENCH_DATABASE_URL
  if (connectionString === undefined || connectionString === '') {
    throw new Error('BENCH_DATABASE_URL is not set: start this server through `npm run bench`')
  }
  return connectionString
}

/** A `pg` pool on the benchmark database, the same settings in every server. */
export function openPool (): pg.Pool {
  return new pg.Pool({ connectionString: benchDatabaseUrl(), ...POOL_SETTINGS })
}

/**
 * Opens the benchmark database through `pg` and Kysely, the way an application that brings its own pool does (the
 * hand-written Kysely server). The library's servers open it as the example application does on PostgreSQL, through
 * the library's `createPostgresDatabase` (`library-database.ts`).
 */
export function openDatabase (): Kysely<any> {
  return new Kysely<any>({ dialect: new PostgresDialect({ pool: openPool() }) })
}

/**
 * Listens on 127.0.0.1 (free port), announces the port on stdout, and stops cleanly on SIGTERM / SIGINT: closes the
 * app, then the database (`close`).
 */
export async function serve (app: FastifyInstance, close: () => Promise<unknown>): Promise<void> {
  let stopping = false
  const stop = async (): Promise<void> => {
    if (stopping) return
    stopping = true
    try {
      await app.close()
      await close()
      process.exit(0)
    } catch (error) {
      console.error(error)
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => { void stop() })
  process.once('SIGINT', () => { void stop() })
  process.on('SIGUSR2', () => {
    const { user, system } = process.cpuUsage()
    process.stdout.write(`${JSON.stringify({ cpu: user + system })}\n`)
  })

  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address')
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`)
}

/**
 * Builds a server's app on its database and serves it (see {@link serve}); a failure to build or listen is printed,
 * the database closed, and the process exits with 1.
 */
export async function serveBuilt (build: () => Promise<FastifyInstance>, close: () => Promise<unknown>): Promise<void> {
  try {
    await serve(await build(), close)
  } catch (error) {
    console.error(error)
    await close().catch(() => {})
    process.exit(1)
  }
}
