import type { Repository } from '../repository/repository.js'
import type { ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { LinkageInput, ResourceInput } from '../request/read-resource-document.js'
import { andNode, linkedToNode, type FilterNode } from '../query/filter-nodes.js'
import { queryTree, type QueryTree } from '../query/query-tree.js'
import { isValidId } from '../schema/resource-id.js'
import { jsonApiError } from '../errors/error-codes.js'
import { notFound, type ResourceService } from './resource-service.js'
import { changeMembers, writeLinks } from './relationship-writes.js'
import { loadIncluded } from './load-included.js'
import { explainStorageError } from './explain-storage-error.js'
import { selectionOf } from './selection.js'
import type { ResultSet } from './result-set.js'

/** The rows linked to one owner through one of its relationships, ANDed with the client's filter. */
function linkedQuery (owner: ResolvedResource, relationship: ResolvedRelationship, ownerId: string, query: QueryTree): QueryTree {
  const linked: FilterNode = linkedToNode(owner, relationship, ownerId)
  return queryTree({ ...query, filter: query.filter === undefined ? linked : andNode([linked, query.filter]) })
}

/**
 * The related-resource routes (`/<type>/<id>/<relationship>`) and relationship routes
 * (`/<type>/<id>/relationships/<relationship>`). Writes go through the same functions as the relationship writes
 * of a resource's PATCH, each request in one transaction.
 */
export class RelationshipService {
  readonly #graph: ResourceGraph
  readonly #resources: ResourceService
  readonly #repository: Repository

  constructor (graph: ResourceGraph, resources: ResourceService, repository: Repository) {
    this.#graph = graph
    this.#resources = resources
    this.#repository = repository
  }

  /** One transaction; a storage failure is explained as a change of the owner's relationships. */
  async #write<T> (owner: ResolvedResource, work: (resources: ResourceService, repository: Repository) => Promise<T>): Promise<T> {
    try {
      return await this.#resources.transaction(work)
    } catch (error) {
      throw explainStorageError(error, { resource: owner, action: 'link', base: '/data' })
    }
  }

  async #owner (repository: Repository, owner: ResolvedResource, ownerId: string): Promise<void> {
    if (!isValidId(owner, ownerId) || (await repository.existingIds(owner, [ownerId])).size === 0) throw notFound(owner, ownerId)
  }

  /** The id of the resource a to-one relationship links to; 404 when it links to none. */
  async #relatedId (repository: Repository, owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship): Promise<string> {
    await this.#owner(repository, owner, ownerId)
    const target = this.#graph.getResource(relationship.targetType)
    const [related] = await repository.findRelated(owner, relationship, target, [ownerId], [])
    if (related === undefined) {
      throw jsonApiError('FJA_RESOURCE_NOT_FOUND', { detail: `'${owner.type}' '${ownerId}' has no '${relationship.name}'` })
    }
    return String(related.row[target.idColumn])
  }

  /**
   * `GET /<type>/<id>/<relationship>`: a to-one's related resource (or none), or a to-many's related collection with
   * the client's filter, sort, fields, include and page over the related rows only.
   */
  async readRelated (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, query: QueryTree): Promise<ResultSet> {
    const target = this.#graph.getResource(relationship.targetType)
    const repository = this.#repository
    await this.#owner(repository, owner, ownerId)
    if (relationship.toMany) return this.#resources.list(target, linkedQuery(owner, relationship, ownerId, query))
    const rows = await repository.findMany(target, {
      columns: selectionOf(target, query.fields.get(target.type)).columns,
      filter: linkedToNode(owner, relationship, ownerId),
      sort: [],
      limit: 1,
      offset: 0,
    })
    const primary = rows.map((row) => ({ resource: target, id: String(row[target.idColumn]), row }))
    return loadIncluded(repository, this.#graph, primary, query)
  }

  /** `GET /<type>/<id>/relationships/<relationship>`: the linkage (to-many: a page of it, with the count). */
  readLinkage (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, query: QueryTree): Promise<ResultSet> {
    const linkageOnly = queryTree({ ...query, include: [], fields: new Map([[relationship.targetType, new Set<string>()]]) })
    return this.readRelated(owner, ownerId, relationship, linkageOnly)
  }

  /** `PATCH /<type>/<id>/relationships/<relationship>`: replaces the linkage, as a PATCH of the resource would. */
  replace (owner: ResolvedResource, ownerId: string, input: LinkageInput): Promise<void> {
    return this.#resources.replaceLinkage(owner, ownerId, [input])
  }

  /** `POST` / `DELETE /<type>/<id>/relationships/<to-many>`: adds or removes members. */
  changeMembers (owner: ResolvedResource, ownerId: string, input: LinkageInput, mode: 'add' | 'remove'): Promise<void> {
    return this.#write(owner, async (_resources, repository) => {
      await this.#owner(repository, owner, ownerId)
      await changeMembers(repository, this.#graph, owner, ownerId, input, mode)
    })
  }

  /**
   * `POST /<type>/<id>/<relationship>`: creates a resource of the related type and links it to the owner — added to
   * a to-many, replacing the link of a to-one.
   */
  createRelated (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, input: ResourceInput, query: QueryTree): Promise<ResultSet> {
    const target = this.#graph.getResource(relationship.targetType)
    return this.#write(owner, async (resources, repository) => {
      await this.#owner(repository, owner, ownerId)
      const storage = relationship.storage
      let relationships = input.relationships
      if (storage.kind === 'inverse') {
        const inverse = target.relationships.get(storage.inverseName) as ResolvedRelationship
        const pointer = `/data/relationships/${inverse.name}/data`
        const given = relationships.find((item) => item.relationship.storage.kind === 'foreign-key' && item.relationship.storage.column === storage.column)
        if (given !== undefined && (given.ids?.length !== 1 || given.ids[0] !== ownerId)) {
          throw jsonApiError('FJA_ID_CONFLICT', { detail: `'${given.relationship.name}' must be '${owner.type}' '${ownerId}' of the URL`, source: { pointer: given.pointer } })
        }
        if (!relationship.toMany) await writeLinks(repository, this.#graph, owner, ownerId, [{ relationship, ids: [], pointer: '/data' }])
        relationships = [...relationships.filter((item) => item !== given), { relationship: inverse, ids: [ownerId], pointer }]
      }
      const created = await resources.create(target, { ...input, relationships }, queryTree({ page: query.page }))
      const id = created.primary[0].id
      if (storage.kind === 'join') await repository.addLinks(owner, relationship, target, ownerId, [id])
      if (storage.kind === 'foreign-key') await resources.replaceLinkage(owner, ownerId, [{ relationship, ids: [id], pointer: '/data' }])
      return resources.read(target, id, query)
    })
  }

  /** `PATCH /<type>/<id>/<to-one>`: updates the related resource; `read` validates the body against its id. */
  updateRelated (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, read: (relatedId: string) => ResourceInput, query: QueryTree): Promise<ResultSet> {
    const target = this.#graph.getResource(relationship.targetType)
    return this.#write(owner, async (resources, repository) => {
      const relatedId = await this.#relatedId(repository, owner, ownerId, relationship)
      return resources.update(target, relatedId, read(relatedId), query)
    })
  }

  /** `DELETE /<type>/<id>/<to-one>`: deletes the related resource. */
  deleteRelated (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship): Promise<void> {
    const target = this.#graph.getResource(relationship.targetType)
    return this.#write(owner, async (resources, repository) => {
      await resources.remove(target, await this.#relatedId(repository, owner, ownerId, relationship))
    })
  }
}
