/**
 * Kysely migrations kept in code, as the examples use them: `migrateWith(migrations)` is a `migrateToLatest` that is
 * idempotent (Kysely's migrator records what it has run in its own tables, `kysely_migration` and
 * `kysely_migration_lock`, so a second start on the same database does nothing).
 */
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely'

/** Brings a database up to date; `schema` is where Kysely keeps its migration tables (default: the search path). */
export type MigrateToLatest = (db: Kysely<any>, options?: { schema?: string }) => Promise<void>

/**
 * The `migrateToLatest` of a set of migrations. It throws when a migration fails (the failing one is rolled back),
 * naming it.
 */
export function migrateWith (migrations: Readonly<Record<string, Migration>>): MigrateToLatest {
  const provider: MigrationProvider = { getMigrations: async () => ({ ...migrations }) }
  return async function migrateToLatest (db, options = {}) {
    const migrator = new Migrator({ db, provider, migrationTableSchema: options.schema })
    const { error, results } = await migrator.migrateToLatest()
    if (error !== undefined) {
      const failed = results?.find((result) => result.status === 'Error')
      const message = failed === undefined ? 'database migration failed' : `database migration "${failed.migrationName}" failed`
      throw new Error(message, { cause: error })
    }
  }
}
