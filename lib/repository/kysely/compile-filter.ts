import { expressionBuilder, sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely'
import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource } from '../../schema/resolved.js'
import type { CompareNode, FilterNode, FilterNodeKind, ReferencesNode } from '../../schema/filter-nodes.js'

/**
 * How many characters of a value `match` searches. PostgreSQL refuses to build a \`tsvector\` over 1 MB (SQLSTATE
 * 54000), which one stored value of distinct words can reach: every \`match\` over its row then failed, for every
 * client. 100,000 characters (at most 50,000 words) stay below it whatever the words.
 */
export const MATCH_TEXT_LENGTH = 100_000

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
const LIKES = { like: 'like', notlike: 'not like', ilike: 'ilike', notilike: 'not ilike' } as const

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

function column (alias: string, attribute: ResolvedAttribute): Expression<any> {
  return sql.ref(columnOf(alias, attribute.column as string))
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
    case 'field-compare':
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

/** `= $1` for one id, `= any($1)` for several. */
export function anyOf (values: readonly string[]): RawBuilder<unknown> {
  return values.length === 1 ? sql`${values[0]}` : sql`any(${sql.val([...values])})`
}

/** One compilation: the builder, the resource and its alias, and the statement's alias counter. */
interface Scope {
  readonly eb: Builder
  readonly owner: ResolvedResource
  readonly alias: string
  readonly aliases: AliasCounter
}

function compileCompare ({ eb, alias }: Scope, node: CompareNode): Compiled {
  const ref = column(alias, node.attribute)
  const value = node.value
  switch (node.op) {
    case 'eq':
    case 'ne':
      if (value === null) return eb(ref, node.op === 'eq' ? 'is' : 'is not', null)
      return eb(ref, COMPARISONS[node.op], value)
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le':
      return eb(ref, COMPARISONS[node.op], value)
    case 'between': {
      const [low, high] = value as [unknown, unknown]
      return eb.between(ref, low, high)
    }
    case 'in_':
    case 'notin_': {
      const values = value as unknown[]
      if (values.length === 0) return sql<boolean>`${sql.lit(node.op === 'notin_')}`
      return node.op === 'in_' ? eb(ref, '=', sql`any(${sql.val(values)})`) : eb(ref, '<>', sql`all(${sql.val(values)})`)
    }
    case 'is_':
      return eb(ref, 'is', null)
    case 'isnot':
      return eb(ref, 'is not', null)
    case 'like':
    case 'notlike':
    case 'ilike':
    case 'notilike':
      return eb(ref, LIKES[node.op], value as string)
    case 'startswith':
      return eb(ref, 'like', `${escapeLike(value as string)}%`)
    case 'endswith':
      return eb(ref, 'like', `%${escapeLike(value as string)}`)
    case 'match':
      return sql<boolean>`to_tsvector('simple', left(${ref}, ${sql.lit(MATCH_TEXT_LENGTH)})) @@ websearch_to_tsquery('simple', ${value as string})`
  }
}

/** The condition linking the related table (alias `inner`) to its owner (alias `outer`), and the tables to scan. */
function relatedScan (eb: Builder, relationship: ResolvedRelationship, owner: ResolvedResource, target: ResolvedResource, outer: string, inner: string, aliases: AliasCounter) {
  const storage = relationship.storage
  if (storage.kind === 'foreign-key') {
    return eb.selectFrom(`${target.table} as ${inner}`)
      .where(sql.ref(`${inner}.${target.idColumn}`), '=', sql.ref(`${outer}.${storage.column}`))
  }
  if (storage.kind === 'inverse') {
    return eb.selectFrom(`${target.table} as ${inner}`)
      .where(sql.ref(`${inner}.${storage.column}`), '=', sql.ref(`${outer}.${owner.idColumn}`))
  }
  const join = aliases.take()
  return eb.selectFrom(`${storage.table} as ${join}`)
    .innerJoin(`${target.table} as ${inner}`, `${inner}.${target.idColumn}`, `${join}.${storage.targetKey}`)
    .where(sql.ref(`${join}.${storage.sourceKey}`), '=', sql.ref(`${outer}.${owner.idColumn}`))
}

/** The row's relationship links to one of the ids (to none when `null`), by linkage alone. */
function compileReferences ({ eb, owner, alias, aliases }: Scope, node: ReferencesNode): Compiled {
  const { storage } = node.relationship
  if (node.ids !== null && node.ids.length === 0) return sql<boolean>`false`
  if (storage.kind === 'foreign-key') {
    const ref = sql.ref(columnOf(alias, storage.column))
    return node.ids === null ? eb(ref, 'is', null) : eb(ref, '=', anyOf(node.ids))
  }
  const other = aliases.take()
  const [table, ownerKey, targetKey] = storage.kind === 'inverse'
    ? [node.target.table, storage.column, node.target.idColumn]
    : [storage.table, storage.sourceKey, storage.targetKey]
  let scan = eb.selectFrom(`${table} as ${other}`)
    .select(sql.lit(1).as('one'))
    .where(sql.ref(`${other}.${ownerKey}`), '=', sql.ref(`${alias}.${owner.idColumn}`))
  if (node.ids !== null) scan = scan.where(sql.ref(`${other}.${targetKey}`), '=', anyOf(node.ids))
  return node.ids === null ? eb.not(eb.exists(scan)) : eb.exists(scan)
}

/** The compilers of every node kind, built once: a new kind does not compile until it has one. */
const COMPILERS: { readonly [K in FilterNodeKind]: (scope: Scope, node: Extract<FilterNode, { kind: K }>) => Compiled } = {
  compare: compileCompare,
  'field-compare': ({ eb, alias }, node) => eb(column(alias, node.attribute), COMPARISONS[node.op], column(alias, node.other)),
  custom: ({ eb, alias }, node) => node.operator.apply({ column: column(alias, node.attribute), value: node.value, eb }),
  and: (scope, node) => node.items.length === 0 ? sql<boolean>`true` : scope.eb.and(node.items.map((child) => compileNode(scope, child))),
  or: (scope, node) => node.items.length === 0 ? sql<boolean>`false` : scope.eb.or(node.items.map((child) => compileNode(scope, child))),
  not: (scope, node) => scope.eb.not(compileNode(scope, node.item)),
  constant: (_scope, node) => node.value ? sql<boolean>`true` : sql<boolean>`false`,
  references: compileReferences,
  exists: ({ eb, owner, alias, aliases }, node) => {
    const inner = aliases.take()
    let scan = relatedScan(eb, node.relationship, owner, node.target, alias, inner, aliases)
    const where = node.where
    if (where !== undefined) scan = scan.where(compileNode({ eb, owner: node.target, alias: inner, aliases }, where))
    return eb.exists(scan.select(sql.lit(1).as('one')))
  },
  'linked-to': ({ eb, owner, alias, aliases }, node) => {
    const storage = node.relationship.storage
    if (storage.kind === 'inverse') return eb(sql.ref(columnOf(alias, storage.column)), '=', node.ownerId)
    const other = aliases.take()
    if (storage.kind === 'join') {
      return eb.exists(eb.selectFrom(`${storage.table} as ${other}`)
        .select(sql.lit(1).as('one'))
        .where(sql.ref(`${other}.${storage.targetKey}`), '=', sql.ref(`${alias}.${owner.idColumn}`))
        .where(sql.ref(`${other}.${storage.sourceKey}`), '=', node.ownerId))
    }
    return eb.exists(eb.selectFrom(`${node.owner.table} as ${other}`)
      .select(sql.lit(1).as('one'))
      .where(sql.ref(`${other}.${storage.column}`), '=', sql.ref(`${alias}.${owner.idColumn}`))
      .where(sql.ref(`${other}.${node.owner.idColumn}`), '=', node.ownerId))
  },
}

function compileNode (scope: Scope, node: FilterNode): Compiled {
  return (COMPILERS[node.kind] as (scope: Scope, node: FilterNode) => Compiled)(scope, node)
}

/**
 * Compiles a filter tree into a boolean expression over the resource aliased `alias` (`''`: the statement's only
 * table, for a {@link selfContained} filter), for `where(expression)`. Relationship filters become `EXISTS`
 * subqueries with aliases of their own; every value is a bound parameter.
 */
export function compileFilter (node: FilterNode, owner: ResolvedResource, alias: string, aliases: AliasCounter): Compiled {
  // A subquery's reference to its owner row must be qualified: unqualified, it could name the subquery's own table.
  if (alias === '' && !selfContained(node)) throw new Error('fastify-jsonapi: a filter with subqueries needs its table aliased')
  return compileNode({ eb: EB, owner, alias, aliases }, node)
}
