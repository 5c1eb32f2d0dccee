import type { Static } from '@sinclair/typebox'
import type { AnyResourceDeclaration } from './declaration.js'
import type { AttributeDeclarations } from './fields.js'

/** The attributes a declaration declares (none: an empty object). */
type DeclaredAttributes<D> = D extends { readonly attributes?: infer A } ? NonNullable<A> extends AttributeDeclarations ? NonNullable<A> : never : never

/** The relationships a declaration declares. */
type DeclaredRelationships<D> = D extends { readonly relationships?: infer R } ? NonNullable<R> : never

type Simplify<T> = { [K in keyof T]: T[K] } & {}

type IsTrue<V> = V extends true ? true : false

/**
 * The `attributes` of the resource objects of a type, as responses carry them (without a sparse fieldset): every
 * attribute that is not `hidden`, derived ones included, typed from its TypeBox schema.
 *
 * @example
 * ```ts
 * type UserAttributes = ResourceAttributes<typeof user> // { name: string; age: number | null; display_name: string }
 * ```
 */
export type ResourceAttributes<D extends AnyResourceDeclaration> = Simplify<{
  -readonly [K in keyof DeclaredAttributes<D> as IsTrue<DeclaredAttributes<D>[K]['hidden']> extends true ? never : K]: Static<DeclaredAttributes<D>[K]['schema']>
}>

/** The attributes a client may write: not read-only, not derived. */
type WritableKeys<A extends AttributeDeclarations> = {
  [K in keyof A]: IsTrue<A[K]['readOnly']> extends true ? never : A[K] extends { readonly derived: object } | { readonly computed: unknown } | { readonly aggregate: object } ? never : K
}[keyof A]

/** Of the writable attributes, those a create body must send: `required` without a `default`. */
type RequiredKeys<A extends AttributeDeclarations> = {
  [K in WritableKeys<A>]: IsTrue<A[K]['required']> extends true ? A[K] extends { readonly default: unknown } ? never : K : never
}[WritableKeys<A>]

/**
 * The `data.attributes` of a create (POST) body of a type: the writable attributes, those that are `required` (and
 * have no `default`) mandatory. (A resource that declares its own `input.create` schema accepts `Static` of that.)
 *
 * @example
 * ```ts
 * const body: CreateAttributes<typeof user> = { name: 'ada' } // `name` required, `age` optional, `display_name` not allowed
 * ```
 */
export type CreateAttributes<D extends AnyResourceDeclaration> = Simplify<
  { -readonly [K in RequiredKeys<DeclaredAttributes<D>>]: Static<DeclaredAttributes<D>[K]['schema']> } &
  { -readonly [K in Exclude<WritableKeys<DeclaredAttributes<D>>, RequiredKeys<DeclaredAttributes<D>>>]?: Static<DeclaredAttributes<D>[K]['schema']> }
>

/**
 * The `data.attributes` of an update (PATCH) body of a type: the writable attributes that are not `createOnly`, each
 * optional. (A resource that declares its own `input.update` schema accepts `Static` of that.)
 */
export type UpdateAttributes<D extends AnyResourceDeclaration> = Simplify<{
  -readonly [K in WritableKeys<DeclaredAttributes<D>> as IsTrue<DeclaredAttributes<D>[K]['createOnly']> extends true ? never : K]?:
  Static<DeclaredAttributes<D>[K]['schema']>
}>

/** The relationship names of a type's declaration. */
export type RelationshipNames<D extends AnyResourceDeclaration> = keyof DeclaredRelationships<D> & string
