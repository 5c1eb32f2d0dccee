/**
 * The benchmark database: a fresh PostgreSQL database per run (created through `pg`, dropped at the end), migrated
 * with the example application's migrations and seeded with 1,000 users × 3 computers.
 */
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { migrateToLatest } from '../examples/app/migrations.js'

/** Where to reach PostgreSQL: `DATABASE_URL`, else a local server with trust authentication. */
export const ADMIN_URL = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ''
  ? process.env.DATABASE_URL
  : 'postgres://postgres@127.0.0.1:5432/postgres'

export const USERS = 1000
export const COMPUTERS_PER_USER = 3

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

/** Thrown when no PostgreSQL server answers at {@link ADMIN_URL}. */
export class DatabaseUnavailableError extends Error {}

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
    for (let n = 1; n <= COMPUTERS_PER_USER; n++) {
      const number = (index - 1) * COMPUTERS_PER_USER + n
      computers.push({ serial: `SN-${pad(number, 6)}`, name: pick(MODELS), owner_id: index })
    }
  }
  return { users, computers }
}

/** Migrates the database with the example's migrations and loads the seed in a few batched inserts. */
export async function migrateAndSeed (connectionString: string): Promise<void> {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString, max: 2 }) }) })
  try {
    await migrateToLatest(db)
    const { users, computers } = seedRows()
    await db.transaction().execute(async (trx) => {
      for (let start = 0; start < users.length; start += 500) {
        await trx.insertInto('users').values(users.slice(start, start + 500)).execute()
      }
      for (let start = 0; start < computers.length; start += 1000) {
        await trx.insertInto('computers').values(computers.slice(start, start + 1000)).execute()
      }
    })
    // Fresh statistics, so the planner sees the seeded tables as they are.
    await sql`analyze`.execute(db)
  } finally {
    await db.destroy()
  }
}
