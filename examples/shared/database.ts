/**
 * Opens an example's database: PostgreSQL through `pg` when `DATABASE_URL` is set, an embedded
 * in-memory PGlite otherwise (fresh at every start).
 */
import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import pg from 'pg'
import { createEmbeddedDatabase } from '../../lib/index.js'

/** An open database: the Kysely instance and a function that closes it (and PGlite, when embedded). */
export interface OpenDatabase {
  readonly db: Kysely<any>
  close (): Promise<void>
}

export async function openDatabase (options: { log?: KyselyConfig['log'] } = {}): Promise<OpenDatabase> {
  const url = process.env.DATABASE_URL
  if (url !== undefined && url !== '') {
    const pool = new pg.Pool({ connectionString: url })
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: options.log })
    let closed = false
    return {
      db,
      async close () {
        if (closed) return
        closed = true
        await db.destroy()
      },
    }
  }
  const { db, close } = await createEmbeddedDatabase<any>({ log: options.log })
  return { db, close }
}
