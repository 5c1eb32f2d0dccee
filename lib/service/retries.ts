import { faultOf, type Repository } from '../contracts/repository.js'
import type { ServiceScope } from './service-scope.js'
import { explainStorageError, type WriteContext } from './explain-storage-error.js'

/** A short random pause before the next attempt, growing with the attempt, so that the conflicting writers part. */
function backOff (attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** attempt))
}

/**
 * The one retry loop: runs `attempt` and runs it again (at most `retries` times) while it fails with a serialization
 * failure or a deadlock (`faultOf` says `conflict`): the database rolled the failed attempt back, so nothing of it
 * remains. A first attempt that succeeds costs one `async` frame.
 */
export async function retrying<T> (repository: Repository, retries: number, attempt: () => Promise<T>): Promise<T> {
  for (let run = 0; ; run++) {
    try {
      return await attempt()
    } catch (error) {
      if (run >= retries || faultOf(repository, error) !== 'conflict') throw error
    }
    await backOff(run)
  }
}

/**
 * Runs `work` in one transaction, with the scope bound to it (its repository the transaction's, `nested`); nested
 * writes join it. The transaction as a whole is retried on conflicts (see {@link retrying}); inside an outer one it
 * is not (the outer transaction is).
 */
export function inTransaction<T> (scope: ServiceScope, work: (scope: ServiceScope) => Promise<T>): Promise<T> {
  const run = (): Promise<T> => scope.repository.transaction((repository) => work({ ...scope, repository, nested: true }))
  return scope.nested ? run() : retrying(scope.repository, scope.database.retries, run)
}

/**
 * Runs a write: in a transaction when it takes several statements (or has hooks around it), as it is when it is one
 * statement (atomic by itself; the reads before it only check what the database's own constraints check again). A
 * single statement is retried on conflicts like a transaction, except inside one (its failure aborted the whole
 * transaction, which is retried instead). A storage error comes out explained for `context` (404, 409, 422…).
 */
export function writing<T> (scope: ServiceScope, context: WriteContext, several: boolean, work: (scope: ServiceScope) => Promise<T>): Promise<T> {
  const written = several ? inTransaction(scope, work) : retrying(scope.repository, scope.nested ? 0 : scope.database.retries, () => work(scope))
  return written.catch((error: unknown) => { throw explainStorageError(error, context) })
}
