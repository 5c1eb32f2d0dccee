/**
 * Which engine the suite runs on, from `DATABASE_URL` (as `openTestDatabase` reads it): `postgres` for the embedded
 * PGlite (unset) and a PostgreSQL server, `mysql` for `mysql://…` (MariaDB), `sqlite` for `sqlite:…`.
 *
 * Every behavioural test runs on every engine. A test about one engine's own mechanism (the `pg` driver, a server-side
 * cursor, PostgreSQL's SQL in a fixture) says so: `{ skip: onlyOn('postgres', 'why') }` on the test, or, for a whole
 * file, its body in a module of its own that the file imports only on that engine (see `test/lib/database/`).
 */
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
