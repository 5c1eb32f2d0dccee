/**
 * Mistakes fail at registration, not at the first request: unknown keys in the plugin options and in declarations
 * (with the closest known key suggested), and constant attribute defaults that do not match their schema.
 */
import t from 'tap'
import Fastify from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import { expectTypeOf } from 'expect-type'
import {
  jsonApi, JsonApiOptionsError, ResourceConfigError, type AttributeDeclaration, type DatabaseOptions, type DerivedAttribute, type FilterOperator,
  type FilterOptions, type IdDeclaration, type IncludeOptions, type InverseDeclaration, type JsonApiOptions, type ManyToManyDeclaration,
  type OpenApiOptions, type OperationsOptions, type PaginationOptions, type Repository, type ResourceDeclaration, type ResourceHooks,
  type RouteSelection, type SortOptions, type ToOneForeignKeyDeclaration,
} from '../../../lib/index.js'
import type { RegisterOptions } from 'fastify'
import { OPTION_KEYS } from '../../../lib/options.js'
import { DECLARATION_KEYS } from '../../../lib/schema/declaration.js'
import { closestName, type KeysOfUnion } from '../../../lib/schema/known-keys.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

/** A declaration as a user might write it, wrong on purpose: no type checking. */
type Loose = Record<string, any>

// ---------------------------------------------------------------------------------------------------------------
// The key lists are the interfaces' keys: a key added to a type but not to its list (or the other way) fails here
// (at type checking), besides failing to compile in lib/ itself.

type Listed<L extends readonly string[]> = L[number]

expectTypeOf<Listed<typeof OPTION_KEYS.options>>().toEqualTypeOf<keyof JsonApiOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.fastify>>().toEqualTypeOf<keyof RegisterOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.pagination>>().toEqualTypeOf<keyof PaginationOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.include>>().toEqualTypeOf<keyof IncludeOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.sort>>().toEqualTypeOf<keyof SortOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.filter>>().toEqualTypeOf<keyof FilterOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.operations>>().toEqualTypeOf<keyof OperationsOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.openapi>>().toEqualTypeOf<keyof OpenApiOptions>()
expectTypeOf<Listed<typeof OPTION_KEYS.database>>().toEqualTypeOf<keyof DatabaseOptions>()

expectTypeOf<Listed<typeof DECLARATION_KEYS.resource>>().toEqualTypeOf<keyof ResourceDeclaration>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.id>>().toEqualTypeOf<KeysOfUnion<IdDeclaration>>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.attribute>>().toEqualTypeOf<keyof AttributeDeclaration>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.derived>>().toEqualTypeOf<keyof DerivedAttribute>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.operator>>().toEqualTypeOf<keyof FilterOperator>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.foreignKey>>().toEqualTypeOf<keyof ToOneForeignKeyDeclaration>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.inverse>>().toEqualTypeOf<keyof InverseDeclaration>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.manyToMany>>().toEqualTypeOf<keyof ManyToManyDeclaration>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.through>>().toEqualTypeOf<keyof ManyToManyDeclaration['through']>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.input>>().toEqualTypeOf<keyof NonNullable<ResourceDeclaration['input']>>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.routes>>().toEqualTypeOf<keyof RouteSelection>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.pagination>>().toEqualTypeOf<keyof NonNullable<ResourceDeclaration['pagination']>>()
expectTypeOf<Listed<typeof DECLARATION_KEYS.hooks>>().toEqualTypeOf<keyof ResourceHooks<any, any, any>>()

t.test('every key list holds each key once', async (t) => {
  for (const [group, lists] of [['options', OPTION_KEYS], ['declarations', DECLARATION_KEYS]] as const) {
    for (const [name, keys] of Object.entries(lists) as Array<[string, readonly string[]]>) {
      t.equal(new Set(keys).size, keys.length, `${group}.${name}: no key twice`)
      t.ok(keys.length > 0, `${group}.${name}: not empty`)
    }
  }
  t.same(OPTION_KEYS.fastify, ['prefix', 'logLevel', 'logSerializers'], "the keys Fastify's register reads")
})

t.test('closestName: typos, case and cut-short names; nothing when nothing is close', async (t) => {
  t.equal(closestName('maxSzie', ['defaultSize', 'maxSize', 'unpaged']), 'maxSize', 'two letters swapped')
  t.equal(closestName('tabel', ['type', 'table', 'path']), 'table')
  t.equal(closestName('requried', ['required', 'readOnly']), 'required')
  t.equal(closestName('readonly', ['required', 'readOnly']), 'readOnly', 'case is ignored')
  t.equal(closestName('autor', ['book', 'author']), 'author', 'a missing letter')
  t.equal(closestName('to-on', ['to-one', 'to-many']), 'to-one')
  t.equal(closestName('allow', ['forbidden', 'allowed', 'required']), 'allowed', 'cut short')
  t.equal(closestName('colour', ['maxSize', 'defaultSize']), undefined, 'nothing close')
  t.equal(closestName('ab', ['xy', 'ac']), 'ac', 'one edit in a short name')
  t.equal(closestName('ab', ['xy']), undefined)
  t.equal(closestName('maxSize', ['maxSize']), undefined, 'a known name is not a typo of itself')
})

// ---------------------------------------------------------------------------------------------------------------
// Plugin options

const thing = (): ResourceDeclaration => ({ type: 'thing', attributes: { name: { schema: Type.String() } } })

/** A repository that is never called: option checks happen before any query. */
const idleRepository = {} as Repository

/** Registering with these options must fail with a JsonApiOptionsError of exactly this message. */
async function assertOptionsError (t: Test, label: string, options: Loose, message: string): Promise<void> {
  const app = Fastify()
  try {
    await app.register(jsonApi, { repository: idleRepository, resources: [thing()], ...options } as unknown as JsonApiOptions)
    t.fail(`${label}: registration should fail`)
  } catch (error) {
    if (!t.ok(error instanceof JsonApiOptionsError, `${label}: a JsonApiOptionsError`)) throw error
    t.equal((error as JsonApiOptionsError).name, 'JsonApiOptionsError', `${label}: name`)
    t.equal((error as JsonApiOptionsError).code, 'FJA_INVALID_OPTIONS', `${label}: code`)
    t.equal((error as Error).message, `fastify-jsonapi: ${message}`, `${label}: message`)
  } finally {
    await app.close()
  }
}

t.test('cannot register with an unknown option at any level; the closest one is suggested', async (t) => {
  const cases: Array<[string, Loose, string]> = [
    ['top level', { paginaton: { maxSize: 10 } }, "'paginaton' is not an option of the plugin (did you mean 'pagination'?)"],
    ['a misspelt db (before the missing db is reported)', { repository: undefined, dbb: {} }, "'dbb' is not an option of the plugin (did you mean 'db'?)"],
    ['pagination', { pagination: { maxSzie: 10 } }, "'maxSzie' is not an option of 'pagination' (did you mean 'maxSize'?)"],
    ['include', { include: { maxDeph: 2 } }, "'maxDeph' is not an option of 'include' (did you mean 'maxDepth'?)"],
    ['sort', { sort: { maxKey: 2 } }, "'maxKey' is not an option of 'sort' (did you mean 'maxKeys'?)"],
    ['filter', { filter: { maxNode: 2 } }, "'maxNode' is not an option of 'filter' (did you mean 'maxNodes'?)"],
    ['operations', { operations: { enable: false } }, "'enable' is not an option of 'operations' (did you mean 'enabled'?)"],
    ['openapi', { openapi: { error: [409] } }, "'error' is not an option of 'openapi' (did you mean 'errors'?)"],
    ['database', { database: { retryafter: 2 } }, "'retryafter' is not an option of 'database' (did you mean 'retryAfter'?)"],
    ['a Fastify option misspelt', { prefx: '/api' }, "'prefx' is not an option of the plugin (did you mean 'prefix'?)"],
    ['checkDatabaseSchema misspelt', { checkDatabaseSchemas: true }, "'checkDatabaseSchemas' is not an option of the plugin (did you mean 'checkDatabaseSchema'?)"],
    ['nothing close: the options are listed', { sort: { colour: 'red' } }, "'colour' is not an option of 'sort' (its options: maxKeys, maxDepth)"],
    ['an options object that is not one', { pagination: 10 }, '`pagination` must be an object'],
    ['an array for an options object', { database: [] }, '`database` must be an object'],
    ['checkDatabaseSchema not a boolean', { checkDatabaseSchema: 'yes' }, '`checkDatabaseSchema` must be true or false'],
    ['readDb misspelt', { readDB: {} }, "'readDB' is not an option of the plugin (did you mean 'readDb'?)"],
    ['readDb beside a custom repository', { readDb: {} },
      '`readDb` needs `db` and the default repository: reads of GET requests go to `readDb`, everything else to `db` (a custom `repository` chooses its databases itself)'],
    ['db not a Kysely instance', { repository: undefined, db: 'postgres://localhost/app' }, '`db` must be a Kysely instance'],
  ]
  for (const [label, options, message] of cases) await assertOptionsError(t, label, options, message)
})

t.test("Fastify's own register options are accepted alongside the plugin's", async (t) => {
  const app = Fastify()
  await app.register(jsonApi, {
    repository: idleRepository,
    resources: [thing()],
    prefix: '/api',
    logLevel: 'warn',
    logSerializers: {},
    pagination: { defaultSize: 5, maxSize: 50, unpaged: 'forbidden' },
    include: { maxDepth: 2, maxPaths: 4 },
    sort: { maxKeys: 3, maxDepth: 1 },
    filter: { maxDepth: 4, maxNodes: 20 },
    operations: { enabled: true, path: '/ops', maxOperations: 5 },
    openapi: { errors: [409] },
    database: { retries: 0, retryAfter: 2 },
    notFoundHandler: false,
    checkDatabaseSchema: true,
  })
  await app.ready()
  t.ok(app.hasRoute({ method: 'GET', url: '/api/thing' }), 'the prefix applies')
  t.ok(app.hasRoute({ method: 'POST', url: '/api/ops' }), 'the operations path applies')
  await app.close()
})

// ---------------------------------------------------------------------------------------------------------------
// Declarations

const author = (): Loose => ({
  type: 'author',
  table: 'authors',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { books: { kind: 'to-many', type: 'book', inverse: 'author' } },
})

const book = (): Loose => ({
  type: 'book',
  attributes: { title: { schema: Type.String() } },
  relationships: { author: { kind: 'to-one', type: 'author', foreignKey: 'author_id' } },
})

const tag = (): Loose => ({ type: 'tag', attributes: { label: { schema: Type.String() } } })

/** Resolving must fail with a ResourceConfigError of exactly this message. */
function assertDeclarationError (t: Test, label: string, declarations: Loose[], resource: string, field: string | undefined, message: string): void {
  let thrown: unknown
  try {
    resolveResources(declarations as ResourceDeclaration[])
  } catch (error) {
    thrown = error
  }
  if (!t.ok(thrown instanceof ResourceConfigError, `${label}: a ResourceConfigError`)) return
  const error = thrown as ResourceConfigError
  t.equal(error.name, 'ResourceConfigError', `${label}: name`)
  t.equal(error.code, 'FJA_INVALID_DECLARATION', `${label}: code`)
  t.equal(error.message, `fastify-jsonapi: resource '${resource}'${field === undefined ? '' : `, field '${field}'`}: ${message}`, `${label}: message`)
}

/** The author declaration with one attribute replaced. */
function authorWith (name: Loose): Loose[] {
  return [{ ...author(), attributes: { name } }, book()]
}

/** The book declaration with its `author` relationship replaced. */
function bookWith (relationship: Loose): Loose[] {
  return [{ ...book(), relationships: { author: relationship } }, author()]
}

t.test('the declarations of these tests resolve', async (t) => {
  const graph = resolveResources([author(), book(), tag()] as ResourceDeclaration[])
  t.same(graph.resources.map((resource) => resource.type), ['author', 'book', 'tag'])
})

t.test('cannot declare a derived attribute sortable or filterable', async (t) => {
  const derived = { schema: Type.String(), derived: { columns: ['name'], compute: (row: Record<string, unknown>) => String(row.name) } }
  assertDeclarationError(t, 'sortable', [{ ...tag(), attributes: { label: { ...derived, sortable: true } } }], 'tag', 'label',
    'a derived attribute cannot be sortable: it is computed after the rows are read (declare it `computed`, an SQL expression, to sort by it)')
  assertDeclarationError(t, 'filterable', [{ ...tag(), attributes: { label: { ...derived, filterable: true } } }], 'tag', 'label',
    'a derived attribute cannot be filterable: it is computed after the rows are read (declare it `computed`, an SQL expression, to filter by it)')
})

t.test('cannot declare a resource with an unknown key', async (t) => {
  assertDeclarationError(t, 'tabel', [{ ...author(), tabel: 'writers' }, book()], 'author', undefined,
    "'tabel' is not an option of a resource (did you mean 'table'?)")
  assertDeclarationError(t, 'relationship (singular)', [{ ...author(), relationship: {} }, book()], 'author', undefined,
    "'relationship' is not an option of a resource (did you mean 'relationships'?)")
  assertDeclarationError(t, 'nothing close', [{ ...tag(), colour: 'red' }], 'tag', undefined,
    "'colour' is not an option of a resource (its options: type, path, table, id, clientIds, attributes, relationships, input, routes, pagination, count, requireIfMatch, hooks, rules)")
  assertDeclarationError(t, 'id', [{ ...tag(), id: { colum: 'tag_id' } }], 'tag', 'id', "'colum' is not an option of an id (did you mean 'column'?)")
  assertDeclarationError(t, 'routes', [{ ...tag(), routes: { delet: false } }], 'tag', 'routes', "'delet' is not an option of 'routes' (did you mean 'delete'?)")
  assertDeclarationError(t, 'routes not an object', [{ ...tag(), routes: false }], 'tag', 'routes', 'must be an object')
  assertDeclarationError(t, 'pagination', [{ ...tag(), pagination: { maxSzie: 10 } }], 'tag', 'pagination',
    "'maxSzie' is not an option of a resource's 'pagination' (did you mean 'maxSize'?)")
  assertDeclarationError(t, 'input', [{ ...tag(), input: { creat: Type.Object({}) } }], 'tag', 'input', "'creat' is not an option of 'input' (did you mean 'create'?)")
  assertDeclarationError(t, 'hooks', [{ ...tag(), hooks: { beforeCreat () {} } }], 'tag', 'hooks.beforeCreat', "is not a hook (did you mean 'beforeCreate'?)")
  assertDeclarationError(t, 'hooks, nothing close', [{ ...tag(), hooks: { validate () {} } }], 'tag', 'hooks.validate',
    'is not a hook (the hooks: scope, beforeCreate, beforeUpdate, beforeDelete, beforeLink, afterCreate, afterUpdate, afterDelete)')
  assertDeclarationError(t, 'clientIds', [{ ...tag(), clientIds: 'allow' }], 'tag', 'clientIds',
    "unknown policy 'allow' (forbidden, allowed or required; did you mean 'allowed'?)")
  assertDeclarationError(t, 'id kind', [{ ...tag(), id: { kind: 'uid' } }], 'tag', 'id', "unknown id kind 'uid' (integer, bigint, uuid or text; did you mean 'uuid'?)")
})

t.test('cannot declare an unknown count strategy; true, false and the strategies resolve', async (t) => {
  const choices = "true or 'exact': count(*); 'estimated': the planner's estimate; false: no count"
  assertDeclarationError(t, 'estimate', [{ ...tag(), count: 'estimate' }], 'tag', 'count', `unknown count strategy 'estimate' (${choices}; did you mean 'estimated'?)`)
  assertDeclarationError(t, 'Exact', [{ ...tag(), count: 'Exact' }], 'tag', 'count', `unknown count strategy 'Exact' (${choices}; did you mean 'exact'?)`)
  assertDeclarationError(t, 'none (the resolved name, not an option)', [{ ...tag(), count: 'none' }], 'tag', 'count', `unknown count strategy 'none' (${choices})`)
  assertDeclarationError(t, 'a number', [{ ...tag(), count: 1 }], 'tag', 'count', `unknown count strategy 1 (${choices})`)
  assertDeclarationError(t, 'null', [{ ...tag(), count: null }], 'tag', 'count', `unknown count strategy null (${choices})`)
  const resolved = (count: unknown) => resolveResources([{ ...tag(), count } as ResourceDeclaration]).getResource('tag').count
  t.equal(resolved(undefined), 'exact', 'exact by default')
  t.equal(resolved(true), 'exact')
  t.equal(resolved('exact'), 'exact')
  t.equal(resolved('estimated'), 'estimated')
  t.equal(resolved(false), 'none')
})

t.test('cannot declare an attribute with an unknown key', async (t) => {
  assertDeclarationError(t, 'requried', authorWith({ schema: Type.String(), requried: true }), 'author', 'name',
    "'requried' is not an option of an attribute (did you mean 'required'?)")
  assertDeclarationError(t, 'readonly', authorWith({ schema: Type.String(), readonly: true }), 'author', 'name',
    "'readonly' is not an option of an attribute (did you mean 'readOnly'?)")
  assertDeclarationError(t, 'schma', authorWith({ schma: Type.String() }), 'author', 'name', "'schma' is not an option of an attribute (did you mean 'schema'?)")
  assertDeclarationError(t, 'derived', authorWith({ schema: Type.String(), derived: { columns: ['a'], compute: String, colums: ['b'] } }), 'author', 'name',
    "'colums' is not an option of 'derived' (did you mean 'columns'?)")
  const operator = { name: 'starts', schema: Type.String(), apply: () => { throw new Error('never') }, aply: true }
  assertDeclarationError(t, 'operator', authorWith({ schema: Type.String(), operators: [operator] }), 'author', 'name',
    "'aply' is not an option of the operator 'starts' (did you mean 'apply'?)")
  assertDeclarationError(t, 'storage', authorWith({ schema: Type.Object({}), storage: 'jsonb' }), 'author', 'name',
    "`storage` must be 'json' or 'native', not 'jsonb' (did you mean 'json'?)")
  assertDeclarationError(t, 'not an object', authorWith('string' as unknown as Loose), 'author', 'name', 'must be an object with a TypeBox `schema`')
})

t.test('cannot declare a relationship of any kind with an unknown key', async (t) => {
  const through = { table: 'book_tags', sourceKey: 'book_id', targetKey: 'tag_id' }
  const tagged = (relationship: Loose): Loose[] => [{ ...book(), relationships: { ...book().relationships, tags: relationship } }, author(), tag()]
  assertDeclarationError(t, 'foreign key', bookWith({ kind: 'to-one', type: 'author', foreignKey: 'author_id', nulable: true }), 'book', 'author',
    "'nulable' is not an option of a to-one foreign key relationship (did you mean 'nullable'?)")
  assertDeclarationError(t, 'foreign key misspelt', bookWith({ kind: 'to-one', type: 'author', foriegnKey: 'author_id' }), 'book', 'author',
    "'foriegnKey' is not an option of a relationship (did you mean 'foreignKey'?)")
  assertDeclarationError(t, 'inverse', [{ ...author(), relationships: { books: { kind: 'to-many', type: 'book', inverse: 'author', requird: true } } }, book()],
    'author', 'books', "'requird' is not an option of an inverse relationship (did you mean 'required'?)")
  assertDeclarationError(t, 'an inverse has no nullable',
    [{ ...author(), relationships: { books: { kind: 'to-many', type: 'book', inverse: 'author', nullable: true } } }, book()], 'author', 'books',
    "'nullable' is not an option of an inverse relationship (its options: kind, type, inverse, required, readOnly, createOnly, includeSize)")
  assertDeclarationError(t, 'many-to-many', tagged({ kind: 'to-many', type: 'tag', through, readonly: true }), 'book', 'tags',
    "'readonly' is not an option of a many-to-many relationship (did you mean 'readOnly'?)")
  assertDeclarationError(t, 'through', tagged({ kind: 'to-many', type: 'tag', through: { ...through, targetkey: 'x' } }), 'book', 'tags',
    "'targetkey' is not an option of 'through' (did you mean 'targetKey'?)")
  assertDeclarationError(t, 'two storages', bookWith({ kind: 'to-one', type: 'author', foreignKey: 'author_id', inverse: 'books' }), 'book', 'author',
    'give one of `foreignKey`, `inverse` or `through`, not `foreignKey` and `inverse`')
  assertDeclarationError(t, 'kind to-on', bookWith({ kind: 'to-on', type: 'author', foreignKey: 'author_id' }), 'book', 'author',
    "`kind` must be 'to-one' or 'to-many' (did you mean 'to-one'?)")
  assertDeclarationError(t, 'kind missing', bookWith({ type: 'author', foreignKey: 'author_id' }), 'book', 'author', "`kind` must be 'to-one' or 'to-many'")
  assertDeclarationError(t, "type 'autor'", bookWith({ kind: 'to-one', type: 'autor', foreignKey: 'author_id' }), 'book', 'author',
    "the related type 'autor' is not declared (did you mean 'author'? the declared types: book, author)")
  assertDeclarationError(t, 'type far from any', bookWith({ kind: 'to-one', type: 'publisher', foreignKey: 'publisher_id' }), 'book', 'author',
    "the related type 'publisher' is not declared (the declared types: book, author)")
  assertDeclarationError(t, 'inverse misspelt', [{ ...author(), relationships: { books: { kind: 'to-many', type: 'book', inverse: 'autor' } } }, book()],
    'author', 'books', "the inverse relationship 'book.autor' is not declared (did you mean 'author'?)")
  assertDeclarationError(t, 'not an object', bookWith('author' as unknown as Loose), 'book', 'author', 'must be an object ({ kind, type, … })')
})

t.test('a wrong declaration fails at register(), before ready()', async (t) => {
  const app = Fastify()
  const resources = authorWith({ schema: Type.String(), requried: true }) as ResourceDeclaration[]
  await t.rejects(async () => { await app.register(jsonApi, { repository: idleRepository, resources }) }, {
    name: 'ResourceConfigError',
    code: 'FJA_INVALID_DECLARATION',
    message: "fastify-jsonapi: resource 'author', field 'name': 'requried' is not an option of an attribute (did you mean 'required'?)",
  })
  await app.close()
})

// ---------------------------------------------------------------------------------------------------------------
// Defaults

t.test('cannot declare a constant default that does not match the schema', async (t) => {
  const cases: Array<[string, TSchema, unknown, string]> = [
    ['a string for an integer', Type.Integer(), 'none', '"none" does not match the attribute\'s schema: Expected integer'],
    ['a string for a nullable integer', Type.Union([Type.Integer(), Type.Null()]), 'none',
      '"none" does not match the attribute\'s schema: expected integer or null, got "none"'],
    ['null for a non-nullable string', Type.String(), null, 'null does not match the attribute\'s schema: Expected string'],
    ['undefined (written as null)', Type.String(), undefined, 'undefined (written as null) does not match the attribute\'s schema: Expected string'],
    ['not a date', Type.String({ format: 'date' }), '2024-02-30', '"2024-02-30" does not match the attribute\'s schema: Expected string to match \'date\' format'],
    ['too short', Type.String({ minLength: 3 }), 'ab', '"ab" does not match the attribute\'s schema: Expected string length greater or equal to 3'],
    ['an array member', Type.Array(Type.String()), ['a', 2], '["a",2] does not match the attribute\'s schema: at /1: Expected string'],
    ['a member of an object', Type.Object({ colour: Type.String() }), {}, '{} does not match the attribute\'s schema: at /colour: is required'],
    ['a BigInt for an int64 string', Type.String({ format: 'int64' }), 10n, '10n does not match the attribute\'s schema: Expected string'],
    ['a long value is shortened', Type.Integer(), 'x'.repeat(100), `"${'x'.repeat(56)}... does not match the attribute's schema: Expected integer`],
  ]
  for (const [label, schema, value, message] of cases) {
    assertDeclarationError(t, label, authorWith({ schema, default: value }), 'author', 'name', `the \`default\` ${message}`)
  }
  assertDeclarationError(t, 'a default on a derived attribute', authorWith({ schema: Type.String(), default: 'x', derived: { columns: ['a'], compute: String } }),
    'author', 'name', 'a derived, computed or aggregate attribute is never stored: its `default` would never be written')
})

t.test('defaults that match their schema, and functions, are accepted', async (t) => {
  const accepted: Array<[string, TSchema, unknown]> = [
    ['a string', Type.String(), 'active'],
    ['null for a nullable string', Type.Union([Type.String(), Type.Null()]), null],
    ['undefined for a nullable string', Type.Union([Type.String(), Type.Null()]), undefined],
    ['an empty array', Type.Array(Type.String()), []],
    ['a date', Type.String({ format: 'date' }), '2024-02-29'],
    ['an exact number', Type.String({ format: 'int64' }), '9007199254740993'],
    ['an object', Type.Object({ colour: Type.String() }), { colour: 'red' }],
    ['a function (called per create, so not checked here)', Type.Integer(), () => 'not checked'],
  ]
  for (const [label, schema, value] of accepted) {
    const graph = resolveResources(authorWith({ schema, default: value }) as ResourceDeclaration[])
    const attribute = graph.getResource('author').attributes.get('name')
    t.ok(attribute?.hasDefault, `${label}: has a default`)
    t.equal(attribute?.defaultValue, value, `${label}: kept as declared`)
  }
})

t.test('cannot declare an aggregate or a computed attribute that cannot work', async (t) => {
  const withAttribute = (attribute: Loose): Loose[] => [{ ...author(), attributes: { ...author().attributes, counted: attribute } }, book()]
  const cases: Array<[string, Loose, string]> = [
    ['an unknown function', { schema: Type.Integer(), aggregate: { total: 'books' } }, "`aggregate` is one of { count: '<relationship>' }, { sum | min | max | avg: '<relationship>.<attribute>' }"],
    ['two functions', { schema: Type.Integer(), aggregate: { count: 'books', sum: 'books.id' } }, "`aggregate` is one of { count: '<relationship>' }, { sum | min | max | avg: '<relationship>.<attribute>' }"],
    ['a sum without an attribute', { schema: Type.Integer(), aggregate: { sum: 'books' } }, "`sum` takes '<relationship>.<attribute>' (the related attribute it aggregates), not 'books'"],
    ['an unknown relationship', { schema: Type.Integer(), aggregate: { count: 'bookz' } }, "the aggregate's 'bookz' is not a relationship of 'author' (did you mean 'books'?)"],
    ['a to-one relationship last', { schema: Type.Integer(), aggregate: { count: 'books.author' } }, "the aggregate's 'books' is a to-many relationship: only its last step may be (the steps before it are to-one)"],
    ['an unknown related attribute', { schema: Type.Integer(), aggregate: { max: 'books.titel' } }, "'titel' is not a stored attribute of 'book' (did you mean 'title'?)"],
    ['a sum of text', { schema: Type.Integer(), aggregate: { sum: 'books.title' } }, "`sum` adds numbers: 'book.title' is string"],
    ['a count that is not a number', { schema: Type.String(), aggregate: { count: 'books' } }, 'the schema of a `count` aggregate is a number (Type.Integer(), Type.Number()), not string'],
    ['a writable aggregate', { schema: Type.Integer(), aggregate: { count: 'books' }, readOnly: false }, 'a computed or aggregate attribute is read-only: it is never stored'],
    ['an aggregate with a column', { schema: Type.Integer(), aggregate: { count: 'books' }, column: 'n' }, 'give one of `aggregate`, `column`: they are different ways to get the value'],
    ['computed and derived', { schema: Type.String(), computed: () => undefined, derived: { columns: ['name'], compute: () => '' } }, 'give one of `derived`, `computed`: they are different ways to get the value'],
    ['computed that is no function', { schema: Type.String(), computed: 'upper(name)' }, '`computed` must be a function that returns an SQL expression'],
    ['an unknown rendering', { schema: Type.Integer(), aggregate: { count: 'books' }, rendered: 'never' }, "`rendered` must be 'always' or 'on-request', not 'never'"],
  ]
  for (const [label, attribute, message] of cases) assertDeclarationError(t, label, withAttribute(attribute), 'author', 'counted', message)
})

t.test('cannot declare a field rule that cannot apply', async (t) => {
  const rule = (): boolean => true
  const withRules = (rules: unknown, attributes: Loose = author().attributes as Loose): Loose[] => [{ ...author(), attributes, rules }, book()]
  const cases: Array<[string, unknown, string, string]> = [
    ['rules that are no object', 'owner-only', 'rules', 'must be an object of field rules by attribute name'],
    ['an unknown attribute', { nmae: { read: rule } }, 'rules.nmae', "is not an attribute (did you mean 'name'?)"],
    ['a relationship', { books: { read: rule } }, 'rules.books', 'is not an attribute (field rules are declared for attributes)'],
    ['a rule that is no object', { name: rule }, 'rules.name', 'must be an object with `read` and/or `write`'],
    ['an unknown kind', { name: { raed: rule } }, 'rules.name', "'raed' is not an option of a field rule (did you mean 'read'?)"],
    ['a read rule that is no function', { name: { read: true } }, 'rules.name.read', 'must be a function of the context and `where` that returns a condition, true or false'],
  ]
  for (const [label, rules, field, message] of cases) assertDeclarationError(t, label, withRules(rules), 'author', field, message)
  assertDeclarationError(t, 'a write rule of a read-only attribute',
    withRules({ born: { write: rule } }, { ...author().attributes as Loose, born: { schema: Type.String(), readOnly: true } }),
    'author', 'rules.born.write', 'the attribute is never written by a client: a write rule would never apply')
  assertDeclarationError(t, 'an aggregate of an attribute with a read rule', [
    { ...author(), attributes: { ...author().attributes as Loose, longest: { schema: Type.String(), aggregate: { max: 'books.title' } } } },
    { ...book(), rules: { title: { read: rule } } },
  ], 'author', 'longest', "'book.title' has a read rule: an aggregate of it would disclose what the rule hides")
  t.ok(resolveResources(withRules({ name: { read: rule, write: rule } }) as ResourceDeclaration[]), 'read and write rules of a stored attribute resolve')
})
