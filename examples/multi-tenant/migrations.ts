/**
 * The schema of the multi-tenant example, as Kysely migrations kept in code.
 *
 * Every table of a resource has a `tenant_id text not null` column, indexed: each statement the service runs filters
 * on it (the types' `scope`). Foreign key columns are indexed too: by an explicit index, or by the primary key of
 * `task_labels`, whose index starts with `task_id`.
 *
 * The foreign keys reference the `id` alone, so the database itself does not stop a row of one tenant from pointing
 * at a row of another (a composite key `(tenant_id, id)` would). The service never writes such a link — every link
 * target is checked within the request's scope — and never shows one that an older import or a manual fix left
 * behind: the scope of the related type hides it.
 *
 * `migrateToLatest` is idempotent: Kysely's migrator records what it has run in its own tables.
 */
import type { Migration } from 'kysely'
import { migrateWith } from '../shared/migrator.js'

const migrations: Record<string, Migration> = {
  '0001_tenant_tables': {
    async up (db) {
      for (const table of ['projects', 'members', 'labels']) {
        await db.schema
          .createTable(table)
          .addColumn('id', 'serial', (col) => col.primaryKey())
          .addColumn('tenant_id', 'text', (col) => col.notNull())
          .addColumn('name', 'text', (col) => col.notNull())
          .execute()
        await db.schema.createIndex(`${table}_tenant_id_index`).on(table).column('tenant_id').execute()
      }

      await db.schema
        .createTable('tasks')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('tenant_id', 'text', (col) => col.notNull())
        .addColumn('title', 'text', (col) => col.notNull())
        .addColumn('project_id', 'integer', (col) => col.references('projects.id').onDelete('set null'))
        .addColumn('assignee_id', 'integer', (col) => col.references('members.id').onDelete('set null'))
        .execute()
      await db.schema.createIndex('tasks_tenant_id_index').on('tasks').column('tenant_id').execute()
      await db.schema.createIndex('tasks_project_id_index').on('tasks').column('project_id').execute()
      await db.schema.createIndex('tasks_assignee_id_index').on('tasks').column('assignee_id').execute()

      // One row per (task, label): the primary key also indexes `task_id` (its leading column).
      await db.schema
        .createTable('task_labels')
        .addColumn('task_id', 'integer', (col) => col.notNull().references('tasks.id').onDelete('cascade'))
        .addColumn('label_id', 'integer', (col) => col.notNull().references('labels.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('task_labels_pkey', ['task_id', 'label_id'])
        .execute()
      await db.schema.createIndex('task_labels_label_id_index').on('task_labels').column('label_id').execute()
    },
    async down (db) {
      await db.schema.dropTable('task_labels').execute()
      await db.schema.dropTable('tasks').execute()
      for (const table of ['labels', 'members', 'projects']) await db.schema.dropTable(table).execute()
    },
  },
}

/**
 * Brings the database schema up to date. Throws when a migration fails (the failing one is rolled back).
 * `options.schema`: the PostgreSQL schema of Kysely's migration tables, when the tables live outside `public` (the
 * tests give each test file a schema of its own through `search_path`).
 */
export const migrateToLatest = migrateWith(migrations)
