/**
 * The engine of a Kysely instance (lib/repository/kysely/engine-of.ts): PostgreSQL for every adapter built on
 * Kysely's `PostgresAdapter`, SQLite for its `SqliteAdapter`, MariaDB/MySQL for its `MysqlAdapter`; any other dialect
 * is refused by name when the repository is made, and so when the plugin is registered, never at the first statement.
 */
import t from 'tap'
import Fastify from 'fastify'
import { DummyDriver, Kysely, MssqlAdapter, MssqlIntrospector, MssqlQueryCompiler, MysqlAdapter, MysqlIntrospector, MysqlQueryCompiler, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type DialectAdapter } from 'kysely'
import { jsonApi, JsonApiPostgresDialect, KyselyRepository } from '../../../lib/index.js'
import { engineOf } from '../../../lib/repository/kysely/engine-of.js'
import { POSTGRES } from '../../../lib/repository/kysely/postgres-engine.js'
import { SQLITE } from '../../../lib/repository/kysely/sqlite-engine.js'
import { MYSQL } from '../../../lib/repository/kysely/mysql-engine.js'
import { resources } from '../../../examples/app/resources.js'

function kyselyWith (adapter: DialectAdapter, introspector: (db: Kysely<any>) => any, compiler: () => any): Kysely<any> {
  return new Kysely<any>({
    dialect: { createAdapter: () => adapter, createDriver: () => new DummyDriver(), createIntrospector: introspector, createQueryCompiler: compiler },
  })
}

t.test('PostgreSQL adapters, Kysely\'s own and the library\'s dialect, are the PostgreSQL engine', async (t) => {
  const plain = kyselyWith(new PostgresAdapter(), (db) => new PostgresIntrospector(db), () => new PostgresQueryCompiler())
  t.equal(engineOf(plain), POSTGRES)
  const library = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool: {} as never }) })
  t.equal(engineOf(library), POSTGRES)
  t.ok(Object.isFrozen(POSTGRES), 'an engine is a frozen value')
  await plain.destroy()
})

t.test('Kysely\'s SqliteAdapter is the SQLite engine', async (t) => {
  const db = kyselyWith(new SqliteAdapter(), (kysely) => new SqliteIntrospector(kysely), () => new SqliteQueryCompiler())
  t.equal(engineOf(db), SQLITE)
  t.ok(Object.isFrozen(SQLITE))
  await db.destroy()
})

t.test('Kysely\'s MysqlAdapter is the MariaDB/MySQL engine', async (t) => {
  const db = kyselyWith(new MysqlAdapter(), (kysely) => new MysqlIntrospector(kysely), () => new MysqlQueryCompiler())
  t.equal(engineOf(db), MYSQL)
  t.ok(Object.isFrozen(MYSQL))
  await db.destroy()
})

t.test('cannot: a repository or a registration on a dialect the repository does not run on', async (t) => {
  const others = [
    ['MssqlAdapter', kyselyWith(new MssqlAdapter(), (db) => new MssqlIntrospector(db), () => new MssqlQueryCompiler())],
  ] as const
  for (const [name, db] of others) {
    const refusal = new RegExp(`dialect \\(adapter ${name}\\) is not one the repository runs on`)
    t.throws(() => new KyselyRepository(db), refusal, `${name}: the repository refuses it`)
    const app = Fastify()
    app.register(jsonApi, { db, resources })
    await t.rejects(async () => { await app.ready() }, refusal, `${name}: the registration fails, naming the adapter`)
    await app.close().catch(() => {})
  }
})
