/**
 * What both benchmark servers share, so that they differ only in how they answer requests: the same pool settings,
 * the same Kysely dialect (for the servers that use Kysely), the same listen address, and the same start/stop protocol with `bench/run.ts`.
 *
 * Protocol: the server reads the database URL from `BENCH_DATABASE_URL` (`postgres://…`, `mysql://…` or
 * `sqlite:<file>`: the engine is the URL's), listens on 127.0.0.1 on a free port, and prints one line of JSON to
 * stdout, `{"port":<n>}`. On SIGUSR2 it prints the CPU time the process has used so far, `{"cpu":<µs>}`, and with
 * `BENCH_COUNT_STATEMENTS=1` (the checks of `run.ts`, never a measured run) the statements its Kysely instance has run
 * so far too, `{"cpu":<µs>,"statements":<n>}`. On SIGTERM or SIGINT it closes Fastify and the pool and exits 0 (a
 * clean exit, so that `node --cpu-prof` writes its profile).
 *
 * Nothing of fastify-jsonapi is imported here.
 */
import type { FastifyInstance } from 'fastify'
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, type KyselyConfig, type LogEvent } from 'kysely'
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

/** The engines the benchmark runs on. */
export type BenchEngine = 'postgres' | 'mysql' | 'sqlite'

/** The engine of a benchmark database URL: `mysql://…`, `sqlite:<file>`, else PostgreSQL. */
export function engineOfUrl (url: string): BenchEngine {
  if (url.startsWith('mysql:')) return 'mysql'
  if (url.startsWith('sqlite:')) return 'sqlite'
  return 'postgres'
}

/** The file of a `sqlite:<file>` URL. */
export function sqliteFileOf (url: string): string {
  return url.slice('sqlite:'.length)
}

/**
 * The `mysql2` pool options of the library's `createMysqlDatabase` that decide how values are read and written
 * (lib/database/mysql-database.ts): exact 64-bit integers and decimals as strings, `date` as `YYYY-MM-DD`, date-times
 * in UTC, text in `utf8mb4`. The hand-written server's pool and the benchmark's seeding use them too.
 */
export const MYSQL_VALUE_OPTIONS = {
  supportBigNumbers: true,
  bigNumberStrings: true,
  dateStrings: ['DATE'],
  timezone: 'Z',
  charset: 'utf8mb4_unicode_ci',
} as const

/** The `mysql2` pool size and idle timeout of every server on MariaDB (as {@link POOL_SETTINGS} on PostgreSQL). */
export const MYSQL_POOL_SETTINGS = { connectionLimit: POOL_SIZE, maxIdle: POOL_SIZE, idleTimeout: IDLE_TIMEOUT } as const

/** SQLite's `busy_timeout` of every server, as `createSqliteDatabase`'s default (ms). */
export const SQLITE_BUSY_TIMEOUT = 5000

let statements = 0

/**
 * Kysely's `log` option of every server's Kysely instance: with `BENCH_COUNT_STATEMENTS=1` it counts the statements
 * run (refused ones too), reported on SIGUSR2; otherwise undefined, and Kysely logs nothing.
 */
export const statementLog: KyselyConfig['log'] = process.env.BENCH_COUNT_STATEMENTS === '1'
  ? (event: LogEvent) => {
      if (event.level === 'query' || event.level === 'error') statements++
    }
  : undefined

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
 * Opens the benchmark database through Kysely, the way an application that brings its own pool does (the
 * hand-written Kysely server): Kysely's `PostgresDialect` on a `pg` pool; on MariaDB its `MysqlDialect` on a `mysql2`
 * pool with `createMysqlDatabase`'s value options ({@link MYSQL_VALUE_OPTIONS}); on SQLite its `SqliteDialect` on
 * `better-sqlite3`, with the pragmas of `createSqliteDatabase` (foreign keys on, a `busy_timeout`, WAL). The library's
 * servers open it as the example application does, through the library's `createPostgresDatabase`,
 * `createMysqlDatabase` or `createSqliteDatabase` (`library-database.ts`).
 */
export async function openDatabase (): Promise<Kysely<any>> {
  const url = benchDatabaseUrl()
  const engine = engineOfUrl(url)
  if (engine === 'mysql') {
    // Imported here, so that a server on PostgreSQL loads neither mysql2 nor better-sqlite3.
    const { createPool } = await import('mysql2')
    const pool = createPool({ uri: url, ...MYSQL_VALUE_OPTIONS, dateStrings: [...MYSQL_VALUE_OPTIONS.dateStrings], ...MYSQL_POOL_SETTINGS })
    return new Kysely<any>({ dialect: new MysqlDialect({ pool }), log: statementLog })
  }
  if (engine === 'sqlite') {
    const Database = (await import('better-sqlite3') as unknown as { default: typeof import('better-sqlite3') }).default
    const database = new Database(sqliteFileOf(url))
    database.pragma('foreign_keys = ON')
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT}`)
    database.pragma('journal_mode = WAL')
    return new Kysely<any>({ dialect: new SqliteDialect({ database }), log: statementLog })
  }
  return new Kysely<any>({ dialect: new PostgresDialect({ pool: openPool() }), log: statementLog })
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
    const report = statementLog === undefined ? { cpu: user + system } : { cpu: user + system, statements }
    process.stdout.write(`${JSON.stringify(report)}\n`)
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
