import { Kysely, sql, type KyselyConfig } from 'kysely'
import { JsonApiPostgresDialect } from './postgres-driver.js'

/** Options of {@link createEmbeddedDatabase}. */
export interface EmbeddedDatabaseOptions {
  /**
   * Where PGlite keeps its files: a directory path, or `memory://` (the default) for an in-memory database that is
   * fresh at every start.
   */
  readonly dataDir?: string
  /**
   * A data directory to start from, as {@link EmbeddedDatabase.dumpDataDir} dumps it (PGlite's own `loadDataDir`): the
   * database starts as a copy of the dumped one, tables, rows and all, without running `initdb` — which is most of
   * what a fresh start costs. The dump must come from the same PGlite version. Only a new database is filled this way:
   * with `dataDir` naming a directory that already holds one, the start fails.
   */
  readonly loadDataDir?: Blob | File
  /** Passed to Kysely (e.g. `log`). */
  readonly log?: KyselyConfig['log']
}

/** Options of {@link EmbeddedDatabase.dumpDataDir}. */
export interface DumpDataDirOptions {
  /**
   * `'gzip'` (the default): a compressed tar, a few MB for a small database; `'none'`: a plain tar, about ten times
   * larger (the files as PostgreSQL keeps them), quicker to dump and to load.
   */
  readonly compression?: 'gzip' | 'none'
}

/** An embedded database: the Kysely instance, a function that closes both Kysely and PGlite, and one that dumps it. */
export interface EmbeddedDatabase<DB> {
  readonly db: Kysely<DB>
  readonly close: () => Promise<void>
  /**
   * The whole data directory as a tar archive, what `loadDataDir` starts a new database from. It waits for the
   * database's one connection and holds it meanwhile, so the dump never contains half of a transaction, and the
   * statements sent meanwhile wait for it; a checkpoint first writes every change to the files. Rejects once the
   * database is closed.
   */
  readonly dumpDataDir: (options?: DumpDataDirOptions) => Promise<Blob>
}

/**
 * Creates an embedded PostgreSQL (PGlite) behind Kysely's own `PostgresDialect`, through PGlite's node-postgres
 * adapter and one serialized client: transactions are isolated because they hold the only connection, and
 * affected-row counts are PostgreSQL's own.
 *
 * `@electric-sql/pglite` is loaded on the first call only, so applications on a real server never load it.
 *
 * A database can start from a dump of another one (`loadDataDir`, `dumpDataDir`), skipping `initdb`, most of what a
 * fresh start costs: migrate once, dump, and start each further database from the dump.
 *
 * @example
 * ```ts
 * const { db, close } = await createEmbeddedDatabase<MyDB>()
 * await app.register(jsonApi, { db, resources })
 * app.addHook('onClose', close)
 * ```
 *
 * @example
 * ```ts
 * // A migrated database, dumped once; each test gets a copy of its own, without initdb.
 * const template = await createEmbeddedDatabase<MyDB>()
 * await migrateToLatest(template.db)
 * const migrated = await template.dumpDataDir()
 * await template.close()
 * const { db, close } = await createEmbeddedDatabase<MyDB>({ loadDataDir: migrated })
 * ```
 */
export async function createEmbeddedDatabase<DB = any>(options: EmbeddedDatabaseOptions = {}): Promise<EmbeddedDatabase<DB>> {
  const [{ PGlite }, { createPgConfig }, pg] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/node-postgres'),
    import('pg'),
  ])
  const pglite = new PGlite(options.dataDir ?? 'memory://', { loadDataDir: options.loadDataDir })
  await pglite.waitReady
  const pool = new pg.default.Pool({ ...createPgConfig(pglite), max: 1 } as unknown as import('pg').PoolConfig)
  const db = new Kysely<DB>({ dialect: new JsonApiPostgresDialect({ pool }), log: options.log })
  let closed = false
  return {
    db,
    async close () {
      if (closed) return
      closed = true
      await db.destroy()
      await pglite.close()
    },
    async dumpDataDir (dumpOptions = {}) {
      if (closed) throw new Error('the embedded database is closed')
      // The pool's only connection, held: no statement runs and no transaction is open while PGlite reads the files.
      return await db.connection().execute(async (connection) => {
        await sql`checkpoint`.execute(connection)
        return await pglite.dumpDataDir(dumpOptions.compression ?? 'gzip')
      })
    },
  }
}
