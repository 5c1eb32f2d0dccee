import { sql, type Kysely } from 'kysely'
import type { RelationshipStorage, ResolvedResource, ResourceGraph } from '../../schema/resolved.js'
import { quotedTable } from './check-database-schema.js'

/**
 * Where a to-many relationship's related rows of one owner lie in id order: the table and its two columns — the owner
 * key, then the related id (an inverse foreign key: the related table, its foreign key and its id; a join table: its
 * owner and related columns).
 */
export interface OwnerOrder {
  readonly table: string
  readonly ownerKey: string
  readonly relatedId: string
}

/** The {@link OwnerOrder} of a to-many storage (none for a foreign key of the owner's own row). */
export function ownerOrderOf (storage: RelationshipStorage, target: ResolvedResource): OwnerOrder | undefined {
  if (storage.kind === 'inverse') return { table: target.table, ownerKey: storage.column, relatedId: target.idColumn }
  if (storage.kind === 'join') return { table: storage.table, ownerKey: storage.sourceKey, relatedId: storage.targetKey }
  return undefined
}

function keyOf (order: OwnerOrder): string {
  return `${order.table}\u0000${order.ownerKey}\u0000${order.relatedId}`
}

/**
 * The to-many relationships whose related rows have an index in owner, then id order (a B-tree on
 * `(<owner key>, <related id>, …)`), read once from the catalog: for them, each owner's page of an include is an
 * index range scan that stops after the page (`LATERAL … LIMIT`), whatever the number of rows beyond it. Without such
 * an index a page per owner ranks every related row of the owners instead (window functions): a planner given
 * `ORDER BY id LIMIT n` and only an index on the owner key may walk the primary key to find each owner's first rows.
 */
export class OrderedKeys {
  readonly #keys: ReadonlySet<string>

  constructor (keys: ReadonlySet<string>) {
    this.#keys = keys
  }

  /** These and `other`'s (read for another registration's resources). */
  with (other: OrderedKeys): OrderedKeys {
    return new OrderedKeys(new Set([...this.#keys, ...other.#keys]))
  }

  /** Whether the related rows of `order` have an index in owner, then id order. */
  has (order: OwnerOrder): boolean {
    return this.#keys.has(keyOf(order))
  }
}

/** Every distinct {@link OwnerOrder} of the graph's to-many relationships. */
function ownerOrders (graph: ResourceGraph): OwnerOrder[] {
  const orders = new Map<string, OwnerOrder>()
  for (const resource of graph.resources) {
    for (const relationship of resource.relationships.values()) {
      if (!relationship.toMany) continue
      const order = ownerOrderOf(relationship.storage, graph.getResource(relationship.targetType))
      if (order !== undefined) orders.set(keyOf(order), order)
    }
  }
  return [...orders.values()]
}

/**
 * PostgreSQL's B-tree indexes whose first two key columns are a to-many relationship's owner key and related id
 * (valid, not partial), for the relationships of the graph: one statement. A table resolves as the plugin's queries
 * resolve it (`to_regclass`).
 */
export async function readOrderedKeys (db: Kysely<any>, graph: ResourceGraph): Promise<OrderedKeys> {
  const orders = ownerOrders(graph)
  if (orders.length === 0) return new OrderedKeys(new Set())
  const { rows } = await sql<{ at: string | number }>`
    select o.at
    from unnest(${sql.val(orders.map((order) => quotedTable(order.table)))}::text[], ${sql.val(orders.map((order) => order.ownerKey))}::text[],
                ${sql.val(orders.map((order) => order.relatedId))}::text[]) with ordinality as o(source, owner_key, related_id, at)
    where exists (
      select 1
      from pg_catalog.pg_index i
      join pg_catalog.pg_class ic on ic.oid = i.indexrelid
      join pg_catalog.pg_am am on am.oid = ic.relam and am.amname = 'btree'
      join pg_catalog.pg_attribute first on first.attrelid = i.indrelid and first.attnum = i.indkey[0] and first.attname = o.owner_key
      join pg_catalog.pg_attribute second on second.attrelid = i.indrelid and second.attnum = i.indkey[1] and second.attname = o.related_id
      where i.indrelid = to_regclass(o.source) and i.indisvalid and i.indpred is null and i.indnkeyatts >= 2
    )
  `.execute(db)
  return new OrderedKeys(new Set(rows.map((row) => keyOf(orders[Number(row.at) - 1]))))
}
