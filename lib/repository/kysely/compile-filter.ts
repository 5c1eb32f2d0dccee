import { expressionBuilder, sql, type ComparisonOperator, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely'
import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource } from '../../schema/resolved.js'
import { existsNode, type AggregateTerm, type CompareNode, type CustomNode, type FilterNode, type FilterNodeKind, type ReferencesNode } from '../../schema/filter-nodes.js'
import { selectsAggregates, type QueryLayer, type RequiredRow } from '../../contracts/repository.js'
import type { SortNode } from '../../query/query-tree.js'
import type { LikeOperator, SqlEngine } from './sql-engine.js'

type Builder = ExpressionBuilder<any, any>
type Compiled = Expression<SqlBool>

/**
 * The one expression builder every compilation uses. Compiled conditions are plain expression nodes, not bound to a
 * query: building them with this shared builder (and passing the result to `where(expression)`) spares Kysely a new
 * builder per `where` callback, which the profile showed as the main cost of a scope.
 */
export const EB: Builder = expressionBuilder<any, any>()

/** Table aliases of one statement: `r0` for the resource, `r1`, `r2` … for related tables in subqueries. */
export class AliasCounter {
  #next = 1
  take (): string {
    return `r${this.#next++}`
  }
}

const COMPARISONS = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const
const LIKES: Readonly<Record<'like' | 'notlike' | 'ilike' | 'notilike', LikeOperator>> = { like: 'like', notlike: 'not like', ilike: 'ilike', notilike: 'not ilike' }

/** An operand as an expression: a column by its name, or the expression itself. */
function ref (operand: Operand): Expression<unknown> {
  return typeof operand === 'string' ? sql.ref(operand) : operand
}

/** Escapes LIKE wildcards (`%`, `_`) and the escape character in a literal text. */
export function escapeLike (text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`)
}

/**
 * A column of the row aliased `alias`, or of the statement's only table, unqualified, when `alias` is `''` (a
 * statement whose conditions are {@link selfContained}).
 */
export function columnOf (alias: string, name: string): string {
  return alias === '' ? name : `${alias}.${name}`
}


/**
 * Whether a filter compiles to conditions on its row's own columns alone: no subquery (`EXISTS`, a relationship
 * stored outside the row) and no application SQL (a custom operator's SQL may hold a subquery of its own, where an
 * unqualified column could name the subquery's table). The statement of such a filter names its table without an
 * alias and its columns unqualified, as a hand-written one does: PostgreSQL parses every unnamed statement it is
 * sent, and the plainer text costs it less.
 */
export function selfContained (node: FilterNode | undefined): boolean {
  if (node === undefined) return true
  switch (node.kind) {
    case 'compare':
      // An aggregate is a subquery over the related rows.
      return node.aggregate === undefined && selfContained(node.guard)
    case 'field-compare':
      return selfContained(node.guard) && selfContained(node.otherGuard)
    case 'constant':
      return true
    case 'and':
    case 'or':
      return node.items.every(selfContained)
    case 'not':
      return selfContained(node.item)
    case 'references':
      return node.relationship.storage.kind === 'foreign-key' || (node.ids !== null && node.ids.length === 0)
    case 'linked-to':
      return node.relationship.storage.kind === 'inverse'
    case 'exists':
    case 'custom':
      return false
  }
}

/** The alias of the resource's own table in a statement that names other tables (subqueries, joins). */
export const ROOT = 'r0'

/**
 * The alias of a read's own table: none (`''`, its columns unqualified) when its conditions and its order name no
 * other table (see `selfContained`), else {@link ROOT}.
 */
export function rootOf (where: FilterNode | undefined, sort: readonly SortNode[] = [], subqueries = false): string {
  return !subqueries && selfContained(where) && sort.every((key) => key.path.length === 0 && key.aggregate === undefined && selfContained(key.guard)) ? '' : ROOT
}

/** Whether a layer's select list holds subqueries: aggregates, or read rules whose conditions reach other rows. */
export function selectsSubqueries (layer: QueryLayer): boolean {
  return selectsAggregates(layer) || (layer.rules !== undefined && layer.rules.some((rule) => !selfContained(rule.where)))
}

/**
 * What a condition compares: a column (the text that names it, qualified or not), or an expression the database
 * computes (a computed attribute, an aggregate), as the output made it.
 */
export type Operand = string | Expression<unknown>


/**
 * What a filter is written into: Kysely expressions ({@link compileFilter}) or the key of a statement's shape (see
 * `statement-cache.ts`). {@link writeFilter} walks the tree once for both and makes every decision of the text there,
 * in the arguments it passes (a column as the text that names it, an operator, a table and its alias, how many
 * conditions): an output turns those arguments into SQL, or into key parts, and does nothing else. So two trees
 * that give the same key give the same SQL text, and the values, bound in the order the walker passes them, are the
 * statement's parameters in order.
 */
export interface FilterOutput<E> {
  /** The engine the statement is for: the walker binds values as it says (`bind`, `likePattern`, `matchQuery`). */
  readonly engine: SqlEngine
  /** `column operator $n`: one value, bound. */
  compare: (column: Operand, operator: string, value: unknown) => E
  /** `column is null`, or `is not null` when `negated`. */
  isNull: (column: Operand, negated: boolean) => E
  /** `column operator other`: two columns. */
  columns: (column: Operand, operator: string, other: Operand) => E
  /** `column between $n and $n+1`. */
  between: (column: Operand, low: unknown, high: unknown) => E
  /** `column = any($n)`, or `column <> all($n)` when `negated` (or `in`, as the engine binds lists): at least one value. */
  list: (column: Operand, negated: boolean, values: readonly unknown[]) => E
  /** `column like $n` and its variants (see `SqlEngine.like`). */
  like: (column: Operand, operator: LikeOperator, pattern: unknown) => E
  /** A full-text match of `column` against a web search query (`$n`). */
  match: (column: Operand, query: unknown) => E
  /** `true` or `false`. */
  literal: (value: boolean) => E
  /** All of `items`, at least one. */
  and: (items: readonly E[]) => E
  /** Any of `items`, at least one. */
  or: (items: readonly E[]) => E
  not: (item: E) => E
  /** `exists (select 1 from <scan>)`. */
  exists: (scan: Scan<E>) => E
  /** The value of a computed attribute of the row aliased `alias` (`''`: unqualified). */
  computed: (attribute: ResolvedAttribute, alias: string) => Operand
  /** The value of an aggregate over the row aliased `alias` of `owner`: a correlated subquery with aliases of its own. */
  aggregate: (term: AggregateTerm, owner: ResolvedResource, alias: string, aliases: AliasCounter) => Operand
  /** An application's operator on `column`: whatever SQL it writes. */
  custom: (node: CustomNode, column: Operand) => E
  /** `operand` where `condition` holds (a read rule), else NULL: `case when <condition> then <operand> end`. */
  guarded: (condition: E, operand: Operand) => Operand
}

/** The rows of an `EXISTS`: `table as alias`, joined to a second table when `join` says, within `where` (all). */
export interface Scan<E> {
  readonly table: string
  readonly alias: string
  /** `inner join table as alias on left = right`. */
  readonly join?: { readonly table: string, readonly alias: string, readonly left: string, readonly right: string }
  readonly where: readonly E[]
}

/** One walk: the output, the resource and its alias, and the statement's alias counter. */
interface Walk<E> {
  readonly output: FilterOutput<E>
  readonly owner: ResolvedResource
  readonly alias: string
  readonly aliases: AliasCounter
}

/** `= $n` for one id, `= any($n)` for several (a copy of the ids, as one array). */
function idIn<E> (output: FilterOutput<E>, column: string, ids: readonly string[]): E {
  return ids.length === 1 ? output.compare(column, '=', ids[0]) : output.list(column, false, [...ids])
}

/**
 * What a condition on `attribute` of the walk's row compares: its column, or the value the database computes; NULL
 * where its `guard` (the request's read rule) does not hold.
 */
function operandOf<E> (walk: Walk<E>, attribute: ResolvedAttribute, aggregate?: AggregateTerm, guard?: FilterNode): Operand {
  const { output, owner, alias, aliases } = walk
  // The guard first: its values are bound before the operand's, as its text comes first.
  const condition = guard === undefined ? undefined : writeNode(walk, guard)
  const operand = aggregate !== undefined
    ? output.aggregate(aggregate, owner, alias, aliases)
    : attribute.computed !== undefined ? output.computed(attribute, alias) : columnOf(alias, attribute.column as string)
  return condition === undefined ? operand : output.guarded(condition, operand)
}

/**
 * Whether a comparison of a count says only that related rows exist (`true`: `gt 0`, `ge 1`, `ne 0`) or that none
 * does (`false`: `eq 0`, `lt 1`, `le 0`); undefined for any other. Written as `EXISTS`, which the planner can answer
 * as a semi-join, stopping at the first related row, where a count would count them all for every row.
 */
function existence (node: CompareNode): boolean | undefined {
  const aggregate = node.aggregate
  if (aggregate === undefined || aggregate.fn !== 'count' || aggregate.steps.length > 0 || node.guard !== undefined) return undefined
  const { op, value } = node
  if ((op === 'gt' && value === 0) || (op === 'ge' && value === 1) || (op === 'ne' && value === 0)) return true
  if ((op === 'eq' && value === 0) || (op === 'lt' && value === 1) || (op === 'le' && value === 0)) return false
  return undefined
}

function writeCompare<E> (walk: Walk<E>, node: CompareNode): E {
  const exists = existence(node)
  if (exists !== undefined) {
    const { relationship, target, where } = node.aggregate as AggregateTerm
    const written = writeNode(walk, existsNode(relationship, target, where))
    return exists ? written : walk.output.not(written)
  }
  const output = walk.output
  const column = operandOf(walk, node.attribute, node.aggregate, node.guard)
  const { likePattern, matchQuery } = output.engine
  const attribute = node.attribute
  const bind = (item: unknown): unknown => output.engine.bind(item, attribute)
  const value = node.value
  switch (node.op) {
    case 'eq':
    case 'ne':
      if (value === null) return output.isNull(column, node.op === 'ne')
      return output.compare(column, COMPARISONS[node.op], bind(value))
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le':
      return output.compare(column, COMPARISONS[node.op], bind(value))
    case 'between': {
      const [low, high] = value as [unknown, unknown]
      return output.between(column, bind(low), bind(high))
    }
    case 'in_':
    case 'notin_': {
      const values = value as unknown[]
      if (values.length === 0) return output.literal(node.op === 'notin_')
      return output.list(column, node.op === 'notin_', values.map(bind))
    }
    case 'is_':
      return output.isNull(column, false)
    case 'isnot':
      return output.isNull(column, true)
    case 'like':
    case 'notlike':
    case 'ilike':
    case 'notilike': {
      const operator = LIKES[node.op]
      return output.like(column, operator, likePattern(operator, value as string))
    }
    case 'startswith':
      return output.like(column, 'like', likePattern('like', `${escapeLike(value as string)}%`))
    case 'endswith':
      return output.like(column, 'like', likePattern('like', `%${escapeLike(value as string)}`))
    case 'match':
      return output.match(column, matchQuery(value as string))
  }
}

/** The rows related to the row `outer` of `owner` (aliased `inner`), linked to it. */
function relatedScan<E> (output: FilterOutput<E>, relationship: ResolvedRelationship, owner: ResolvedResource, target: ResolvedResource, outer: string, inner: string, aliases: AliasCounter): Scan<E> {
  const storage = relationship.storage
  if (storage.kind === 'foreign-key') {
    return { table: target.table, alias: inner, where: [output.columns(`${inner}.${target.idColumn}`, '=', `${outer}.${storage.column}`)] }
  }
  if (storage.kind === 'inverse') {
    return { table: target.table, alias: inner, where: [output.columns(`${inner}.${storage.column}`, '=', `${outer}.${owner.idColumn}`)] }
  }
  const join = aliases.take()
  return {
    table: storage.table,
    alias: join,
    join: { table: target.table, alias: inner, left: `${inner}.${target.idColumn}`, right: `${join}.${storage.targetKey}` },
    where: [output.columns(`${join}.${storage.sourceKey}`, '=', `${outer}.${owner.idColumn}`)],
  }
}

/** The row's relationship links to one of the ids (to none when `null`), by linkage alone. */
function writeReferences<E> ({ output, owner, alias, aliases }: Walk<E>, node: ReferencesNode): E {
  const { storage } = node.relationship
  if (node.ids !== null && node.ids.length === 0) return output.literal(false)
  if (storage.kind === 'foreign-key') {
    const column = columnOf(alias, storage.column)
    return node.ids === null ? output.isNull(column, false) : idIn(output, column, node.ids)
  }
  const other = aliases.take()
  const [table, ownerKey, targetKey] = storage.kind === 'inverse'
    ? [node.target.table, storage.column, node.target.idColumn]
    : [storage.table, storage.sourceKey, storage.targetKey]
  const link = output.columns(`${other}.${ownerKey}`, '=', `${alias}.${owner.idColumn}`)
  if (node.ids === null) return output.not(output.exists({ table, alias: other, where: [link] }))
  return output.exists({ table, alias: other, where: [link, idIn(output, `${other}.${targetKey}`, node.ids)] })
}

/** The walkers of every node kind, built once: a new kind is not written until it has one. */
const WRITERS: { readonly [K in FilterNodeKind]: (walk: Walk<any>, node: Extract<FilterNode, { kind: K }>) => unknown } = {
  compare: writeCompare,
  'field-compare': (walk, node) => walk.output.columns(operandOf(walk, node.attribute, undefined, node.guard), COMPARISONS[node.op], operandOf(walk, node.other, undefined, node.otherGuard)),
  custom: (walk, node) => walk.output.custom(node, operandOf(walk, node.attribute, undefined, node.guard)),
  and: (walk, node) => node.items.length === 0 ? walk.output.literal(true) : walk.output.and(node.items.map((child) => writeNode(walk, child))),
  or: (walk, node) => node.items.length === 0 ? walk.output.literal(false) : walk.output.or(node.items.map((child) => writeNode(walk, child))),
  not: (walk, node) => walk.output.not(writeNode(walk, node.item)),
  constant: ({ output }, node) => output.literal(node.value),
  references: writeReferences,
  exists: ({ output, owner, alias, aliases }, node) => {
    const inner = aliases.take()
    const scan = relatedScan(output, node.relationship, owner, node.target, alias, inner, aliases)
    const where = node.where
    if (where === undefined) return output.exists(scan)
    return output.exists({ ...scan, where: [...scan.where, writeNode({ output, owner: node.target, alias: inner, aliases }, where)] })
  },
  'linked-to': ({ output, owner, alias, aliases }, node) => {
    const storage = node.relationship.storage
    if (storage.kind === 'inverse') return output.compare(columnOf(alias, storage.column), '=', node.ownerId)
    const other = aliases.take()
    if (storage.kind === 'join') {
      return output.exists({
        table: storage.table,
        alias: other,
        where: [
          output.columns(`${other}.${storage.targetKey}`, '=', `${alias}.${owner.idColumn}`),
          output.compare(`${other}.${storage.sourceKey}`, '=', node.ownerId),
        ],
      })
    }
    return output.exists({
      table: node.owner.table,
      alias: other,
      where: [
        output.columns(`${other}.${storage.column}`, '=', `${alias}.${owner.idColumn}`),
        output.compare(`${other}.${node.owner.idColumn}`, '=', node.ownerId),
      ],
    })
  },
}

function writeNode<E> (walk: Walk<E>, node: FilterNode): E {
  return (WRITERS[node.kind] as (walk: Walk<E>, node: FilterNode) => E)(walk, node)
}

/**
 * Writes a filter tree over the resource aliased `alias` (`''`: the statement's only table, for a
 * {@link selfContained} filter) into `output`. Relationship filters become `EXISTS` scans with aliases of their own,
 * taken from `aliases`; every value is bound.
 */
export function writeFilter<E> (output: FilterOutput<E>, node: FilterNode, owner: ResolvedResource, alias: string, aliases: AliasCounter): E {
  // A subquery's reference to its owner row must be qualified: unqualified, it could name the subquery's own table.
  if (alias === '' && !selfContained(node)) throw new Error('fastify-jsonapi: a filter with subqueries needs its table aliased')
  return writeNode({ output, owner, alias, aliases }, node)
}

/** Every required row exists, within its scope: one `EXISTS` scan each, with aliases from `aliases`. */
export function writeRequired<E> (output: FilterOutput<E>, requires: readonly RequiredRow[], aliases: AliasCounter): E {
  return output.and(requires.map(({ resource, id, scope }) => {
    const alias = aliases.take()
    const byId = output.compare(`${alias}.${resource.idColumn}`, '=', id)
    return output.exists({
      table: resource.table,
      alias,
      where: scope === undefined ? [byId] : [byId, writeFilter(output, scope, resource, alias, aliases)],
    })
  }))
}

/**
 * Compiles filters into Kysely expressions for one engine: the output of {@link writeFilter} that writes SQL. Kept
 * by the repository (and shared with its transactions' repositories).
 */
export class FilterCompiler {
  readonly engine: SqlEngine
  readonly #output: FilterOutput<Compiled>

  constructor (engine: SqlEngine) {
    this.engine = engine
    this.#output = {
      engine,
      compare: (column, operator, value) => EB(ref(column), operator as ComparisonOperator, sql.val(value)),
      isNull: (column, negated) => EB(ref(column), negated ? 'is not' : 'is', null),
      columns: (column, operator, other) => EB(ref(column), operator as ComparisonOperator, ref(other)),
      between: (column, low, high) => EB.between(ref(column), low, high),
      list: (column, negated, values) => engine.inList(ref(column), negated, values),
      like: (column, operator, pattern) => engine.like(ref(column), operator, pattern),
      match: (column, query) => engine.match(ref(column), query),
      computed: (attribute, alias) => this.computed(attribute, alias),
      aggregate: (term, owner, alias, aliases) => this.aggregate(term, owner, alias, aliases),
      literal: (value) => value ? sql<boolean>`true` : sql<boolean>`false`,
      and: (items) => EB.and(items as Compiled[]),
      or: (items) => EB.or(items as Compiled[]),
      not: (item) => EB.not(item),
      exists: (scan) => {
        let query = EB.selectFrom(`${scan.table} as ${scan.alias}`)
        const join = scan.join
        if (join !== undefined) query = query.innerJoin(`${join.table} as ${join.alias}`, join.left, join.right)
        let selected = query.select(sql.lit(1).as('one'))
        for (const condition of scan.where) selected = selected.where(condition)
        return EB.exists(selected)
      },
      custom: (node, column) => node.operator.apply({ column: ref(column), value: node.value, eb: EB, engine: engine.id }),
      guarded: (condition, operand) => sql`case when ${condition} then ${ref(operand)} end`,
    }
  }

  /** The SQL of a computed attribute over the row aliased `alias` (`''`: its columns unqualified). */
  computed (attribute: ResolvedAttribute, alias: string): RawBuilder<unknown> {
    const computed = attribute.computed
    if (computed === undefined) throw new Error(`fastify-jsonapi: '${attribute.name}' is not a computed attribute`)
    return sql`${computed({ column: (name) => sql.ref(columnOf(alias, name)), eb: EB, engine: this.engine.id })}`
  }

  /**
   * An aggregate over the row aliased `alias` of `owner` (an alias: the subquery refers to it), as a correlated
   * scalar subquery: through each to-one step, the step's related row (within its `where`: else no value, NULL);
   * then the aggregate of the related rows within the term's `where` (`count(*)`: 0 for none). The planner answers it
   * from an index on the relationship's key column where there is one (`docs/performance.md`).
   */
  aggregate (term: AggregateTerm, owner: ResolvedResource, alias: string, aliases: AliasCounter): RawBuilder<unknown> {
    const output = this.#output
    const over = (step: number, from: ResolvedResource, outer: string): RawBuilder<unknown> => {
      if (step < term.steps.length) {
        const { relationship, target, where } = term.steps[step]
        const inner = aliases.take()
        const scan = relatedScan(output, relationship, from, target, outer, inner, aliases)
        const value = over(step + 1, target, inner)
        const conditions = where === undefined ? scan.where : [...scan.where, this.filter(where, target, inner, aliases)]
        return sql`(select ${value} from ${sql.table(target.table)} as ${sql.id(inner)} where ${EB.and(conditions as Compiled[])} limit 1)`
      }
      const inner = aliases.take()
      const { fn, of, where, target, relationship } = term
      const storage = relationship.storage
      // A count of a join table's rows needs no related row, unless their scope decides which count.
      if (storage.kind === 'join' && fn === 'count' && where === undefined) {
        return sql`(select count(*) from ${sql.table(storage.table)} as ${sql.id(inner)} where ${sql.ref(`${inner}.${storage.sourceKey}`)} = ${sql.ref(`${outer}.${from.idColumn}`)})`
      }
      const scan = relatedScan(output, relationship, from, target, outer, inner, aliases)
      const value = fn === 'count' ? sql`count(*)` : sql`${sql.raw(fn)}(${sql.ref(`${inner}.${(of as ResolvedAttribute).column as string}`)})`
      let query = EB.selectFrom(`${scan.table} as ${scan.alias}`)
      const join = scan.join
      if (join !== undefined) query = query.innerJoin(`${join.table} as ${join.alias}`, join.left, join.right)
      let selected = query.select(value.as('value'))
      for (const condition of scan.where) selected = selected.where(condition as Compiled)
      if (where !== undefined) selected = selected.where(this.filter(where, target, inner, aliases))
      // Kysely writes a subquery in parentheses.
      return sql`${selected}`
    }
    return over(0, owner, alias)
  }

  /**
   * A filter tree as a boolean expression over the resource aliased `alias` (`''`: the statement's only table, for a
   * {@link selfContained} filter), for `where(expression)` (see {@link writeFilter}).
   */
  filter (node: FilterNode, owner: ResolvedResource, alias: string, aliases: AliasCounter): Compiled {
    return writeFilter(this.#output, node, owner, alias, aliases)
  }

  /** That every required row exists (see {@link writeRequired}). */
  required (requires: readonly RequiredRow[], aliases: AliasCounter): Compiled {
    return writeRequired(this.#output, requires, aliases)
  }

  /** `column = $1` for one id, `column = any($1)` (or `in`) for several. */
  idIn (column: string, ids: readonly string[]): Compiled {
    return idIn(this.#output, column, ids)
  }
}
