/**
 * The benchmark database: a fresh database per run and engine, migrated with the example application's migrations and
 * seeded with 1,000 users × 3 computers: on PostgreSQL created through `pg` and dropped at the end; on MariaDB
 * created through `mysql2` (utf8mb4, `utf8mb4_bin`) and dropped at the end; on SQLite a file in a temporary directory
 * (WAL mode), removed at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Database from 'better-sqlite3'
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from 'kysely'
import mysql from 'mysql2'
import pg from 'pg'
import { migrateToLatest } from '../examples/app/migrations.js'
import { MYSQL_VALUE_OPTIONS, SQLITE_BUSY_TIMEOUT, type BenchEngine } from './servers/serve.js'

export type { BenchEngine } from './servers/serve.js'

/** The engines' names, for people to read. */
export const ENGINE_LABELS: Record<BenchEngine, string> = { postgres: 'PostgreSQL', mysql: 'MariaDB', sqlite: 'SQLite' }

/**
 * The engines `npm run bench` compares on, from `BENCH_ENGINES` (comma-separated: `postgres`, `mysql` — or
 * `mariadb` —, `sqlite`), in that order; default PostgreSQL only.
 */
export function benchEngines (): BenchEngine[] {
  const raw = process.env.BENCH_ENGINES
  if (raw === undefined || raw.trim() === '') return ['postgres']
  const wanted = new Set<BenchEngine>()
  for (const item of raw.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')) {
    const engine = item === 'mariadb' ? 'mysql' : item === 'pg' || item === 'postgresql' ? 'postgres' : item
    if (!(engine in ENGINE_LABELS)) throw new Error(`BENCH_ENGINES: unknown engine "${item}" (known: postgres, mysql, sqlite)`)
    wanted.add(engine as BenchEngine)
  }
  return (Object.keys(ENGINE_LABELS) as BenchEngine[]).filter((engine) => wanted.has(engine))
}

/**
 * Exits 0 with a line saying so when `BENCH_ENGINES` leaves PostgreSQL out: for the parts of `npm run bench` that run
 * on PostgreSQL only (memory, deep pages, scale).
 */
export function skipWithoutPostgres (what: string): void {
  const engines = benchEngines()
  if (engines.includes('postgres')) return
  console.log(`\n${what}: PostgreSQL only, skipped (BENCH_ENGINES=${engines.join(',')})`)
  process.exit(0)
}

/** Where to reach PostgreSQL: `DATABASE_URL`, else a local server with trust authentication. */
export const ADMIN_URL = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ''
  ? process.env.DATABASE_URL
  : 'postgres://postgres@127.0.0.1:5432/postgres'

export const USERS = 1000
export const COMPUTERS_PER_USER = 3
/**
 * The users of the second page of 20 (ids 21–40) own this many computers each, not {@link COMPUTERS_PER_USER}: an
 * include of theirs is paged per owner (10 of 50).
 */
export const MANY_COMPUTERS = 50
export const MANY_COMPUTERS_USERS = { first: 21, last: 40 } as const

/** A connection string without its password, for messages. */
export function redact (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparsable connection string)'
  }
}

/** The connection string of another database on the same server. */
export function databaseUrl (name: string): string {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/** Thrown when no database server answers: PostgreSQL at {@link ADMIN_URL}, MariaDB at {@link MYSQL_ADMIN_URL}. */
export class DatabaseUnavailableError extends Error {
  constructor (message: string, readonly engine: BenchEngine = 'postgres') {
    super(message)
  }
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'ENETUNREACH'])

async function withAdmin<T> (work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
  } catch (error) {
    const code = (error as { code?: string }).code
    const message = (error as Error).message
    if ((code !== undefined && CONNECTION_ERRORS.has(code)) || /timeout|connect/i.test(message)) {
      throw new DatabaseUnavailableError(`no PostgreSQL server answers at ${redact(ADMIN_URL)} (${code ?? message})`)
    }
    throw error
  }
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Creates a database; returns the server's `select version()`. */
export async function createDatabase (name: string): Promise<string> {
  return withAdmin(async (client) => {
    const { rows } = await client.query<{ version: string }>('select version() as version')
    await client.query(`create database "${name}"`)
    return rows[0].version
  })
}

/** Where to reach MariaDB: `BENCH_MYSQL_URL`, else a local server's `root` without a password. */
export const MYSQL_ADMIN_URL = process.env.BENCH_MYSQL_URL !== undefined && process.env.BENCH_MYSQL_URL !== ''
  ? process.env.BENCH_MYSQL_URL
  : 'mysql://root@127.0.0.1:3306/'

/** The connection string of a database on the MariaDB server of {@link MYSQL_ADMIN_URL}. */
export function mysqlDatabaseUrl (name: string): string {
  const url = new URL(MYSQL_ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

async function withMysqlAdmin<T> (work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = mysql.createConnection({ uri: MYSQL_ADMIN_URL, connectTimeout: 5000 })
  try {
    await mysqlQuery(connection, 'select 1')
  } catch (error) {
    connection.destroy()
    const code = (error as { code?: string }).code
    const message = (error as Error).message
    if ((code !== undefined && CONNECTION_ERRORS.has(code)) || /timeout|connect/i.test(message)) {
      throw new DatabaseUnavailableError(`no MariaDB server answers at ${redact(MYSQL_ADMIN_URL)} (${code ?? message})`, 'mysql')
    }
    throw error
  }
  try {
    return await work(connection)
  } finally {
    await new Promise<void>((resolve) => connection.end(() => resolve()))
  }
}

function mysqlQuery<R> (connection: mysql.Connection, statement: string): Promise<R> {
  return new Promise((resolve, reject) => {
    connection.query(statement, (error, rows) => error === null ? resolve(rows as R) : reject(error))
  })
}

/** Creates a MariaDB database in `utf8mb4` compared by code point (as the example app's tables); returns `version()`. */
export async function createMysqlBenchDatabase (name: string): Promise<string> {
  return withMysqlAdmin(async (connection) => {
    const [{ version }] = await mysqlQuery<Array<{ version: string }>>(connection, 'select version() as version')
    await mysqlQuery(connection, `create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`)
    return version
  })
}

/** Drops a MariaDB database. */
export async function dropMysqlBenchDatabase (name: string): Promise<void> {
  await withMysqlAdmin((connection) => mysqlQuery(connection, `drop database if exists \`${name}\``))
}

/**
 * Creates an empty SQLite database file in a new temporary directory, in WAL mode (as `createSqliteDatabase` opens a
 * file); returns the `sqlite:<file>` URL of the servers, the directory (to remove at the end) and SQLite's version.
 */
export function createSqliteBenchDatabase (): { url: string; directory: string; version: string } {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'fjsonapi-bench-'))
  const file = path.join(directory, 'bench.db')
  const database = new Database(file)
  try {
    database.pragma('journal_mode = WAL')
    const { version } = database.prepare('select sqlite_version() as version').get() as { version: string }
    return { url: `sqlite:${file}`, directory, version }
  } finally {
    database.close()
  }
}

/** Removes a SQLite database's directory (the file, its WAL and shared-memory files). */
export function removeSqliteBenchDatabase (directory: string): void {
  rmSync(directory, { recursive: true, force: true })
}

/** Drops a database, closing whatever connections are left on it. */
export async function dropDatabase (name: string): Promise<void> {
  await withAdmin(async (client) => {
    await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    )
    await client.query(`drop database if exists "${name}"`)
  })
}

// --- seed data -------------------------------------------------------------------------------------------------

const FIRST_NAMES = [
  'Ada', 'Grace', 'Alan', 'Barbara', 'Edsger', 'Margaret', 'Donald', 'Frances', 'Ken', 'Radia', 'Dennis', 'Sophie',
  'John', 'Karen', 'Niklaus', 'Hedy', 'Tim', 'Shafi', 'Leslie', 'Lynn', 'Guido', 'Jean', 'Bjarne', 'Mary',
  'Linus', 'Anita', 'James', 'Evelyn', 'Robin', 'Joan',
]
const LAST_NAMES = [
  'Lovelace', 'Hopper', 'Turing', 'Liskov', 'Dijkstra', 'Hamilton', 'Knuth', 'Allen', 'Thompson', 'Perlman',
  'Ritchie', 'Wilson', 'McCarthy', 'Jones', 'Wirth', 'Lamarr', 'Berners-Lee', 'Goldwasser', 'Lamport', 'Conway',
  'van Rossum', 'Sammet', 'Stroustrup', 'Keller', 'Torvalds', 'Borg', 'Gosling', 'Berezin', 'Milner', 'Clarke',
]
const WORDS = [
  'compiler', 'kernel', 'lambda', 'pointer', 'closure', 'monad', 'cache', 'thread', 'socket', 'packet', 'parser',
  'vector', 'matrix', 'tensor', 'graph', 'heap', 'stack', 'queue', 'mutex', 'future', 'stream', 'buffer', 'index',
]
const GENDERS = ['female', 'male', 'non-binary', null]
const MODELS = [
  'ThinkPad X1 Carbon', 'MacBook Pro 14', 'Dell XPS 13', 'Framework Laptop 13', 'HP EliteBook 840', 'Surface Laptop 5',
  'Raspberry Pi 5', 'Mac mini', 'ZenBook 14', 'Precision 5570',
]

/** A small deterministic PRNG (mulberry32), so every run seeds the same data. */
function random (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function pad (value: number, length = 2): string {
  return String(value).padStart(length, '0')
}

/** 1,000 users with realistic attributes (some without first or last name, email or age) × 3 computers each. */
export function seedRows (): { users: Array<Record<string, unknown>>; computers: Array<Record<string, unknown>> } {
  const next = random(20240601)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]
  const users: Array<Record<string, unknown>> = []
  const computers: Array<Record<string, unknown>> = []
  for (let index = 1; index <= USERS; index++) {
    const first = pick(FIRST_NAMES)
    const last = pick(LAST_NAMES)
    const age = 18 + Math.floor(next() * 60)
    const birthYear = 2024 - age
    const words = Array.from({ length: Math.floor(next() * 5) }, () => pick(WORDS))
    const handle = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '') + index
    users.push({
      name: handle,
      // About one user in ten has only one of the names, so `display_name` takes each of its branches.
      first_name: index % 20 === 7 ? null : first,
      last_name: index % 20 === 13 ? null : last,
      email: index % 25 === 3 ? null : `${handle}@example.com`,
      age: index % 30 === 11 ? null : age,
      status: index % 9 === 0 ? 'inactive' : 'active',
      birth_date: index % 30 === 11 ? null : `${birthYear}-${pad(1 + Math.floor(next() * 12))}-${pad(1 + Math.floor(next() * 28))}`,
      gender: pick(GENDERS),
      words,
    })
    const owned = index >= MANY_COMPUTERS_USERS.first && index <= MANY_COMPUTERS_USERS.last ? MANY_COMPUTERS : COMPUTERS_PER_USER
    for (let n = 1; n <= owned; n++) {
      computers.push({ serial: `SN-${pad(computers.length + 1, 6)}`, name: pick(MODELS), owner_id: index })
    }
  }
  return { users, computers }
}

/** A Kysely instance on a benchmark database, for its migration and seed (the engine is the URL's). */
function openSetupDatabase (url: string, engine: BenchEngine): Kysely<any> {
  if (engine === 'mysql') {
    const pool = mysql.createPool({ uri: url, ...MYSQL_VALUE_OPTIONS, dateStrings: [...MYSQL_VALUE_OPTIONS.dateStrings], connectionLimit: 2 })
    return new Kysely<any>({ dialect: new MysqlDialect({ pool }) })
  }
  if (engine === 'sqlite') {
    const database = new Database(url.slice('sqlite:'.length))
    database.pragma('foreign_keys = ON')
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT}`)
    return new Kysely<any>({ dialect: new SqliteDialect({ database }) })
  }
  return new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) })
}

/**
 * Migrates the database with the example's migrations and loads the seed in a few batched inserts: the same rows on
 * every engine (`words` as JSON text on MariaDB and SQLite, where the column holds JSON).
 */
export async function migrateAndSeed (connectionString: string, engine: BenchEngine = 'postgres'): Promise<void> {
  const db = openSetupDatabase(connectionString, engine)
  try {
    await migrateToLatest(db)
    const seeded = seedRows()
    const users = engine === 'postgres' ? seeded.users : seeded.users.map((user) => ({ ...user, words: JSON.stringify(user.words) }))
    const { computers } = seeded
    await db.transaction().execute(async (trx) => {
      for (let start = 0; start < users.length; start += 500) {
        await trx.insertInto('users').values(users.slice(start, start + 500)).execute()
      }
      for (let start = 0; start < computers.length; start += 1000) {
        await trx.insertInto('computers').values(computers.slice(start, start + 1000)).execute()
      }
    })
    // Fresh statistics, so the planner sees the seeded tables as they are.
    await (engine === 'mysql' ? sql`analyze table users, computers` : sql`analyze`).execute(db)
  } finally {
    await db.destroy()
  }
}
