/**
 * The benchmark database as the example application opens it (`examples/shared/database.ts`): the library's
 * `createPostgresDatabase`, `createMysqlDatabase` or `createSqliteDatabase`, by the engine of the URL, with the pool
 * size every benchmark server has (`serve.ts`).
 */
import type { Kysely } from 'kysely'
import { createMysqlDatabase, createPostgresDatabase, createSqliteDatabase } from '../../lib/index.js'
import { MYSQL_POOL_SETTINGS, POOL_SETTINGS, benchDatabaseUrl, engineOfUrl, sqliteFileOf, statementLog } from './serve.js'

export async function openLibraryDatabase (): Promise<{ readonly db: Kysely<any>; readonly close: () => Promise<void> }> {
  const url = benchDatabaseUrl()
  switch (engineOfUrl(url)) {
    case 'mysql':
      return await createMysqlDatabase<any>({ uri: url, pool: { ...MYSQL_POOL_SETTINGS }, log: statementLog })
    case 'sqlite':
      return await createSqliteDatabase<any>({ filename: sqliteFileOf(url), log: statementLog })
    default:
      return await createPostgresDatabase<any>({ connectionString: url, pool: { ...POOL_SETTINGS }, log: statementLog })
  }
}
