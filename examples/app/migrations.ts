/**
 * The schema of the example application, as Kysely migrations kept in code.
 *
 * `migrateToLatest` is idempotent: Kysely's migrator records what it has run in its own tables
 * (`kysely_migration`, `kysely_migration_lock`), so a second start on the same database does nothing.
 *
 * Foreign key columns are all indexed: by an explicit index, or by a unique constraint whose index starts with the
 * column (`user_bios.user_id`, `workplaces.user_id`, `parent_to_child_associations.parent_id`).
 */
import { sql, type CreateTableBuilder, type Kysely, type Migration } from 'kysely'
import { migrateWith } from '../shared/migrator.js'
import { engineOf } from '../shared/engine.js'

/**
 * A table with its `id` column: `serial` on PostgreSQL, `integer primary key autoincrement` on SQLite (an id is never
 * used twice, as with a sequence), `integer auto_increment` on MariaDB/MySQL. On MariaDB/MySQL every table compares
 * and sorts its text by code point (`utf8mb4_bin`), as PostgreSQL's `C.UTF-8` collation does: `eq` is case-sensitive
 * and pages come in the same order on every engine.
 */
function createTable (db: Kysely<any>, name: string): CreateTableBuilder<string, 'id'> {
  const engine = engineOf(db)
  const table = tableOf(db, name)
  return engine === 'postgres'
    ? table.addColumn('id', 'serial', (col) => col.primaryKey())
    : table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
}

/** A new table, in `utf8mb4` with its binary collation on MariaDB/MySQL. */
function tableOf (db: Kysely<any>, name: string): CreateTableBuilder<string, never> {
  const table = db.schema.createTable(name)
  return engineOf(db) === 'mysql' ? table.modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : table
}

/** The column types that differ: PostgreSQL's own, and SQLite's and MariaDB/MySQL's storage of the same values. */
function types (db: Kysely<any>) {
  const engine = engineOf(db)
  const sqlite = engine === 'sqlite'
  const mysql = engine === 'mysql'
  return {
    /** A list of words: `text[]`, a JSON array on SQLite (text) and MariaDB/MySQL (`json`). */
    words: sqlite ? sql`text` : mysql ? sql`json` : sql`text[]`,
    noWords: sqlite ? sql`'[]'` : mysql ? sql`(json_array())` : sql`'{}'`,
    /** A JSON document: `jsonb`, JSON text on SQLite, `json` on MariaDB/MySQL. */
    json: sqlite ? sql`text` : mysql ? sql`json` : sql`jsonb`,
    /** A UUID made by the database: `gen_random_uuid()`, a random version 4 UUID built by SQLite, `uuid()` on MariaDB. */
    uuid: sqlite ? sql`text` : mysql ? sql`char(36)` : sql`uuid`,
    newUuid: sqlite
      ? sql`(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))`
      : mysql ? sql`(uuid())` : sql`gen_random_uuid()`,
    /** Today, as the column's default. */
    today: sqlite ? sql`(current_date)` : mysql ? sql`(curdate())` : sql`current_date`,
  }
}

const migrations: Record<string, Migration> = {
  '0001_groups_and_users': {
    async up (db) {
      await createTable(db, 'groups')
        .addColumn('name', 'text', (col) => col.notNull())
        .execute()

      await createTable(db, 'users')
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('email', 'text')
        .addColumn('age', 'integer')
        .addColumn('status', 'text', (col) => col.notNull().defaultTo('active'))
        .addColumn('birth_date', 'date')
        .addColumn('gender', 'text')
        .addColumn('words', types(db).words, (col) => col.notNull().defaultTo(types(db).noWords))
        .addColumn('date_create', 'date', (col) => col.notNull().defaultTo(types(db).today))
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
      await createTable(db, 'computers')
        .addColumn('serial', 'text')
        .addColumn('name', 'text')
        .addColumn('owner_id', 'integer', (col) => col.references('users.id').onDelete('set null'))
        .execute()
      await db.schema.createIndex('computers_owner_id_index').on('computers').column('owner_id').execute()

      // One bio per user: the unique constraint also indexes `user_id`.
      await createTable(db, 'user_bios')
        .addColumn('birth_city', 'text', (col) => col.notNull())
        .addColumn('favourite_movies', 'text')
        .addColumn('user_id', 'integer', (col) => col.notNull().unique().references('users.id').onDelete('cascade'))
        .execute()

      await createTable(db, 'posts')
        .addColumn('title', 'text', (col) => col.notNull())
        .addColumn('body', 'text', (col) => col.notNull().defaultTo(''))
        .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
        .execute()
      await db.schema.createIndex('posts_user_id_index').on('posts').column('user_id').execute()

      // At most one workplace per user: the unique constraint also indexes `user_id`.
      await createTable(db, 'workplaces')
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
      await createTable(db, 'parents')
        .addColumn('name', 'text', (col) => col.notNull())
        .execute()

      await createTable(db, 'children')
        .addColumn('name', 'text', (col) => col.notNull())
        .execute()

      // The unique (parent_id, child_id) constraint also indexes `parent_id` (its leading column).
      await createTable(db, 'parent_to_child_associations')
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
      await tableOf(db, 'photos')
        .addColumn('id', types(db).uuid, (col) => col.primaryKey().defaultTo(types(db).newUuid))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('words', types(db).json)
        .execute()
    },
    async down (db) {
      await db.schema.dropTable('photos').execute()
    },
  },

  // Private notes: a note belongs to the user who wrote it and is visible to that user only (see resources.ts).
  '0005_notes': {
    async up (db) {
      await createTable(db, 'notes')
        .addColumn('text', 'text', (col) => col.notNull())
        .addColumn('owner_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
        .execute()
      await db.schema.createIndex('notes_owner_id_index').on('notes').column('owner_id').execute()
    },
    async down (db) {
      await db.schema.dropTable('notes').execute()
    },
  },

  // A user's phone number: visible to, and written by, that user only (the field rules in resources.ts).
  '0006_user_phone': {
    async up (db) {
      await db.schema.alterTable('users').addColumn('phone', 'text').execute()
    },
    async down (db) {
      await db.schema.alterTable('users').dropColumn('phone').execute()
    },
  },
}

/**
 * Brings the database schema up to date. Throws when a migration fails (the failing one is rolled back).
 * `options.schema`: the PostgreSQL schema of Kysely's migration tables, when the tables live outside `public` (the
 * tests give each test file a schema of its own through `search_path`).
 */
export const migrateToLatest = migrateWith(migrations)
