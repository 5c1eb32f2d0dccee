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
 * A column that exists with a type the declarations cannot use: an attribute stored as JSON (`storage: 'json'`) needs
 * a `jsonb` or `json` column (its value is written as JSON text and read back as the driver parses it; a `text`
 * column's text would come back as a string).
 */
export interface MistypedColumn {
  /** The table as declared. */
  readonly table: string
  readonly column: string
  /** The column's type as the catalog names it (`text`; a domain's base type). */
  readonly type: string
  /** The types it may have. */
  readonly expected: readonly string[]
  /** Every declaration that needs it so. */
  readonly neededBy: readonly SchemaNeed[]
}

function needsOf (neededBy: readonly SchemaNeed[]): string {
  return neededBy.map((need) => `resource '${need.resource}'${need.field === undefined ? '' : `, field '${need.field}'`}`).join('; ')
}

/**
 * The database lacks tables or columns the declarations name, or has columns of a type they cannot use; thrown by
 * `ready()` when the plugin's `checkDatabaseSchema` option is on. `missing` lists everything missing, `mistyped`
 * every column of the wrong type, each with what needs it.
 */
export class DatabaseSchemaError extends Error {
  readonly code = 'FJA_SCHEMA_MISMATCH'
  readonly missing: readonly MissingDatabaseObject[]
  readonly mistyped: readonly MistypedColumn[]
  constructor (missing: readonly MissingDatabaseObject[], searchPath: string, mistyped: readonly MistypedColumn[] = []) {
    const lines = missing.map((item) => {
      const what = item.column === undefined ? `no table or view '${item.table}'` : `no column '${item.column}' in '${item.table}'`
      return `\n  - ${what} (${needsOf(item.neededBy)})`
    })
    for (const item of mistyped) {
      lines.push(`\n  - column '${item.column}' of '${item.table}' is ${item.type}, not ${item.expected.join(' or ')} (${needsOf(item.neededBy)})`)
    }
    const parts = []
    if (missing.length > 0) parts.push(`lacks ${missing.length} ${missing.length === 1 ? 'table or column' : 'tables or columns'} the declarations need`)
    if (mistyped.length > 0) parts.push(`has ${mistyped.length} ${mistyped.length === 1 ? 'column' : 'columns'} of a type the declarations cannot use`)
    super(`fastify-jsonapi: the database ${parts.join(' and ')} (search path: ${searchPath}):${lines.join('')}`)
    this.name = 'DatabaseSchemaError'
    this.missing = missing
    this.mistyped = mistyped
  }
}

interface Need extends SchemaNeed {
  readonly table: string
  readonly column: string | undefined
  /** The types the column may have; undefined: any. */
  readonly types?: readonly string[]
}

/** The column types that hold an attribute stored as JSON. */
const JSON_TYPES: readonly string[] = Object.freeze(['jsonb', 'json'])

/** Every table and column the resolved declarations read or write, each with the declaration that needs it. */
export function schemaNeeds (graph: ResourceGraph): Need[] {
  const needs: Need[] = []
  const need = (table: string, column: string | undefined, resource: string, field: string | undefined, types?: readonly string[]): void => {
    needs.push({ table, column, resource, field, types })
  }
  for (const resource of graph.resources) {
    const { type, table } = resource
    need(table, undefined, type, undefined)
    need(table, resource.idColumn, type, 'id')
    // A stored attribute's column, or the columns a derived one is computed from (an aggregate has none of its own).
    for (const attribute of resource.attributes.values()) {
      if (attribute.column !== undefined && attribute.format === 'json') {
        need(table, attribute.column, type, attribute.name, JSON_TYPES)
        continue
      }
      // A computed attribute's expression names its columns itself (a missing one fails its statements).
      if (attribute.computed !== undefined) continue
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
 * The columns (and their types) of the tables that exist, from PostgreSQL's catalog in one query. A table resolves as
 * the plugin's queries resolve it (`to_regclass`: a qualified name in its schema, an unqualified one in the first
 * schema of the `search_path` that has it); tables, partitioned tables, views, materialized views and foreign tables
 * all count. A column's type is its domain's base type when it has a domain (a domain over jsonb holds JSON).
 */
async function readPostgresColumns (db: Kysely<any>, tables: readonly string[]): Promise<Map<string, Map<string, string>>> {
  const { rows } = await sql<{ table: string; column: string | null; type: string | null }>`
    select t.name as "table", a.attname as "column", format_type(coalesce(nullif(ty.typbasetype, 0), a.atttypid), null) as "type"
    from unnest(${sql.val(tables)}::text[], ${sql.val(tables.map(quotedTable))}::text[]) as t(name, quoted)
    join pg_catalog.pg_class c on c.oid = to_regclass(t.quoted) and c.relkind in ('r', 'p', 'v', 'm', 'f')
    left join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    left join pg_catalog.pg_type ty on ty.oid = a.atttypid
  `.execute(db)
  const found = new Map<string, Map<string, string>>()
  for (const row of rows) {
    const columns = found.get(row.table) ?? new Map<string, string>()
    if (row.column !== null) columns.set(row.column, row.type ?? '')
    found.set(row.table, columns)
  }
  return found
}

/** How an engine's catalog answers the schema check. */
export interface SchemaCatalog {
  /** The columns and their types of those tables that exist, by table as declared. */
  readonly readColumns: (db: Kysely<any>, tables: readonly string[]) => Promise<Map<string, Map<string, string>>>
  /** Where unqualified tables are looked for, for the message (`main`, or read from the database). */
  readonly path: string | ((db: Kysely<any>) => Promise<string>)
  /** Whether column types are checked (JSON attributes in `jsonb`/`json` columns). */
  readonly types: boolean
}

const POSTGRES_CATALOG: SchemaCatalog = {
  readColumns: readPostgresColumns,
  path: async (db) => {
    const { rows: [path] } = await sql<{ path: string }>`select array_to_string(current_schemas(false), ', ') as "path"`.execute(db)
    return path?.path ?? ''
  },
  types: true,
}

/**
 * Checks on PostgreSQL that every table and column the declarations need exists (one query over the catalog; see
 * {@link checkDatabaseSchemaWith}).
 */
export async function checkDatabaseSchema (db: Kysely<any>, graph: ResourceGraph): Promise<void> {
  await checkDatabaseSchemaWith(db, graph, POSTGRES_CATALOG)
}

/**
 * Checks that every table and column the declarations need exists, as the engine's catalog tells. Throws one
 * {@link DatabaseSchemaError} listing everything missing (and, where the catalog's types are checked, mistyped).
 */
export async function checkDatabaseSchemaWith (db: Kysely<any>, graph: ResourceGraph, catalog: SchemaCatalog): Promise<void> {
  const needs = schemaNeeds(graph).map((item) => catalog.types ? item : { ...item, types: undefined })
  const found = await catalog.readColumns(db, [...new Set(needs.map((item) => item.table))])
  // The resources whose own table each table is: when it is missing, their fields need not be listed one by one.
  const owners = new Set(needs.filter((item) => item.field === undefined).map((item) => `${item.table}\u0000${item.resource}`))
  const missing = new Map<string, { table: string; column: string | undefined; neededBy: Map<string, SchemaNeed> }>()
  const mistyped = new Map<string, { table: string; column: string; type: string; expected: readonly string[]; neededBy: Map<string, SchemaNeed> }>()
  for (const item of needs) {
    const columns = found.get(item.table)
    const type = item.column === undefined ? undefined : columns?.get(item.column)
    if (type !== undefined && item.types !== undefined && item.column !== undefined && !item.types.includes(type)) {
      const key = `${item.table}\u0000${item.column}`
      const entry = mistyped.get(key) ?? { table: item.table, column: item.column, type, expected: item.types, neededBy: new Map<string, SchemaNeed>() }
      entry.neededBy.set(`${item.resource}\u0000${item.field ?? ''}`, { resource: item.resource, field: item.field })
      mistyped.set(key, entry)
      continue
    }
    // A missing table is listed once, needed by its resource and by every other declaration that needs it.
    const column = columns === undefined ? undefined : item.column
    if (columns !== undefined && (column === undefined || columns.has(column))) continue
    if (columns === undefined && item.field !== undefined && owners.has(`${item.table}\u0000${item.resource}`)) continue
    const key = `${item.table}\u0000${column ?? ''}`
    const entry = missing.get(key) ?? { table: item.table, column, neededBy: new Map<string, SchemaNeed>() }
    entry.neededBy.set(`${item.resource}\u0000${item.field ?? ''}`, { resource: item.resource, field: item.field })
    missing.set(key, entry)
  }
  if (missing.size === 0 && mistyped.size === 0) return
  const searchPath = typeof catalog.path === 'string' ? catalog.path : await catalog.path(db)
  throw new DatabaseSchemaError(
    [...missing.values()].map((entry) => {
      // The resource whose table it is first, then the fields that need it, in declaration order.
      const neededBy = [...entry.neededBy.values()].sort((a, b) => Number(a.field !== undefined) - Number(b.field !== undefined))
      return Object.freeze({ table: entry.table, column: entry.column, neededBy: Object.freeze(neededBy) })
    }),
    searchPath,
    [...mistyped.values()].map((entry) => Object.freeze({
      table: entry.table, column: entry.column, type: entry.type, expected: entry.expected, neededBy: Object.freeze([...entry.neededBy.values()]),
    })),
  )
}
