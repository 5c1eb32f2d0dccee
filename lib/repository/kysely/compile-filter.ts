import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import type { ResolvedAttribute, ResolvedRelationship, ResolvedResource } from '../../schema/resolved.js'
import type { CompareNode, FilterNode, FilterNodeKind } from '../../query/filter-nodes.js'

type Builder = ExpressionBuilder<any, any>
type Compiled = Expression<SqlBool>

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

function column (alias: string, attribute: ResolvedAttribute): Expression<any> {
  return sql.ref(`${alias}.${attribute.column as string}`)
}

function compileCompare (eb: Builder, node: CompareNode, alias: string): Compiled {
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
      return sql<boolean>`to_tsvector('simple', ${ref}) @@ websearch_to_tsquery('simple', ${value as string})`
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

/**
 * Compiles a filter tree into a boolean expression over the resource aliased `alias`. Relationship filters become
 * `EXISTS` subqueries with aliases of their own; every value is a bound parameter.
 */
export function compileFilter (eb: Builder, node: FilterNode, owner: ResolvedResource, alias: string, aliases: AliasCounter): Compiled {
  const compilers: { [K in FilterNodeKind]: (node: Extract<FilterNode, { kind: K }>) => Compiled } = {
    compare: (item) => compileCompare(eb, item, alias),
    'field-compare': (item) => eb(column(alias, item.attribute), COMPARISONS[item.op], column(alias, item.other)),
    custom: (item) => item.operator.apply({ column: column(alias, item.attribute), value: item.value, eb }),
    and: (item) => item.items.length === 0 ? sql<boolean>`true` : eb.and(item.items.map((child) => compileFilter(eb, child, owner, alias, aliases))),
    or: (item) => eb.or(item.items.map((child) => compileFilter(eb, child, owner, alias, aliases))),
    not: (item) => eb.not(compileFilter(eb, item.item, owner, alias, aliases)),
    exists: (item) => {
      const inner = aliases.take()
      let scan = relatedScan(eb, item.relationship, owner, item.target, alias, inner, aliases)
      const where = item.where
      if (where !== undefined) scan = scan.where((sub) => compileFilter(sub, where, item.target, inner, aliases))
      return eb.exists(scan.select(sql.lit(1).as('one')))
    },
    'linked-to': (item) => {
      const storage = item.relationship.storage
      const target = owner
      if (storage.kind === 'inverse') return eb(sql.ref(`${alias}.${storage.column}`), '=', item.ownerId)
      const other = aliases.take()
      if (storage.kind === 'join') {
        return eb.exists(eb.selectFrom(`${storage.table} as ${other}`)
          .select(sql.lit(1).as('one'))
          .where(sql.ref(`${other}.${storage.targetKey}`), '=', sql.ref(`${alias}.${target.idColumn}`))
          .where(sql.ref(`${other}.${storage.sourceKey}`), '=', item.ownerId))
      }
      return eb.exists(eb.selectFrom(`${item.owner.table} as ${other}`)
        .select(sql.lit(1).as('one'))
        .where(sql.ref(`${other}.${storage.column}`), '=', sql.ref(`${alias}.${target.idColumn}`))
        .where(sql.ref(`${other}.${item.owner.idColumn}`), '=', item.ownerId))
    },
  }
  return (compilers[node.kind] as (node: FilterNode) => Compiled)(node)
}
