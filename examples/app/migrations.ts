/**
 * The schema of the example application, as Kysely migrations kept in code.
 *
 * `migrateToLatest` is idempotent: Kysely's migrator records what it has run in its own tables
 * (`kysely_migration`, `kysely_migration_lock`), so a second start on the same database does nothing.
 *
 * Foreign key columns are all indexed: by an explicit index, or by a unique constraint whose index starts with the
 * column (`user_bios.user_id`, `workplaces.user_id`, `parent_to_child_associations.parent_id`).
 */
import { sql, type Migration } from 'kysely'
import { migrateWith } from '../shared/migrator.js'

const migrations: Record<string, Migration> = {
  '0001_groups_and_users': {
    async up (db) {
      await db.schema
        .createTable('groups')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .execute()

      await db.schema
        .createTable('users')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('email', 'text')
        .addColumn('age', 'integer')
        .addColumn('status', 'text', (col) => col.notNull().defaultTo('active'))
        .addColumn('birth_date', 'date')
        .addColumn('gender', 'text')
        .addColumn('words', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'`))
        .addColumn('date_create', 'date', (col) => col.notNull().defaultTo(sql`current_date`))
        .addColumn('group_id', 'integer', (col) => col.references('groups.id').onDelete('set null'))
        .execute()
      await db.schema.createIndex('users_group_id_index').on('users').column('group_id').execute()
    },
    async down (db) {
      await db.schema.dropTable('users').execute()
      await db.schema.dropTable('groups').execute()
    },
  },

  '0002_user_dependents': {
    async up (db) {
      await db.schema
        .createTable('computers')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('serial', 'text')
        .addColumn('name', 'text')
        .addColumn('owner_id', 'integer', (col) => col.references('users.id').onDelete('set null'))
        .execute()
      await db.schema.createIndex('computers_owner_id_index').on('computers').column('owner_id').execute()

      // One bio per user: the unique constraint also indexes `user_id`.
      await db.schema
        .createTable('user_bios')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('birth_city', 'text', (col) => col.notNull())
        .addColumn('favourite_movies', 'text')
        .addColumn('user_id', 'integer', (col) => col.notNull().unique().references('users.id').onDelete('cascade'))
        .execute()

      await db.schema
        .createTable('posts')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('title', 'text', (col) => col.notNull())
        .addColumn('body', 'text', (col) => col.notNull().defaultTo(''))
        .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
        .execute()
      await db.schema.createIndex('posts_user_id_index').on('posts').column('user_id').execute()

      // At most one workplace per user: the unique constraint also indexes `user_id`.
      await db.schema
        .createTable('workplaces')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('user_id', 'integer', (col) => col.unique().references('users.id').onDelete('set null'))
        .execute()
    },
    async down (db) {
      await db.schema.dropTable('workplaces').execute()
      await db.schema.dropTable('posts').execute()
      await db.schema.dropTable('user_bios').execute()
      await db.schema.dropTable('computers').execute()
    },
  },

  '0003_parents_and_children': {
    async up (db) {
      await db.schema
        .createTable('parents')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .execute()

      await db.schema
        .createTable('children')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .execute()

      // The unique (parent_id, child_id) constraint also indexes `parent_id` (its leading column).
      await db.schema
        .createTable('parent_to_child_associations')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('extra_data', 'varchar(50)')
        .addColumn('parent_id', 'integer', (col) => col.notNull().references('parents.id').onDelete('cascade'))
        .addColumn('child_id', 'integer', (col) => col.notNull().references('children.id').onDelete('cascade'))
        .addUniqueConstraint('parent_to_child_associations_parent_id_child_id_key', ['parent_id', 'child_id'])
        .execute()
      await db.schema
        .createIndex('parent_to_child_associations_child_id_index')
        .on('parent_to_child_associations')
        .column('child_id')
        .execute()
    },
    async down (db) {
      await db.schema.dropTable('parent_to_child_associations').execute()
      await db.schema.dropTable('children').execute()
      await db.schema.dropTable('parents').execute()
    },
  },

  '0004_photos': {
    async up (db) {
      await db.schema
        .createTable('photos')
        .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('words', 'jsonb')
        .execute()
    },
    async down (db) {
      await db.schema.dropTable('photos').execute()
    },
  },

  // Private notes: a note belongs to the user who wrote it and is visible to that user only (see resources.ts).
  '0005_notes': {
    async up (db) {
      await db.schema
        .createTable('notes')
        .addColumn('id', 'serial', (col) => col.primaryKey())
        .addColumn('text', 'text', (col) => col.notNull())
        .addColumn('owner_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
        .execute()
      await db.schema.createIndex('notes_owner_id_index').on('notes').column('owner_id').execute()
    },
    async down (db) {
      await db.schema.dropTable('notes').execute()
    },
  },
}

/**
 * Brings the database schema up to date. Throws when a migration fails (the failing one is rolled back).
 * `options.schema`: the PostgreSQL schema of Kysely's migration tables, when the tables live outside `public` (the
 * tests give each test file a schema of its own through `search_path`).
 */
export const migrateToLatest = migrateWith(migrations)
