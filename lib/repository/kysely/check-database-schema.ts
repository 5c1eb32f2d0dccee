import { sql, type Kysely } from 'kysely'
import type { ResourceGraph } from '../../schema/resolved.js'

/** A declaration that needs a table or column: a resource, and the field (`id`, an attribute, a relationship). */
export interface SchemaNeed {
  readonly resource: string
  /** Undefined when the resource itself needs it (its table). */
  readonly field: string | undefined
}

/** A table (or view) or a column the declarations need and the database does not have. */
export interface MissingDatabaseObject {
  /** The table as declared (`users`, `app.users`). */
  readonly table: string
  /** The missing column; undefined when the table itself is missing (its columns are then not listed). */
  readonly column: string | undefined
  /** Every declaration that needs it. */
  readonly neededBy: readonly SchemaNeed[]
}

/**
 * The database lacks tables or columns the declarations name; thrown by `ready()` when the plugin's
 * `checkDatabaseSchema` option is on. `missing` lists everything missing, each with what needs it.
 */
export class DatabaseSchemaError extends Error {
  readonly code = 'FJA_SCHEMA_MISMATCH'
  readonly missing: readonly MissingDatabaseObject[]
  constructor (missing: readonly MissingDatabaseObject[], searchPath: string) {
    const lines = missing.map((item) => {
      const what = item.column === undefined ? `no table or view '${item.table}'` : `no column '${item.column}' in '${item.table}'`
      const needs = item.neededBy.map((need) => `resource '${need.resource}'${need.field === undefined ? '' : `, field '${need.field}'`}`)
      return `\n  - ${what} (${needs.join('; ')})`
    })
    const count = `${missing.length} ${missing.length === 1 ? 'table or column' : 'tables or columns'}`
    super(`fastify-jsonapi: the database lacks ${count} the declarations need (search path: ${searchPath}):${lines.join('')}`)
    this.name = 'DatabaseSchemaError'
    this.missing = missing
  }
}

interface Need extends SchemaNeed {
  readonly table: string
  readonly column: string | undefined
}

/** Every table and column the resolved declarations read or write, each with the declaration that needs it. */
export function schemaNeeds (graph: ResourceGraph): Need[] {
  const needs: Need[] = []
  const need = (table: string, column: string | undefined, resource: string, field: string | undefined): void => {
    needs.push({ table, column, resource, field })
  }
  for (const resource of graph.resources) {
    const { type, table } = resource
    need(table, undefined, type, undefined)
    need(table, resource.idColumn, type, 'id')
    // A stored attribute's column, or the columns a derived one is computed from.
    for (const attribute of resource.attributes.values()) {
      for (const column of attribute.selects) need(table, column, type, attribute.name)
    }
    for (const relationship of resource.relationships.values()) {
      const storage = relationship.storage
      if (storage.kind === 'foreign-key') {
        need(table, storage.column, type, relationship.name)
      } else if (storage.kind === 'inverse') {
        need(graph.getResource(relationship.targetType).table, storage.column, type, relationship.name)
      } else {
        need(storage.table, undefined, type, relationship.name)
        for (const column of [storage.sourceKey, storage.targetKey, ...Object.keys(storage.values)]) {
          need(storage.table, column, type, relationship.name)
        }
      }
    }
  }
  return needs
}

/** A declared table name as Kysely writes it (`"app"."users"`), which `to_regclass` resolves as the queries do. */
export function quotedTable (table: string): string {
  return table.split('.').map((part) => `"${part}"`).join('.')
}

/**
 * Checks that every table and column the declarations need exists: one query over the catalog. A table resolves as
 * the plugin's queries resolve it (`to_regclass`: a qualified name in its schema, an unqualified one in the first
 * schema of the `search_path` that has it); tables, partitioned tables, views, materialized views and foreign tables
 * all count. Throws one {@link DatabaseSchemaError} listing everything missing.
 */
export async function checkDatabaseSchema (db: Kysely<any>, graph: ResourceGraph): Promise<void> {
  const needs = schemaNeeds(graph)
  const tables = [...new Set(needs.map((item) => item.table))]
  const { rows } = await sql<{ table: string; column: string | null }>`
    select t.name as "table", a.attname as "column"
    from unnest(${sql.val(tables)}::text[], ${sql.val(tables.map(quotedTable))}::text[]) as t(name, quoted)
    join pg_catalog.pg_class c on c.oid = to_regclass(t.quoted) and c.relkind in ('r', 'p', 'v', 'm', 'f')
    left join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  `.execute(db)
  const found = new Map<string, Set<string>>()
  for (const row of rows) {
    const columns = found.get(row.table) ?? new Set<string>()
    if (row.column !== null) columns.add(row.column)
    found.set(row.table, columns)
  }
  // The resources whose own table each table is: when it is missing, their fields need not be listed one by one.
  const owners = new Set(needs.filter((item) => item.field === undefined).map((item) => `${item.table}\u0000${item.resource}`))
  const missing = new Map<string, { table: string; column: string | undefined; neededBy: Map<string, SchemaNeed> }>()
  for (const item of needs) {
    const columns = found.get(item.table)
    // A missing table is listed once, needed by its resource and by every other declaration that needs it.
    const column = columns === undefined ? undefined : item.column
    if (columns !== undefined && (column === undefined || columns.has(column))) continue
    if (columns === undefined && item.field !== undefined && owners.has(`${item.table}\u0000${item.resource}`)) continue
    const key = `${item.table}\u0000${column ?? ''}`
    const entry = missing.get(key) ?? { table: item.table, column, neededBy: new Map<string, SchemaNeed>() }
    entry.neededBy.set(`${item.resource}\u0000${item.field ?? ''}`, { resource: item.resource, field: item.field })
    missing.set(key, entry)
  }
  if (missing.size === 0) return
  const { rows: [path] } = await sql<{ path: string }>`select array_to_string(current_schemas(false), ', ') as "path"`.execute(db)
  throw new DatabaseSchemaError(
    [...missing.values()].map((entry) => {
      // The resource whose table it is first, then the fields that need it, in declaration order.
      const neededBy = [...entry.neededBy.values()].sort((a, b) => Number(a.field !== undefined) - Number(b.field !== undefined))
      return Object.freeze({ table: entry.table, column: entry.column, neededBy: Object.freeze(neededBy) })
    }),
    path?.path ?? '',
  )
}
