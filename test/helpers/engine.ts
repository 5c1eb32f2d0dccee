/**
 * Which engine the suite runs on, from `DATABASE_URL` (as `openTestDatabase` reads it): `postgres` for the embedded
 * PGlite (unset) and a PostgreSQL server, `mysql` for `mysql://…` (MariaDB), `sqlite` for `sqlite:…`.
 *
 * Every behavioural test runs on every engine. A test about one engine's own mechanism (the `pg` driver, a server-side
 * cursor, PostgreSQL's SQL in a fixture) says so: `{ skip: onlyOn('postgres', 'why') }` on the test, or, for a whole
 * file, its body in a module of its own that the file imports only on that engine (see `test/lib/database/`).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { EngineName } from '../../lib/index.js'

export function testEngine (): EngineName {
  const url = process.env.DATABASE_URL ?? ''
  if (url.startsWith('mysql:')) return 'mysql'
  if (url.startsWith('sqlite:')) return 'sqlite'
  return 'postgres'
}

/** Whether the suite runs on a PostgreSQL server (`DATABASE_URL=postgres://…`), not the embedded PGlite. */
export function onPostgresServer (): boolean {
  const url = process.env.DATABASE_URL ?? ''
  return /^postgres(ql)?:\/\//.test(url)
}

/**
 * A test's `skip` option: false on the engines named, else why the test is about them (`PostgreSQL only: …`).
 */
export function onlyOn (engines: EngineName | readonly EngineName[], why: string): string | false {
  const list: readonly EngineName[] = typeof engines === 'string' ? [engines] : engines
  if (list.includes(testEngine())) return false
  const names: Record<EngineName, string> = { postgres: 'PostgreSQL', mysql: 'MariaDB', sqlite: 'SQLite' }
  return `${list.map((engine) => names[engine]).join(' and ')} only: ${why}`
}

/**
 * PostgreSQL's statement text as this engine's dialect writes the same statement: `?` placeholders on MariaDB and
 * SQLite, identifiers quoted with backticks on MariaDB.
 */
export function dialectText (text: string): string {
  const engine = testEngine()
  if (engine === 'postgres') return text
  const placeheld = text.replace(/\$\d+/g, '?')
  return engine === 'mysql' ? placeheld.replace(/"/g, '`') : placeheld
}

/** A pattern of PostgreSQL's statement text as this engine's dialect writes the same statement (see `dialectText`). */
export function dialectPattern (pattern: RegExp): RegExp {
  const engine = testEngine()
  if (engine === 'postgres') return pattern
  const source = pattern.source.replace(/\\\$\d+/g, '\\?')
  return new RegExp(engine === 'mysql' ? source.replace(/"/g, '`') : source, pattern.flags)
}

/** A stored list or JSON object as written: JSON text on MariaDB and SQLite (docs/databases.md), read back parsed. */
export function storedJson<T extends Record<string, unknown> | undefined> (row: T, ...columns: string[]): T {
  if (row === undefined || testEngine() === 'postgres') return row
  const parsed: Record<string, unknown> = { ...row }
  for (const column of columns) if (typeof parsed[column] === 'string') parsed[column] = JSON.parse(parsed[column] as string)
  return parsed as T
}

/** A date column as `YYYY-MM-DD` text, on every engine (SQLite stores it so). */
export function dateText (column: string): RawBuilder<string> {
  const engine = testEngine()
  return engine === 'postgres' ? sql<string>`${sql.ref(column)}::text` : engine === 'mysql' ? sql<string>`cast(${sql.ref(column)} as char)` : sql<string>`${sql.ref(column)}`
}

/**
 * Empties `tables` (dependents first: on PostgreSQL `truncate … cascade` empties those that point at them too) and
 * starts their ids again at 1, on every engine.
 */
export async function emptyTables (db: Kysely<any>, tables: readonly string[]): Promise<void> {
  const engine = testEngine()
  if (engine === 'postgres') {
    await sql`truncate ${sql.join(tables.map((table) => sql.table(table)))} restart identity cascade`.execute(db)
  } else if (engine === 'mysql') {
    // TRUNCATE of a table that foreign keys point at needs their checks off (it restarts AUTO_INCREMENT too).
    await db.connection().execute(async (connection) => {
      await sql`set foreign_key_checks = 0`.execute(connection)
      try {
        for (const table of tables) await sql`truncate table ${sql.table(table)}`.execute(connection)
      } finally {
        await sql`set foreign_key_checks = 1`.execute(connection)
      }
    })
  } else {
    for (const table of tables) await db.deleteFrom(table).execute()
    await db.deleteFrom('sqlite_sequence').where('name', 'in', [...tables]).execute()
  }
}
