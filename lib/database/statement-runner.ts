import type { CompiledQuery, DialectAdapter, Kysely } from 'kysely'

/**
 * Runs one statement on its own (outside any transaction) and answers its rows. A failure rejects with `mapError` of
 * the error (the error itself without it), so that the caller needs no second promise to translate it.
 */
export type StatementRunner = (query: CompiledQuery, mapError?: (error: unknown) => unknown) => Promise<unknown[]>

/**
 * What a dialect's adapter may offer under this key (the library's `JsonApiPostgresDialect` does): single statements
 * sent through its driver's connections without the layers of promises of Kysely's executor — a connection
 * borrowed, the statement, the connection given back, with callbacks. The same driver, connections, SQL, results,
 * errors and log events as through Kysely; `viaKysely` is how the statement runs when the driver cannot take it
 * itself (not initialised yet, a connection Kysely has not met yet).
 */
export const SINGLE_STATEMENTS: unique symbol = Symbol.for('fastify-jsonapi.singleStatements')

export interface SingleStatements {
  /** Whether statements may skip Kysely's executor (not when the dialect has connection hooks to run). */
  readonly available: boolean
  run (query: CompiledQuery, mapError: (error: unknown) => unknown, viaKysely: (query: CompiledQuery) => Promise<unknown[]>): Promise<unknown[]>
}

/**
 * `adapter` (a Kysely adapter made by the library's dialect), offering the repository the single statements of
 * `driver` under {@link SINGLE_STATEMENTS}; nothing when the dialect made no driver of the library's.
 */
export function offeringSingleStatements<A extends DialectAdapter> (adapter: A, driver: SingleStatements | undefined): A {
  Object.defineProperty(adapter, SINGLE_STATEMENTS, { value: driver, enumerable: false })
  return adapter
}

/**
 * How the repository runs its single statements on `db`: through the single statements its dialect's adapter
 * offers, when it offers them and `db` is neither a transaction nor an instance with plugins (a plugin may rewrite
 * each query or result, so those go through Kysely); undefined otherwise, and the caller uses Kysely's executor.
 * Statements run this way may use any connection of the pool, as Kysely's own `executeQuery` on `db` does.
 */
export function statementRunnerOf (db: Kysely<any>): StatementRunner | undefined {
  if (db.isTransaction) return undefined
  const executor = db.getExecutor()
  if (executor.plugins.length > 0) return undefined
  const offer = (executor.adapter as { readonly [SINGLE_STATEMENTS]?: SingleStatements })[SINGLE_STATEMENTS]
  if (offer === undefined || !offer.available) return undefined
  const viaKysely = (query: CompiledQuery): Promise<unknown[]> => db.executeQuery(query).then(rowsOf)
  return (query, mapError = same) => offer.run(query, mapError, viaKysely)
}

function rowsOf (result: { readonly rows: unknown[] }): unknown[] {
  return result.rows
}

function same (error: unknown): unknown {
  return error
}
