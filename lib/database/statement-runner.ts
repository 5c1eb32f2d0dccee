import { Log, type CompiledQuery, type Kysely, type KyselyConfig } from 'kysely'
import type { Pool, PoolClient, QueryResult } from 'pg'
import { RowDecoders, RowsQuery, type PrepareValue, type RowsCallback } from './rows-query.js'

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

/**
 * How a statement is sent on a client: as a {@link RowsQuery} on a `pg` client that takes it (one with its protocol
 * connection, neither pipelining nor asking for binary results), else as text with a callback, through pg's `Query`.
 */
function sender (prepareValue: PrepareValue | undefined): (client: PoolClient, query: CompiledQuery, answer: RowsCallback) => void {
  if (prepareValue === undefined) return sendAsText
  const decoders = new RowDecoders()
  return function send (client, query, answer) {
    const loose = client as PoolClient & { connection?: unknown, pipeline?: boolean, binary?: boolean }
    if (loose.connection === undefined || loose.pipeline === true || loose.binary === true) {
      sendAsText(client, query, answer)
      return
    }
    client.query(new RowsQuery(query.sql, query.parameters as unknown[], decoders, client, prepareValue, answer) as never)
  }
}

function sendAsText (client: PoolClient, query: CompiledQuery, answer: RowsCallback): void {
  client.query(query.sql, query.parameters as unknown[], (failure: Error | undefined, result: QueryResult) => {
    if (failure) answer(failure)
    else answer(null, result.rows)
  })
}

function poolRunner (pool: Pool, log: Log | undefined, prepareValue: PrepareValue | undefined): StatementRunner {
  const send = sender(prepareValue)
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
        // The first answer counts, and gives the connection back once: pg may answer a query it could not send (its
        // parameters did not serialize) with an error, then again when the connection is ready.
        let answered = false
        try {
          send(client, query, (failure, rows) => {
            if (answered) return
            answered = true
            release()
            if (failure) reject(mapError(failure))
            else resolve(rows ?? [])
          })
        } catch (thrown) {
          if (answered) return
          answered = true
          release()
          reject(mapError(thrown))
        }
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
