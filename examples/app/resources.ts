/**
 * The resource types of the example application: the reference service that the docs quote and the tests drive.
 *
 * Every attribute that is stored and visible is filterable and sortable by default, so those flags are left unset.
 */
import { Type } from '@sinclair/typebox'
import { sql, type Expression, type RawBuilder } from 'kysely'
import { defineOperator, defineResource, defineResourceFor, defineResources, JsonApiError, type ComputedAttribute, type FilterBuilder, type FilterNode, type WriteInput } from '../../lib/index.js'

/**
 * The context of a request of the example app (see `context.ts`): the acting user named by `X-User-Id`, or none for
 * an anonymous request. Every hook below receives it.
 */
export interface ExampleContext {
  readonly user: { readonly id: string } | undefined
}

/** `defineResource` whose hooks receive the example's context. */
const defineExampleResource = defineResourceFor<ExampleContext>()

/**
 * `photo.words` `jsonb_contains`: `val` is a JSON object; rows whose `words` contain it (PostgreSQL `@>`).
 *
 * filter=[{"name":"words","op":"jsonb_contains","val":{"sea":1}}] → "r0"."words" @> '{"sea":1}'::jsonb
 */
export const jsonbContains = defineOperator({
  name: 'jsonb_contains',
  schema: Type.Record(Type.String(), Type.Unknown()),
  apply: ({ column, value, engine }) => {
    if (engine === 'postgres') return sql<boolean>`${column} @> ${JSON.stringify(value)}::jsonb`
    // MariaDB/MySQL: JSON_CONTAINS is containment as `@>` is, for an object.
    if (engine === 'mysql') return sql<boolean>`(json_type(${column}) = 'OBJECT' and json_contains(${column}, ${JSON.stringify(value)}))`
    // SQLite (JSON text): every top-level member of `val` is a member of the object, equal as JSON (keys compared as
    // keys, never spliced into a JSON path).
    return sql<boolean>`json_type(${column}) = 'object' and not exists (select 1 from json_each(${JSON.stringify(value)}) as m where not exists (select 1 from json_each(${column}) as c where c.key = m.key and c.type = m.type and json_quote(c.value) = json_quote(m.value)))`
  },
})

/**
 * `user.words` `in`: `val` is a string or an array of strings; rows whose `words` list holds any of them
 * (PostgreSQL array overlap `&&`).
 *
 * filter=[{"name":"words","op":"in","val":["red","blue"]}] → "r0"."words" && ARRAY['red','blue']::text[]
 */
export const wordsIn = defineOperator({
  name: 'in',
  schema: Type.Union([Type.String(), Type.Array(Type.String())]),
  apply: ({ column, value, engine }) => {
    const words = typeof value === 'string' ? [value] : value
    if (engine === 'postgres') return sql<boolean>`${column} && ${words}::text[]`
    // MariaDB/MySQL (a JSON array of strings): it contains one of the words.
    if (engine === 'mysql') {
      if (words.length === 0) return sql<boolean>`false`
      return sql<boolean>`(${sql.join(words.map((word) => sql`json_contains(${column}, ${JSON.stringify(word)})`), sql` or `)})`
    }
    // SQLite (a JSON array of strings): one of its elements is one of the words.
    return sql<boolean>`exists (select 1 from json_each(${column}) as w where w.value in (select value from json_each(${JSON.stringify(words)})))`
  },
})

/** A nullable string on the wire. */
const NullableString = () => Type.Union([Type.String(), Type.Null()])

/** A date on the wire: `YYYY-MM-DD`. */
const DateString = () => Type.String({ format: 'date' })

/** A name part that counts as "set" for `display_name`: a string with something besides spaces; else NULL. */
function present (part: Expression<unknown>): RawBuilder<string | null> {
  return sql<string | null>`case when trim(${part}) <> ${sql.lit('')} then ${part} end`
}

/**
 * `display_name`, computed by the database: first and last name joined by one space when both are set, the one that
 * is set when only one is, `name` when neither is. One SQL expression for every engine (`concat_ws` skips NULLs), so
 * it can be filtered, sorted and paged by cursor like a stored column.
 */
export const displayName: ComputedAttribute = ({ column }) =>
  sql<string>`coalesce(nullif(concat_ws(${sql.lit(' ')}, ${present(column('first_name'))}, ${present(column('last_name'))}), ${sql.lit('')}), ${column('name')}, ${sql.lit('')})`

// A person: owns computers, belongs to a group, has one bio, many posts and at most one workplace.
/**
 * The acting user's own user: `where.eq('id', …)`; no user for an anonymous request, nor where the resources are
 * served without the example's context (an app that registers them without its `context` option).
 */
function ownUser (context: ExampleContext | undefined, where: FilterBuilder<any, any>): FilterNode | boolean {
  const user = context?.user
  return user === undefined ? false : where.eq('id', user.id)
}

export const user = defineExampleResource({
  type: 'user',
  path: '/users',
  table: 'users',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
    first_name: { schema: NullableString() },
    last_name: { schema: NullableString() },
    display_name: { schema: Type.String(), computed: displayName },
    email: { schema: NullableString() },
    // An `integer` column: the schema keeps values in its range, so an out-of-range age is a 422 with a pointer.
    age: { schema: Type.Union([Type.Integer({ minimum: 0, maximum: 2147483647 }), Type.Null()]) },
    status: { schema: Type.String(), default: 'active' },
    birth_date: { schema: Type.Union([DateString(), Type.Null()]) },
    gender: { schema: NullableString() },
    // A PostgreSQL `text[]` column: stored natively, not as JSON.
    words: { schema: Type.Array(Type.String()), default: [], storage: 'native', operators: [wordsIn] },
    // Set by the column default `current_date`.
    date_create: { schema: DateString(), readOnly: true },
    // How many computers the user owns, counted by the database; rendered when `fields[user]` names it.
    computer_count: { schema: Type.Integer(), aggregate: { count: 'computers' } },
    // Private to its user: see `rules` below.
    phone: { schema: NullableString() },
  },
  relationships: {
    computers: { kind: 'to-many', type: 'computer', inverse: 'owner' },
    group: { kind: 'to-one', type: 'group', foreignKey: 'group_id' },
    bio: { kind: 'to-one', type: 'user_bio', inverse: 'user' },
    posts: { kind: 'to-many', type: 'post', inverse: 'user' },
    workplace: { kind: 'to-one', type: 'workplace', inverse: 'user' },
    // Private notes: the note type's scope decides which of them a request sees; never written through the user.
    notes: { kind: 'to-many', type: 'note', inverse: 'owner', readOnly: true },
  },
  // A phone number is read and written by its own user only: absent from every other request's documents, and null
  // for its filters, sorts and cursors; writing it on another user (or creating a user with one) is a 403.
  rules: {
    phone: { read: ownUser, write: ownUser },
  },
})

// A computer: `owner` and `user` are two names for the same link (the `owner_id` column).
export const computer = defineResource({
  type: 'computer',
  path: '/computers',
  table: 'computers',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    serial: { schema: NullableString() },
    name: { schema: NullableString() },
  },
  relationships: {
    owner: { kind: 'to-one', type: 'user', foreignKey: 'owner_id' },
    user: { kind: 'to-one', type: 'user', foreignKey: 'owner_id' },
  },
})

// A user's biography: one per user; `birth_city` is required on create and on update.
export const userBio = defineResource({
  type: 'user_bio',
  path: '/user-bio',
  table: 'user_bios',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    birth_city: { schema: Type.String(), required: true },
    favourite_movies: { schema: NullableString() },
  },
  relationships: {
    user: { kind: 'to-one', type: 'user', foreignKey: 'user_id', required: true },
  },
  input: {
    update: Type.Object({
      birth_city: Type.String(),
      favourite_movies: Type.Optional(NullableString()),
    }, { additionalProperties: false }),
  },
})

type PostAttributes = typeof postAttributes
const postAttributes = {
  title: { schema: Type.String(), required: true },
  body: { schema: Type.String(), default: '' },
} as const

/**
 * The business rules of a post's title, on every write path (POST, PATCH, related routes, `/operations`): stored
 * without surrounding white space, and never containing the word "forbidden" (422 `title_forbidden`).
 */
function checkTitle (input: WriteInput<PostAttributes, Record<never, never>>): void {
  const title = input.attributes.title
  if (title === undefined) return
  const trimmed = title.trim()
  if (/\bforbidden\b/i.test(trimmed)) {
    throw new JsonApiError({
      status: 422,
      code: 'title_forbidden',
      title: 'Forbidden title',
      detail: 'a title must not contain the word "forbidden"',
      source: { pointer: '/data/attributes/title' },
    })
  }
  input.attributes.title = trimmed
}

// A post written by a user.
export const post = defineExampleResource({
  type: 'post',
  path: '/posts',
  table: 'posts',
  id: { column: 'id', kind: 'integer' },
  attributes: postAttributes,
  relationships: {
    user: { kind: 'to-one', type: 'user', foreignKey: 'user_id', required: true },
  },
  hooks: {
    beforeCreate: checkTitle,
    beforeUpdate: checkTitle,
  },
})

/** 401: the request names no acting user. */
function signInFirst (): JsonApiError {
  return new JsonApiError({
    status: 401,
    code: 'unauthenticated',
    title: 'Unauthenticated',
    detail: 'name the acting user in the X-User-Id header',
    source: { header: 'X-User-Id' },
  })
}

// A private note: visible to its owner only, created by (and for) the acting user, never handed to someone else.
export const note = defineExampleResource({
  type: 'note',
  path: '/notes',
  table: 'notes',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    text: { schema: Type.String(), required: true },
  },
  relationships: {
    // Set by the server on create (beforeCreate), never changed afterwards.
    owner: { kind: 'to-one', type: 'user', foreignKey: 'owner_id', createOnly: true, nullable: false },
  },
  hooks: {
    // A request sees exactly the notes of its acting user; an anonymous one sees none.
    scope: (context, where) => context.user === undefined ? false : where.references('owner', context.user.id),
    beforeCreate (input, { context }) {
      if (context.user === undefined) throw signInFirst()
      const owner = input.relationships.owner
      if (owner === undefined) {
        input.relationships.owner = context.user.id
      } else if (owner !== context.user.id) {
        throw new JsonApiError({
          status: 403,
          code: 'not_your_note',
          title: 'Forbidden',
          detail: 'a note belongs to the user who writes it',
          source: { pointer: '/data/relationships/owner' },
        })
      }
    },
  },
})

// A workplace: at most one per user (unique `user_id`).
export const workplace = defineResource({
  type: 'workplace',
  path: '/workplaces',
  table: 'workplaces',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
  },
  relationships: {
    user: { kind: 'to-one', type: 'user', foreignKey: 'user_id' },
  },
})

// A group of users.
export const group = defineResource({
  type: 'group',
  path: '/groups',
  table: 'groups',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
  },
  relationships: {
    users: { kind: 'to-many', type: 'user', inverse: 'group' },
  },
})

// A parent: its association rows (`children`) and, through them, its children (`kids`).
export const parent = defineResource({
  type: 'parent',
  path: '/parents',
  table: 'parents',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
    // How many kids the parent has (many-to-many: its association rows), counted by the database.
    kid_count: { schema: Type.Integer(), aggregate: { count: 'kids' } },
  },
  relationships: {
    children: { kind: 'to-many', type: 'parent-to-child-association', inverse: 'parent' },
    kids: {
      kind: 'to-many',
      type: 'child',
      through: {
        table: 'parent_to_child_associations',
        sourceKey: 'parent_id',
        targetKey: 'child_id',
        values: { extra_data: null },
      },
    },
  },
})

// A child: its association rows (`parents`) and, through them, its parents (`guardians`).
export const child = defineResource({
  type: 'child',
  path: '/children',
  table: 'children',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
  },
  relationships: {
    parents: { kind: 'to-many', type: 'parent-to-child-association', inverse: 'child' },
    guardians: {
      kind: 'to-many',
      type: 'parent',
      through: {
        table: 'parent_to_child_associations',
        sourceKey: 'child_id',
        targetKey: 'parent_id',
        values: { extra_data: null },
      },
    },
  },
})

// The join row between a parent and a child, with its own data; a (parent, child) pair is unique.
export const parentToChildAssociation = defineResource({
  type: 'parent-to-child-association',
  path: '/parent-to-child-association',
  table: 'parent_to_child_associations',
  id: { column: 'id', kind: 'integer' },
  attributes: {
    extra_data: { schema: Type.Union([Type.String({ maxLength: 50 }), Type.Null()]) },
  },
  relationships: {
    parent: { kind: 'to-one', type: 'parent', foreignKey: 'parent_id', required: true },
    child: { kind: 'to-one', type: 'child', foreignKey: 'child_id', required: true },
  },
})

// A photo, with a UUID id generated by the database and a free-form JSON object stored as `jsonb`.
export const photo = defineResource({
  type: 'photo',
  path: '/photos',
  table: 'photos',
  id: { column: 'id', kind: 'uuid' },
  attributes: {
    name: { schema: Type.String(), required: true },
    words: { schema: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]), storage: 'json', operators: [jsonbContains] },
  },
})

/**
 * Every resource type of the example application, in the order they are registered. `defineResources` checks at
 * compile time that every relationship points at one of them.
 */
export const resources = defineResources([
  user,
  computer,
  userBio,
  post,
  workplace,
  group,
  parent,
  child,
  parentToChildAssociation,
  photo,
  note,
])
