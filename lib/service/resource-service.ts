import type { QueryTree } from '../query/query-tree.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import type { Repository } from '../contracts/repository.js'
import type { CountStrategy, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { LinkageInput, ResourceInput } from '../contracts/inputs.js'
import type { ResultSet } from '../contracts/result-set.js'
import type { QueryComposer } from './query-composer.js'
import { assertVisible, listCollection, readResource } from './resource-reads.js'
import { streamCollection, streams } from './collection-scan.js'
import { createResource, removeResource, updateResource } from './resource-writes.js'
import { changeMembers, replaceLinkage } from './linkage-writes.js'
import { beforeLinks } from './hook-events.js'
import { inTransaction } from './retries.js'
import { ANSWER_AS_IS, NO_RETRIES, type CollectionSink, type DatabaseSettings, type Finish, type Precondition, type ServiceScope } from './service-scope.js'

/**
 * The JSON:API semantics of resources, above storage, for one request: what the routes and the operations endpoint
 * call. It holds the request's scope (graph, repository, composer, fault settings) and hands each call to the part
 * that does it — reading (`resource-reads.ts`), streaming (`collection-scan.ts`), writing resources
 * (`resource-writes.ts`), writing linkage (`linkage-writes.ts`), with the preconditions (`preconditions.ts`), the
 * hooks (`hook-events.ts`) and the one retry loop (`retries.ts`) they share — so that every rule is written once and
 * the scope of every type a request reaches applies.
 */
export class ResourceService {
  #scope: ServiceScope

  constructor (graph: ResourceGraph, repository: Repository, composer: QueryComposer, database: DatabaseSettings = NO_RETRIES) {
    this.#scope = { graph, repository, composer, database, nested: false }
  }

  static #within (scope: ServiceScope): ResourceService {
    const service = new ResourceService(scope.graph, scope.repository, scope.composer, scope.database)
    service.#scope = scope
    return service
  }

  /** The request's composer. */
  get composer (): QueryComposer {
    return this.#scope.composer
  }

  /** A page of a collection, its size and its includes (see `listCollection`). */
  list (resource: ResolvedResource, query: QueryTree, extra?: FilterNode, counting: CountStrategy = resource.count): Promise<ResultSet> {
    return listCollection(this.#scope, resource, query, extra, counting)
  }

  /** Whether collections of every row (`page[size]=0`) can be streamed: the repository reads in batches. */
  get streams (): boolean {
    return streams(this.#scope)
  }

  /** Every row of a collection, in batches, to `sink` (see `streamCollection`). */
  stream (resource: ResolvedResource, query: QueryTree, sink: CollectionSink, extra?: FilterNode, counting: CountStrategy = resource.count, batchSize = 500): Promise<void> {
    return streamCollection(this.#scope, resource, query, sink, extra, counting, batchSize)
  }

  /** One resource and its includes; 404 when it does not exist or the request may not see it. */
  read (resource: ResolvedResource, id: string, query: QueryTree): Promise<ResultSet> {
    return readResource(this.#scope, resource, id, query)
  }

  /** Whether the request can see the resource; 404 when not. */
  assertVisible (resource: ResolvedResource, id: string): Promise<void> {
    return assertVisible(this.#scope, resource, id)
  }

  /** Creates a resource with its relationships and answers it as stored (see `createResource`). */
  create<T = ResultSet> (resource: ResolvedResource, sent: ResourceInput, query: QueryTree, base = '/data', finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
    return createResource(this.#scope, resource, sent, query, base, finish)
  }

  /** Updates the attributes and relationships sent, and answers the resource as stored (see `updateResource`). */
  update<T = ResultSet> (resource: ResolvedResource, id: string, sent: ResourceInput, query: QueryTree, base = '/data', precondition?: Precondition, finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
    return updateResource(this.#scope, resource, id, sent, query, base, precondition, finish)
  }

  /** Deletes a resource (see `removeResource`). */
  remove (resource: ResolvedResource, id: string, precondition?: Precondition): Promise<void> {
    return removeResource(this.#scope, resource, id, precondition)
  }

  /** Replaces the linkage of relationships of a resource, as a PATCH of it does (see `replaceLinkage`). */
  replaceLinkage (resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], precondition?: Precondition): Promise<void> {
    return replaceLinkage(this.#scope, resource, id, inputs, precondition)
  }

  /** Adds members to, or removes members from, a to-many relationship (see `changeMembers`). */
  changeMembers (resource: ResolvedResource, id: string, input: LinkageInput, mode: 'add' | 'remove', precondition?: Precondition): Promise<void> {
    return changeMembers(this.#scope, resource, id, input, mode, precondition)
  }

  /** Runs `beforeLink` for each relationship change (see `beforeLinks`). */
  beforeLinks (resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], op: 'replace' | 'add' | 'remove'): Promise<void> {
    return beforeLinks(this.#scope, resource, id, inputs, op)
  }

  /**
   * Runs `work` in one transaction with a service and a repository bound to it (and the same request context); nested
   * writes join it. Used by the relationship routes and the operations endpoint to compose several writes all or
   * nothing.
   */
  transaction<T> (work: (service: ResourceService, repository: Repository) => Promise<T>): Promise<T> {
    return inTransaction(this.#scope, (scope) => work(ResourceService.#within(scope), scope.repository))
  }
}
