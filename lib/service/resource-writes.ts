import type { QueryTree } from '../query/query-tree.js'
import type { IncludeLayer } from '../contracts/repository.js'
import { ruleSelectedAs, selectedAs, type ResolvedAttribute, type ResolvedResource } from '../schema/resolved.js'
import type { Row } from '../schema/fields.js'
import type { ResourceInput } from '../contracts/inputs.js'
import { isValidId } from '../schema/resource-id.js'
import { writeValue } from '../schema/value-codec.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { WriteContext } from './explain-storage-error.js'
import type { ResultSet } from '../contracts/result-set.js'
import { selectionOf } from '../contracts/selection.js'
import { loadIncluded } from './load-included.js'
import { storedResource } from './write-hooks.js'
import { checkLinkRules, checkTargetsExist, checkWritable, foreignKeyValues, isStoredElsewhere, writeLinks } from './relationship-writes.js'
import { beforeLinks, existingEvent, inputHook, writeEvent } from './hook-events.js'
import { holds, lockVisible, refusal, visibleToHooks } from './preconditions.js'
import { guarded, linkOwner, splitByStorage } from './linkage-writes.js'
import { writing } from './retries.js'
import { checkWriteRules, writeRules } from './field-rules.js'
import { ANSWER_AS_IS, notFound, type Finish, type Precondition, type ServiceScope } from './service-scope.js'

// Creating, updating and deleting resources: defaults, the application's hooks around the write, the relationships
// written with it, and the answer rendered before the write is over (see `Finish`).

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
function answersAfterMore (scope: ServiceScope, resource: ResolvedResource, query: QueryTree, include: readonly IncludeLayer[]): boolean {
  const selection = selectionOf(resource, query.fields.get(resource.type))
  return include.length > 0 || selection.computes || selection.aggregates.length > 0 || rowRuled(scope, resource, query).length > 0
}

/** The attributes with a read rule that the fieldset renders. */
function readRuled (resource: ResolvedResource, query: QueryTree): readonly ResolvedAttribute[] {
  if (resource.readRuled.length === 0) return resource.readRuled
  const { attributes } = selectionOf(resource, query.fields.get(resource.type))
  return resource.readRuled.filter((attribute) => attributes.includes(attribute.name))
}

/** Those whose read rule is a condition on the row for this request (not decided for the whole request). */
function rowRuled (scope: ServiceScope, resource: ResolvedResource, query: QueryTree): readonly ResolvedAttribute[] {
  return readRuled(resource, query).filter((attribute) => scope.composer.rule(resource, attribute, 'read')?.kind !== 'constant')
}

/**
 * A written row with what the database decides of it for the request, read after the write in its transaction: the
 * aggregates its fieldset renders (`fields[<type>]=…,computer_count`), within the request's scopes, and whether the
 * request may read each attribute whose read rule is a condition on the row (on the row as written; a rule decided
 * for the whole request needs no read). A write statement returns the row's own columns only.
 */
async function withDatabaseValues (scope: ServiceScope, resource: ResolvedResource, id: string, row: Row, query: QueryTree): Promise<Row> {
  const aggregates = selectionOf(resource, query.fields.get(resource.type)).aggregates
  const ruled = readRuled(resource, query)
  if (aggregates.length === 0 && ruled.length === 0) return row
  const values: Record<string, unknown> = { ...row }
  const onRow: ResolvedAttribute[] = []
  for (const attribute of ruled) {
    const rule = scope.composer.rule(resource, attribute, 'read')
    if (rule === undefined || rule.kind === 'constant') values[ruleSelectedAs(attribute)] = rule === undefined || rule.value ? 1 : 0
    else onRow.push(attribute)
  }
  if (aggregates.length === 0 && onRow.length === 0) return values
  const [read] = await scope.repository.findMany({ ...scope.composer.detail(resource, id, query), columns: [], include: [] })
  if (read === undefined) return values
  for (const attribute of aggregates) values[selectedAs(attribute)] = read[selectedAs(attribute)]
  for (const attribute of onRow) values[ruleSelectedAs(attribute)] = read[ruleSelectedAs(attribute)]
  return values
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

/** The input with only its writable attributes (the same object when all are). */
function writableInput (resource: ResolvedResource, sent: ResourceInput): ResourceInput {
  const attributes = writableAttributes(resource, sent.attributes)
  return attributes === sent.attributes ? sent : { ...sent, attributes }
}

/** The columns a write returns: the response's fieldset, or every attribute's when an `after*` hook reads them. */
function writeColumns (resource: ResolvedResource, query: QueryTree, all: boolean): readonly string[] {
  return all ? resource.allColumns : selectionOf(resource, query.fields.get(resource.type)).columns
}

/** The column values of a create: the attributes sent, and the defaults of those not sent. */
function createValues (resource: ResolvedResource, input: ResourceInput): Record<string, unknown> {
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
  return values
}

/**
 * Creates a resource with its relationships and returns it as stored. A create that is one statement (attributes
 * and foreign keys of its own row, no hooks) runs as that statement; one that also links rows elsewhere, or whose
 * type has write hooks, runs in a transaction.
 */
export function createResource<T = ResultSet> (scope: ServiceScope, resource: ResolvedResource, sent: ResourceInput, query: QueryTree, base = '/data', finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
  const context: WriteContext = { resource, action: 'create', base }
  const include = scope.composer.includes(resource, query.include, query)
  const rules = writeRules(scope, resource, sent.attributes, base)
  const several = resource.hasWriteHooks || sent.relationships.some(isStoredElsewhere) || answersAfterMore(scope, resource, query, include) || rules.conditions.length > 0
  return writing(scope, context, several, async (scope) => {
    const { repository, graph, composer } = scope
    if (sent.id !== undefined && !isValidId(resource, sent.id)) {
      throw jsonApiError('FJA_VALIDATION', { detail: `'${sent.id}' is not a valid '${resource.type}' id`, source: { pointer: `${base}/id` } })
    }
    if (rules.refused !== undefined) throw rules.refused
    checkWritable(graph, sent.relationships, 'create')
    const writable = writableInput(resource, sent)
    // Each step below is awaited only when it has something to do: every await is a turn of the microtask queue.
    const input = resource.hooks.beforeCreate === undefined ? writable : await inputHook('beforeCreate', resource, writable, () => writeEvent(scope, resource), base)
    if (input.id !== undefined && !isValidId(resource, input.id)) throw new Error(`fastify-jsonapi: the beforeCreate hook of '${resource.type}' set an invalid id '${input.id}'`)
    const values = createValues(resource, input)
    const [own, elsewhere] = splitByStorage(input.relationships)
    checkLinkRules(own)
    if (elsewhere.length > 0) await checkTargetsExist(repository, graph, composer, elsewhere)
    foreignKeyValues(own, values)
    const columns = writeColumns(resource, query, resource.hooks.afterCreate !== undefined)
    const row = await guarded(scope, own, (guards) => repository.insert(resource, values, input.id, columns, guards))
    if (row === undefined) throw jsonApiError('FJA_RELATED_NOT_FOUND', { detail: 'a related resource was deleted while this one was created', source: { pointer: `${base}/relationships` } })
    const id = String(row[resource.idColumn])
    // A row condition of a write rule is judged on the row as created (its columns and foreign keys): refused, nothing stays.
    if (rules.conditions.length > 0) await checkWriteRules(scope, resource, id, rules, base)
    if (elsewhere.length > 0) await writeLinks(repository, graph, composer, resource, id, elsewhere)
    if (resource.hooks.afterCreate !== undefined) await resource.hooks.afterCreate(storedResource(resource, id, row), writeEvent(scope, resource))
    const answered = await withDatabaseValues(scope, resource, id, row, query)
    return finished(loadIncluded(repository, resource, [{ resource, id, row: answered }], include), finish)
  })
}

/** Updates the attributes and relationships sent, and returns the resource as stored. */
export function updateResource<T = ResultSet> (scope: ServiceScope, resource: ResolvedResource, id: string, sent: ResourceInput, query: QueryTree, base = '/data', precondition?: Precondition, finish: Finish<T> = ANSWER_AS_IS as Finish<T>): Promise<T> {
  const context: WriteContext = { resource, action: 'update', base }
  const include = scope.composer.includes(resource, query.include, query)
  const rules = writeRules(scope, resource, sent.attributes, base)
  const several = resource.hasWriteHooks || sent.relationships.some(isStoredElsewhere) || precondition !== undefined || answersAfterMore(scope, resource, query, include) || rules.conditions.length > 0
  return writing(scope, context, several, async (scope) => {
    let seen = await holds(scope, resource, id, precondition)
    try {
      checkWritable(scope.graph, sent.relationships, 'update')
      if (rules.refused !== undefined) throw rules.refused
    } catch (error) {
      throw await refusal(scope, resource, id, seen, error)
    }
    if (rules.conditions.length > 0) {
      // Judged on the row as it is, locked until the write commits: a concurrent change cannot make it hold in between.
      if (!seen) await lockVisible(scope, resource, id)
      seen = true
      await checkWriteRules(scope, resource, id, rules, base)
    }
    await visibleToHooks(scope, resource, id, !seen && (resource.hooks.beforeUpdate !== undefined || resource.hooks.beforeLink !== undefined))
    const input = await inputHook('beforeUpdate', resource, writableInput(resource, sent), () => existingEvent(scope, resource, id), base)
    await beforeLinks(scope, resource, id, input.relationships, 'replace')
    const values: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(input.attributes)) {
      const attribute = resource.attributes.get(name)
      if (attribute?.column !== undefined) values[attribute.column] = writeValue(attribute, value)
    }
    const row = await linkOwner(scope, resource, id, input.relationships, values, writeColumns(resource, query, resource.hooks.afterUpdate !== undefined), seen)
    await resource.hooks.afterUpdate?.(storedResource(resource, id, row), writeEvent(scope, resource))
    const answered = await withDatabaseValues(scope, resource, id, row, query)
    return finished(loadIncluded(scope.repository, resource, [{ resource, id: String(row[resource.idColumn]), row: answered }], include), finish)
  })
}

/** Deletes a resource; 404 when there is none the request can see, 409 when storage refuses because others reference it. */
export function removeResource (scope: ServiceScope, resource: ResolvedResource, id: string, precondition?: Precondition): Promise<void> {
  return writing(scope, { resource, action: 'delete', base: '/data' }, resource.hasWriteHooks || precondition !== undefined, async (scope) => {
    const seen = await holds(scope, resource, id, precondition)
    await visibleToHooks(scope, resource, id, !seen && resource.hooks.beforeDelete !== undefined)
    await resource.hooks.beforeDelete?.(existingEvent(scope, resource, id))
    if (!await scope.repository.delete(scope.composer.target(resource, id))) throw notFound(resource, id)
    await resource.hooks.afterDelete?.(Object.assign(writeEvent(scope, resource), { id }))
  })
}
