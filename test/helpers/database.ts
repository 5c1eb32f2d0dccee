import { randomBytes } from 'node:crypto'
import Database from 'better-sqlite3'
import { Kysely, sql, type LogEvent, type SqliteDatabase } from 'kysely'
import pg from 'pg'
import mysql2 from 'mysql2'
import { openFreshDatabase, openPreparedDatabase } from '../../examples/shared/prepared-database.js'
import { appSchema } from '../../examples/shared/example-schemas.js'
import { JsonApiSqliteDialect, createMysqlDatabase, createPostgresDatabase } from '../../lib/index.js'
import { migrateToLatest } from '../../examples/app/migrations.js'

/** Counts the SQL statements Kysely runs (those the database refused too), to assert that reads issue a fixed number of queries. */
export class StatementCounter {
  count = 0
  readonly statements: string[] = []
  /** The parameters of each statement, in the order of `statements`. */
  readonly parameters: Array<readonly unknown[]> = []
  reset (): void {
    this.count = 0
    this.statements.length = 0
    this.parameters.length = 0
  }

  readonly log = (event: LogEvent): void => {
    if (event.level === 'query' || event.level === 'error') {
      this.count++
      this.statements.push(event.query.sql)
      this.parameters.push(event.query.parameters)
    }
  }
}

/** A parameter as the test database binds it: an array (the tests' setup binds lists of words as PostgreSQL takes them) as its JSON text. */
function arrayAsJson (value: unknown): unknown {
  return Array.isArray(value) ? JSON.stringify(value) : value
}

/**
 * An in-memory SQLite database as `createSqliteDatabase` opens one (foreign keys on), whose statements bind an array
 * parameter as its JSON text: the tests' own setup binds lists of words as PostgreSQL takes them (JavaScript arrays),
 * where SQLite stores JSON text and `better-sqlite3` refuses arrays. The library never binds an array on SQLite (its
 * engine converts every stored value; test/http/engine-parity.test.ts runs it on `createSqliteDatabase` itself).
 */
function sqliteArraysAsJson (): SqliteDatabase {
  const database = new Database(':memory:')
  database.pragma('foreign_keys = ON')
  const prepare = database.prepare.bind(database)
  const bound = new Set(['all', 'get', 'run', 'iterate'])
  return Object.assign(database, {
    prepare: (source: string) => new Proxy(prepare(source), {
      get (statement, property, receiver) {
        const value = Reflect.get(statement, property, receiver) as unknown
        if (typeof property !== 'string' || !bound.has(property) || typeof value !== 'function') return value
        return (...parameters: unknown[]) => (value as (...args: unknown[]) => unknown).apply(statement, parameters.map((parameter) =>
          Array.isArray(parameter) ? parameter.map(arrayAsJson) : arrayAsJson(parameter)) as never)
      },
    }),
  }) as unknown as SqliteDatabase
}

/**
 * The name of a database of its own for a test file on the MariaDB server of `url`: the database `url` names (as
 * `.ci/run` creates one) or `fja`, then `what` and random digits, so that whoever made the first can find and drop
 * what a test file left behind (`<name>_%`).
 */
export function mysqlDatabaseName (url: string, what: string): string {
  const base = decodeURIComponent(new URL(url).pathname.slice(1)) || 'fja'
  return `${base}_${what}_${randomBytes(5).toString('hex')}`.slice(0, 64)
}

/** A fresh database on a MariaDB server, from {@link freshMysqlDatabase}. */
export interface FreshMysqlDatabase {
  /** Its name, and the address of the server with that database. */
  readonly name: string
  readonly url: string
  /** Drops the database (whatever a test left in it) and closes the admin connection; once, however often called. */
  readonly drop: () => Promise<void>
}

/**
 * Creates a database of its own (named by {@link mysqlDatabaseName}, in utf8mb4 compared by code point as the example
 * app's tables) on the MariaDB server of `url`, through an admin connection that waits at most 2 s for the server;
 * or answers why not, when no server answers there.
 */
export async function freshMysqlDatabase (url: string, what: string): Promise<FreshMysqlDatabase | string> {
  const server = new URL(url)
  server.pathname = '/'
  const admin = await createMysqlDatabase<any>({ uri: server.toString(), connectionTimeout: 2000, pool: { connectionLimit: 1 } })
  const name = mysqlDatabaseName(url, what)
  try {
    await sql`create database ${sql.id(name)} character set utf8mb4 collate utf8mb4_bin`.execute(admin.db)
  } catch (error) {
    await admin.close()
    return `no MariaDB/MySQL server at ${server.host} (${(error as Error).message})`
  }
  const own = new URL(url)
  own.pathname = `/${name}`
  let dropped: Promise<void> | undefined
  return {
    name,
    url: own.toString(),
    drop: () => (dropped ??= (async () => {
      try {
        await sql`drop database if exists ${sql.id(name)}`.execute(admin.db)
      } finally {
        await admin.close()
      }
    })()),
  }
}

/** A migrated example database for one test file. */
export interface TestDatabase {
  readonly db: Kysely<any>
  readonly counter: StatementCounter
  readonly close: () => Promise<void>
}

/** Migrates a test database (`schema`: where the migrator keeps its tables on PostgreSQL). */
export type Migrate = (db: Kysely<any>, options?: { schema?: string }) => Promise<void>

/**
 * Opens a database for a test file, migrated by `migrate` (the example app's migrations by default): embedded PGlite
 * by default; with a `DATABASE_URL` of PostgreSQL, a schema of its own on that server (dropped on close), so test
 * files can run in parallel; with `DATABASE_URL=mysql://…`, a database of its own on that server (dropped on close);
 * with `DATABASE_URL=sqlite:…` (any path), a SQLite database in memory of its own.
 */
export async function openTestDatabase (migrate: Migrate = migrateToLatest): Promise<TestDatabase> {
  const counter = new StatementCounter()
  const url = process.env.DATABASE_URL
  if (url?.startsWith('sqlite:') === true) {
    const db = new Kysely<any>({ dialect: new JsonApiSqliteDialect({ database: sqliteArraysAsJson() }), log: counter.log })
    await migrate(db)
    return { db, counter, close: () => db.destroy() }
  }
  if (url?.startsWith('mysql:') === true) {
    const fresh = await freshMysqlDatabase(url, 'test')
    if (typeof fresh === 'string') throw new Error(fresh)
    // The tests' own setup binds lists of words as PostgreSQL takes them (JavaScript arrays), where MariaDB stores
    // JSON text: this database binds an array parameter as its JSON text (mysql2 would expand it into a list). The
    // library never binds an array on MariaDB (its engine converts every stored value; test/http/engine-parity.test.ts
    // runs it without this).
    const queryFormat = (query: string, values: unknown): string =>
      mysql2.format(query, Array.isArray(values) ? values.map(arrayAsJson) as never : values as never, false, 'Z')
    const { db, close } = await createMysqlDatabase<any>({ uri: fresh.url, pool: { connectionLimit: 4, queryFormat }, log: counter.log })
    await migrate(db)
    return {
      db,
      counter,
      async close () {
        await close()
        await fresh.drop()
      },
    }
  }
  if (url === undefined || url === '') {
    // Started from a dumped data directory (the examples' cache in node_modules/.cache), not from initdb: the example
    // app's schema comes migrated, any other starts as initdb leaves it. Seconds less per test file.
    const quiet = { log: counter.log, warn: () => {} }
    const embedded = migrate === migrateToLatest ? (await openPreparedDatabase(appSchema, quiet)).database : await openFreshDatabase(quiet)
    if (migrate !== migrateToLatest) await migrate(embedded.db)
    return { db: embedded.db, counter, close: embedded.close }
  }
  const schema = `test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  // Opened as the example app opens PostgreSQL, so that the suite runs what applications run (the statements of the
  // repository straight on the pool, outside transactions).
  const { db, close } = await createPostgresDatabase<any>({ connectionString: url, pool: { options: `-c search_path=${schema}`, max: 4 }, log: counter.log })
  await migrate(db, { schema })
  return {
    db,
    counter,
    async close () {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(db)
      await close()
    },
  }
}
