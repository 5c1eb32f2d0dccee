import type { RequiredRow } from '../contracts/repository.js'
import type { Row } from '../schema/fields.js'
import type { ResolvedResource } from '../schema/resolved.js'
import type { LinkageInput } from '../contracts/inputs.js'
import {
  changeMembers as writeMembers, checkLinkRules, checkTargetsExist, checkWritable, foreignKeyGuards, foreignKeyValues, isStoredElsewhere, writeLinks,
} from './relationship-writes.js'
import { beforeLinks } from './hook-events.js'
import { holds, lockVisible, refusal, visibleToHooks } from './preconditions.js'
import { writing } from './retries.js'
import { notFound, type Precondition, type ServiceScope } from './service-scope.js'

// Writing the relationships of an existing resource: its linkage replaced (a PATCH of the resource does it too, with
// its attributes) or members added to or removed from a to-many, with the same rules, hooks and locks everywhere.

const NO_LINKS: readonly LinkageInput[] = Object.freeze([])
const NO_GUARDS: readonly RequiredRow[] = Object.freeze([])

/**
 * The links of a write stored in the owner's row (to-one foreign keys) and those stored elsewhere (inverse foreign
 * keys, join tables): the links as they are, and none, when all are in the row.
 */
export function splitByStorage (inputs: readonly LinkageInput[]): readonly [readonly LinkageInput[], readonly LinkageInput[]] {
  if (!inputs.some(isStoredElsewhere)) return [inputs, NO_LINKS]
  return [inputs.filter((link) => !isStoredElsewhere(link)), inputs.filter(isStoredElsewhere)]
}

/**
 * Runs a write of the owner's row guarded by the existence of the foreign keys' targets, in the same statement.
 * When the write does not happen, the targets are checked one by one for the precise 404 (pointing at the
 * identifier); if they all exist, the row itself was missing and the result is undefined.
 */
export async function guarded (scope: ServiceScope, own: readonly LinkageInput[], write: (guards: readonly RequiredRow[]) => Promise<Row | undefined>): Promise<Row | undefined> {
  const { repository, graph, composer } = scope
  const guards = foreignKeyGuards(graph, composer, own)
  if (guards === undefined) await checkTargetsExist(repository, graph, composer, own)
  const row = await write(guards ?? NO_GUARDS)
  if (row === undefined && guards !== undefined && guards.length > 0) await checkTargetsExist(repository, graph, composer, own)
  return row
}

/**
 * Updates `values` and the relationships of an existing resource the request can see, and returns its row; 404
 * when there is none. Links stored outside the owner's row (inverse foreign keys, join tables) are written under a
 * lock of the owner's row (unless `locked` says a precondition took it already): two concurrent replacements of one
 * owner's to-many then run one after the other, and the relationship ends as one of the sets sent, never a mix of
 * them; two concurrent additions of the same member both succeed.
 */
export async function linkOwner (scope: ServiceScope, resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], values: Record<string, unknown>, columns: readonly string[], locked = false): Promise<Row> {
  const { repository, graph, composer } = scope
  const [own, elsewhere] = splitByStorage(inputs)
  if (elsewhere.length > 0 && !locked) await lockVisible(scope, resource, id)
  checkLinkRules(own)
  await checkTargetsExist(repository, graph, composer, elsewhere)
  const target = composer.target(resource, id)
  const row = await guarded(scope, own, (guards) => repository.update(target, { ...values, ...foreignKeyValues(own) }, columns, guards))
  if (row === undefined) throw notFound(resource, id)
  await writeLinks(repository, graph, composer, resource, id, elsewhere)
  return row
}

/**
 * Replaces the linkage of relationships of a resource (the relationship routes' PATCH, relationship operations,
 * the link of a related route's create), exactly as a PATCH of the resource does: the same rules, the same hooks,
 * the same writes.
 */
export async function replaceLinkage (scope: ServiceScope, resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], precondition?: Precondition): Promise<void> {
  const several = resource.hasWriteHooks || inputs.some(isStoredElsewhere) || precondition !== undefined
  await writing(scope, { resource, action: 'update', base: '/data' }, several, async (scope) => {
    const seen = await holds(scope, resource, id, precondition)
    try {
      checkWritable(scope.graph, inputs, 'update')
    } catch (error) {
      throw await refusal(scope, resource, id, seen, error)
    }
    await visibleToHooks(scope, resource, id, !seen && resource.hooks.beforeLink !== undefined)
    await beforeLinks(scope, resource, id, inputs, 'replace')
    await linkOwner(scope, resource, id, inputs, {}, [], seen)
  })
}

/** Adds members to, or removes members from, a to-many relationship of a resource the request can see. */
export function changeMembers (scope: ServiceScope, resource: ResolvedResource, id: string, input: LinkageInput, mode: 'add' | 'remove', precondition?: Precondition): Promise<void> {
  return writing(scope, { resource, action: 'link', base: '/data' }, true, async (scope) => {
    // Locked, as a replacement is (see linkOwner): concurrent additions of the same members all succeed, none twice.
    if (!await holds(scope, resource, id, precondition)) await lockVisible(scope, resource, id)
    checkWritable(scope.graph, [input], 'update')
    await beforeLinks(scope, resource, id, [input], mode)
    await writeMembers(scope.repository, scope.graph, scope.composer, resource, id, input, mode)
  })
}
