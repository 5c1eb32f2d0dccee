import type { QueryTree } from '../query/query-tree.js'
import { StorageError, type Repository, type RequiredRow } from '../repository/repository.js'
import type { ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { Row } from '../schema/declaration.js'
import type { LinkageInput, ResourceInput } from '../request/read-resource-document.js'
import { isValidId } from '../schema/resource-id.js'
import { writeValue } from '../schema/value-codec.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { JsonApiError } from '../errors/json-api-error.js'
import { loadIncluded } from './load-included.js'
import { explainStorageError, type WriteContext } from './explain-storage-error.js'
import type { ResultSet } from './result-set.js'
import { selectionOf } from './selection.js'
import { checkLinkRules, checkTargetsExist, foreignKeyGuards, foreignKeyValues, isStoredElsewhere, writeLinks } from './relationship-writes.js'

/**
 * The only client values a read binds are filter values (ids and page numbers are checked first): a value the
 * column's type cannot hold (an integer beyond its range, say) is the filter's 400, not a database error.
 */
async function filterValuesFit<T> (read: Promise<T>): Promise<T> {
  try {
    return await read
  } catch (error) {
    if (error instanceof StorageError && (error.kind === 'invalid-value' || error.kind === 'out-of-range')) {
      throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', { detail: 'a filter value does not fit the type of its column', source: { parameter: 'filter' } })
    }
    throw error
  }
}

/** The 404 of a resource that does not exist. */
export function notFound (resource: ResolvedResource, id: string): JsonApiError {
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
    const repository = this.#repository
    const [found, count] = await filterValuesFit(Promise.all([
      Promise.resolve().then(() => repository.findMany(resource, {
        columns: selection.columns,
        filter: query.filter,
        sort: query.sort,
        limit: size === 0 ? undefined : size + probe,
        offset: size === 0 ? 0 : (number - 1) * size,
      })),
      resource.count ? Promise.resolve().then(() => repository.count(resource, query.filter)) : undefined,
    ]))
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
    const row = await repository.findById(resource, id, this.#columns(resource, query))
    if (row === undefined) throw notFound(resource, id)
    return loadIncluded(repository, this.#graph, [{ resource, id: String(row[resource.idColumn]), row }], query)
  }

  /**
   * Creates a resource with its relationships and returns it as stored. A create that is one statement (attributes
   * and foreign keys of its own row) runs as that statement; one that also links rows elsewhere runs in a
   * transaction.
   */
  create (resource: ResolvedResource, input: ResourceInput, query: QueryTree, base = '/data'): Promise<ResultSet> {
    const context: WriteContext = { resource, action: 'create', base }
    const elsewhere = input.relationships.filter(isStoredElsewhere)
    return this.#write(context, elsewhere.length > 0, async (repository) => {
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
      const own = input.relationships.filter((link) => !isStoredElsewhere(link))
      checkLinkRules(own)
      await checkTargetsExist(repository, this.#graph, elsewhere)
      Object.assign(values, foreignKeyValues(own))
      const row = await this.#guarded(repository, own, (guards) => repository.insert(resource, values, input.id, this.#columns(resource, query), guards))
      if (row === undefined) throw jsonApiError('FJA_RELATED_NOT_FOUND', { detail: 'a related resource was deleted while this one was created', source: { pointer: `${base}/relationships` } })
      const id = String(row[resource.idColumn])
      await writeLinks(repository, this.#graph, resource, id, elsewhere)
      return loadIncluded(repository, this.#graph, [{ resource, id, row }], query)
    })
  }

  /** Updates the attributes and relationships sent, and returns the resource as stored. */
  update (resource: ResolvedResource, id: string, input: ResourceInput, query: QueryTree, base = '/data'): Promise<ResultSet> {
    const context: WriteContext = { resource, action: 'update', base }
    return this.#write(context, input.relationships.some(isStoredElsewhere), async (repository) => {
      const values: Record<string, unknown> = {}
      for (const [name, value] of Object.entries(input.attributes)) {
        const attribute = resource.attributes.get(name)
        if (attribute?.column !== undefined && !attribute.readOnly) values[attribute.column] = writeValue(attribute, value)
      }
      const row = await this.#link(repository, resource, id, input.relationships, values, this.#columns(resource, query))
      return loadIncluded(repository, this.#graph, [{ resource, id: String(row[resource.idColumn]), row }], query)
    })
  }

  /**
   * Replaces the linkage of relationships of a resource (the relationship routes' PATCH), exactly as a PATCH of the
   * resource does: the same checks, the same writes.
   */
  async replaceLinkage (resource: ResolvedResource, id: string, inputs: readonly LinkageInput[]): Promise<void> {
    await this.#write({ resource, action: 'update', base: '/data' }, inputs.some(isStoredElsewhere), (repository) => this.#link(repository, resource, id, inputs, {}, []))
  }

  /** Updates `values` and the relationships of an existing resource, and returns its row; 404 when it does not exist. */
  async #link (repository: Repository, resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], values: Record<string, unknown>, columns: readonly string[]): Promise<Row> {
    if (!isValidId(resource, id)) throw notFound(resource, id)
    const own = inputs.filter((link) => !isStoredElsewhere(link))
    const elsewhere = inputs.filter(isStoredElsewhere)
    checkLinkRules(own)
    await checkTargetsExist(repository, this.#graph, elsewhere)
    const row = await this.#guarded(repository, own, (guards) => repository.update(resource, id, { ...values, ...foreignKeyValues(own) }, columns, guards))
    if (row === undefined) throw notFound(resource, id)
    await writeLinks(repository, this.#graph, resource, id, elsewhere)
    return row
  }

  /**
   * Runs a write of the owner's row guarded by the existence of the foreign keys' targets, in the same statement.
   * When the write does not happen, the targets are checked one by one for the precise 404 (pointing at the
   * identifier); if they all exist, the row itself was missing and the result is undefined.
   */
  async #guarded (repository: Repository, own: readonly LinkageInput[], write: (guards: readonly RequiredRow[]) => Promise<Row | undefined>): Promise<Row | undefined> {
    const guards = foreignKeyGuards(this.#graph, own)
    if (guards === undefined) await checkTargetsExist(repository, this.#graph, own)
    const row = await write(guards ?? [])
    if (row === undefined && guards !== undefined && guards.length > 0) await checkTargetsExist(repository, this.#graph, own)
    return row
  }

  #columns (resource: ResolvedResource, query: QueryTree): readonly string[] {
    return selectionOf(resource, query.fields.get(resource.type)).columns
  }

  /**
   * Runs `work` in one transaction with a service and a repository bound to it; nested writes join it. Used by the
   * relationship routes and the operations endpoint to compose several writes all or nothing.
   */
  transaction<T> (work: (service: ResourceService, repository: Repository) => Promise<T>): Promise<T> {
    return this.#repository.transaction((repository) => work(new ResourceService(this.#graph, repository), repository))
  }

  /** Deletes a resource; 404 when it does not exist, 409 when storage refuses because others reference it. */
  remove (resource: ResolvedResource, id: string): Promise<void> {
    return this.#write({ resource, action: 'delete', base: '/data' }, false, async (repository) => {
      if (!isValidId(resource, id) || !await repository.delete(resource, id)) throw notFound(resource, id)
    })
  }

  /**
   * Runs a write: in a transaction when it takes several statements, as it is when it is one statement (atomic by
   * itself; the reads before it only check what the database's own constraints check again).
   */
  async #write<T> (context: WriteContext, several: boolean, work: (repository: Repository) => Promise<T>): Promise<T> {
    try {
      return await (several ? this.#repository.transaction(work) : work(this.#repository))
    } catch (error) {
      throw explainStorageError(error, context)
    }
  }
}
