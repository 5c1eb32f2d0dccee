import { MysqlAdapter, PostgresAdapter, SqliteAdapter, type Kysely } from 'kysely'
import type { SqlEngine } from './sql-engine.js'
import { POSTGRES } from './postgres-engine.js'
import { SQLITE } from './sqlite-engine.js'
import { MYSQL } from './mysql-engine.js'

/**
 * The engine of a Kysely instance, from its dialect's adapter: PostgreSQL for Kysely's `PostgresAdapter` and every
 * adapter built on it (`PostgresDialect`, the library's `JsonApiPostgresDialect`, PGlite under either); SQLite for
 * Kysely's `SqliteAdapter` (`SqliteDialect` on `better-sqlite3`); MariaDB/MySQL for Kysely's `MysqlAdapter`
 * (`MysqlDialect` on `mysql2`). Any other adapter is refused at once, with its
 * name, rather than sent SQL it cannot run.
 */
export function engineOf (db: Kysely<any>): SqlEngine {
  const adapter = db.getExecutor().adapter
  if (adapter instanceof PostgresAdapter) return POSTGRES
  if (adapter instanceof SqliteAdapter) return SQLITE
  if (adapter instanceof MysqlAdapter) return MYSQL
  throw new Error(`fastify-jsonapi: the Kysely instance's dialect (adapter ${adapter.constructor.name}) is not one the repository runs on; supported: PostgreSQL (PostgresDialect, JsonApiPostgresDialect), MariaDB/MySQL (MysqlDialect), SQLite (SqliteDialect)`)
}
