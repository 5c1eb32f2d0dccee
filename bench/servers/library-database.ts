/**
 * The benchmark database as the example application opens PostgreSQL (`examples/shared/database.ts`): the library's
 * `createPostgresDatabase`, with the pool size every benchmark server has (`serve.ts`).
 */
import { createPostgresDatabase, type PostgresDatabase } from '../../lib/index.js'
import { POOL_SETTINGS, benchDatabaseUrl } from './serve.js'

export async function openLibraryDatabase (): Promise<PostgresDatabase<any>> {
  return await createPostgresDatabase<any>({ connectionString: benchDatabaseUrl(), pool: { ...POOL_SETTINGS } })
}
