import type { Static } from '@sinclair/typebox'
import type { Kysely } from 'kysely'
import type { AttributeDeclarations, RelationshipDeclarations } from './fields.js'
import type { FilterNode } from './filter-nodes.js'
import type { FilterBuilder } from './filter-builder.js'

/**
 * The request context every hook receives: what the plugin's `context(request)` option returns. Augment it once for
 * the application, and every `defineResource` types its hooks' context with it.
 *
 * @example
 * ```ts
 * declare module 'fastify-jsonapi' {
 *   interface JsonApiContext {
 *     readonly user: { readonly id: string } | undefined
 *   }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JsonApiContext {}

/** The wire values of a resource's attributes, typed from their TypeBox schemas. */
export type AttributeValues<A extends AttributeDeclarations> = {
  -readonly [K in keyof A]: Static<A[K]['schema']>
}

/** The linkage of a resource's relationships as ids: a to-one's id or `null`, a to-many's ids. */
export type RelationshipIds<R extends RelationshipDeclarations> = {
  -readonly [K in keyof R]: R[K] extends { readonly kind: 'to-many' } ? string[] : string | null
}

/**
 * What a write sets, as a hook sees it: the attributes and relationships the client sent (after the library's
 * checks), which the hook may change, add to or remove from. A `beforeCreate` hook may also set read-only and hidden
 * attributes and read-only relationships: they are the server's to set.
 */
export interface WriteInput<A extends AttributeDeclarations, R extends RelationshipDeclarations> {
  /** A client-generated id (create), or the id of the resource (update). */
  id: string | undefined
  attributes: Partial<AttributeValues<A>>
  relationships: Partial<RelationshipIds<R>>
}

/** A resource as stored: its id and every attribute's wire value (hidden ones included). */
export interface StoredResource<A extends AttributeDeclarations> {
  readonly id: string
  readonly attributes: AttributeValues<A>
}

/** What every write hook receives besides its subject. */
export interface HookEvent<C> {
  /** The request's context (one per request; one per `/operations` batch). */
  readonly context: C
  /** The resource type. */
  readonly type: string
  /**
   * The write's transaction (Kysely): what a hook reads or writes with it (an audit row, a counter) commits or rolls
   * back with the write. Write hooks always run inside a transaction. (A custom repository provides it as its
   * `kysely` member; without one, reading `db` throws.)
   */
  readonly db: Kysely<any>
}

/** What the hooks of a change to an existing resource receive. */
export interface ExistingResourceEvent<A extends AttributeDeclarations, C> extends HookEvent<C> {
  /** The id of the resource. */
  readonly id: string
  /** Reads the resource as stored now, within the scope, inside the write's transaction (one statement). */
  readonly current: () => Promise<StoredResource<A>>
}

/** A change to a relationship of an existing resource, as `beforeLink` sees it. */
export type LinkChange<R extends RelationshipDeclarations> = {
  readonly [K in keyof R & string]: {
    /** The relationship. */
    readonly relationship: K
    /** `replace`: the whole linkage is set (PATCH); `add` / `remove`: members of a to-many (POST / DELETE). */
    readonly op: 'replace' | 'add' | 'remove'
    /** The ids: to-one `replace` → one id or `null`; otherwise the ids sent. */
    readonly ids: readonly string[] | null
  }
}[keyof R & string]

type Awaitable<T> = T | Promise<T>

/**
 * The application's rules for one resource type, typed from its declaration. Every hook may throw a `JsonApiError`
 * (401, 403, 404, 422 …) whose `source.pointer` is relative to the resource document (`/data/attributes/title`);
 * inside `/operations` the plugin rewrites it to `/atomic:operations/<i>/data/attributes/title`. Write hooks run inside
 * the write's transaction: a throw rolls everything back.
 */
export interface ResourceHooks<A extends AttributeDeclarations, R extends RelationshipDeclarations, C> {
  /**
   * The rows of this type the request may see and change. ANDed into every read and write of the type wherever it is
   * reached: collections, details, related and relationship routes, linkage, `include` at any depth, relationship
   * filters and sort paths of other types, counts, `UPDATE`/`DELETE`, the existence checks of link targets and
   * `/operations`. A row outside the scope does not exist for the request. Return a condition built with `where`,
   * `false` (no row) or `true`/`undefined` (every row). Called at most once per type and request; do asynchronous work
   * (loading memberships, say) in the plugin's `context` option.
   */
  scope?(context: C, where: FilterBuilder<A, R>): FilterNode | boolean | undefined
  /** Before a resource is created: may change `input` in place (or return a new one), or throw to refuse. */
  beforeCreate?(input: WriteInput<A, R>, event: HookEvent<C>): Awaitable<WriteInput<A, R> | void>
  /** Before a resource is updated (PATCH): `input` holds what the client sent; change it, or throw to refuse. */
  beforeUpdate?(input: WriteInput<A, R>, event: ExistingResourceEvent<A, C>): Awaitable<WriteInput<A, R> | void>
  /** Before a resource is deleted; throw to refuse. */
  beforeDelete?(event: ExistingResourceEvent<A, C>): Awaitable<void>
  /**
   * Before a relationship of an existing resource changes, whatever the route: a PATCH body (after `beforeUpdate`),
   * the relationship route, a related route's POST, or an operation. Throw to refuse; an error without a `source`
   * points at the linkage.
   */
  beforeLink?(change: LinkChange<R>, event: ExistingResourceEvent<A, C>): Awaitable<void>
  /** After a resource was created, in the same transaction. */
  afterCreate?(resource: StoredResource<A>, event: HookEvent<C>): Awaitable<void>
  /** After a resource was updated, in the same transaction. */
  afterUpdate?(resource: StoredResource<A>, event: HookEvent<C>): Awaitable<void>
  /** After a resource was deleted, in the same transaction. */
  afterDelete?(event: HookEvent<C> & { readonly id: string }): Awaitable<void>
}

/**
 * Who may read or write one field, decided per request: `true` (every row), `false` (no row), or a condition on the
 * row built with `where`, the same builder as `scope` (`where.eq('id', context.user.id)`: only on the acting user's
 * own row). Called at most once per field and request.
 */
export type FieldRule<A extends AttributeDeclarations, R extends RelationshipDeclarations, C> =
  (context: C, where: FilterBuilder<A, R>) => FilterNode | boolean

/**
 * The rules of one attribute. `read`: on a row where it does not hold, the attribute is absent from the resource object
 * on every route, and `filter`, `sort` and cursors see it as null there. `write`: a body that sets the attribute where
 * it does not hold is refused (403 at the attribute's pointer); for a create, the condition is checked on the created
 * row. See docs/authorization.md "Field rules".
 */
export interface FieldRuleSet<A extends AttributeDeclarations, R extends RelationshipDeclarations, C> {
  readonly read?: FieldRule<A, R, C>
  readonly write?: FieldRule<A, R, C>
}

/** The field rules of a resource type, by attribute name. */
export type FieldRules<A extends AttributeDeclarations, R extends RelationshipDeclarations, C> = {
  readonly [K in keyof A & string]?: FieldRuleSet<A, R, C>
}
