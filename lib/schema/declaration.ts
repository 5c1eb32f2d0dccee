import type { Static, TObject } from '@sinclair/typebox'
import type { FieldRules, FieldRuleSet, JsonApiContext, ResourceHooks } from './hooks.js'
import { keyList } from './known-keys.js'
import type {
  AttributeDeclaration, AttributeDeclarations, DerivedAttribute, IdDeclaration, InverseDeclaration, ManyToManyDeclaration,
  RelationshipDeclaration, RelationshipDeclarations, RouteSelection, Row, ToOneForeignKeyDeclaration, ClientIdPolicy,
} from './fields.js'
import type { FilterOperator } from './fields.js'

/**
 * The declaration of one resource type. `A` and `R` are its attributes and relationships as declared (they type the
 * hooks), `C` the request context its hooks receive, `T` its type name.
 *
 * @example
 * ```ts
 * const computer = defineResource({
 *   type: 'computer',
 *   path: '/computers',
 *   table: 'computers',
 *   attributes: {
 *     serial: { schema: Type.Union([Type.String(), Type.Null()]) },
 *   },
 *   relationships: {
 *     owner: { kind: 'to-one', type: 'user', foreignKey: 'owner_id' },
 *   },
 * })
 * ```
 */
export interface ResourceDeclaration<
  A extends AttributeDeclarations = AttributeDeclarations,
  R extends RelationshipDeclarations = RelationshipDeclarations,
  C = any,
  T extends string = string,
> {
  /** The JSON:API type name (`data.type`). */
  readonly type: T
  /** The collection path, e.g. `/users`. Defaults to `/<type>`. */
  readonly path?: string
  /** The table (optionally `schema.table`). Defaults to the type name. */
  readonly table?: string
  /** The primary key. Defaults to an integer column named `id`. See {@link IdDeclaration}. */
  readonly id?: IdDeclaration
  /** Client-generated ids; `forbidden` by default. */
  readonly clientIds?: ClientIdPolicy
  /** The attributes, by public name. */
  readonly attributes?: A
  /** The relationships, by public name. */
  readonly relationships?: R
  /**
   * Replaces the derived input schemas of `data.attributes`. Each must be a `Type.Object`; unknown members are
   * rejected unless the schema itself allows additional properties.
   *
   * @example
   * ```ts
   * input: { update: Type.Object({ birth_city: Type.String(), favourite_movies: Type.Optional(Type.String()) }) }
   * ```
   */
  readonly input?: { readonly create?: TObject; readonly update?: TObject }
  /** Which routes exist; all by default. */
  readonly routes?: RouteSelection
  /**
   * Page sizes of this resource's collections, overriding the plugin's `pagination`; `includeSize`: the page of each
   * owner in this resource's to-many relationships when they are included, overriding the plugin's
   * `include.pageSize` (a relationship's own `includeSize` overrides it in turn).
   */
  readonly pagination?: { readonly defaultSize?: number; readonly maxSize?: number; readonly includeSize?: number }
  /**
   * How collections of this type report their size in `meta.count` (see docs/querying.md):
   *
   * - `true` or `'exact'` (default): one `count(*)` over the same filter; `meta.count`, and a `last` link.
   * - `'estimated'`: the planner's estimate of the rows the filter matches (`EXPLAIN`: a plan, not a scan), with
   *   `meta.countEstimated: true`; no `last` link, `next` when a row follows the page. Exact (without the flag) where
   *   the response itself shows the size: a last page that is also the first (or at a known offset), a streamed
   *   collection.
   * - `false`: no count: no `meta.count` and no `last` link, for huge tables.
   */
  readonly count?: boolean | 'exact' | 'estimated'
  /**
   * Whether a write of an existing resource (`PATCH`/`DELETE /<type>/<id>`, the relationship routes, `update` and
   * `remove` operations) must carry a precondition: `If-Match` (an operation: `meta.ifMatch`). Without one it is a
   * 428. Default false: a write without `If-Match` happens unconditionally. See docs/conditional-requests.md.
   */
  readonly requireIfMatch?: boolean
  /**
   * The application's rules for this type: a `scope` that every read and write of the type obeys, wherever the type
   * is reached, and hooks around its writes. See `docs/authorization.md`.
   *
   * @example
   * ```ts
   * hooks: {
   *   scope: (context, where) => context.user === undefined ? where.none() : where.references('owner', context.user.id),
   *   beforeCreate (input, { context }) {
   *     input.relationships.owner ??= context.user.id
   *   },
   * }
   * ```
   */
  // NoInfer: the attributes and relationships are inferred from their own members only, never from the hooks' types
  // (hooks shared by several types, typed for what they need, must not narrow the declaration).
  readonly hooks?: ResourceHooks<NoInfer<Declared<A>>, NoInfer<R>, C>
  /**
   * Field rules: who may read and who may write each attribute, per request and per row. A field the request may
   * not read on a row is absent from that resource object everywhere, and is null there for `filter`, `sort` and
   * cursors, so that no answer depends on its value. See `docs/authorization.md` "Field rules".
   *
   * @example
   * ```ts
   * rules: {
   *   phone: {
   *     read: (context, where) => context.user === undefined ? false : where.eq('id', context.user.id),
   *     write: (context, where) => context.user === undefined ? false : where.eq('id', context.user.id),
   *   },
   * }
   * ```
   */
  readonly rules?: FieldRules<NoInfer<Declared<A>>, NoInfer<R>, C>
}

/** The keys of `T` that no member of the union `Shape` has. */
type UnknownKeys<T, Shape> = Exclude<keyof T, Shape extends unknown ? keyof Shape : never>

/**
 * What an unknown key of a declaration must be: nothing a value can be, so that `requried: true` is a compile error
 * that names the key: `Type 'boolean' is not assignable to type 'UnknownKey<"requried", "an attribute">'`.
 */
export interface UnknownKey<Key extends string, Of extends string> {
  readonly ' unknown key': Key
  readonly ' of': Of
}

/** Types every key of `T` that `Shape` does not know as an {@link UnknownKey}. */
type NoUnknownKeys<T, Shape, What extends string> = {
  readonly [K in UnknownKeys<T, Shape>]: UnknownKey<K & string, What>
}

/** `derived`: known keys, and a result of the attribute's type. */
type CheckedDerived<D, Value> = NoUnknownKeys<D, DerivedAttribute, 'derived'> & { readonly compute: (row: Row) => Value }

type CheckedAttribute<D> = D extends AttributeDeclaration
  ? NoUnknownKeys<D, AttributeDeclaration, 'an attribute'>
    & (D extends { readonly derived: infer X } ? { readonly derived: CheckedDerived<X, Static<D['schema']>> } : unknown)
    & (D extends { readonly operators: readonly unknown[] } ? { readonly operators: readonly FilterOperator<any, Static<D['schema']>>[] } : unknown)
  : unknown

/** The declaration a relationship's keys say it is: a foreign key, a join table, or the inverse side. */
type RelationshipShape<D> = D extends { readonly foreignKey: unknown } ? ToOneForeignKeyDeclaration
  : D extends { readonly through: unknown } ? ManyToManyDeclaration
    : D extends { readonly inverse: unknown } ? InverseDeclaration
      : RelationshipDeclaration

type CheckedRelationship<D> = NoUnknownKeys<D, RelationshipShape<D>, 'a relationship'>
  & (D extends { readonly through: infer X } ? { readonly through: NoUnknownKeys<X, ManyToManyDeclaration['through'], 'through'> } : unknown)

/**
 * What `defineResource` checks beyond the declaration's own type, which its inferred attributes and relationships
 * would let through: unknown keys in attributes (and `derived`), relationships (and `through`), the row and result of
 * `derived.compute`, and the column type of custom operators.
 */
export interface CheckedDeclaration<A, R> {
  readonly attributes?: { readonly [K in keyof A]: CheckedAttribute<A[K]> }
  readonly relationships?: { readonly [K in keyof R]: CheckedRelationship<R[K]> }
}

/**
 * The attributes a declaration declares: a declaration without `attributes` infers the constraint (a record of any
 * key), which means none. (`A` has no default in `defineResource`: TypeScript would take the inline functions'
 * contextual types, such as `derived.compute`'s row, from the default instead of the constraint.)
 */
export type Declared<A> = 0 extends 1 & A ? A : string extends keyof A ? NoDeclarations : A

/** No attributes, or no relationships: what a declaration without them has. */
export type NoDeclarations = Record<never, never>

/** A resource declaration of any attributes, relationships and context: what the plugin accepts. */
export type AnyResourceDeclaration = ResourceDeclaration<any, any, any>

/**
 * Declares a resource. An identity function that gives the declaration its type, so editors complete and check it,
 * and types its hooks from its attributes and relationships. The hooks' context is {@link JsonApiContext} (augment
 * it once for the application), or the type given to {@link defineResourceFor}.
 *
 * @example
 * ```ts
 * import { Type } from '@sinclair/typebox'
 * import { defineResource } from 'fastify-jsonapi'
 *
 * export const group = defineResource({
 *   type: 'group',
 *   path: '/groups',
 *   table: 'groups',
 *   attributes: { name: { schema: Type.String(), required: true } },
 *   relationships: { users: { kind: 'to-many', type: 'user', inverse: 'group' } },
 * })
 * ```
 */
export function defineResource<
  const A extends AttributeDeclarations,
  const R extends RelationshipDeclarations = NoDeclarations,
  C = JsonApiContext,
  const T extends string = string,
> (declaration: ResourceDeclaration<A, R, C, T> & CheckedDeclaration<NoInfer<A>, NoInfer<R>>): ResourceDeclaration<Declared<A>, R, C, T> {
  // the same object: `Declared<A>` only renames the inferred constraint to "no attributes"
  return declaration as unknown as ResourceDeclaration<Declared<A>, R, C, T>
}

/**
 * `defineResource` for hooks that receive the context type `C`: for applications (or parts of one) that do not
 * augment {@link JsonApiContext}.
 *
 * @example
 * ```ts
 * interface TenantContext { readonly tenant: string }
 * const define = defineResourceFor<TenantContext>()
 * export const invoice = define({
 *   type: 'invoice',
 *   attributes: { tenant_id: { schema: Type.String(), hidden: true, readOnly: true } },
 *   hooks: { scope: (context, where) => where.eq('tenant_id', context.tenant) },
 * })
 * ```
 */
export function defineResourceFor<C> () {
  return function defineResourceWithContext<
    const A extends AttributeDeclarations,
    const R extends RelationshipDeclarations = NoDeclarations,
    const T extends string = string,
  > (declaration: ResourceDeclaration<A, R, C, T> & CheckedDeclaration<NoInfer<A>, NoInfer<R>>): ResourceDeclaration<Declared<A>, R, C, T> {
    return declaration as unknown as ResourceDeclaration<Declared<A>, R, C, T>
  }
}

/** The types the relationships of a declaration point at. */
type RelatedTypes<D> = D extends { readonly relationships?: infer R }
  ? { [K in keyof NonNullable<R>]: NonNullable<R>[K] extends { readonly type: infer T } ? T : never }[keyof NonNullable<R>]
  : never

/**
 * Each declaration of `R`, with the relationships that point at a type no declaration of `R` has marked: their `type`
 * must be one of `R`'s. Declarations whose type names are plain `string`s (built at run time) are not checked here.
 */
export type RegisteredResources<R extends readonly AnyResourceDeclaration[]> = string extends R[number]['type']
  ? R
  : { readonly [I in keyof R]: [Exclude<RelatedTypes<R[I]>, R[number]['type']>] extends [never]
      ? R[I]
      : { readonly relationships?: { readonly [K in keyof NonNullable<R[I]['relationships']>]: { readonly type: R[number]['type'] } } } }

/**
 * The resources of one API, checked together at compile time: a relationship whose `type` is not the type of one of
 * them is an error (`Type '"autor"' is not assignable to type '"user" | "computer"'`). The plugin checks the same at
 * registration whatever the declarations' types; this moves the mistake to the editor. Returns its argument.
 *
 * @example
 * ```ts
 * export const resources = defineResources([user, computer])
 * await app.register(jsonApi, { db, resources })
 * ```
 */
export function defineResources<const R extends readonly AnyResourceDeclaration[]> (resources: R & RegisteredResources<NoInfer<R>>): R {
  return resources
}

/**
 * The keys of every object of a declaration, checked at registration: an unknown key is a `ResourceConfigError`
 * that suggests the closest one. Each list must hold exactly the keys of its interface, or it does not compile.
 */
export const DECLARATION_KEYS = {
  resource: keyList<ResourceDeclaration>()([
    'type', 'path', 'table', 'id', 'clientIds', 'attributes', 'relationships', 'input', 'routes', 'pagination', 'count', 'requireIfMatch', 'hooks', 'rules',
  ]),
  id: keyList<IdDeclaration>()(['column', 'kind', 'pattern', 'maxLength']),
  attribute: keyList<AttributeDeclaration>()([
    'schema', 'column', 'required', 'readOnly', 'createOnly', 'hidden', 'filterable', 'sortable', 'default', 'operators', 'derived', 'storage', 'computed', 'aggregate', 'rendered',
  ]),
  derived: keyList<DerivedAttribute>()(['columns', 'compute']),
  operator: keyList<FilterOperator>()(['name', 'schema', 'apply']),
  foreignKey: keyList<ToOneForeignKeyDeclaration>()(['kind', 'type', 'foreignKey', 'required', 'nullable', 'readOnly', 'createOnly']),
  inverse: keyList<InverseDeclaration>()(['kind', 'type', 'inverse', 'required', 'readOnly', 'createOnly', 'includeSize']),
  manyToMany: keyList<ManyToManyDeclaration>()(['kind', 'type', 'through', 'required', 'readOnly', 'createOnly', 'includeSize']),
  through: keyList<ManyToManyDeclaration['through']>()(['table', 'sourceKey', 'targetKey', 'values']),
  input: keyList<NonNullable<ResourceDeclaration['input']>>()(['create', 'update']),
  routes: keyList<RouteSelection>()(['list', 'create', 'read', 'update', 'delete']),
  pagination: keyList<NonNullable<ResourceDeclaration['pagination']>>()(['defaultSize', 'maxSize', 'includeSize']),
  rules: keyList<FieldRuleSet<AttributeDeclarations, RelationshipDeclarations, unknown>>()(['read', 'write']),
  hooks: keyList<ResourceHooks<AttributeDeclarations, RelationshipDeclarations, unknown>>()([
    'scope', 'beforeCreate', 'beforeUpdate', 'beforeDelete', 'beforeLink', 'afterCreate', 'afterUpdate', 'afterDelete',
  ]),
} as const
