import { pageNode, queryTree, type QueryTree } from '../query/query-tree.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import { StorageError, faultOf, type IncludeLayer, type QueryLayer, type Repository, type RequiredRow } from '../contracts/repository.js'
import type { CountStrategy, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import type { Row } from '../schema/fields.js'
import type { Kysely } from 'kysely'
import type { ExistingResourceEvent, HookEvent, StoredResource, WriteInput } from '../schema/hooks.js'
import type { LinkageInput, ResourceInput } from '../contracts/inputs.js'
import { isValidId } from '../schema/resource-id.js'
import { writeValue } from '../schema/value-codec.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { ErrorSource, JsonApiError } from '../errors/json-api-error.js'
import { loadIncluded } from './load-included.js'
import { readCursorPage } from './cursor-page.js'
import { explainStorageError, type WriteContext } from './explain-storage-error.js'
import { resourceKey, type ResourceRow, type ResultSet } from '../contracts/result-set.js'
import type { QueryComposer } from './query-composer.js'
import { selectionOf } from '../contracts/selection.js'
import { fromHookInput, hookInput, pointUnlocated, storedResource } from './write-hooks.js'
import {
  changeMembers, checkLinkRules, checkTargetsExist, checkWritable, foreignKeyGuards, foreignKeyValues, isStoredElsewhere, writeLinks,
} from './relationship-writes.js'

/** A query with every field and nothing included. */
const PLAIN_QUERY = queryTree({ page: pageNode(1, 0) })

/**
 * A value the database refused in a read: a client's filter value that the column's type cannot hold, or one too
 * large for what the database builds from it (SQLSTATE class 54).
 */
function refusedValue (error: unknown): boolean {
  return error instanceof StorageError && (error.kind === 'invalid-value' || error.kind === 'out-of-range' || error.kind === 'too-long')
}

/**
 * The links of a write stored in the owner's row (to-one foreign keys) and those stored elsewhere (inverse foreign
 * keys, join tables): the links as they are, and none, when all are in the row.
 */
function splitByStorage (inputs: readonly LinkageInput[]): readonly [readonly LinkageInput[], readonly LinkageInput[]] {
  if (!inputs.some(isStoredElsewhere)) return [inputs, NO_LINKS]
  return [inputs.filter((link) => !isStoredElsewhere(link)), inputs.filter(isStoredElsewhere)]
}

const NO_LINKS: readonly LinkageInput[] = Object.freeze([])
const NO_GUARDS: readonly RequiredRow[] = Object.freeze([])

/**
 * What a write answers, made from its result set before the write is over: the routes render their document here,
 * so that a failure while rendering (a derived attribute's `compute` that throws) rolls the write back with the
 * rest of its transaction.
 */
export type Finish<T> = (result: ResultSet) => T

/** The default {@link Finish}: the result set itself. */
export const ANSWER_AS_IS: Finish<ResultSet> = (result) => result

/** `finish` of a result that may still be loading, without a turn of the microtask queue when it is not. */
function finished<T> (result: ResultSet | Promise<ResultSet>, finish: Finish<T>): T | Promise<T> {
  return result instanceof Promise ? result.then(finish) : finish(result)
}

/**
 * Whether answering a write needs more than the written row: statements that read included resources, or the
 * application's code (a derived attribute's `compute`, for the primary type or an included one). Such a write runs
 * in a transaction with its answer, so that a failure of either (the database lost while reading the includes, a
 * `compute` that throws) leaves nothing written. A write answered from its own row alone stays one statement.
 */
function answersAfterMore (resource: ResolvedResource, query: QueryTree, include: readonly IncludeLayer[]): boolean {
  return include.length > 0 || selectionOf(resource, query.fields.get(resource.type)).computes
}

/** The 404 of a resource that does not exist, or that the request may not see. */
export function notFound (resource: ResolvedResource, id: string): JsonApiError {
  return jsonApiError('FJA_RESOURCE_NOT_FOUND', { detail: `no '${resource.type}' with id '${id}'` })
}

/** The attributes a client sent that the server writes: read-only ones (accepted by a custom input schema) are not. */
function writableAttributes (resource: ResolvedResource, attributes: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  // A type without read-only attributes writes what was sent: no list of the names sent.
  if (!resource.hasReadOnlyAttributes) return attributes
  const names = Object.keys(attributes)
  // Mostly every attribute sent is writable: the attributes as they are.
  if (names.every((name) => resource.attributes.get(name)?.readOnly !== true)) return attributes
  const writable: Record<string, unknown> = {}
  for (const name of names) {
    if (resource.attributes.get(name)?.readOnly !== true) writable[name] = attributes[name]
  }
  return writable
}

/** What a page shows of its collection's size: rows before it, its own rows, whether rows follow it. */
interface PageExtent {
  /** Rows before the page: their number when `exactBefore`, else the least there are. */
  readonly before: number
  readonly exactBefore: boolean
  readonly rows: number
  readonly more: boolean
}

/**
 * The size an estimated collection reports: the exact number when the page shows it (no row follows it and the rows
 * before it are known: a last page by number, or a cursor page that is both first and last) — which a `last` link
 * may then follow — else the estimate, raised to at least the rows the page proves exist (a planner's estimate can
 * lag behind the table).
 */
function sizeOf (estimate: number, page: PageExtent): Pick<ResultSet, 'count' | 'estimatedCount'> {
  if (page.exactBefore && !page.more) return { count: page.before + page.rows }
  return { estimatedCount: Math.max(estimate, page.before + page.rows + (page.more ? 1 : 0)) }
}

/** Where a streamed collection goes, batch by batch (see {@link ResourceService.stream}). */
export interface CollectionSink {
  /**
   * Before any row: the number of rows (when counted exactly); `tally` when the resource's count is estimated: the
   * number of rows written is then the collection's exact count (a streamed collection holds every row), to report
   * once they are written.
   */
  start(count: number | undefined, tally?: boolean): Promise<void>
  /** A batch of primary rows, with the linkage of their includes. */
  data(batch: ResultSet): Promise<void>
  /** Included resources not written before (`batch` holds their linkage). */
  included(batch: ResultSet, rows: readonly ResourceRow[]): Promise<void>
}

/**
 * A client's `If-Match` on a write of an existing resource: the write happens only while the resource, read under a
 * row lock inside the write's transaction, still has a representation the client named. Of two concurrent writes
 * sent with the same tag, the second waits for the first's lock, then sees the new representation: a 412.
 */
export interface Precondition {
  /** `*` (any existing resource), or whether the representation (read with `query`) has one of the tags sent. */
  readonly matches: '*' | ((result: ResultSet) => boolean)
  /** The query of the representation the tags are of (`GET /<type>/<id>`). */
  readonly query: QueryTree
  /** Where the tags came from, for the 412: the `If-Match` header, or an operation's member. */
  readonly source: ErrorSource
}

/** How a service meets faults of the database. */
export interface DatabaseSettings {
  /** How many times a transaction that failed with a serialization failure or deadlock runs again. */
  readonly retries: number
  /** The `Retry-After` (seconds) of a 503. */
  readonly retryAfter: number
}

const NO_RETRIES: DatabaseSettings = { retries: 0, retryAfter: 1 }

/** A short random pause before the next attempt, growing with the attempt, so that the conflicting writers part. */
function backOff (attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** attempt))
}

/**
 * Runs `attempt` and runs it again (at most `retries` times) while it fails with a serialization failure or a
 * deadlock: the database rolled the failed attempt back, so nothing of it remains.
 */
async function retrying<T> (repository: Repository, retries: number, attempt: () => Promise<T>): Promise<T> {
  for (let run = 0; ; run++) {
    try {
      return await attempt()
    } catch (error) {
      if (run >= retries || faultOf(repository, error) !== 'conflict') throw error
      await backOff(run)
    }
  }
}

/**
 * The JSON:API semantics of resources, above storage, for one request: existence, conflicts, defaults, relationship
 * writes, the application's hooks and transactions. Every read and write is composed by the request's
 * {@link QueryComposer}, so the scope of every type it reaches applies. Routes and the operations endpoint call these
 * functions, so every rule is written once.
 */
export class ResourceService {
  readonly #graph: ResourceGraph
  readonly #repository: Repository
  readonly #composer: QueryComposer
  readonly #database: DatabaseSettings
  /** Whether the service runs inside a transaction (of an outer write): it is retried as a whole, never in part. */
  readonly #nested: boolean

  constructor (graph: ResourceGraph, repository: Repository, composer: QueryComposer, database: DatabaseSettings = NO_RETRIES, nested = false) {
    this.#graph = graph
    this.#repository = repository
    this.#composer = composer
    this.#database = database
    this.#nested = nested
  }

  /** The request's composer. */
  get composer (): QueryComposer {
    return this.#composer
  }

  /**
   * A page of a collection, its size (by the resource's count strategy), and its includes. `extra` narrows the
   * collection further (the link to the owner of a related collection).
   *
   * - `exact`: a `count(*)` beside the page.
   * - `estimated`: the repository's estimate beside the page (a plan, not a scan), and one row more than the page,
   *   which tells whether a next page exists; the exact number where the page shows it (see {@link sizeOf}). A
   *   repository that cannot estimate counts exactly.
   * - `none`: one row more than the page, which tells whether a next page exists.
   *
   * @param counting how to tell the collection's size (the resource's `count` setting by default)
   */
  async list (resource: ResolvedResource, query: QueryTree, extra?: FilterNode, counting: CountStrategy = resource.count): Promise<ResultSet> {
    const { size, cursor } = query.page
    const repository = this.#repository
    // Estimated: every row of `page[size]=0` is read, so their number is the count; a repository that cannot
    // estimate counts.
    const strategy: CountStrategy | 'rows' = counting !== 'estimated' ? counting
      : size === 0 ? 'rows'
        : repository.estimateCount === undefined ? 'exact' : 'estimated'
    const total = (layer: QueryLayer): Promise<number> | undefined => {
      if (strategy === 'exact') return Promise.resolve().then(() => repository.count(layer))
      if (strategy === 'estimated') return Promise.resolve().then(() => (repository.estimateCount as NonNullable<Repository['estimateCount']>).call(repository, layer))
      return undefined
    }
    if (cursor !== undefined) {
      // A cursor page (keyset): one statement whatever its depth, beside the count.
      const layer = this.#composer.collection(resource, query, extra)
      const [page, counted] = await this.#filterValuesFit(Promise.all([
        Promise.resolve().then(() => readCursorPage(repository, layer, cursor, size)),
        total(layer),
      ]), resource, query, extra)
      const primary = page.rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
      const totals = strategy === 'estimated'
        ? sizeOf(counted as number, { before: page.result.prev === undefined ? 0 : 1, exactBefore: page.result.prev === undefined, rows: page.rows.length, more: page.result.next !== undefined })
        : { count: counted }
      return loadIncluded(repository, resource, primary, layer.include, { ...totals, cursor: page.result })
    }
    // Without an exact count, one row more than the page tells whether a next page exists.
    const probe = strategy !== 'exact' && size > 0 ? 1 : 0
    const layer = this.#composer.collection(resource, query, extra, probe)
    const [found, counted] = await this.#filterValuesFit(Promise.all([
      Promise.resolve().then(() => repository.findMany(layer)),
      total(layer),
    ]), resource, query, extra)
    const rows = probe === 1 && found.length > size ? found.slice(0, size) : found
    const primary = rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
    const hasMore = found.length > rows.length
    let totals: Pick<ResultSet, 'count' | 'estimatedCount' | 'hasMore'>
    if (strategy === 'exact') {
      totals = { count: counted }
    } else if (strategy === 'rows') {
      totals = { count: rows.length }
    } else if (strategy === 'estimated') {
      const offset = (query.page.number - 1) * size
      totals = {
        ...(rows.length === 0 && offset > 0
          // A page beyond the last: at most `offset` rows.
          ? { estimatedCount: Math.min(counted as number, offset) }
          : sizeOf(counted as number, { before: offset, exactBefore: true, rows: rows.length, more: hasMore })),
        hasMore,
      }
    } else {
      totals = { hasMore }
    }
    return loadIncluded(repository, resource, primary, layer.include, totals)
  }

  /** Whether collections of every row (`page[size]=0`) can be streamed: the repository reads in batches. */
  get streams (): boolean {
    return this.#repository.scan !== undefined
  }

  /**
   * Every row of a collection (`page[size]=0`), in batches read through a cursor of one read-only snapshot, handed
   * to `sink` as they come: memory holds one batch, whatever the number of rows. An exact count comes first, from the
   * same snapshot; an estimated one is the number of rows written (`tally`), exact too. With includes over more than one batch, the rows are read twice: the first pass gives each batch with
   * its linkage, the second the included resources, each once and never one that is primary (only their keys are
   * kept).
   */
  async stream (resource: ResolvedResource, query: QueryTree, sink: CollectionSink, extra?: FilterNode, counting: CountStrategy = resource.count, batchSize = 500): Promise<void> {
    const layer = this.#composer.collection(resource, query, extra)
    const scan = this.#repository.scan
    if (scan === undefined) throw new Error('fastify-jsonapi: the repository cannot stream (no scan method)')
    const rowsOf = (rows: readonly Row[]): ResourceRow[] => rows.map((row) => ({ resource, id: String(row[resource.idColumn]), row }))
    await this.#filterValuesFit(scan.call(this.#repository, async (repository, batches) => {
      // Estimated: every row is written, so their number is the exact count, and costs nothing.
      await sink.start(counting === 'exact' ? await repository.count(layer) : undefined, counting === 'estimated')
      const primaryKeys = layer.include.length === 0 ? undefined : new Set<string>()
      let batchCount = 0
      let last: ResultSet | undefined
      for await (const rows of batches(layer, batchSize)) {
        const primary = rowsOf(rows)
        for (const item of primary) primaryKeys?.add(resourceKey(resource.type, item.id))
        last = await loadIncluded(repository, resource, primary, layer.include)
        batchCount++
        await sink.data(last)
      }
      if (primaryKeys === undefined) return
      // One batch holds every primary row: its included resources are the document's, no second pass needed.
      if (batchCount <= 1) {
        if (last !== undefined && last.included.length > 0) await sink.included(last, last.included)
        return
      }
      const written = new Set<string>()
      for await (const rows of batches(layer, batchSize)) {
        const result = await loadIncluded(repository, resource, rowsOf(rows), layer.include)
        const fresh = result.included.filter((item) => {
          const key = resourceKey(item.resource.type, item.id)
          if (primaryKeys.has(key) || written.has(key)) return false
          written.add(key)
          return true
        })
        if (fresh.length > 0) await sink.included(result, fresh)
      }
    }), resource, query, extra)
  }

  /**
   * The only client values a read binds are filter values (ids and page numbers are checked first): a value the
   * column's type cannot hold (an integer beyond its range, say) is a 400 of the filter parameter that holds it, not a
   * database error.
   */
  async #filterValuesFit<T> (read: Promise<T>, resource: ResolvedResource, query: QueryTree, extra: FilterNode | undefined): Promise<T> {
    try {
      return await read
    } catch (error) {
      if (!refusedValue(error)) throw error
      throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', {
        detail: 'a filter value does not fit the type of its column',
        source: { parameter: await this.#refusingParameter(resource, query, extra) },
      })
    }
  }

  /**
   * The filter parameter that holds a value the database refused: the only one, or, of several, the first whose
   * filter alone is refused too (a count under it; only on this error path).
   */
  async #refusingParameter (resource: ResolvedResource, query: QueryTree, extra: FilterNode | undefined): Promise<string> {
    const parts = query.filterParts ?? []
    if (parts.length <= 1) return parts[0]?.parameter ?? 'filter'
    for (const part of parts) {
      try {
        await this.#repository.count(this.#composer.collection(resource, queryTree({ ...query, filter: part.node }), extra))
      } catch (error) {
        if (refusedValue(error)) return part.parameter
        throw error
      }
    }
    return parts[0].parameter
  }

  /** One resource and its includes; 404 when it does not exist or the request may not see it. */
  async read (resource: ResolvedResource, id: string, query: QueryTree): Promise<ResultSet> {
    if (!isValidId(resource, id)) throw notFound(resource, id)
    const layer = this.#composer.detail(resource, id, query)
    const [row] = await this.#repository.findMany(layer)
    if (row === undefined) throw notFound(resource, id)
    return loadIncluded(this.#repository, resource, [{ resource, id: String(row[resource.idColumn]), row }], layer.include)
  }

  /** Whether the request can see the resource; 404 when not. */
  async assertVisible (resource: ResolvedResource, id: string): Promise<void> {
    if (!isValidId(resource, id) || (await this.#repository.findMany(this.#composer.existing(resource, [id]))).length === 0) {
      throw notFound(resource, id)
    }
  }

  /**
   * Creates a resource with its relationships and returns it as stored. A create that is one statement (attributes
   * and foreign keys of its own row, no hooks) runs as that statement; one that also links rows elsewhere, or whose
   * type has write hooks, runs in a transaction.
   */
  create<T = ResultSet> (resource: ResolvedResource, sent: ResourceInput, query: QueryTree, base = '/data', finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
    const context: WriteContext = { resource, action: 'create', base }
    const include = this.#composer.includes(resource, query.include, query)
    const several = resource.hasWriteHooks || sent.relationships.some(isStoredElsewhere) || answersAfterMore(resource, query, include)
    return this.#write(context, several, async (service, repository) => {
      if (sent.id !== undefined && !isValidId(resource, sent.id)) {
        throw jsonApiError('FJA_VALIDATION', { detail: `'${sent.id}' is not a valid '${resource.type}' id`, source: { pointer: `${base}/id` } })
      }
      checkWritable(this.#graph, sent.relationships, 'create')
      const attributes = writableAttributes(resource, sent.attributes)
      const writable = attributes === sent.attributes ? sent : { ...sent, attributes }
      // Each step below is awaited only when it has something to do: every await is a turn of the microtask queue.
      const input = resource.hooks.beforeCreate === undefined ? writable : await service.#inputHook('beforeCreate', resource, writable, () => service.#event(resource), base)
      if (input.id !== undefined && !isValidId(resource, input.id)) throw new Error(`fastify-jsonapi: the beforeCreate hook of '${resource.type}' set an invalid id '${input.id}'`)
      const values: Record<string, unknown> = {}
      for (const attribute of resource.attributes.values()) {
        if (attribute.column === undefined) continue
        if (Object.prototype.hasOwnProperty.call(input.attributes, attribute.name)) {
          values[attribute.column] = writeValue(attribute, input.attributes[attribute.name])
        } else if (attribute.hasDefault) {
          const value = typeof attribute.defaultValue === 'function' ? (attribute.defaultValue as () => unknown)() : attribute.defaultValue
          values[attribute.column] = writeValue(attribute, value)
        }
      }
      const [own, elsewhere] = splitByStorage(input.relationships)
      checkLinkRules(own)
      if (elsewhere.length > 0) await checkTargetsExist(repository, this.#graph, this.#composer, elsewhere)
      foreignKeyValues(own, values)
      const columns = service.#writeColumns(resource, query, resource.hooks.afterCreate !== undefined)
      // #guarded, written out: one `async` frame and one closure fewer per create.
      const guards = foreignKeyGuards(this.#graph, this.#composer, own)
      if (guards === undefined) await checkTargetsExist(repository, this.#graph, this.#composer, own)
      const row = await repository.insert(resource, values, input.id, columns, guards ?? NO_GUARDS)
      if (row === undefined && guards !== undefined && guards.length > 0) await checkTargetsExist(repository, this.#graph, this.#composer, own)
      if (row === undefined) throw jsonApiError('FJA_RELATED_NOT_FOUND', { detail: 'a related resource was deleted while this one was created', source: { pointer: `${base}/relationships` } })
      const id = String(row[resource.idColumn])
      if (elsewhere.length > 0) await writeLinks(repository, this.#graph, this.#composer, resource, id, elsewhere)
      if (resource.hooks.afterCreate !== undefined) await resource.hooks.afterCreate(storedResource(resource, id, row), service.#event(resource))
      return finished(loadIncluded(repository, resource, [{ resource, id, row }], include), finish)
    })
  }

  /**
   * Runs `beforeCreate` or `beforeUpdate` (when declared) on the input as hooks see it, and reads back what the hook
   * changed or returned, checked against the declaration.
   */
  async #inputHook (name: 'beforeCreate' | 'beforeUpdate', resource: ResolvedResource, input: ResourceInput, event: () => HookEvent<unknown>, base: string): Promise<ResourceInput> {
    const hook = resource.hooks[name] as ((input: WriteInput<any, any>, event: HookEvent<unknown>) => unknown) | undefined
    if (hook === undefined) return input
    const before = hookInput(input)
    const draft = hookInput(input)
    const returned = await hook.call(resource.hooks, draft, event()) as WriteInput<any, any> | undefined
    return fromHookInput(resource, name, input, before, returned ?? draft, base)
  }

  /**
   * A rule's refusal of a change to an existing resource (a read-only relationship, say), answered only once the
   * resource is known to be one the request can see: for a row that is invisible or does not exist the answer is the
   * 404, so that no refusal tells a hidden row from a missing one. `seen`: visibility was checked already.
   *
   * @returns the refusal, to throw
   */
  async #refusal (resource: ResolvedResource, id: string, seen: boolean, refusal: unknown): Promise<unknown> {
    if (!seen) await this.assertVisible(resource, id)
    return refusal
  }

  /**
   * Before a `before*` hook of a change to an existing resource runs, the resource must be one the request can see:
   * a hook never judges (or refuses, revealing it) a row that is invisible or does not exist — that is a 404.
   */
  async #visibleToHooks (resource: ResolvedResource, id: string, hooked: boolean): Promise<void> {
    if (!isValidId(resource, id)) throw notFound(resource, id)
    if (hooked) await this.assertVisible(resource, id)
  }

  /** Updates the attributes and relationships sent, and returns the resource as stored. */
  update<T = ResultSet> (resource: ResolvedResource, id: string, sent: ResourceInput, query: QueryTree, base = '/data', precondition?: Precondition, finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
    const context: WriteContext = { resource, action: 'update', base }
    const include = this.#composer.includes(resource, query.include, query)
    const several = resource.hasWriteHooks || sent.relationships.some(isStoredElsewhere) || precondition !== undefined || answersAfterMore(resource, query, include)
    return this.#write(context, several, async (service, repository) => {
      const seen = await service.#holds(resource, id, precondition)
      try {
        checkWritable(this.#graph, sent.relationships, 'update')
      } catch (error) {
        throw await service.#refusal(resource, id, seen, error)
      }
      await service.#visibleToHooks(resource, id, !seen && (resource.hooks.beforeUpdate !== undefined || resource.hooks.beforeLink !== undefined))
      const attributes = writableAttributes(resource, sent.attributes)
      const writable = attributes === sent.attributes ? sent : { ...sent, attributes }
      const input = await service.#inputHook('beforeUpdate', resource, writable, () => service.#existingEvent(resource, id), base)
      await service.beforeLinks(resource, id, input.relationships, 'replace')
      const values: Record<string, unknown> = {}
      for (const [name, value] of Object.entries(input.attributes)) {
        const attribute = resource.attributes.get(name)
        if (attribute?.column !== undefined) values[attribute.column] = writeValue(attribute, value)
      }
      const row = await service.#link(resource, id, input.relationships, values, service.#writeColumns(resource, query, resource.hooks.afterUpdate !== undefined), seen)
      await resource.hooks.afterUpdate?.(storedResource(resource, id, row), service.#event(resource))
      return finished(loadIncluded(repository, resource, [{ resource, id: String(row[resource.idColumn]), row }], include), finish)
    })
  }

  /**
   * Replaces the linkage of relationships of a resource (the relationship routes' PATCH, relationship operations,
   * the link of a related route's create), exactly as a PATCH of the resource does: the same rules, the same hooks,
   * the same writes.
   */
  async replaceLinkage (resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], precondition?: Precondition): Promise<void> {
    const several = resource.hasWriteHooks || inputs.some(isStoredElsewhere) || precondition !== undefined
    await this.#write({ resource, action: 'update', base: '/data' }, several, async (service) => {
      const seen = await service.#holds(resource, id, precondition)
      try {
        checkWritable(this.#graph, inputs, 'update')
      } catch (error) {
        throw await service.#refusal(resource, id, seen, error)
      }
      await service.#visibleToHooks(resource, id, !seen && resource.hooks.beforeLink !== undefined)
      await service.beforeLinks(resource, id, inputs, 'replace')
      await service.#link(resource, id, inputs, {}, [], seen)
    })
  }

  /** Adds members to, or removes members from, a to-many relationship of a resource the request can see. */
  changeMembers (resource: ResolvedResource, id: string, input: LinkageInput, mode: 'add' | 'remove', precondition?: Precondition): Promise<void> {
    return this.#write({ resource, action: 'link', base: '/data' }, true, async (service, repository) => {
      // Locked, as a replacement is (see #link): concurrent additions of the same members all succeed, none twice.
      if (!await service.#holds(resource, id, precondition)) await service.#lockVisible(resource, id)
      checkWritable(this.#graph, [input], 'update')
      await service.beforeLinks(resource, id, [input], mode)
      await changeMembers(repository, this.#graph, this.#composer, resource, id, input, mode)
    })
  }

  /**
   * Checks a write's precondition, first thing in its transaction: locks the resource's row (so that a concurrent
   * write with the same tag waits, then fails), reads its representation within the scope and compares its tag;
   * 404 when the request cannot see it, 412 when no tag sent matches.
   *
   * @returns whether it saw the resource (so the write need not check again that the request can see it)
   */
  async #holds (resource: ResolvedResource, id: string, precondition: Precondition | undefined): Promise<boolean> {
    if (precondition === undefined) return false
    if (!isValidId(resource, id)) throw notFound(resource, id)
    if (this.#repository.lock !== undefined && !await this.#repository.lock(this.#composer.target(resource, id))) throw notFound(resource, id)
    const { matches } = precondition
    if (matches === '*') {
      if (this.#repository.lock === undefined) await this.assertVisible(resource, id)
      return true
    }
    if (!matches(await this.read(resource, id, precondition.query))) {
      throw jsonApiError('FJA_PRECONDITION_FAILED', {
        detail: `'${resource.type}' '${id}' has changed: its ETag is no longer one of those in If-Match; read it again`,
        source: precondition.source,
      })
    }
    return true
  }

  /** Runs `beforeLink` for each relationship change; an error without a source points at the linkage. */
  async beforeLinks (resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], op: 'replace' | 'add' | 'remove'): Promise<void> {
    const hook = resource.hooks.beforeLink
    if (hook === undefined) return
    for (const { relationship, ids, pointer } of inputs) {
      try {
        await hook.call(resource.hooks, { relationship: relationship.name, op, ids: ids === null ? null : [...ids] }, this.#existingEvent(resource, id))
      } catch (error) {
        throw pointUnlocated(error, pointer)
      }
    }
  }

  /** What every write hook receives: the context, the type, and the write's transaction. */
  #event (resource: ResolvedResource): HookEvent<unknown> {
    const repository = this.#repository
    return {
      context: this.#composer.context,
      type: resource.type,
      get db (): Kysely<any> {
        if (repository.kysely === undefined) throw new Error('fastify-jsonapi: `event.db` needs a repository with a `kysely` member')
        return repository.kysely
      },
    }
  }

  /** What the hooks of a change to an existing resource receive; `current` reads it within the scope. */
  #existingEvent (resource: ResolvedResource, id: string): ExistingResourceEvent<any, unknown> {
    // Object.assign onto the event keeps its `db` getter a getter (a spread would call it).
    return Object.assign(this.#event(resource), { id, current: () => this.current(resource, id) })
  }

  /** A resource as stored, every attribute read, within the scope; 404 when the request cannot see it. */
  async current (resource: ResolvedResource, id: string): Promise<StoredResource<any>> {
    const [row] = await this.#repository.findMany(this.#composer.detail(resource, id, PLAIN_QUERY, resource.allColumns))
    if (row === undefined) throw notFound(resource, id)
    return storedResource(resource, id, row)
  }

  /**
   * Locks the row of a resource the request can see, in the write's transaction, where the repository can lock (else
   * only checks that the request can see it); 404 when it cannot.
   */
  async #lockVisible (resource: ResolvedResource, id: string): Promise<void> {
    if (this.#repository.lock === undefined) return this.assertVisible(resource, id)
    if (!isValidId(resource, id) || !await this.#repository.lock(this.#composer.target(resource, id))) throw notFound(resource, id)
  }

  /**
   * Updates `values` and the relationships of an existing resource the request can see, and returns its row; 404
   * when there is none. Links stored outside the owner's row (inverse foreign keys, join tables) are written under a
   * lock of the owner's row (unless `locked` says a precondition took it already): two concurrent replacements of one
   * owner's to-many then run one after the other, and the relationship ends as one of the sets sent, never a mix of
   * them; two concurrent additions of the same member both succeed.
   */
  async #link (resource: ResolvedResource, id: string, inputs: readonly LinkageInput[], values: Record<string, unknown>, columns: readonly string[], locked = false): Promise<Row> {
    const repository = this.#repository
    const [own, elsewhere] = splitByStorage(inputs)
    if (elsewhere.length > 0 && !locked) await this.#lockVisible(resource, id)
    checkLinkRules(own)
    await checkTargetsExist(repository, this.#graph, this.#composer, elsewhere)
    const target = this.#composer.target(resource, id)
    const row = await this.#guarded(own, (guards) => repository.update(target, { ...values, ...foreignKeyValues(own) }, columns, guards))
    if (row === undefined) throw notFound(resource, id)
    await writeLinks(repository, this.#graph, this.#composer, resource, id, elsewhere)
    return row
  }

  /**
   * Runs a write of the owner's row guarded by the existence of the foreign keys' targets, in the same statement.
   * When the write does not happen, the targets are checked one by one for the precise 404 (pointing at the
   * identifier); if they all exist, the row itself was missing and the result is undefined.
   */
  async #guarded (own: readonly LinkageInput[], write: (guards: readonly RequiredRow[]) => Promise<Row | undefined>): Promise<Row | undefined> {
    const guards = foreignKeyGuards(this.#graph, this.#composer, own)
    if (guards === undefined) await checkTargetsExist(this.#repository, this.#graph, this.#composer, own)
    const row = await write(guards ?? [])
    if (row === undefined && guards !== undefined && guards.length > 0) await checkTargetsExist(this.#repository, this.#graph, this.#composer, own)
    return row
  }

  /** The columns a write returns: the response's fieldset, or every attribute's when an `after*` hook reads them. */
  #writeColumns (resource: ResolvedResource, query: QueryTree, all: boolean): readonly string[] {
    return all ? resource.allColumns : selectionOf(resource, query.fields.get(resource.type)).columns
  }

  /**
   * Runs `work` in one transaction with a service and a repository bound to it (and the same request context); nested
   * writes join it. Used by the relationship routes and the operations endpoint to compose several writes all or
   * nothing.
   */
  transaction<T> (work: (service: ResourceService, repository: Repository) => Promise<T>): Promise<T> {
    const run = (): Promise<T> => this.#repository.transaction((repository) => work(new ResourceService(this.#graph, repository, this.#composer, this.#database, true), repository))
    return this.#nested ? run() : retrying(this.#repository, this.#database.retries, run)
  }

  /** Deletes a resource; 404 when there is none the request can see, 409 when storage refuses because others reference it. */
  remove (resource: ResolvedResource, id: string, precondition?: Precondition): Promise<void> {
    return this.#write({ resource, action: 'delete', base: '/data' }, resource.hasWriteHooks || precondition !== undefined, async (service, repository) => {
      const seen = await service.#holds(resource, id, precondition)
      await service.#visibleToHooks(resource, id, !seen && resource.hooks.beforeDelete !== undefined)
      await resource.hooks.beforeDelete?.(service.#existingEvent(resource, id))
      if (!await repository.delete(this.#composer.target(resource, id))) throw notFound(resource, id)
      await resource.hooks.afterDelete?.(Object.assign(service.#event(resource), { id }))
    })
  }

  /**
   * Runs a write: in a transaction when it takes several statements (or has hooks around it), as it is when it is
   * one statement (atomic by itself; the reads before it only check what the database's own constraints check again).
   */
  async #write<T> (context: WriteContext, several: boolean, work: (service: ResourceService, repository: Repository) => Promise<T>): Promise<T> {
    // The single statement's retries are this loop rather than `retrying` around a closure: a create or an update
    // is a handful of microtask turns in all, and each layer of `async` functions adds some.
    for (let run = 0; ; run++) {
      try {
        return await (several ? this.transaction(work) : work(this, this.#repository))
      } catch (error) {
        // A transaction retries itself; a statement inside one must not (the failure aborted the whole transaction).
        if (several || this.#nested || run >= this.#database.retries || faultOf(this.#repository, error) !== 'conflict') throw explainStorageError(error, context)
      }
      await backOff(run)
    }
  }
}
