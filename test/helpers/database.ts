import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely'
import pg from 'pg'
import { createEmbeddedDatabase } from '../../lib/embedded.js'
import { withCallbackQueries } from '../../lib/index.js'
import { migrateToLatest } from '../../examples/app/migrations.js'

/** Counts the SQL statements Kysely runs, to assert that reads issue a fixed number of queries. */
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
    if (event.level === 'query') {
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
 * by default; with `DATABASE_URL`, a schema of its own on that server (dropped on close), so test files can run in
 * parallel.
 */
export async function openTestDatabase (migrate: Migrate = migrateToLatest): Promise<TestDatabase> {
  const counter = new StatementCounter()
  const url = process.env.DATABASE_URL
  if (url === undefined || url === '') {
    const embedded = await createEmbeddedDatabase<any>({ log: counter.log })
    await migrate(embedded.db)
    return { db: embedded.db, counter, close: embedded.close }
  }
  const schema = `test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  // The pool as docs/production.md advises for a pool of your own: its clients build every query with its callback.
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4, Client: withCallbackQueries(pg.Client) })
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: counter.log })
  await migrate(db, { schema })
  return {
    db,
    counter,
    async close () {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(db)
      await db.destroy()
    },
  }
}
