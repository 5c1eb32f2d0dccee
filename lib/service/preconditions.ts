import type { ResolvedResource } from '../schema/resolved.js'
import { isValidId } from '../schema/resource-id.js'
import { jsonApiError } from '../errors/error-codes.js'
import { assertVisible, readResource } from './resource-reads.js'
import { notFound, type Precondition, type ServiceScope } from './service-scope.js'

// What a change to an existing resource checks before it writes, so that no answer tells a hidden row from a missing
// one: the client's precondition (`If-Match`) under a row lock, visibility before a hook judges the row, and a rule's
// refusal only for a row the request can see.

/**
 * Checks a write's precondition, first thing in its transaction: locks the resource's row (so that a concurrent
 * write with the same tag waits, then fails), reads its representation within the scope and compares its tag;
 * 404 when the request cannot see it, 412 when no tag sent matches.
 *
 * @returns whether it saw the resource (so the write need not check again that the request can see it)
 */
export async function holds (scope: ServiceScope, resource: ResolvedResource, id: string, precondition: Precondition | undefined): Promise<boolean> {
  if (precondition === undefined) return false
  if (!isValidId(resource, id)) throw notFound(resource, id)
  const { repository, composer } = scope
  if (repository.lock !== undefined && !await repository.lock(composer.target(resource, id))) throw notFound(resource, id)
  const { matches } = precondition
  if (matches === '*') {
    if (repository.lock === undefined) await assertVisible(scope, resource, id)
    return true
  }
  if (!matches(await readResource(scope, resource, id, precondition.query))) {
    throw jsonApiError('FJA_PRECONDITION_FAILED', {
      detail: `'${resource.type}' '${id}' has changed: its ETag is no longer one of those in If-Match; read it again`,
      source: precondition.source,
    })
  }
  return true
}

/**
 * Locks the row of a resource the request can see, in the write's transaction, where the repository can lock (else
 * only checks that the request can see it); 404 when it cannot.
 */
export async function lockVisible (scope: ServiceScope, resource: ResolvedResource, id: string): Promise<void> {
  const { repository, composer } = scope
  if (repository.lock === undefined) return assertVisible(scope, resource, id)
  if (!isValidId(resource, id) || !await repository.lock(composer.target(resource, id))) throw notFound(resource, id)
}

/**
 * A rule's refusal of a change to an existing resource (a read-only relationship, say), answered only once the
 * resource is known to be one the request can see: for a row that is invisible or does not exist the answer is the
 * 404, so that no refusal tells a hidden row from a missing one. `seen`: visibility was checked already.
 *
 * @returns the refusal, to throw
 */
export async function refusal (scope: ServiceScope, resource: ResolvedResource, id: string, seen: boolean, refused: unknown): Promise<unknown> {
  if (!seen) await assertVisible(scope, resource, id)
  return refused
}

/**
 * Before a `before*` hook of a change to an existing resource runs, the resource must be one the request can see:
 * a hook never judges (or refuses, revealing it) a row that is invisible or does not exist — that is a 404.
 */
export async function visibleToHooks (scope: ServiceScope, resource: ResolvedResource, id: string, hooked: boolean): Promise<void> {
  if (!isValidId(resource, id)) throw notFound(resource, id)
  if (hooked) await assertVisible(scope, resource, id)
}
