import { StorageError, type Repository, type RequiredRow } from '../contracts/repository.js'
import type { ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { LinkageInput } from '../contracts/inputs.js'
import { isValidId } from '../schema/resource-id.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { QueryComposer } from './query-composer.js'

/**
 * The relationship rules every write shares — PATCH and POST of a resource, the relationship routes, the related
 * routes and atomic operations — so each rule is written once.
 */

/**
 * Whether a client may write the relationships: a read-only one never, a create-only one only in a create body, and
 * an inverse one (stored in the related rows' foreign key) only when that foreign key's own relationship may change.
 * Refused → 403 pointing at the relationship.
 */
export function checkWritable (graph: ResourceGraph, inputs: readonly LinkageInput[], phase: 'create' | 'update'): void {
  for (const { relationship, member } of inputs) {
    if (relationship.readOnly || (phase === 'update' && relationship.createOnly)) {
      throw jsonApiError('FJA_READ_ONLY_RELATIONSHIP', {
        detail: relationship.readOnly
          ? `the relationship '${relationship.name}' cannot be written`
          : `the relationship '${relationship.name}' is set when the resource is created and cannot change`,
        source: { pointer: member },
      })
    }
    const storage = relationship.storage
    if (storage.kind !== 'inverse') continue
    const inverse = graph.getResource(relationship.targetType).relationships.get(storage.inverseName) as ResolvedRelationship
    if (inverse.readOnly || inverse.createOnly) {
      throw jsonApiError('FJA_READ_ONLY_RELATIONSHIP', {
        detail: `'${relationship.name}' is stored as '${inverse.ownerType}.${inverse.name}', which cannot change once a '${inverse.ownerType}' exists`,
        source: { pointer: member },
      })
    }
  }
}

/**
 * The rules of linkage that need no query: clearing a required to-one is a 422 naming the relationship, and two
 * relationships stored in one column must agree.
 */
export function checkLinkRules (inputs: readonly LinkageInput[]): void {
  // Two links can only disagree when there are two: one alone needs no map.
  const columns = inputs.length > 1 ? new Map<string, LinkageInput>() : undefined
  for (const input of inputs) {
    const { relationship, ids, pointer } = input
    if (relationship.storage.kind !== 'foreign-key') continue
    if (ids === null && !relationship.storage.nullable) {
      throw jsonApiError('FJA_REQUIRED_RELATIONSHIP', { detail: `the relationship '${relationship.name}' is required and cannot be cleared`, source: { pointer } })
    }
    const other = columns?.get(relationship.storage.column)
    if (other !== undefined && String(other.ids) !== String(ids)) {
      throw jsonApiError('FJA_VALIDATION', {
        detail: `'${relationship.name}' and '${other.relationship.name}' are the same link and must not differ`,
        source: { pointer },
      })
    }
    columns?.set(relationship.storage.column, input)
  }
}

/**
 * Every related id must exist and be visible to the request: one query per relationship; a missing one is a 404
 * pointing at its identifier.
 */
export async function checkTargetsExist (repository: Repository, graph: ResourceGraph, composer: QueryComposer, inputs: readonly LinkageInput[]): Promise<void> {
  for (const { relationship, ids, pointer } of inputs) {
    if (ids === null || ids.length === 0) continue
    const target = graph.getResource(relationship.targetType)
    const valid = ids.filter((id) => isValidId(target, id))
    const rows = valid.length === 0 ? [] : await repository.findMany(composer.existing(target, valid))
    const existing = new Set(rows.map((row) => String(row[target.idColumn])))
    const missing = ids.findIndex((id) => !existing.has(id))
    if (missing >= 0) {
      throw jsonApiError('FJA_RELATED_NOT_FOUND', {
        detail: `no '${target.type}' with id '${ids[missing]}'`,
        source: { pointer: relationship.toMany ? `${pointer}/${missing}` : pointer },
      })
    }
  }
}

/**
 * The rows a write of foreign keys needs (to guard the write in the same statement), or undefined when an id
 * cannot exist at all (then {@link checkTargetsExist} answers the 404 without a write).
 */
export function foreignKeyGuards (graph: ResourceGraph, composer: QueryComposer, inputs: readonly LinkageInput[]): RequiredRow[] | undefined {
  const guards: RequiredRow[] = []
  for (const { relationship, ids } of inputs) {
    if (relationship.storage.kind !== 'foreign-key' || ids === null || ids.length === 0) continue
    const target = graph.getResource(relationship.targetType)
    if (!isValidId(target, ids[0])) return undefined
    guards.push(composer.required(target, ids[0]))
  }
  return guards
}

/** The owner's column values of the to-one relationships stored in its own row, set on `values` (a new object by default). */
export function foreignKeyValues (inputs: readonly LinkageInput[], values: Record<string, unknown> = {}): Record<string, unknown> {
  for (const { relationship, ids } of inputs) {
    if (relationship.storage.kind === 'foreign-key') values[relationship.storage.column] = ids?.[0] ?? null
  }
  return values
}

/** Whether a relationship is stored outside the owner's row (inverse foreign key or join table). */
export function isStoredElsewhere (input: LinkageInput): boolean {
  return input.relationship.storage.kind !== 'foreign-key'
}

/** Runs a link change, turning "the related row needs its owner" (NOT NULL) into a 422 naming the relationship. */
async function guardUnlink (relationship: ResolvedRelationship, target: ResolvedResource, pointer: string, change: () => Promise<void>): Promise<void> {
  try {
    await change()
  } catch (error) {
    if (error instanceof StorageError && error.kind === 'not-null' && relationship.storage.kind === 'inverse') {
      throw jsonApiError('FJA_REQUIRED_RELATIONSHIP', {
        detail: `cannot unlink a '${target.type}' from '${relationship.name}': its relationship '${relationship.storage.inverseName}' is required`,
        source: { pointer },
      })
    }
    throw error
  }
}

/**
 * Writes relationships stored outside the owner's row, replacing each whole set (a to-one: its one link) among the
 * related rows the request can see. A link the storage cannot drop because the related row requires its owner is a
 * 422 naming the relationship.
 */
export async function writeLinks (repository: Repository, graph: ResourceGraph, composer: QueryComposer, owner: ResolvedResource, ownerId: string, inputs: readonly LinkageInput[]): Promise<void> {
  for (const { relationship, ids, pointer } of inputs) {
    const target = graph.getResource(relationship.targetType)
    await guardUnlink(relationship, target, pointer, () => repository.replaceLinks(composer.target(owner, ownerId), relationship, composer.links(target, ids ?? [])))
  }
}

/** Adds members to, or removes members from, a to-many relationship (members already linked, or not, are fine). */
export async function changeMembers (repository: Repository, graph: ResourceGraph, composer: QueryComposer, owner: ResolvedResource, ownerId: string, input: LinkageInput, mode: 'add' | 'remove'): Promise<void> {
  const { relationship, ids, pointer } = input
  const target = graph.getResource(relationship.targetType)
  checkLinkRules([input])
  await checkTargetsExist(repository, graph, composer, [input])
  const links = composer.links(target, ids ?? [])
  const ownerTarget = composer.target(owner, ownerId)
  await guardUnlink(relationship, target, pointer, () => mode === 'add'
    ? repository.addLinks(ownerTarget, relationship, links)
    : repository.removeLinks(ownerTarget, relationship, links))
}
