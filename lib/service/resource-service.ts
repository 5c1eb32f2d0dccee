import type { QueryTree } from '../query/query-tree.js'
import type { Repository } from '../repository/repository.js'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { LinkageInput, ResourceInput } from '../request/read-resource-document.js'
import { isValidId } from '../schema/resource-id.js'
import { writeValue } from '../schema/value-codec.js'
import { jsonApiError } from '../errors/error-codes.js'
import { JsonApiError } from '../errors/json-api-error.js'
import { loadIncluded } from './load-included.js'
import { explainStorageError, type WriteContext } from './explain-storage-error.js'
import type { ResultSet } from './result-set.js'
import { selectionOf } from './selection.js'
import { writeLinks } from './write-links.js'

function notFound (resource: ResolvedResource, id: string): JsonApiError {
  return jsonApiError('FJA_RESOURCE_NOT_FOUND', { detail: `no '${resource.type}' with id '${id}'` })
}

/**
 * The JSON:API semantics of resources, above storage: existence, conflicts, defaults, relationship writes and
 * transactions. Routes and (later) the operations endpoint call these functions, so every rule is written once.
 */
export class ResourceService {
  readonly #graph: ResourceGraph
  readonly #repository: Repository

  constructor (graph: ResourceGraph, repository: Repository) {
    this.#graph = graph
    this.#repository = repository
  }

  /** A page of a collection, its count, and its includes. */
  async list (resource: ResolvedResource, query: QueryTree): Promise<ResultSet> {
    const { size, number } = query.page
    const selection = selectionOf(resource, query.fields.get(resource.type))
    // Without a count, one row more than the page tells whether a next page exists.
    const probe = !resource.count && size > 0 ? 1 : 0
    const [found, count] = await Promise.all([
      this.#repository.findMany(resource, {
        columns: selection.columns,
        filter: query.filter,
        sort: query.sort,
        limit: size === 0 ? undefined : size + probe,
        offset: size === 0 ? 0 : (number - 1) * size,
      }),
      resource.count ? this.#repository.count(resource, query.filter) : undefined,
    ])
    const rows = probe === 1 && found.length > size ? found.slice(0, size) : found
    const primary = rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
    return loadIncluded(this.#repository, this.#graph, primary, query, { count, hasMore: count === undefined ? found.length > rows.length : undefined })
  }

  /** One resource and its includes; 404 when it does not exist. */
  read (resource: ResolvedResource, id: string, query: QueryTree): Promise<ResultSet> {
    return this.#read(this.#repository, resource, id, query)
  }

  async #read (repository: Repository, resource: ResolvedResource, id: string, query: QueryTree): Promise<ResultSet> {
    if (!isValidId(resource, id)) throw notFound(resource, id)
    const row = await repository.findById(resource, id, selectionOf(resource, query.fields.get(resource.type)).columns)
    if (row === undefined) throw notFound(resource, id)
    return loadIncluded(repository, this.#graph, [{ resource, id: String(row[resource.idColumn]), row }], query)
  }

  /** Creates a resource with its relationships in one transaction and reads it back. */
  create (resource: ResolvedResource, input: ResourceInput, query: QueryTree, base = '/data'): Promise<ResultSet> {
    const context: WriteContext = { resource, action: 'create', base }
    return this.#write(context, async (repository) => {
      if (input.id !== undefined && !isValidId(resource, input.id)) {
        throw jsonApiError('FJA_VALIDATION', { detail: `'${input.id}' is not a valid '${resource.type}' id`, source: { pointer: `${base}/id` } })
      }
      const values: Record<string, unknown> = {}
      for (const attribute of resource.attributes.values()) {
        if (attribute.column === undefined || attribute.readOnly) continue
        if (Object.prototype.hasOwnProperty.call(input.attributes, attribute.name)) {
          values[attribute.column] = writeValue(attribute, input.attributes[attribute.name])
        } else if (attribute.hasDefault) {
          const value = typeof attribute.defaultValue === 'function' ? (attribute.defaultValue as () => unknown)() : attribute.defaultValue
          values[attribute.column] = writeValue(attribute, value)
        }
      }
      await this.#checkTargets(repository, input.relationships)
      Object.assign(values, foreignKeyValues(input.relationships))
      const id = await repository.insert(resource, values, input.id)
      await writeLinks(repository, this.#graph, resource, id, input.relationships.filter(isStoredElsewhere))
      return this.#read(repository, resource, id, query)
    })
  }

  /** Updates the attributes and relationships sent, in one transaction, and reads the resource back. */
  update (resource: ResolvedResource, id: string, input: ResourceInput, query: QueryTree, base = '/data'): Promise<ResultSet> {
    const context: WriteContext = { resource, action: 'update', base }
    return this.#write(context, async (repository) => {
      if (!isValidId(resource, id)) throw notFound(resource, id)
      const values: Record<string, unknown> = {}
      for (const [name, value] of Object.entries(input.attributes)) {
        const attribute = resource.attributes.get(name)
        if (attribute?.column !== undefined && !attribute.readOnly) values[attribute.column] = writeValue(attribute, value)
      }
      if (!await repository.update(resource, id, {})) throw notFound(resource, id)
      await this.#checkTargets(repository, input.relationships)
      Object.assign(values, foreignKeyValues(input.relationships))
      await repository.update(resource, id, values)
      await writeLinks(repository, this.#graph, resource, id, input.relationships.filter(isStoredElsewhere))
      return this.#read(repository, resource, id, query)
    })
  }

  /** Deletes a resource; 404 when it does not exist, 409 when storage refuses because others reference it. */
  remove (resource: ResolvedResource, id: string): Promise<void> {
    return this.#write({ resource, action: 'delete', base: '/data' }, async (repository) => {
      if (!isValidId(resource, id) || !await repository.delete(resource, id)) throw notFound(resource, id)
    })
  }

  async #write<T> (context: WriteContext, work: (repository: Repository) => Promise<T>): Promise<T> {
    try {
      return await this.#repository.transaction(work)
    } catch (error) {
      throw explainStorageError(error, context)
    }
  }

  /**
   * Every related id must exist: one query per relationship; a missing one is a 404 pointing at its identifier.
   * A cleared required to-one is a 422 naming the relationship; two relationships on one column must agree.
   */
  async #checkTargets (repository: Repository, inputs: readonly LinkageInput[]): Promise<void> {
    const columns = new Map<string, LinkageInput>()
    for (const input of inputs) {
      const { relationship, ids, pointer } = input
      if (relationship.storage.kind === 'foreign-key') {
        if (ids === null && !relationship.storage.nullable) {
          throw jsonApiError('FJA_REQUIRED_RELATIONSHIP', { detail: `the relationship '${relationship.name}' is required and cannot be cleared`, source: { pointer } })
        }
        const other = columns.get(relationship.storage.column)
        if (other !== undefined && String(other.ids) !== String(ids)) {
          throw jsonApiError('FJA_VALIDATION', {
            detail: `'${relationship.name}' and '${other.relationship.name}' are the same link and must not differ`,
            source: { pointer },
          })
        }
        columns.set(relationship.storage.column, input)
      }
      if (ids === null || ids.length === 0) continue
      const target = this.#graph.getResource(relationship.targetType)
      const valid = ids.filter((id) => isValidId(target, id))
      const existing = await repository.existingIds(target, valid)
      const missing = ids.findIndex((id) => !existing.has(id))
      if (missing >= 0) {
        throw jsonApiError('FJA_RELATED_NOT_FOUND', {
          detail: `no '${target.type}' with id '${ids[missing]}'`,
          source: { pointer: relationship.toMany ? `${pointer}/${missing}` : pointer },
        })
      }
    }
  }
}

function isStoredElsewhere (input: LinkageInput): boolean {
  return input.relationship.storage.kind !== 'foreign-key'
}

function foreignKeyValues (inputs: readonly LinkageInput[]): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const { relationship, ids } of inputs) {
    if (relationship.storage.kind === 'foreign-key') values[relationship.storage.column] = ids?.[0] ?? null
  }
  return values
}
