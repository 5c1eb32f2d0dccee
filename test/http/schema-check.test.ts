/**
 * `checkDatabaseSchema` (on unless `false`): at `ready()`, every table and column the declarations name must exist, or
 * `ready()` fails with one DatabaseSchemaError listing everything missing. Runs on PGlite and, with DATABASE_URL, on PostgreSQL,
 * where the test database lives in a schema of its own reached through the search_path, on MariaDB (a database of its
 * own, another database standing for the other schema) and on SQLite (an attached database for the other schema).
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import {
  createMysqlDatabase, createSqliteDatabase, DatabaseSchemaError, jsonApi, KyselyRepository, type AnyResourceDeclaration, type JsonApiOptions,
  type MissingDatabaseObject,
} from '../../lib/index.js'
import { buildApp } from '../../examples/app/app.js'
import { resources as exampleResources } from '../../examples/app/resources.js'
import { openTestDatabase } from '../helpers/database.js'
import { onlyOn, testEngine } from '../helpers/engine.js'

const database = await openTestDatabase()
const { db, counter } = database
const engine = testEngine()
const suffix = randomBytes(4).toString('hex')
/**
 * A schema of the test's own, off the search_path (PostgreSQL runs several test files against one database); on
 * MariaDB a database of its own beside the test's, on SQLite a database attached under that name.
 */
const other = `fja_other_${suffix}`
if (engine === 'postgres') {
  await sql`create schema ${sql.id(other)}`.execute(db)
  await sql`create table ${sql.id(other, 'widgets')} (id serial primary key, label text)`.execute(db)
  // Columns for attributes stored as JSON: text (wrong), jsonb, json, a domain over jsonb, an array of jsonb (wrong).
  await sql`create domain ${sql.id(other, 'document')} as jsonb`.execute(db)
  await sql`create table ${sql.id(other, 'docs')} (id serial primary key, body text, payload jsonb, meta json, tagged ${sql.id(other, 'document')}, many jsonb[])`.execute(db)
  await sql`create view user_names as select id, name from users`.execute(db)
  await sql`create materialized view group_names as select id, name from groups`.execute(db)
  t.teardown(async () => {
    await sql`drop schema ${sql.id(other)} cascade`.execute(db)
    await sql`drop view user_names`.execute(db)
    await sql`drop materialized view group_names`.execute(db)
    await database.close()
  })
} else {
  if (engine === 'mysql') await sql`create database ${sql.id(other)} character set utf8mb4 collate utf8mb4_bin`.execute(db)
  else await sql`attach database ':memory:' as ${sql.id(other)}`.execute(db)
  await db.schema.createTable(`${other}.widgets`)
    .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('label', 'text')
    .execute()
  await sql`create view user_names as select id, name from users`.execute(db)
  // No materialized views: a view stands for one.
  await sql`create view group_names as select id, name from groups`.execute(db)
  t.teardown(async () => {
    if (engine === 'mysql') await sql`drop database ${sql.id(other)}`.execute(db)
    else await sql`detach database ${sql.id(other)}`.execute(db)
    await sql`drop view user_names`.execute(db)
    await sql`drop view group_names`.execute(db)
    await database.close()
  })
}

/** Where unqualified tables are looked for, as the error names it: the search path, MariaDB's database, SQLite's `main`. */
async function currentPath (db: Kysely<any>): Promise<string> {
  if (engine === 'mysql') return (await sql<{ path: string }>`select database() as path`.execute(db)).rows[0].path
  if (engine === 'sqlite') return 'main'
  return (await sql<{ path: string }>`select array_to_string(current_schemas(false), ', ') as "path"`.execute(db)).rows[0].path
}
const searchPath = await currentPath(db)

type Loose = Record<string, any>
type Test = Parameters<Parameters<typeof t.test>[0]>[0]

// Declarations over the example's tables, correct as given; each test breaks some of them.
const person = (): Loose => ({
  type: 'person',
  table: 'users',
  attributes: {
    name: { schema: Type.String() },
    mail: { schema: Type.Union([Type.String(), Type.Null()]), column: 'email' },
    full_name: { schema: Type.String(), derived: { columns: ['first_name', 'last_name'], compute: (row: Loose) => `${row.first_name} ${row.last_name}` } },
    secret: { schema: Type.Union([Type.String(), Type.Null()]), column: 'gender', hidden: true },
  },
  relationships: {
    machines: { kind: 'to-many', type: 'machine', inverse: 'owner' },
    team: { kind: 'to-one', type: 'team', foreignKey: 'group_id' },
  },
})
const machine = (): Loose => ({
  type: 'machine',
  table: 'computers',
  attributes: { serial: { schema: Type.Union([Type.String(), Type.Null()]) } },
  relationships: { owner: { kind: 'to-one', type: 'person', foreignKey: 'owner_id' } },
})
const team = (): Loose => ({ type: 'team', table: 'groups', attributes: { name: { schema: Type.String() } } })
const parent = (): Loose => ({
  type: 'parent',
  table: 'parents',
  attributes: { name: { schema: Type.String() } },
  relationships: {
    kids: {
      kind: 'to-many',
      type: 'child',
      through: { table: 'parent_to_child_associations', sourceKey: 'parent_id', targetKey: 'child_id', values: { extra_data: null } },
    },
  },
})
const child = (): Loose => ({ type: 'child', table: 'children', attributes: { name: { schema: Type.String() } } })
const declarations = (): Loose[] => [person(), machine(), team(), parent(), child()]

/** Registers the plugin with these declarations, then readies the app. */
async function ready (resources: Loose[], options: Partial<JsonApiOptions> = { db, checkDatabaseSchema: true }): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(jsonApi, { resources: resources as AnyResourceDeclaration[], ...options })
  await app.ready()
  return app
}

/** `ready()` must fail with one DatabaseSchemaError listing exactly these. */
async function assertMissing (t: Test, resources: Loose[], missing: MissingDatabaseObject[], lines: string[]): Promise<void> {
  let thrown: unknown
  const app = Fastify()
  try {
    await app.register(jsonApi, { db, resources: resources as AnyResourceDeclaration[], checkDatabaseSchema: true })
    await app.ready()
  } catch (error) {
    thrown = error
  } finally {
    await app.close()
  }
  if (!t.ok(thrown instanceof DatabaseSchemaError, 'a DatabaseSchemaError from ready()')) {
    t.error(thrown)
    return
  }
  const error = thrown as DatabaseSchemaError
  t.equal(error.name, 'DatabaseSchemaError')
  t.equal(error.code, 'FJA_SCHEMA_MISMATCH')
  t.same(error.missing, missing, 'everything missing, each with what needs it')
  t.same(error.mistyped, [], 'no column of the wrong type')
  const count = `${missing.length} ${missing.length === 1 ? 'table or column' : 'tables or columns'}`
  t.equal(error.message, `fastify-jsonapi: the database lacks ${count} the declarations need (search path: ${searchPath}):${lines.map((line) => `\n  - ${line}`).join('')}`)
}

/**
 * Whether a statement is one the repository runs at ready besides the check (`readForeignKeys`): it reads the foreign
 * key constraints (PostgreSQL's `pg_constraint`, MariaDB's `information_schema.key_column_usage`; SQLite's errors name
 * no constraint, so it reads none) and, on MariaDB and SQLite, the integer columns' types, to refuse a filter value
 * beyond a column's range before the statement (MariaDB's `information_schema.columns` with `column_type`; SQLite's
 * `pragma_table_info`, as its check reads it; docs/databases.md).
 */
function readsAtReady (statement: string): boolean {
  switch (engine) {
    case 'postgres': return statement.includes('pg_constraint') || statement.includes('pg_index')
    case 'mysql': return statement.includes('information_schema.key_column_usage') || statement.includes('column_type')
    case 'sqlite': return statement.includes('pragma_table_info')
  }
}
/**
 * How many statements the repository runs at ready: the foreign key constraints (none on SQLite, which names no
 * constraint), the integer columns in one more on MariaDB and SQLite, and on PostgreSQL the indexes in owner, then
 * id order of the to-many relationships (`OrderedKeys`) in one more.
 */
function readsAtReadyCount (): number {
  return engine === 'sqlite' ? 1 : 2
}
/** The schema check's catalog query: `to_regclass`, `information_schema.columns`, `pragma_table_info`. */
const CATALOG = { postgres: 'to_regclass', mysql: 'information_schema.columns', sqlite: 'pragma_table_info' }[engine]

/** The statements readying an app runs (the app closed after). */
async function statementsAtReady (build: () => Promise<FastifyInstance>): Promise<string[]> {
  counter.reset()
  const app = await build()
  await app.ready()
  const statements = [...counter.statements]
  await app.close()
  return statements
}

t.test('the example app, with the check on, becomes ready; the check is one query', async (t) => {
  const checked = await statementsAtReady(() => buildApp({ db }))
  // What the repository runs at ready without the check: the statements of the check are the others. (SQLite's
  // statements of both are the same text: they are told apart by count.)
  const unchecked = await statementsAtReady(async () => {
    const app = Fastify()
    await app.register(jsonApi, { db, resources: exampleResources, checkDatabaseSchema: false })
    return app
  })
  const checks = [...checked]
  for (const statement of unchecked) {
    const at = checks.indexOf(statement)
    if (at >= 0) checks.splice(at, 1)
  }
  t.equal(checks.filter((statement) => statement.includes(CATALOG)).length, 1, 'one catalog query')
  t.equal(checks.length, 1, 'nothing else')
  t.ok(unchecked.every(readsAtReady), 'besides it, the repository reads the foreign key constraints (and integer columns)')
  t.equal(unchecked.length, readsAtReadyCount(), 'once')
  t.equal(checked.length, 1 + unchecked.length)
})

t.test('correct declarations become ready: tables, views, materialized views, schema-qualified tables', async (t) => {
  const widget = { type: 'widget', table: `${other}.widgets`, attributes: { label: { schema: Type.Union([Type.String(), Type.Null()]) } } }
  const names = { type: 'user_name', table: 'user_names', routes: { create: false, update: false, delete: false }, attributes: { name: { schema: Type.String() } } }
  const groups = { type: 'group_name', table: 'group_names', routes: { create: false, update: false, delete: false }, attributes: { name: { schema: Type.String() } } }
  const app = await ready([...declarations(), widget, names, groups])
  t.ok(app.hasRoute({ method: 'GET', url: '/widget' }))
  const response = await app.inject({ method: 'GET', url: '/widget' })
  t.equal(response.statusCode, 200, 'the qualified table is the one queried')
  await app.close()
})

t.test('cannot become ready with a misspelt table, a misspelt column and a missing join table column: all in one error', async (t) => {
  const resources = declarations()
  resources[0].attributes.mail.column = 'emial'
  resources[1].table = 'computrs'
  resources[3].relationships.kids.through.targetKey = 'child_idd'
  await assertMissing(t, resources, [
    { table: 'users', column: 'emial', neededBy: [{ resource: 'person', field: 'mail' }] },
    { table: 'computrs', column: undefined, neededBy: [{ resource: 'machine', field: undefined }, { resource: 'person', field: 'machines' }] },
    { table: 'parent_to_child_associations', column: 'child_idd', neededBy: [{ resource: 'parent', field: 'kids' }] },
  ], [
    "no column 'emial' in 'users' (resource 'person', field 'mail')",
    "no table or view 'computrs' (resource 'machine'; resource 'person', field 'machines')",
    "no column 'child_idd' in 'parent_to_child_associations' (resource 'parent', field 'kids')",
  ])
})

t.test('cannot become ready with a missing id, derived, foreign key or inverse key column, or join table', async (t) => {
  const resources = declarations()
  resources[0].id = { column: 'uid' }
  resources[0].attributes.full_name.derived.columns = ['first_name', 'surname']
  resources[0].relationships.team.foreignKey = 'team_id'
  resources[1].relationships.owner.foreignKey = 'ownr_id'
  resources[3].relationships.kids.through = { table: 'parent_kids', sourceKey: 'parent_id', targetKey: 'kid_id', values: { note: 'x' } }
  await assertMissing(t, resources, [
    { table: 'users', column: 'uid', neededBy: [{ resource: 'person', field: 'id' }] },
    { table: 'users', column: 'surname', neededBy: [{ resource: 'person', field: 'full_name' }] },
    { table: 'computers', column: 'ownr_id', neededBy: [{ resource: 'person', field: 'machines' }, { resource: 'machine', field: 'owner' }] },
    { table: 'users', column: 'team_id', neededBy: [{ resource: 'person', field: 'team' }] },
    { table: 'parent_kids', column: undefined, neededBy: [{ resource: 'parent', field: 'kids' }] },
  ], [
    "no column 'uid' in 'users' (resource 'person', field 'id')",
    "no column 'surname' in 'users' (resource 'person', field 'full_name')",
    "no column 'ownr_id' in 'computers' (resource 'person', field 'machines'; resource 'machine', field 'owner')",
    "no column 'team_id' in 'users' (resource 'person', field 'team')",
    "no table or view 'parent_kids' (resource 'parent', field 'kids')",
  ])
})

t.test('an attribute stored as JSON needs a jsonb or json column (a domain over one counts); any other is one error with the missing', {
  skip: onlyOn('postgres', 'column types are checked on PostgreSQL only (MariaDB and SQLite: tables and columns, types not checked; docs/databases.md)'),
}, async (t) => {
  const doc = (attributes: Loose): Loose => ({ type: 'doc', table: `${other}.docs`, attributes })
  const fine = await ready([doc({
    payload: { schema: Type.Unknown(), storage: 'json' },
    meta: { schema: Type.Record(Type.String(), Type.Unknown()) },
    tagged: { schema: Type.Array(Type.String()), storage: 'json' },
    body: { schema: Type.Union([Type.String(), Type.Null()]) },
  })])
  await fine.close()

  let thrown: unknown
  const app = Fastify()
  try {
    await app.register(jsonApi, {
      db,
      checkDatabaseSchema: true,
      resources: [doc({
        body: { schema: Type.Unknown(), storage: 'json' },
        extra: { schema: Type.Object({ a: Type.String() }), column: 'body' },
        many: { schema: Type.Unknown(), storage: 'json' },
        payload: { schema: Type.Unknown(), storage: 'json' },
        gone: { schema: Type.Unknown(), storage: 'json' },
      })] as AnyResourceDeclaration[],
    })
    await app.ready()
  } catch (error) {
    thrown = error
  } finally {
    await app.close()
  }
  if (!t.ok(thrown instanceof DatabaseSchemaError, 'a DatabaseSchemaError from ready()')) return
  const error = thrown as DatabaseSchemaError
  t.equal(error.code, 'FJA_SCHEMA_MISMATCH')
  t.same(error.missing, [{ table: `${other}.docs`, column: 'gone', neededBy: [{ resource: 'doc', field: 'gone' }] }])
  t.same(error.mistyped, [
    { table: `${other}.docs`, column: 'body', type: 'text', expected: ['jsonb', 'json'], neededBy: [{ resource: 'doc', field: 'body' }, { resource: 'doc', field: 'extra' }] },
    { table: `${other}.docs`, column: 'many', type: 'jsonb[]', expected: ['jsonb', 'json'], neededBy: [{ resource: 'doc', field: 'many' }] },
  ])
  t.equal(error.message, 'fastify-jsonapi: the database lacks 1 table or column the declarations need and has 2 columns of a type the declarations ' +
    `cannot use (search path: ${searchPath}):` +
    `\n  - no column 'gone' in '${other}.docs' (resource 'doc', field 'gone')` +
    `\n  - column 'body' of '${other}.docs' is text, not jsonb or json (resource 'doc', field 'body'; resource 'doc', field 'extra')` +
    `\n  - column 'many' of '${other}.docs' is jsonb[], not jsonb or json (resource 'doc', field 'many')`)
})

t.test('cannot become ready when a table is only off the search_path, or in a schema that does not exist', {
  skip: onlyOn(['postgres', 'mysql'], 'SQLite has no search path: an unqualified name finds a table in any attached database'),
}, async (t) => {
  const widget = { type: 'widget', table: 'widgets', attributes: { label: { schema: Type.String() } } }
  const elsewhere = { type: 'gadget', table: `nosuch_${suffix}.gadgets`, attributes: { label: { schema: Type.String() } } }
  const qualified = { type: 'sprocket', table: `${other}.widgets`, attributes: { lable: { schema: Type.String() } } }
  await assertMissing(t, [widget, elsewhere, qualified], [
    { table: 'widgets', column: undefined, neededBy: [{ resource: 'widget', field: undefined }] },
    { table: `nosuch_${suffix}.gadgets`, column: undefined, neededBy: [{ resource: 'gadget', field: undefined }] },
    { table: `${other}.widgets`, column: 'lable', neededBy: [{ resource: 'sprocket', field: 'lable' }] },
  ], [
    "no table or view 'widgets' (resource 'widget')",
    `no table or view 'nosuch_${suffix}.gadgets' (resource 'gadget')`,
    `no column 'lable' in '${other}.widgets' (resource 'sprocket', field 'lable')`,
  ])
})

t.test('table and column names are matched exactly, as the quoted identifiers of the queries are', {
  skip: onlyOn(['postgres', 'mysql'], 'SQLite compares names case-insensitively, quoted ones too: "Groups" is the table groups'),
}, async (t) => {
  const resources = declarations()
  resources[0].attributes.name.column = 'Name'
  resources[2].table = 'Groups'
  await assertMissing(t, resources, [
    { table: 'users', column: 'Name', neededBy: [{ resource: 'person', field: 'name' }] },
    { table: 'Groups', column: undefined, neededBy: [{ resource: 'team', field: undefined }] },
  ], [
    "no column 'Name' in 'users' (resource 'person', field 'name')",
    "no table or view 'Groups' (resource 'team')",
  ])
})

t.test('the check is on by default (a misspelt table fails the start), and off with false', async (t) => {
  const resources = declarations()
  resources[1].table = 'computrs'
  await t.rejects(ready(resources, { db }), DatabaseSchemaError, 'unset: checked, and a mismatch fails ready()')
  counter.reset()
  const app = await ready(resources, { db, checkDatabaseSchema: false })
  t.same(counter.statements.filter((statement) => !readsAtReady(statement)), [], 'false: no check at ready')
  t.equal(counter.count, readsAtReadyCount(), 'only the foreign key constraints (and integer columns) read, which a misspelt table does not fail')
  await app.close()
})

t.test('a custom repository without db is not checked; with db it is', async (t) => {
  const resources = declarations()
  resources[1].table = 'computrs'
  counter.reset()
  const app = await ready(resources, { repository: new KyselyRepository(db), checkDatabaseSchema: true })
  t.same(counter.statements.filter((statement) => !readsAtReady(statement)), [], 'no check at ready')
  t.equal(counter.count, readsAtReadyCount(), 'only the repository\'s reads at ready')
  await app.close()
  await assertMissing(t, resources, [
    { table: 'computrs', column: undefined, neededBy: [{ resource: 'machine', field: undefined }, { resource: 'person', field: 'machines' }] },
  ], ["no table or view 'computrs' (resource 'machine'; resource 'person', field 'machines')"])
  const both = Fastify()
  await both.register(jsonApi, { db, repository: new KyselyRepository(db), resources: resources as AnyResourceDeclaration[], checkDatabaseSchema: true })
  await t.rejects(async () => { await both.ready() }, DatabaseSchemaError, 'a repository and db: checked through db')
  await both.close()
})

t.test('the example app fails to become ready on a database without its tables', async (t) => {
  const empty = `fja_empty_${suffix}`
  /** The example app on `target`, whose tables are not there: ready() must fail naming each. */
  const fails = async (target: Kysely<any>, path: string): Promise<void> => {
    const app = await buildApp({ db: target })
    const error = await app.ready().then(() => undefined, (thrown: unknown) => thrown)
    t.ok(error instanceof DatabaseSchemaError, 'a DatabaseSchemaError')
    t.equal((error as DatabaseSchemaError).missing.length, 11, 'one missing table per table of the example, columns not listed')
    t.ok((error as DatabaseSchemaError).missing.every((item) => item.column === undefined))
    t.match((error as Error).message, `(search path: ${path}):`)
    await app.close()
  }
  if (engine === 'mysql') {
    // A database of its own, empty, on the same server.
    await sql`create database ${sql.id(empty)} character set utf8mb4 collate utf8mb4_bin`.execute(db)
    t.teardown(async () => { await sql`drop database ${sql.id(empty)}`.execute(db) })
    const address = new URL(process.env.DATABASE_URL ?? '')
    address.pathname = `/${empty}`
    const opened = await createMysqlDatabase<any>({ uri: address.toString(), pool: { connectionLimit: 1 } })
    t.teardown(() => opened.close())
    await fails(opened.db, empty)
    return
  }
  if (engine === 'sqlite') {
    // A database of its own, empty.
    const opened = await createSqliteDatabase<any>()
    t.teardown(() => opened.close())
    await fails(opened.db, 'main')
    return
  }
  await sql`create schema ${sql.id(empty)}`.execute(db)
  t.teardown(async () => { await sql`drop schema ${sql.id(empty)} cascade`.execute(db) })
  // A connection of its own, whose search_path is the empty schema only.
  await db.connection().execute(async (connection) => {
    await sql`set search_path to ${sql.id(empty)}`.execute(connection)
    try {
      await fails(connection, empty)
    } finally {
      await sql`reset search_path`.execute(connection)
    }
  })
})

t.test('a database that cannot answer at ready: the app still becomes ready, and warns that it checked nothing and that creates check their targets themselves', {
  skip: onlyOn(['postgres', 'mysql'], 'an SQLite database is opened in the process: there is no server that cannot be reached at ready'),
}, async (t) => {
  // Nothing listens on port 1: every connection is refused at once.
  const down = engine === 'mysql'
    ? (await createMysqlDatabase<any>({ uri: 'mysql://root@127.0.0.1:1/nothing', connectionTimeout: 2000 })).db
    : new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ host: '127.0.0.1', port: 1, connectionTimeoutMillis: 2000 }) }) })
  t.teardown(() => down.destroy())
  const lines: Array<Record<string, unknown>> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  await app.register(jsonApi, { db: down, resources: declarations() as AnyResourceDeclaration[] })
  await app.ready()
  const warning = lines.find((line) => String(line.msg).includes('could not read the foreign key constraints'))
  t.ok(warning, 'a warning')
  t.equal(warning?.level, 40)
  t.match(warning?.err, { message: /ECONNREFUSED|connect/ }, 'with the cause')
  const unchecked = lines.find((line) => String(line.msg).includes('could not check the database schema at ready'))
  t.equal(unchecked?.level, 40, 'the schema check, on by default, is a warning too')
  t.match(unchecked?.msg, /set checkDatabaseSchema: true to fail the start instead/)
  await app.close()
  // Fastify without a logger drops log.warn: a process warning instead
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { warnings.push(warning) }
  process.on('warning', onWarning)
  const quiet = Fastify()
  await quiet.register(jsonApi, { db: down, resources: declarations() as AnyResourceDeclaration[] })
  await quiet.ready()
  await new Promise((resolve) => setImmediate(resolve))
  process.off('warning', onWarning)
  t.match(warnings, [{ code: 'FJA_SCHEMA_UNCHECKED', message: /could not check the database schema at ready/ }])
  await quiet.close()
  // true: the start fails
  const strict = Fastify()
  await strict.register(jsonApi, { db: down, resources: declarations() as AnyResourceDeclaration[], checkDatabaseSchema: true })
  await t.rejects(async () => { await strict.ready() }, /ECONNREFUSED|connect/, 'checkDatabaseSchema: true fails ready() when the database cannot be reached')
  await strict.close()
})
