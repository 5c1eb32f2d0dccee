import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import { runStatementsOnPool } from './statement-runner.js'
import { loadPrepareValue } from './rows-query.js'

/** Options of {@link createEmbeddedDatabase}. */
export interface EmbeddedDatabaseOptions {
  /**
   * Where PGlite keeps its files: a directory path, or `memory://` (the default) for an in-memory database that is
   * fresh at every start.
   */
  readonly dataDir?: string
  /** Passed to Kysely (e.g. `log`). */
  readonly log?: KyselyConfig['log']
}

/** An embedded database: the Kysely instance and a function that closes both Kysely and PGlite. */
export interface EmbeddedDatabase<DB> {
  readonly db: Kysely<DB>
  readonly close: () => Promise<void>
}

/**
 * Creates an embedded PostgreSQL (PGlite) behind Kysely's own `PostgresDialect`, through PGlite's node-postgres
 * adapter and one serialized client: transactions are isolated because they hold the only connection, and
 * affected-row counts are PostgreSQL's own.
 *
 * `@electric-sql/pglite` is loaded on the first call only, so applications on a real server never load it.
 *
 * @example
 * ```ts
 * const { db, close } = await createEmbeddedDatabase<MyDB>()
 * await app.register(jsonApi, { db, resources })
 * app.addHook('onClose', close)
 * ```
 */
export async function createEmbeddedDatabase<DB = any>(options: EmbeddedDatabaseOptions = {}): Promise<EmbeddedDatabase<DB>> {
  const [{ PGlite }, { createPgConfig }, pg] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/node-postgres'),
    import('pg'),
  ])
  const pglite = new PGlite(options.dataDir ?? 'memory://')
  await pglite.waitReady
  const pool = new pg.default.Pool({ ...createPgConfig(pglite), max: 1 } as unknown as import('pg').PoolConfig)
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: options.log })
  runStatementsOnPool(db, pool, options.log, loadPrepareValue())
  let closed = false
  return {
    db,
    async close () {
      if (closed) return
      closed = true
      await db.destroy()
      await pglite.close()
    },
  }
}
