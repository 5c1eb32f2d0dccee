import { randomBytes } from 'node:crypto'
import { sql, type Kysely, type LogEvent } from 'kysely'
import pg from 'pg'
import mysql2 from 'mysql2'
import { openFreshDatabase, openPreparedDatabase } from '../../examples/shared/prepared-database.js'
import { appSchema } from '../../examples/shared/example-schemas.js'
import { createMysqlDatabase, createPostgresDatabase, createSqliteDatabase } from '../../lib/index.js'
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
    const { db, close } = await createSqliteDatabase<any>({ log: counter.log })
    await migrate(db)
    return { db, counter, close }
  }
  if (url?.startsWith('mysql:') === true) {
    // A database of its own on that server (dropped on close), in utf8mb4 compared by code point as the app's tables.
    const name = `test_${randomBytes(6).toString('hex')}`
    const server = new URL(url)
    server.pathname = '/'
    const admin = await createMysqlDatabase<any>({ uri: server.toString(), pool: { connectionLimit: 1 } })
    await sql`create database ${sql.id(name)} character set utf8mb4 collate utf8mb4_bin`.execute(admin.db)
    const own = new URL(url)
    own.pathname = `/${name}`
    // The tests' own setup binds lists of words as PostgreSQL takes them (JavaScript arrays), where MariaDB stores
    // JSON text: this database binds an array parameter as its JSON text (mysql2 would expand it into a list). The
    // library never binds an array on MariaDB (its engine converts every stored value; test/http/engine-parity.test.ts
    // runs it without this).
    const queryFormat = (query: string, values: unknown): string =>
      mysql2.format(query, Array.isArray(values) ? values.map((value) => Array.isArray(value) ? JSON.stringify(value) : value) : values as never, false, 'Z')
    const { db, close } = await createMysqlDatabase<any>({ uri: own.toString(), pool: { connectionLimit: 4, queryFormat }, log: counter.log })
    await migrate(db)
    return {
      db,
      counter,
      async close () {
        await close()
        await sql`drop database if exists ${sql.id(name)}`.execute(admin.db)
        await admin.close()
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
