import { CompiledQuery } from 'kysely'
import { selectedAs, type ResolvedAttribute, type ResolvedRelationship, type ResolvedResource } from '../../schema/resolved.js'
import type { FilterNode } from '../../schema/filter-nodes.js'
import { selectsAggregates, selectsRules, type PageWindow, type QueryLayer, type RequiredRow } from '../../contracts/repository.js'
import { AliasCounter, ROOT, columnOf, rootOf, selectsSubqueries, writeFilter, writeRequired, type FilterOutput, type Operand, type Scan } from './compile-filter.js'
import type { LikeOperator, SqlEngine } from './sql-engine.js'

/**
 * The shape of a statement and the values it binds. Two statements of the same shape compile to the same SQL text,
 * with the values as its parameters, in the order the shape lists them: the key names everything that decides the
 * text (tables, columns, operators, which values are NULL, empty or single), the values are everything else.
 */
export interface StatementShape {
  readonly key: string
  readonly values: readonly unknown[]
}

/**
 * What tells values apart: the value itself, an array by its content (Kysely may bind a copy of an array).
 */
function identity (value: unknown): unknown {
  return Array.isArray(value) ? `array:${JSON.stringify(value)}` : value
}

/**
 * Collects a shape: its key parts and its values. Which values are alike is part of the key (`?0 ?1 ?0`): a
 * statement learned from values that are alike in some places is only reused for values alike in the same places,
 * where it cannot matter which of them went to which parameter.
 */
class ShapeWriter {
  /** The key so far: its parts, each after a separator. */
  #key = ''
  readonly values: unknown[] = []
  /** The identities of the distinct values so far (a statement binds a few: a list beats a map). */
  readonly #seen: unknown[] = []
  /** How the engine binds lists (see `SqlEngine.listParameters`). */
  readonly #lists: SqlEngine['listParameters']

  constructor (engine: SqlEngine) {
    this.#lists = engine.listParameters
  }

  part (text: string): void {
    this.#key += `\u0001${text}`
  }

  value (value: unknown): void {
    const key = identity(value)
    const seen = this.#seen
    let index = 0
    while (index < seen.length && !Object.is(seen[index], key)) index++
    if (index === seen.length) seen.push(key)
    this.#key += index < PLACEHOLDERS.length ? PLACEHOLDERS[index] : `\u0001?${index}`
    this.values.push(value)
  }

  /**
   * A list of values (at least one) as the engine binds it: one array (its key part the same for every length), or
   * one parameter per value (its key part counts them).
   */
  list (prefix: string, values: readonly unknown[]): void {
    if (this.#lists === 'array') {
      this.part(prefix)
      this.value(values)
    } else {
      this.part(`${prefix}/${values.length}`)
      for (const value of values) this.value(value)
    }
  }

  /** `FilterCompiler.idIn(ids)`: `= $n` for one id, a list for several. */
  idIn (ids: readonly string[]): void {
    if (ids.length === 1) this.value(ids[0])
    else this.list('any', [...ids])
  }

  shape (): StatementShape {
    return { key: this.#key, values: this.values }
  }
}

/** The key parts of the first distinct values (`?0`, `?1`…), written once. */
const PLACEHOLDERS = Array.from({ length: 16 }, (_, index) => `\u0001?${index}`)

function storageKey (relationship: ResolvedRelationship): string {
  const storage = relationship.storage
  switch (storage.kind) {
    case 'foreign-key':
    case 'inverse':
      return `${storage.kind}:${storage.column}`
    case 'join':
      return `join:${storage.table}:${storage.sourceKey}:${storage.targetKey}`
  }
}

function resourceKey (resource: ResolvedResource): string {
  return `${resource.table}:${resource.idColumn}`
}

/**
 * The key parts of a filter, written by the walk that compiles it (`writeFilter`): the text-deciding arguments the
 * walker passes become parts, its values become values, in the order it passes them; each part that combines others
 * is written after them with their number (`and/2`), so the key reads back as one tree. A custom operator writes
 * whatever SQL it likes, its shape may depend on its value: its statement is compiled each time.
 */
class FilterKey implements FilterOutput<void> {
  readonly engine: SqlEngine
  readonly #writer: ShapeWriter
  cacheable = true

  constructor (engine: SqlEngine, writer: ShapeWriter) {
    this.engine = engine
    this.#writer = writer
  }

  compare (column: Operand, operator: string, value: unknown): void {
    this.#writer.part(`${text(column)} ${operator}`)
    this.#writer.value(value)
  }

  isNull (column: Operand, negated: boolean): void {
    this.#writer.part(`${text(column)} ${negated ? 'is not' : 'is'} null`)
  }

  columns (column: Operand, operator: string, other: Operand): void {
    this.#writer.part(`${text(column)} ${operator} ${text(other)}`)
  }

  between (column: Operand, low: unknown, high: unknown): void {
    this.#writer.part(`${text(column)} between`)
    this.#writer.value(low)
    this.#writer.value(high)
  }

  list (column: Operand, negated: boolean, values: readonly unknown[]): void {
    this.#writer.list(`${text(column)} ${negated ? 'not in' : 'in'}`, values)
  }

  like (column: Operand, operator: LikeOperator, pattern: unknown): void {
    this.#writer.part(`${text(column)} ${operator}`)
    this.#writer.value(pattern)
  }

  match (column: Operand, query: unknown): void {
    this.#writer.part(`${text(column)} match`)
    this.#writer.value(query)
  }

  literal (value: boolean): void {
    this.#writer.part(String(value))
  }

  and (items: readonly void[]): void {
    this.#writer.part(`and/${items.length}`)
  }

  or (items: readonly void[]): void {
    this.#writer.part(`or/${items.length}`)
  }

  not (): void {
    this.#writer.part('not')
  }

  exists ({ table, alias, join, where }: Scan<void>): void {
    const joined = join === undefined ? '' : ` join ${join.table} ${join.alias} ${join.left}=${join.right}`
    this.#writer.part(`exists ${table} ${alias}${joined}/${where.length}`)
  }

  /** A computed attribute's SQL is the same for every statement that names it: its name says it. */
  computed (attribute: ResolvedAttribute, alias: string): Operand {
    return `computed:${columnOf(alias, selectedAs(attribute))}`
  }

  /** An aggregate binds the scopes inside it in its own way: its statement is compiled each time. */
  aggregate (): Operand {
    this.cacheable = false
    return 'aggregate'
  }

  custom (): void {
    this.cacheable = false
  }

  /** The guard's parts were written just before (the walker writes it first): this part closes it. */
  guarded (_condition: void, operand: Operand): Operand {
    return `case:${text(operand)}`
  }
}

/** The key part of an operand: the column's text (the key output makes no other; see `computed`). */
function text (operand: Operand): string {
  return typeof operand === 'string' ? operand : '?'
}

/** Writes the key of a statement's conditions over `owner` (aliased `alias`): false when it cannot have one. */
function writeWhere (engine: SqlEngine, writer: ShapeWriter, where: FilterNode | undefined, owner: ResolvedResource, alias: string, aliases = new AliasCounter()): boolean {
  if (where === undefined) {
    writer.part('all')
    return true
  }
  const key = new FilterKey(engine, writer)
  writer.part('where(')
  writeFilter(key, where, owner, alias, aliases)
  writer.part(')')
  return key.cacheable
}

/**
 * The shape of a layer's SELECT (its rows in its order and window), or undefined when it has none: a sort through a
 * relationship (its subquery binds the related type's scope), an aggregate (likewise) or a custom operator is compiled each time. A read of
 * one row by its id alone (`GET /<type>/<id>` of a type without a scope) takes the key kept for its columns.
 */
export function selectShape (engine: SqlEngine, layer: QueryLayer): StatementShape | undefined {
  const { resource, where } = layer
  if (selectsAggregates(layer)) return undefined
  if (where?.kind === 'compare' && where.op === 'eq' && where.attribute === resource.idAttribute && where.value !== null &&
    !Array.isArray(where.value) && where.guard === undefined && layer.sort.length === 0 && layer.page === undefined) {
    // The same key for every id: written once per columns (and read rules decided for the whole request) and kept
    // with the resource. A read rule that is a condition on the row binds values of its own: its key is written.
    const decided = constantRules(layer)
    if (decided !== undefined) {
      const key = resource.memo.get(BY_ID_KEYS, `${layer.columns.join(',')}${decided}`, () => (writeSelectShape(engine, layer) as StatementShape).key)
      return { key, values: [where.value] }
    }
  }
  return writeSelectShape(engine, layer)
}

/** The read rules of a layer as text when each is decided for the whole request (`true` or `false`), else undefined. */
function constantRules (layer: QueryLayer): string | undefined {
  if (!selectsRules(layer)) return ''
  let text = ''
  for (const rule of layer.rules as NonNullable<QueryLayer['rules']>) {
    if (rule.where.kind !== 'constant') return undefined
    text += `|${rule.attribute.name}:${String(rule.where.value)}`
  }
  return text
}

/**
 * The keys of the commonest statements, kept with their resource (see `Memo`) by what decides them besides the values
 * (the columns, the relationship), so that such a statement looks up the same string each time: the cache's map
 * finds a string it has hashed before without building, flattening and hashing the whole key again.
 */
const BY_ID_KEYS = 'statement-key:by-id'
const RELATED_KEYS = 'statement-key:related'
const INSERT_KEYS = 'statement-key:insert'

function writeSelectShape (engine: SqlEngine, layer: QueryLayer): StatementShape | undefined {
  const { resource, page, sort } = layer
  if (sort.some((key) => key.path.length > 0 || key.aggregate !== undefined || key.guard !== undefined) || selectsAggregates(layer)) return undefined
  const writer = new ShapeWriter(engine)
  const root = rootOf(layer.where, sort, selectsSubqueries(layer))
  writer.part(`select:${resourceKey(resource)}:${root}:${layer.columns.join(',')}`)
  // The read rules' decisions are selected before the WHERE: their values come first.
  for (const rule of layer.rules ?? []) {
    writer.part(`rule:${rule.attribute.name}`)
    if (!writeWhere(engine, writer, rule.where, resource, root)) return undefined
  }
  if (!writeWhere(engine, writer, layer.where, resource, root)) return undefined
  writer.part(`order:${sort.map((key) => `${key.attribute === resource.idAttribute ? '#' : ''}${key.attribute.column ?? `computed:${selectedAs(key.attribute)}`}${key.descending ? '-' : '+'}`).join(',')}`)
  if (page !== undefined) {
    writer.part('page')
    if (page.limit !== undefined) writer.value(page.limit)
    if (page.offset > 0) {
      writer.part('offset')
      writer.value(page.offset)
    }
  }
  return writer.shape()
}

/** The shape of a layer's `count(*)` (`count`), or of the plan of its rows that estimates it (`estimate`). */
export function countShape (engine: SqlEngine, layer: QueryLayer, kind: 'count' | 'estimate' = 'count'): StatementShape | undefined {
  const writer = new ShapeWriter(engine)
  const root = rootOf(layer.where)
  writer.part(`${kind}:${resourceKey(layer.resource)}:${root}`)
  return writeWhere(engine, writer, layer.where, layer.resource, root) ? writer.shape() : undefined
}

/**
 * The shape of the related rows of some owners (see `findRelated`; `lateral`: each owner's page by `LATERAL`, see
 * `#selectOwnerPages`). The related rows of a type without a scope (an include, mostly) take the keys kept for their
 * relationship and columns.
 */
export function relatedShape (engine: SqlEngine, owner: ResolvedResource, relationship: ResolvedRelationship, ownerIds: readonly string[], layer: QueryLayer, lateral = false): StatementShape | undefined {
  // Aggregates bind their scopes in their own way, read rules theirs: compiled each time.
  if (selectsAggregates(layer) || selectsRules(layer)) return undefined
  const one = ownerIds.length === 1
  const page = layer.page
  // An engine that binds each id of a list has a key per number of owners: not kept.
  if (layer.where !== undefined || (!one && engine.listParameters !== 'array') || (page !== undefined && (page.offset > 0 || page.limit === undefined))) {
    return lateral && page !== undefined ? writeOwnerPagesShape(engine, owner, relationship, ownerIds, layer, page) : writeRelatedShape(engine, owner, relationship, ownerIds, layer)
  }
  // The key depends on the relationship, the related type, the columns, whether there is one owner or several, and
  // how the rows are paged per owner (both forms bind the ids, then the page's last rank or its limit).
  const decides = `${one ? '1' : 'n'}:${relationship.name}:${layer.resource.type}:${layer.columns.join(',')}:${page === undefined ? '' : lateral ? 'lateral' : 'window'}`
  const key = owner.memo.get(RELATED_KEYS, decides, () => ((lateral && page !== undefined
    ? writeOwnerPagesShape(engine, owner, relationship, ownerIds, layer, page)
    : writeRelatedShape(engine, owner, relationship, ownerIds, layer)) as StatementShape).key)
  // The values `ShapeWriter.idIn` writes: the id, or a copy of the ids as one array; then the page's last rank.
  const ids = one ? ownerIds[0] : [...ownerIds]
  return { key, values: page === undefined ? [ids] : [ids, page.limit] }
}

function writeRelatedShape (engine: SqlEngine, owner: ResolvedResource, relationship: ResolvedRelationship, ownerIds: readonly string[], layer: QueryLayer): StatementShape | undefined {
  const writer = new ShapeWriter(engine)
  const root = relationship.storage.kind === 'inverse' ? rootOf(layer.where) : ROOT
  writer.part(`related:${resourceKey(owner)}:${storageKey(relationship)}:${resourceKey(layer.resource)}:${root}:${layer.columns.join(',')}`)
  writer.idIn(ownerIds)
  if (!writeWhere(engine, writer, layer.where, layer.resource, root)) return undefined
  const page = layer.page
  if (page !== undefined) {
    // `#selectRelated`'s bounds on the rank: after the offset, up to its end.
    writer.part('paged')
    if (page.offset > 0) {
      writer.part('offset')
      writer.value(page.offset)
    }
    if (page.limit !== undefined) {
      writer.part('limit')
      writer.value(page.offset + page.limit)
    }
  }
  return writer.shape()
}

/**
 * The shape of `#selectOwnerPages` (each owner's page by `LATERAL`): the owners' ids, the `where` of the count, the
 * `where` of the page, its limit and offset — in the order of their parameters.
 */
function writeOwnerPagesShape (engine: SqlEngine, owner: ResolvedResource, relationship: ResolvedRelationship, ownerIds: readonly string[], layer: QueryLayer, page: PageWindow): StatementShape | undefined {
  const writer = new ShapeWriter(engine)
  writer.part(`owner-pages:${resourceKey(owner)}:${storageKey(relationship)}:${resourceKey(layer.resource)}:${layer.columns.join(',')}`)
  writer.idIn(ownerIds)
  for (const part of ['count', 'page']) {
    writer.part(part)
    if (!writeWhere(engine, writer, layer.where, layer.resource, ROOT)) return undefined
  }
  if (page.limit !== undefined) {
    writer.part('limit')
    writer.value(page.limit)
  }
  if (page.offset > 0) {
    writer.part('offset')
    writer.value(page.offset)
  }
  return writer.shape()
}

/** `?0?1…?n-1`: the key part of `n` values that are all different (see `ShapeWriter.value`). */
const DISTINCT_VALUES = Array.from({ length: PLACEHOLDERS.length + 1 }, (_, count) => PLACEHOLDERS.slice(0, count).join(''))

/**
 * The shape of an `INSERT … VALUES … RETURNING` of one row (see `insert`): the key `ShapeWriter` would write, made
 * without one when the values are all different (as a create's nearly always are), since every create makes it. A
 * create of columns seen before takes the key kept for them with the resource, the same string: the cache's map finds
 * it without building, flattening and hashing a new one.
 */
export function insertShape (engine: SqlEngine, resource: ResolvedResource, row: Readonly<Record<string, unknown>>, names: readonly string[], returning: readonly string[]): StatementShape {
  const values = names.map((name) => row[name])
  if (values.length < DISTINCT_VALUES.length && allDifferent(values)) {
    const columns = `${names.join(',')}:${returning.join(',')}`
    const key = resource.memo.get(INSERT_KEYS, columns, () => `\u0001values:${resourceKey(resource)}:${columns}${DISTINCT_VALUES[values.length]}`)
    return { key, values }
  }
  const writer = new ShapeWriter(engine)
  writer.part(`values:${resourceKey(resource)}:${names.join(',')}:${returning.join(',')}`)
  for (const value of values) writer.value(value)
  return writer.shape()
}

/** Whether no two values are alike as `ShapeWriter.value` tells them apart (arrays by content). */
function allDifferent (values: readonly unknown[]): boolean {
  for (let index = 1; index < values.length; index++) {
    const value = identity(values[index])
    for (let before = 0; before < index; before++) {
      if (Object.is(identity(values[before]), value)) return false
    }
  }
  return true
}

/** The shape of an `INSERT … SELECT … WHERE EXISTS …` of a row whose related rows must exist (see `insert`). */
export function guardedInsertShape (engine: SqlEngine, resource: ResolvedResource, row: Readonly<Record<string, unknown>>, names: readonly string[], returning: readonly string[], requires: readonly RequiredRow[]): StatementShape | undefined {
  const writer = new ShapeWriter(engine)
  writer.part(`insert:${resourceKey(resource)}:${names.join(',')}:${returning.join(',')}`)
  for (const name of names) writer.value(row[name])
  const key = new FilterKey(engine, writer)
  writeRequired(key, requires, new AliasCounter())
  if (!key.cacheable) return undefined
  return writer.shape()
}

/** Whether a compiled statement's parameters are exactly the shape's values, in order. */
function sameValues (parameters: readonly unknown[], values: readonly unknown[]): boolean {
  if (parameters.length !== values.length) return false
  for (let index = 0; index < values.length; index++) {
    const parameter = parameters[index]
    const value = values[index]
    if (Object.is(parameter, value)) continue
    if (!Array.isArray(parameter) || !Array.isArray(value) || parameter.length !== value.length) return false
    if (!parameter.every((item, at) => Object.is(item, value[at]))) return false
  }
  return true
}

/**
 * Compiled statements by shape, so that a statement of a known shape skips Kysely's query builder and compiler: its
 * SQL text is reused with the new values. A shape is learned from its first compilation, and only when the compiled
 * parameters are exactly the shape's values in order (otherwise the shape is compiled every time): the cache can
 * only skip work, never change a statement. At most `limit` shapes are kept (the oldest go
 * first), so a client that invents filters cannot grow it without bound.
 */
export class StatementCache {
  /** Shape key → a compiled statement of the shape (its SQL, query node and id are reused), or null: not cacheable. */
  readonly #entries = new Map<string, CompiledQuery | null>()
  readonly #limit: number

  constructor (limit = 500) {
    this.#limit = limit
  }

  /** The number of shapes known. */
  get size (): number {
    return this.#entries.size
  }

  /** The compiled statement of a shape: from the cache, or from `compile` (and then learned). */
  query (shape: StatementShape | undefined, compile: () => CompiledQuery): CompiledQuery {
    if (shape === undefined) return compile()
    const known = this.#entries.get(shape.key)
    if (known != null) return { sql: known.sql, query: known.query, queryId: known.queryId, parameters: shape.values }
    const compiled = compile()
    if (known === undefined && this.#limit > 0) {
      if (this.#entries.size >= this.#limit) this.#entries.delete(this.#entries.keys().next().value as string)
      this.#entries.set(shape.key, sameValues(compiled.parameters, shape.values) ? CompiledQuery.raw(compiled.sql) : null)
    }
    return compiled
  }
}
