import { sql, type RawBuilder } from 'kysely'
import type { ResolvedResource } from '../../schema/resolved.js'
import type { SortNode } from '../../query/query-tree.js'
import { columnOf, type AliasCounter, type FilterCompiler } from './compile-filter.js'

/**
 * The expression a sort key orders by: the column itself (unqualified when `alias` is `''`), a computed attribute's
 * SQL, an aggregate's subquery (which needs `alias` to be an alias), or, for a to-one path
 * (`owner.name`), a correlated scalar subquery per step, which needs `alias` to be an alias and never multiplies rows
 * (rows without the related row — or whose related row is outside the step's `where`, the target's scope — sort as
 * NULL). Where the key's `guard` (the request's read rule of the attribute) does not hold, the key is NULL.
 */
export function compileSort (filters: FilterCompiler, node: SortNode, resource: ResolvedResource, alias: string, aliases: AliasCounter): RawBuilder<unknown> {
  const expression = (step: number, owner: ResolvedResource, outer: string): RawBuilder<unknown> => {
    if (step === node.path.length) {
      const guard = node.guard === undefined ? undefined : filters.filter(node.guard, owner, outer, aliases)
      const value = node.aggregate !== undefined
        ? filters.aggregate(node.aggregate, owner, outer, aliases)
        : node.attribute.computed !== undefined ? filters.computed(node.attribute, outer) : sql.ref(columnOf(outer, node.attribute.column as string))
      return guard === undefined ? value : sql`case when ${guard} then ${value} end`
    }
    const { relationship, target, where } = node.path[step]
    const inner = `s${step + 1}`
    const value = expression(step + 1, target, inner)
    const storage = relationship.storage
    const link = storage.kind === 'foreign-key'
      ? sql`${sql.ref(`${inner}.${target.idColumn}`)} = ${sql.ref(`${outer}.${storage.column}`)}`
      : sql`${sql.ref(`${inner}.${storage.kind === 'inverse' ? storage.column : target.idColumn}`)} = ${sql.ref(`${outer}.${owner.idColumn}`)}`
    const scoped = where === undefined ? link : sql`${link} and ${filters.filter(where, target, inner, aliases)}`
    return sql`(select ${value} from ${sql.table(target.table)} as ${sql.id(inner)} where ${scoped} limit 1)`
  }
  return expression(0, resource, alias)
}
