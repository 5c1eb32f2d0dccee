import type { Kysely } from 'kysely'
import type { ResolvedResource } from '../schema/resolved.js'
import type { ExistingResourceEvent, HookEvent, WriteInput } from '../schema/hooks.js'
import type { LinkageInput, ResourceInput } from '../contracts/inputs.js'
import { currentResource } from './resource-reads.js'
import { fromHookInput, hookInput, pointUnlocated } from './write-hooks.js'
import type { ServiceScope } from './service-scope.js'

// Running the application's write hooks: what each receives (the request's context, the write's transaction) and
// what `beforeCreate`/`beforeUpdate` give back, checked.

/** What every write hook receives: the context, the type, and the write's transaction. */
export function writeEvent (scope: ServiceScope, resource: ResolvedResource): HookEvent<unknown> {
  const repository = scope.repository
  return {
    context: scope.composer.context,
    type: resource.type,
    get db (): Kysely<any> {
      if (repository.kysely === undefined) throw new Error('fastify-jsonapi: `event.db` needs a repository with a `kysely` member')
      return repository.kysely
    },
  }
}

/** What the hooks of a change to an existing resource receive; `current` reads it within the scope. */
export function existingEvent (scope: ServiceScope, resource: ResolvedResource, id: string): ExistingResourceEvent<any, unknown> {
  // Object.assign onto the event keeps its `db` getter a getter (a spread would call it).
  return Object.assign(writeEvent(scope, resource), { id, current: () => currentResource(scope, resource, id) })
}

/**
 * Runs `beforeCreate` or `beforeUpdate` (when declared) on the input as hooks see it, and reads back what the hook
 * changed or returned, checked against the declaration.
 */
export async function inputHook (name: 'beforeCreate' | 'beforeUpdate', resource: ResolvedResource, input: ResourceInput, event: () => HookEvent<unknown>, base: string): Promise<ResourceInput> {
  const hook = resource.hooks[name] as ((input: WriteInput<any, any>, event: HookEvent<unknown>) => unknown) | undefined
  if (hook === undefined) return input
  const before = hookInput(input)
  const draft = hookInput(input)
  const returned = await hook.call(resource.hooks, draft, event()) as WriteInput<any, any> | undefined
  return fromHookInput(resource, name, input, before, returned ?? draft, base)
}

/** Runs `beforeLink` for each relationship change; an error without a source points at the linkage. */
export async function beforeLinks (scope: ServiceScope, resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], op: 'replace' | 'add' | 'remove'): Promise<void> {
  const hook = resource.hooks.beforeLink
  if (hook === undefined) return
  for (const { relationship, ids, pointer } of inputs) {
    try {
      await hook.call(resource.hooks, { relationship: relationship.name, op, ids: ids === null ? null : [...ids] }, existingEvent(scope, resource, id))
    } catch (error) {
      throw pointUnlocated(error, pointer)
    }
  }
}
