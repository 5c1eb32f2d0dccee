import type { Repository } from '../contracts/repository.js'
import type { ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { LinkageInput, ResourceInput } from '../contracts/inputs.js'
import { linkedToNode, type FilterNode } from '../schema/filter-nodes.js'
import { pageNode, queryTree, type QueryTree } from '../query/query-tree.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { ResourceService } from './resource-service.js'
import { ANSWER_AS_IS, type Finish, type Precondition } from './service-scope.js'
import { writeLinks } from './relationship-writes.js'
import { explainStorageError } from './explain-storage-error.js'
import type { ResultSet } from '../contracts/result-set.js'

/**
 * The related-resource routes (`/<type>/<id>/<relationship>`) and relationship routes
 * (`/<type>/<id>/relationships/<relationship>`) of one request. Reads and writes go through the request's resource
 * service (and so its composer, scopes and hooks); writes share the functions of a resource's PATCH, each request in
 * one transaction.
 */
export class RelationshipService {
  readonly #graph: ResourceGraph
  readonly #resources: ResourceService

  constructor (graph: ResourceGraph, resources: ResourceService) {
    this.#graph = graph
    this.#resources = resources
  }

  /** One transaction; a storage failure is explained as a change of the owner's relationships. */
  async #write<T> (owner: ResolvedResource, work: (resources: ResourceService, repository: Repository) => Promise<T>): Promise<T> {
    try {
      return await this.#resources.transaction(work)
    } catch (error) {
      throw explainStorageError(error, { resource: owner, action: 'link', base: '/data' })
    }
  }

  /** The id of the resource a to-one relationship links to (that the request can see); 404 when none. */
  async #relatedId (resources: ResourceService, repository: Repository, owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship): Promise<string> {
    await resources.assertVisible(owner, ownerId)
    const target = this.#graph.getResource(relationship.targetType)
    const [related] = await repository.findRelated(owner, relationship, [ownerId], resources.composer.related(target, []))
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
    await this.#resources.assertVisible(owner, ownerId)
    const linked = linkedToNode(owner, relationship, ownerId)
    if (relationship.toMany) return this.#resources.list(target, query, linked)
    return this.#resources.list(target, queryTree({ ...query, page: pageNode(1, 1) }), linked, 'none')
  }

  /** The request's resource service. */
  get resources (): ResourceService {
    return this.#resources
  }

  /** The condition of a to-many's related collection (to stream it); 404 when the owner is not visible. */
  async relatedCollection (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship): Promise<FilterNode> {
    await this.#resources.assertVisible(owner, ownerId)
    return linkedToNode(owner, relationship, ownerId)
  }

  /** `GET /<type>/<id>/relationships/<relationship>`: the linkage (to-many: a page of it, with the count). */
  readLinkage (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, query: QueryTree): Promise<ResultSet> {
    const linkageOnly = queryTree({ ...query, include: [], fields: new Map([[relationship.targetType, new Set<string>()]]) })
    return this.readRelated(owner, ownerId, relationship, linkageOnly)
  }

  /** `PATCH /<type>/<id>/relationships/<relationship>`: replaces the linkage, as a PATCH of the resource would. */
  replace (owner: ResolvedResource, ownerId: string, input: LinkageInput, precondition?: Precondition): Promise<void> {
    return this.#resources.replaceLinkage(owner, ownerId, [input], precondition)
  }

  /** `POST` / `DELETE /<type>/<id>/relationships/<to-many>`: adds or removes members. */
  changeMembers (owner: ResolvedResource, ownerId: string, input: LinkageInput, mode: 'add' | 'remove', precondition?: Precondition): Promise<void> {
    return this.#resources.changeMembers(owner, ownerId, input, mode, precondition)
  }

  /**
   * `POST /<type>/<id>/<relationship>`: creates a resource of the related type and links it to the owner — added to
   * a to-many, replacing the link of a to-one. A change of the owner's relationship: its write rules and `beforeLink`
   * apply (with the id of the resource just created), as the created type's `beforeCreate` does.
   */
  createRelated<T = ResultSet> (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, input: ResourceInput, query: QueryTree, finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
    const target = this.#graph.getResource(relationship.targetType)
    return this.#write(owner, async (resources, repository) => {
      await resources.assertVisible(owner, ownerId)
      const storage = relationship.storage
      const inverse = storage.kind === 'inverse' ? target.relationships.get(storage.inverseName) as ResolvedRelationship : undefined
      if (relationship.readOnly || inverse?.readOnly === true || (inverse?.createOnly === true && !relationship.toMany)) {
        throw jsonApiError('FJA_READ_ONLY_RELATIONSHIP', {
          detail: `'${owner.type}.${relationship.name}' cannot be written: create the '${target.type}' at its own path instead`,
          source: { pointer: '/data' },
        })
      }
      let relationships = input.relationships
      if (storage.kind === 'inverse' && inverse !== undefined) {
        const member = `/data/relationships/${inverse.name}`
        const given = relationships.find((item) => item.relationship.storage.kind === 'foreign-key' && item.relationship.storage.column === storage.column)
        if (given !== undefined && (given.ids?.length !== 1 || given.ids[0] !== ownerId)) {
          throw jsonApiError('FJA_ID_CONFLICT', { detail: `'${given.relationship.name}' must be '${owner.type}' '${ownerId}' of the URL`, source: { pointer: given.pointer } })
        }
        if (!relationship.toMany) await writeLinks(repository, this.#graph, resources.composer, owner, ownerId, [{ relationship, ids: [], pointer: '/data', member: '/data' }])
        relationships = [...relationships.filter((item) => item !== given), { relationship: inverse, ids: [ownerId], pointer: `${member}/data`, member }]
      }
      const created = await resources.create(target, { ...input, relationships }, queryTree({ page: query.page }))
      const id = created.primary[0].id
      const link = { relationship, ids: [id], pointer: '/data', member: '/data' }
      if (storage.kind === 'foreign-key') {
        await resources.replaceLinkage(owner, ownerId, [link])
      } else {
        await resources.beforeLinks(owner, ownerId, [link], relationship.toMany ? 'add' : 'replace')
        if (storage.kind === 'join') await repository.addLinks(resources.composer.target(owner, ownerId), relationship, resources.composer.links(target, [id]))
      }
      return resources.read(target, id, query).then(finish)
    })
  }

  /** `PATCH /<type>/<id>/<to-one>`: updates the related resource; `read` validates the body against its id. */
  updateRelated<T = ResultSet> (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship, read: (relatedId: string) => ResourceInput, query: QueryTree, finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
    const target = this.#graph.getResource(relationship.targetType)
    return this.#write(owner, async (resources, repository) => {
      const relatedId = await this.#relatedId(resources, repository, owner, ownerId, relationship)
      return resources.update(target, relatedId, read(relatedId), query, '/data', undefined, finish)
    })
  }

  /** `DELETE /<type>/<id>/<to-one>`: deletes the related resource. */
  deleteRelated (owner: ResolvedResource, ownerId: string, relationship: ResolvedRelationship): Promise<void> {
    const target = this.#graph.getResource(relationship.targetType)
    return this.#write(owner, async (resources, repository) => {
      await resources.remove(target, await this.#relatedId(resources, repository, owner, ownerId, relationship))
    })
  }
}
