// Type tests of declarations: checked by `npm run typecheck` (part of `npm test`). Every `@ts-expect-error` line must
// be a compile error: if a mistake stopped being one, the unused directive fails the type check.
import { expectTypeOf } from 'expect-type'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import {
  defineOperator, defineOperatorFor, defineResource, defineResourceFor, defineResources,
  type AnyResourceDeclaration, type CreateAttributes, type DerivedRow, type RelationshipNames, type ResourceAttributes, type UpdateAttributes,
} from '../../lib/index.js'

// --- the four typos of issue 11, and their kin: unknown keys at every level are compile errors

defineResource({
  type: 'a',
  // @ts-expect-error: `requried` is not a key of an attribute
  attributes: { name: { schema: Type.String(), requried: true } },
})

// @ts-expect-error: `tabel` is not a key of a resource
defineResource({ type: 'b', tabel: 'bs' })

defineResource({
  type: 'c',
  // @ts-expect-error: `to-on` is not a relationship kind
  relationships: { owner: { kind: 'to-on', type: 'a', foreignKey: 'owner_id' } },
})

const writer = defineResource({ type: 'writer', path: '/writers' })
const post = defineResource({
  type: 'post',
  path: '/posts',
  relationships: { author: { kind: 'to-one', type: 'autor', foreignKey: 'author_id' } },
})
// @ts-expect-error: a relationship to `autor`, which is not one of the resources
defineResources([writer, post])
const fixedPost = defineResource({
  type: 'post',
  path: '/posts',
  relationships: { author: { kind: 'to-one', type: 'writer', foreignKey: 'author_id' } },
})
const resources = defineResources([writer, fixedPost])
expectTypeOf(resources).toEqualTypeOf<readonly [typeof writer, typeof fixedPost]>()
// resources built at run time (plain strings) are checked at registration only
const dynamic: AnyResourceDeclaration[] = [writer, post]
defineResources(dynamic)

defineResource({
  type: 'd',
  relationships: {
    // @ts-expect-error: a foreign-key relationship has no `inverse`
    owner: { kind: 'to-one', type: 'a', foreignKey: 'owner_id', inverse: 'things' },
  },
})
defineResource({
  type: 'e',
  relationships: {
    // @ts-expect-error: `nullable` belongs to foreign-key relationships only
    things: { kind: 'to-many', type: 'a', inverse: 'owner', nullable: true },
  },
})
defineResource({
  type: 'f',
  relationships: {
    // @ts-expect-error: `valuse` is not a key of `through`
    tags: { kind: 'to-many', type: 'a', through: { table: 't', sourceKey: 's', targetKey: 't', valuse: {} } },
  },
})
defineResource({
  type: 'g',
  attributes: {
    // @ts-expect-error: `column` is not a key of `derived`
    label: { schema: Type.String(), derived: { columns: ['a'], column: 'a', compute: (row: DerivedRow<'a'>) => String(row.a) } },
  },
})
defineResourceFor<{ tenant: string }>()({
  type: 'h',
  // @ts-expect-error: the same checks through defineResourceFor
  attributes: { name: { schema: Type.String(), sortabel: true } },
})

// --- derived.compute: its result is of the attribute's type; a function written apart reads the columns it names

function displayName (row: DerivedRow<'first_name' | 'last_name'>): string {
  // @ts-expect-error: not one of the columns
  void row.name
  return [row.first_name, row.last_name].filter((part) => typeof part === 'string').join(' ')
}
defineResource({
  type: 'i',
  attributes: { display_name: { schema: Type.String(), derived: { columns: ['first_name', 'last_name'], compute: displayName } } },
})
defineResource({
  type: 'j',
  attributes: {
    // @ts-expect-error: a number computed for a string attribute
    display_name: { schema: Type.String(), derived: { columns: ['name'], compute: (row: DerivedRow<'name'>) => String(row.name).length } },
  },
})

// inline, the row is a `Row` (column name → unknown driver value) and the result is checked all the same
defineResource({
  type: 'inline',
  attributes: {
    name: { schema: Type.String() },
    label: {
      schema: Type.String(),
      derived: {
        columns: ['name'],
        compute: (row) => {
          expectTypeOf(row.name).toEqualTypeOf<unknown>()
          return String(row.name)
        },
      },
    },
  },
})
defineResource({
  type: 'inline-wrong',
  attributes: {
    // @ts-expect-error: a boolean computed for a string attribute
    label: { schema: Type.String(), derived: { columns: ['name'], compute: (row) => row.name === 'x' } },
  },
})

// a declaration without attributes has none: its hooks cannot name one
defineResource({
  type: 'bare',
  hooks: {
    // @ts-expect-error: no attribute `name`
    scope: (_context, where) => where.eq('name', 'x'),
  },
})

// --- count: a boolean (true: exact, false: none) or a strategy

for (const count of [true, false, 'exact', 'estimated'] as const) defineResource({ type: 'counted', count })
expectTypeOf<NonNullable<AnyResourceDeclaration['count']>>().toEqualTypeOf<boolean | 'exact' | 'estimated'>()
// @ts-expect-error: `estimate` is not a count strategy (`estimated` is)
defineResource({ type: 'counted-typo', count: 'estimate' })
// @ts-expect-error: no count is `false`, not `'none'`
defineResource({ type: 'counted-none', count: 'none' })
// @ts-expect-error: not a number either
defineResource({ type: 'counted-number', count: 1 })

// --- custom operators: one declared for a column type fits only attributes of that type

const overlaps = defineOperatorFor<string[]>()({
  name: 'overlaps',
  schema: Type.Array(Type.String()),
  apply: ({ column, value }) => {
    expectTypeOf(value).toEqualTypeOf<string[]>()
    return sql<boolean>`${column} && ${value}::text[]`
  },
})
const anywhere = defineOperator({ name: 'anywhere', schema: Type.String(), apply: ({ column, value }) => sql<boolean>`${column}::text like ${value}` })
defineResource({
  type: 'k',
  attributes: {
    words: { schema: Type.Array(Type.String()), operators: [overlaps, anywhere] },
    name: { schema: Type.String(), operators: [anywhere] },
  },
})
defineResource({
  type: 'l',
  // @ts-expect-error: an operator for string[] columns on a number attribute
  attributes: { count: { schema: Type.Integer(), operators: [overlaps] } },
})

// --- Static-style helper types

const user = defineResource({
  type: 'user',
  path: '/users',
  attributes: {
    name: { schema: Type.String(), required: true },
    age: { schema: Type.Union([Type.Integer(), Type.Null()]) },
    status: { schema: Type.String(), required: true, default: 'active' },
    password: { schema: Type.String(), hidden: true },
    created: { schema: Type.String({ format: 'date' }), readOnly: true },
    code: { schema: Type.String(), createOnly: true },
    label: { schema: Type.String(), derived: { columns: ['name'], compute: (row: DerivedRow<'name'>) => String(row.name) } },
  },
  relationships: {
    group: { kind: 'to-one', type: 'group', foreignKey: 'group_id' },
    posts: { kind: 'to-many', type: 'post', inverse: 'author' },
  },
})
expectTypeOf(user.type).toEqualTypeOf<'user'>()
expectTypeOf<ResourceAttributes<typeof user>>().toEqualTypeOf<{
  name: string
  age: number | null
  status: string
  created: string
  code: string
  label: string
}>()
expectTypeOf<CreateAttributes<typeof user>>().toEqualTypeOf<{
  name: string
  age?: number | null
  status?: string
  password?: string
  code?: string
}>()
expectTypeOf<UpdateAttributes<typeof user>>().toEqualTypeOf<{
  name?: string
  age?: number | null
  status?: string
  password?: string
}>()
expectTypeOf<RelationshipNames<typeof user>>().toEqualTypeOf<'group' | 'posts'>()
// @ts-expect-error: `name` is required on create
export const missingName: CreateAttributes<typeof user> = { age: 3 }
// @ts-expect-error: a derived attribute is never written
export const writesLabel: CreateAttributes<typeof user> = { name: 'ada', label: 'x' }
// @ts-expect-error: a create-only attribute is not in an update
export const updatesCode: UpdateAttributes<typeof user> = { code: 'x' }

// --- computed attributes and aggregates: rendered, never written; `computed` returns an SQL expression

export const owner = defineResource({
  type: 'owner',
  attributes: {
    name: { schema: Type.String(), required: true },
    upper_name: { schema: Type.String(), computed: ({ column, engine }) => engine === 'sqlite' ? sql<string>`upper(${column('name')})` : sql<string>`upper(${column('name')})` },
    pet_count: { schema: Type.Integer(), aggregate: { count: 'pets' } },
  },
  relationships: { pets: { kind: 'to-many', type: 'pet', inverse: 'owner' } },
})
expectTypeOf<ResourceAttributes<typeof owner>>().toEqualTypeOf<{ name: string; upper_name: string; pet_count: number }>()
expectTypeOf<CreateAttributes<typeof owner>>().toEqualTypeOf<{ name: string }>()
expectTypeOf<UpdateAttributes<typeof owner>>().toEqualTypeOf<{ name?: string }>()

defineResource({
  type: 'owner2',
  // @ts-expect-error: an aggregate names its function: count, sum, min, max or avg
  attributes: { n: { schema: Type.Integer(), aggregate: { total: 'pets' } } },
})
