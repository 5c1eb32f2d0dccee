import type { TObject, TSchema } from '@sinclair/typebox'
import type { AggregateFunction, ClientIdPolicy, ComputedAttribute, DerivedAttribute, FilterOperator, IdKind } from './fields.js'
import type { CompiledInput } from './compiled-input.js'
import type { Memo } from './memo.js'

/** The hooks a resource may declare (`ResourceHooks` of `hooks.ts` types each from the declaration). */
export type HookName =
  | 'scope' | 'beforeCreate' | 'beforeUpdate' | 'beforeDelete' | 'beforeLink' | 'afterCreate' | 'afterUpdate' | 'afterDelete'

/**
 * A resource's hooks as the service holds them: untyped, since the declaration types them (`ResourceHooks`, which
 * refers to this graph's filter nodes; this graph does not refer back). The service checks what `scope` returns.
 */
export type ResolvedHooks = { readonly [K in HookName]?: (...args: any[]) => unknown }

/**
 * The field rules of one attribute as the service holds them (`FieldRuleSet` of `hooks.ts` types them from the
 * declaration): each returns a condition, `true` or `false`; the service checks what it returns.
 */
export interface ResolvedFieldRules {
  readonly read: ((...args: any[]) => unknown) | undefined
  readonly write: ((...args: any[]) => unknown) | undefined
}

/** The name a read rule's per-row decision is selected as: 1 where the request may read the attribute, else 0. */
export function ruleSelectedAs (attribute: { readonly name: string }): string {
  return `__fjr_${attribute.name}`
}

/**
 * The value formats the library converts between database and wire: `integer` and `number` read the driver's
 * strings (`bigint`, `numeric`) as JS numbers (`integer` only when exact), `decimal` keeps exact numbers as decimal
 * strings (`int64` and `decimal` string formats).
 */
export type ValueFormat = 'date' | 'date-time' | 'integer' | 'number' | 'decimal' | 'json' | 'plain'

/**
 * The JSON kind of an attribute's values, which decides the filter operators it allows. `decimal`: a number written as
 * a decimal string (`Type.String({ format: 'int64' })`, `Type.String({ format: 'decimal' })`, a `bigint` id), ordered
 * and compared as a number by the database.
 */
export type ValueKind = 'string' | 'integer' | 'number' | 'decimal' | 'boolean' | 'date' | 'date-time' | 'array' | 'object' | 'other'

/**
 * How a collection reports its size in `meta.count`: `exact`, one `count(*)` over its filter; `estimated`, the
 * planner's estimate of its rows (flagged `meta.countEstimated`), exact where the response shows the size itself;
 * `none`, not at all.
 */
export type CountStrategy = 'exact' | 'estimated' | 'none'

/** An attribute after resolution: every default applied, every lookup precomputed. */
export interface ResolvedAttribute {
  readonly name: string
  readonly schema: TSchema
  /** The storing column; undefined for derived attributes. */
  readonly column: string | undefined
  readonly required: boolean
  readonly readOnly: boolean
  readonly createOnly: boolean
  readonly hidden: boolean
  readonly filterable: boolean
  readonly sortable: boolean
  readonly nullable: boolean
  readonly hasDefault: boolean
  readonly defaultValue: unknown
  readonly derived: DerivedAttribute | undefined
  readonly format: ValueFormat
  /** The kind of the (non-null) values. */
  readonly valueKind: ValueKind
  /** The schema of one non-null value, without constraints: what filter values are checked against. */
  readonly valueSchema: TSchema
  /** Custom filter operators by name. */
  readonly operators: ReadonlyMap<string, FilterOperator<any>>
  /**
   * Columns to select to render the attribute: its column, a derived attribute's columns, or the name a
   * database-computed value is selected as (see {@link ResolvedResource.computedSelects}); none for an aggregate (the
   * layer selects it with its scope).
   */
  readonly selects: readonly string[]
  /** The SQL expression of a database-computed attribute, over the row's own columns. */
  readonly computed: ComputedAttribute | undefined
  /** What a declared aggregate computes, by name (resolved against the graph when a request uses it). */
  readonly aggregate: AggregateSpec | undefined
  /** Whether the attribute is rendered without a sparse fieldset that names it. */
  readonly inDefaultFieldset: boolean
}

/**
 * A declared aggregate (or a `count(…)` of the query language): the function, the relationship path (to-one steps,
 * then the to-many relationship) from the owner type, and the related attribute of the functions that take one.
 */
export interface AggregateSpec {
  readonly fn: AggregateFunction
  readonly path: readonly string[]
  readonly of: string | undefined
}

/** The kinds of numbers: compared and ordered as numbers, and what `count`, `sum` and `avg` give. */
export const NUMERIC_KINDS: ReadonlySet<ValueKind> = new Set(['integer', 'number', 'decimal'])

/** The name a database-computed value (a computed attribute or an aggregate) is selected as. */
export function selectedAs (attribute: { readonly name: string }): string {
  return `__fja_${attribute.name}`
}

/** Where a relationship's link is stored. */
export type RelationshipStorage =
  /** A foreign key column on the owner's table. */
  | { readonly kind: 'foreign-key'; readonly column: string; readonly nullable: boolean }
  /** A foreign key column on the target's table, pointing at the owner. */
  | { readonly kind: 'inverse'; readonly column: string; readonly nullable: boolean; readonly inverseName: string }
  /** Rows of a join table. */
  | {
    readonly kind: 'join'
    readonly table: string
    readonly sourceKey: string
    readonly targetKey: string
    readonly values: Readonly<Record<string, unknown>>
  }

/** A relationship after resolution. */
export interface ResolvedRelationship {
  readonly name: string
  /** The type that declares the relationship. */
  readonly ownerType: string
  /** The related type. */
  readonly targetType: string
  readonly toMany: boolean
  readonly required: boolean
  /** Never written by a client. */
  readonly readOnly: boolean
  /** Written by a client only in a create body. */
  readonly createOnly: boolean
  readonly storage: RelationshipStorage
  /** A to-many relationship's declared page per owner when included (undefined: the resource's or the plugin's). */
  readonly includeSize: number | undefined
}

/** The compiled input checks of a resource's write bodies. */
export interface ResourceInputs {
  readonly create: CompiledInput
  readonly update: CompiledInput
  /** The schemas in force (derived or the user's). */
  readonly createSchema: TObject
  readonly updateSchema: TObject
}

/** A resource type after resolution. */
export interface ResolvedResource {
  readonly type: string
  readonly path: string
  readonly table: string
  readonly idColumn: string
  readonly idKind: IdKind
  /** The anchored pattern of a `text` id (`u` flag); undefined for the other kinds. */
  readonly idPattern: RegExp | undefined
  /** The longest `text` id; undefined without a limit and for the other kinds. */
  readonly idMaxLength: number | undefined
  readonly clientIds: ClientIdPolicy
  /** The id as a filterable, sortable pseudo-attribute named `id`. */
  readonly idAttribute: ResolvedAttribute
  /** Page sizes of this resource (undefined: the plugin's); `includeSize`: of its to-many relationships, included. */
  readonly pagination: { readonly defaultSize?: number; readonly maxSize?: number; readonly includeSize?: number }
  /** How collections report their size (`meta.count`): `count(*)`, the planner's estimate, or not at all. */
  readonly count: CountStrategy
  /** Whether writes of an existing resource (PATCH, DELETE, relationship routes) must carry `If-Match` (else 428). */
  readonly requireIfMatch: boolean
  readonly attributes: ReadonlyMap<string, ResolvedAttribute>
  readonly relationships: ReadonlyMap<string, ResolvedRelationship>
  /** Attributes rendered in responses, in declaration order. */
  readonly visibleAttributes: readonly ResolvedAttribute[]
  /** The computed attributes by the name their value is selected as ({@link selectedAs}): the repository writes their SQL. */
  readonly computedSelects: ReadonlyMap<string, ResolvedAttribute>
  /** The columns every attribute needs, hidden and derived ones too (what hooks read of a stored row). */
  readonly allColumns: readonly string[]
  readonly routes: {
    readonly list: boolean
    readonly create: boolean
    readonly read: boolean
    readonly update: boolean
    readonly delete: boolean
  }
  readonly inputs: ResourceInputs
  /** The application's hooks (empty when none are declared). */
  readonly hooks: ResolvedHooks
  /** The field rules by attribute name (empty when none are declared). */
  readonly rules: ReadonlyMap<string, ResolvedFieldRules>
  /** The attributes with a read rule: a row renders them only where its selected decision says so ({@link ruleSelectedAs}). */
  readonly readRuled: readonly ResolvedAttribute[]
  /** Whether a write hook (`before*`/`after*`) is declared: writes then run in a transaction. */
  readonly hasWriteHooks: boolean
  /** Whether an attribute is read-only: a write then leaves out what a custom input schema let through. */
  readonly hasReadOnlyAttributes: boolean
  /** What the stages derive from this resource, kept with it (see {@link Memo}). */
  readonly memo: Memo
}

/** All resources, resolved once at registration. */
export interface ResourceGraph {
  readonly resources: readonly ResolvedResource[]
  /** The resource of a type; throws for an unknown type. */
  readonly getResource: (type: string) => ResolvedResource
  /** The resource of a type, or undefined. */
  readonly findResource: (type: string) => ResolvedResource | undefined
}
