// Type tests of the hooks' public types: checked by `npm run typecheck` (part of `npm test`). Every
// `@ts-expect-error` line must be a compile error — if a mistake stopped being one, the unused directive fails the
// type check.
import { expectTypeOf } from 'expect-type'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import {
  defineResource, defineResourceFor, jsonApi, transformFilter,
  type FilterNode, type JsonApiAction, type JsonApiContext, type LinkChange, type StoredResource, type WriteInput,
} from '../../lib/index.js'
import type { ResourceHooks } from '../../lib/schema/hooks.js'
import type { HookName } from '../../lib/schema/resolved.js'

interface AppContext {
  readonly user: { readonly id: string } | undefined
}

const define = defineResourceFor<AppContext>()

const articleAttributes = {
  title: { schema: Type.String(), required: true },
  views: { schema: Type.Integer() },
  subtitle: { schema: Type.Union([Type.String(), Type.Null()]) },
  tags: { schema: Type.Array(Type.String()) },
} as const

const articleRelationships = {
  author: { kind: 'to-one', type: 'user', foreignKey: 'author_id' },
  comments: { kind: 'to-many', type: 'comment', inverse: 'article' },
} as const

export const article = define({
  type: 'article',
  attributes: articleAttributes,
  relationships: articleRelationships,
  hooks: {
    scope (context, where) {
      expectTypeOf(context).toEqualTypeOf<AppContext>()
      if (context.user === undefined) return false
      where.eq('title', 'x')
      where.eq('views', 3)
      where.eq('subtitle', null)
      where.eq('id', 1)
      where.in('tags', [['a']])
      // @ts-expect-error: not an attribute of the type
      where.eq('titel', 'x')
      // @ts-expect-error: a value of the wrong type
      where.eq('views', 'many')
      // @ts-expect-error: null only where eq/ne allow it
      where.gt('views', null)
      where.references('author', context.user.id)
      // @ts-expect-error: not a relationship of the type
      where.references('writer', '1')
      // @ts-expect-error: not a relationship of the type
      where.has('tags')
      return where.or(where.references('author', context.user.id), where.has('comments', (comment) => comment.eq('approved', true)))
    },
    beforeCreate (input, event) {
      expectTypeOf(input).toEqualTypeOf<WriteInput<typeof articleAttributes, typeof articleRelationships>>()
      expectTypeOf(input.attributes.title).toEqualTypeOf<string | undefined>()
      expectTypeOf(input.attributes.views).toEqualTypeOf<number | undefined>()
      expectTypeOf(input.attributes.subtitle).toEqualTypeOf<string | null | undefined>()
      expectTypeOf(input.attributes.tags).toEqualTypeOf<string[] | undefined>()
      expectTypeOf(input.relationships.author).toEqualTypeOf<string | null | undefined>()
      expectTypeOf(input.relationships.comments).toEqualTypeOf<string[] | undefined>()
      expectTypeOf(event.context).toEqualTypeOf<AppContext>()
      input.attributes.title = input.attributes.title?.trim()
      input.relationships.author = event.context.user?.id ?? null
      // @ts-expect-error: a wrong attribute name in a hook
      input.attributes.titel = 'x'
      // @ts-expect-error: a value the schema does not allow
      input.attributes.views = 'many'
      // @ts-expect-error: a to-one takes one id
      input.relationships.author = ['1']
      // @ts-expect-error: not a relationship
      input.relationships.writer = '1'
    },
    async beforeUpdate (input, event) {
      const current = await event.current()
      expectTypeOf(current).toEqualTypeOf<StoredResource<typeof articleAttributes>>()
      expectTypeOf(current.attributes.views).toEqualTypeOf<number>()
      expectTypeOf(event.id).toEqualTypeOf<string>()
      // @ts-expect-error: not an attribute of the type
      void current.attributes.titel
      return input
    },
    beforeLink (change) {
      expectTypeOf(change).toEqualTypeOf<LinkChange<typeof articleRelationships>>()
      expectTypeOf(change.relationship).toEqualTypeOf<'author' | 'comments'>()
      expectTypeOf(change.op).toEqualTypeOf<'replace' | 'add' | 'remove'>()
      // @ts-expect-error: there is no relationship 'writer' to compare with
      if (change.relationship === 'writer') throw new Error('unreachable')
    },
    afterCreate (stored, event) {
      expectTypeOf(stored.attributes.title).toEqualTypeOf<string>()
      expectTypeOf(stored.attributes.subtitle).toEqualTypeOf<string | null>()
      expectTypeOf(event.db.selectFrom).toBeFunction()
    },
    afterDelete (event) {
      expectTypeOf(event.id).toEqualTypeOf<string>()
    },
  },
})

// Without `defineResourceFor`, hooks receive the augmentable JsonApiContext.
defineResource({
  type: 'plain',
  attributes: { name: { schema: Type.String() } },
  hooks: {
    scope (context, where) {
      expectTypeOf(context).toEqualTypeOf<JsonApiContext>()
      expectTypeOf(where.eq('name', 'x')).toEqualTypeOf<FilterNode>()
      return true
    },
  },
})

// Hooks inline in the declaration are typed from its attributes, too.
defineResource({
  type: 'inline',
  attributes: { count: { schema: Type.Integer() } },
  hooks: {
    beforeCreate (input) {
      expectTypeOf(input.attributes.count).toEqualTypeOf<number | undefined>()
      // @ts-expect-error: not an attribute of this declaration
      input.attributes.total = 1
    },
  },
})

// @ts-expect-error: not a hook
define({ type: 'typo', hooks: { befroeCreate () {} } })

// @ts-expect-error: a hook's return must be the input or nothing
define({ type: 'returns', attributes: { a: { schema: Type.String() } }, hooks: { beforeCreate: () => 42 } })

// @ts-expect-error: a scope returns a condition, a boolean or nothing
define({ type: 'scope', hooks: { scope: () => 'everything' } })

// @ts-expect-error: an unknown member of the declaration
define({ type: 'misspelt', tabel: 'misspelt' })

// Relationship write rules are declaration flags.
define({ type: 'flags', relationships: { owner: { kind: 'to-one', type: 'flags', foreignKey: 'owner_id', createOnly: true, nullable: false } } })

// The plugin's context option and the route metadata.
const app = Fastify()
void app.register(jsonApi, { resources: [article], context: async (request) => ({ user: { id: String(request.headers['x-user-id']) } }) })
app.addHook('preHandler', async (request) => {
  const route = request.routeOptions.config.jsonapi
  expectTypeOf(route?.action).toEqualTypeOf<JsonApiAction | undefined>()
  expectTypeOf(route?.type).toEqualTypeOf<string | undefined>()
})

// transformFilter is "existing in, new out" over filter nodes.
expectTypeOf(transformFilter).returns.toEqualTypeOf<FilterNode>()

// The resolved graph names the hooks without importing their public types (which refer to its filter nodes): both
// lists of names are the same.
expectTypeOf<keyof ResourceHooks<any, any, any>>().toEqualTypeOf<HookName>()

// Field rules: typed from the declaration and the context, like a scope.
define({
  type: 'ruled',
  attributes: { phone: { schema: Type.Union([Type.String(), Type.Null()]) }, salary: { schema: Type.Integer() } },
  rules: {
    phone: {
      read (context, where) {
        expectTypeOf(context).toEqualTypeOf<AppContext>()
        // @ts-expect-error: not an attribute of this declaration
        where.eq('phon', 'x')
        return context.user === undefined ? false : where.eq('id', context.user.id)
      },
      write: () => true,
    },
    // @ts-expect-error: a salary is compared with a number
    salary: { read: (_context, where) => where.gt('salary', 'much') },
  },
})

// @ts-expect-error: rules name attributes of the declaration
define({ type: 'rules-typo', attributes: { phone: { schema: Type.String() } }, rules: { phon: { read: () => true } } })

// @ts-expect-error: a rule has `read` and `write`
define({ type: 'rules-kind', attributes: { phone: { schema: Type.String() } }, rules: { phone: { see: () => true } } })

// @ts-expect-error: a rule returns a condition or a boolean
define({ type: 'rules-return', attributes: { phone: { schema: Type.String() } }, rules: { phone: { read: () => 'yes' } } })
