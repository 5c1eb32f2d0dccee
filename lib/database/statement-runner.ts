import { Log, type CompiledQuery, type Kysely, type KyselyConfig } from 'kysely'
import type { Pool, PoolClient } from 'pg'
import { statementSender, type PrepareValue } from './rows-query.js'

/**
 * Runs one statement on its own (outside any transaction) and answers its rows: what the Kysely repository uses in
 * place of Kysely's executor for the statements it has compiled, on a Kysely instance whose pool it knows. A failure
 * rejects with `mapError` of the error (the error itself without it), so that the caller needs no second promise to
 * translate it.
 */
export type StatementRunner = (query: CompiledQuery, mapError?: (error: unknown) => unknown) => Promise<unknown[]>

const RUNNERS = new WeakMap<Kysely<any>, StatementRunner>()

/** The runner of a Kysely instance made by `createPostgresDatabase` or `createEmbeddedDatabase`; none for any other. */
export function statementRunnerOf (db: Kysely<any>): StatementRunner | undefined {
  return RUNNERS.get(db)
}

/**
 * Lets the repository run single statements of `db` straight on its `pg` pool, with callbacks: a connection
 * borrowed, the statement, the connection given back, where Kysely's executor does the same through several layers
 * of promises. Only for a Kysely instance this library
 * made itself on `pool` with Kysely's `PostgresDialect` and no plugins, so that the two paths run the same SQL on the
 * same connections; Kysely's `log` option is honoured the way Kysely honours it (the same events, the same levels).
 * A transaction (`db.transaction()`) or an instance derived with `withPlugin`/`withSchema` is another instance: it
 * goes through Kysely.
 */
export function runStatementsOnPool (db: Kysely<any>, pool: Pool, log: KyselyConfig['log'], prepareValue?: PrepareValue): void {
  RUNNERS.set(db, poolRunner(pool, log === undefined ? undefined : new Log(log), prepareValue))
}

function poolRunner (pool: Pool, log: Log | undefined, prepareValue: PrepareValue | undefined): StatementRunner {
  const send = statementSender(prepareValue)
  const run = (query: CompiledQuery, mapError: (error: unknown) => unknown = same): Promise<unknown[]> => new Promise((resolve, reject) => {
    // A connection borrowed and given back as Kysely's driver does (`release()` without the error: a statement that
    // failed, a unique violation say, leaves its connection usable; one that broke is dropped by the pool itself).
    // Not `pool.query`, which closes the connection after any failed statement.
    try {
      pool.connect((error: Error | undefined, client: PoolClient | undefined, release: () => void) => {
        if (error || client === undefined) {
          reject(mapError(error))
          return
        }
        // The sender answers once, so the connection is given back once.
        send(client, query, (failure, rows) => {
          release()
          if (failure) reject(mapError(failure))
          else resolve(rows ?? [])
        })
      })
    } catch (thrown) {
      // pg-pool answers through the callback; anything it throws is a failure of this statement too.
      reject(mapError(thrown))
    }
  })
  if (log === undefined) return run
  return async function runLoggedStatement (query, mapError = same) {
    const start = performance.now()
    let rows: unknown[]
    try {
      rows = await run(query)
    } catch (error) {
      await log.error(() => ({ level: 'error', error, query, queryDurationMillis: performance.now() - start }))
      throw mapError(error)
    }
    await log.query(() => ({ level: 'query', isStream: false, query, queryDurationMillis: performance.now() - start }))
    return rows
  }
}

function same (error: unknown): unknown {
  return error
}
