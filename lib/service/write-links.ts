import { StorageError, type Repository } from '../repository/repository.js'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { LinkageInput } from '../request/read-resource-document.js'
import { jsonApiError } from '../errors/error-codes.js'

/**
 * Writes relationships stored outside the owner's row (inverse foreign keys, join tables), replacing each whole
 * set. A link the storage cannot drop because the related row requires its owner is a 422 naming the relationship.
 */
export async function writeLinks (repository: Repository, graph: ResourceGraph, owner: ResolvedResource, ownerId: string, inputs: readonly LinkageInput[]): Promise<void> {
  for (const { relationship, ids, pointer } of inputs) {
    const target = graph.getResource(relationship.targetType)
    try {
      await repository.replaceLinks(owner, relationship, target, ownerId, ids ?? [])
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
}
