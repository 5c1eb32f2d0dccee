import { sql, type Kysely } from 'kysely'
import type { ResolvedResource, ResourceGraph } from '../../schema/resolved.js'
import type { RequiredRow } from '../../contracts/repository.js'
import { quotedTable } from './check-database-schema.js'

/**
 * A relationship stored in its owner's row: the owner's table and column, and the target's table and id column, with
 * every resource and target declared on them (two relationships, or two types on one table, may share a link).
 */
export interface StoredLink {
  readonly table: string
  readonly column: string
  readonly targetTable: string
  readonly targetColumn: string
  readonly pairs: Array<readonly [ResolvedResource, ResolvedResource]>
}

/** Every distinct relationship of the graph stored as a foreign key column of its owner's row. */
export function storedLinks (graph: ResourceGraph): StoredLink[] {
  const links = new Map<string, StoredLink>()
  for (const resource of graph.resources) {
    for (const relationship of resource.relationships.values()) {
      const storage = relationship.storage
      if (storage.kind !== 'foreign-key') continue
      const target = graph.getResource(relationship.targetType)
      const key = `${resource.table}\u0000${storage.column}\u0000${target.table}\u0000${target.idColumn}`
      let link = links.get(key)
      if (link === undefined) {
        link = { table: resource.table, column: storage.column, targetTable: target.table, targetColumn: target.idColumn, pairs: [] }
        links.set(key, link)
      }
      link.pairs.push([resource, target])
    }
  }
  return [...links.values()]
}

/** Resource → its column → the target resource → the names of the constraints (two may check the same link). */
type ConstraintsByResource = Map<ResolvedResource, Map<string, Map<ResolvedResource, Set<string>>>>

/**
 * The foreign key constraints of the database that enforce, on every statement, that a relationship column of a row
 * holds an id of its target: read once from the catalog. Such a constraint lets a write that links a row to a target
 * with no scope be the plain statement (`INSERT … VALUES`, an `UPDATE` without `EXISTS`): the database refuses a
 * missing target itself (SQLSTATE 23503, naming the constraint and the table), as the guarded statement would
 * (`INSERT … SELECT … WHERE EXISTS`, `UPDATE … AND EXISTS`), at the cost of the plain statement.
 *
 * A constraint counts only when it cannot be put off or bypassed by anything the plugin does not see: one column to
 * the target's id column, not deferrable, its check triggers enabled, and no row-level security on the target table
 * (a foreign key check sees rows a policy hides; `EXISTS` does not).
 */
export class EnforcedForeignKeys {
  readonly #constraints: ConstraintsByResource
  readonly #size: number

  constructor (constraints: ConstraintsByResource, size: number) {
    this.#constraints = constraints
    this.#size = size
  }

  /** The number of links (table, column, target table) enforced. */
  get size (): number {
    return this.#size
  }

  /** These constraints and `other`'s (read for another registration's resources). */
  with (other: EnforcedForeignKeys): EnforcedForeignKeys {
    return new EnforcedForeignKeys(new Map([...this.#constraints, ...other.#constraints]), this.#size + other.#size)
  }

  /** The constraint that makes `resource`'s `column` hold ids of `target`, if one does. */
  constraintOf (resource: ResolvedResource, column: string, target: ResolvedResource): string | undefined {
    return this.#constraints.get(resource)?.get(column)?.get(target)?.values().next().value
  }

  /**
   * The constraints that check every row a new row of `resource` requires, or undefined when one of them is not
   * enforced so (a target with a scope, or a column without such a constraint): then the write must check them itself.
   */
  enforcing (resource: ResolvedResource, row: Readonly<Record<string, unknown>>, names: readonly string[], requires: readonly RequiredRow[]): ReadonlySet<string> | undefined {
    const columns = this.#constraints.get(resource)
    if (columns === undefined) return undefined
    // One required row (a create with one to-one link, the usual case) answers its own set: nothing is made per write.
    let constraints: Set<string> | undefined
    let only: ReadonlySet<string> | undefined
    for (const required of requires) {
      if (required.scope !== undefined) return undefined
      let found: ReadonlySet<string> | undefined
      for (const name of names) {
        if (row[name] !== required.id) continue
        found = columns.get(name)?.get(required.resource)
        if (found !== undefined) break
      }
      if (found === undefined) return undefined
      if (only === undefined) {
        only = found
      } else {
        constraints ??= new Set(only)
        for (const constraint of found) constraints.add(constraint)
      }
    }
    return constraints ?? only ?? new Set()
  }
}

/**
 * Reads from the catalog which of the graph's relationships stored in a row a foreign key constraint enforces (one
 * query; tables resolve as the plugin's statements resolve them, through the `search_path`).
 */
export async function readEnforcedForeignKeys (db: Kysely<any>, graph: ResourceGraph): Promise<EnforcedForeignKeys> {
  const links = storedLinks(graph)
  const constraints: ConstraintsByResource = new Map()
  if (links.length === 0) return new EnforcedForeignKeys(constraints, 0)
  const { rows } = await sql<{ at: string | number; constraint: string }>`
    select l.at, k.conname as "constraint"
    from unnest(${sql.val(links.map((link) => quotedTable(link.table)))}::text[], ${sql.val(links.map((link) => link.column))}::text[],
                ${sql.val(links.map((link) => quotedTable(link.targetTable)))}::text[], ${sql.val(links.map((link) => link.targetColumn))}::text[])
      with ordinality as l(source, "column", target, target_column, at)
    join pg_catalog.pg_attribute a on a.attrelid = to_regclass(l.source) and a.attname = l."column" and not a.attisdropped
    join pg_catalog.pg_attribute ta on ta.attrelid = to_regclass(l.target) and ta.attname = l.target_column and not ta.attisdropped
    join pg_catalog.pg_class tc on tc.oid = ta.attrelid and not tc.relrowsecurity
    join pg_catalog.pg_constraint k on k.contype = 'f' and not k.condeferrable
      and k.conrelid = a.attrelid and k.conkey = array[a.attnum]
      and k.confrelid = ta.attrelid and k.confkey = array[ta.attnum]
    where not exists (select 1 from pg_catalog.pg_trigger g where g.tgconstraint = k.oid and g.tgrelid = k.conrelid and g.tgenabled not in ('O', 'A'))
  `.execute(db)
  return enforcedLinks(links, rows.map((row) => [Number(row.at) - 1, row.constraint] as const))
}

/**
 * The enforced foreign keys of the catalog's answer: for each constraint found, the index of the link of `links` it
 * enforces and its name.
 */
export function enforcedLinks (links: readonly StoredLink[], found: ReadonlyArray<readonly [number, string]>): EnforcedForeignKeys {
  const constraints: ConstraintsByResource = new Map()
  for (const [at, constraint] of found) {
    const link = links[at]
    for (const [resource, target] of link.pairs) {
      let columns = constraints.get(resource)
      if (columns === undefined) constraints.set(resource, columns = new Map())
      let targets = columns.get(link.column)
      if (targets === undefined) columns.set(link.column, targets = new Map())
      let names = targets.get(target)
      if (names === undefined) targets.set(target, names = new Set())
      names.add(constraint)
    }
  }
  return new EnforcedForeignKeys(constraints, new Set(found.map(([at]) => at)).size)
}
