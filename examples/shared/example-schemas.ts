/**
 * The schemas of the examples: how each one migrates its database, and which source files decide what the migrations
 * create. The embedded database of an example starts from a data directory prepared with that schema
 * (`prepared-database.ts`), named after a hash of those files: a changed migration gets a new one.
 */
import type { Kysely } from 'kysely'
import { migrateToLatest as migrateApp } from '../app/migrations.js'
import { migrateToLatest as migrateTenants } from '../multi-tenant/migrations.js'

/** The schema of an example. */
export interface ExampleSchema {
  /** The example's name, in the name of its prepared data directory: letters, digits and dashes. */
  readonly name: string
  /** Brings a database up to date; idempotent (a second run on a migrated database changes nothing). */
  readonly migrate: (db: Kysely<any>) => Promise<void>
  /**
   * The files whose text decides the schema `migrate` creates: its migrations, and the migrator (which names
   * Kysely's own tables).
   */
  readonly sources: readonly URL[]
}

const migrator = new URL('./migrator.ts', import.meta.url)

/** The example application's (`examples/app`). */
export const appSchema: ExampleSchema = {
  name: 'app',
  migrate: (db) => migrateApp(db),
  sources: [new URL('../app/migrations.ts', import.meta.url), migrator],
}

/** The multi-tenant example's (`examples/multi-tenant`). */
export const multiTenantSchema: ExampleSchema = {
  name: 'multi-tenant',
  migrate: (db) => migrateTenants(db),
  sources: [new URL('../multi-tenant/migrations.ts', import.meta.url), migrator],
}

/** Every example's, as `npm run prepare` prepares them. */
export const exampleSchemas: readonly ExampleSchema[] = [appSchema, multiTenantSchema]
