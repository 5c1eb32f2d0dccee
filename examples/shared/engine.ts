/**
 * Which database engine an example runs on, from its Kysely instance's adapter: what its migrations and custom filter
 * operators write per engine (column types, defaults, SQL functions).
 */
import { MysqlAdapter, SqliteAdapter, type Kysely } from 'kysely'
import type { EngineName } from '../../lib/index.js'

export function engineOf (db: Kysely<any>): EngineName {
  const adapter = db.getExecutor().adapter
  if (adapter instanceof SqliteAdapter) return 'sqlite'
  if (adapter instanceof MysqlAdapter) return 'mysql'
  return 'postgres'
}
