import t from 'tap'
import { Type } from '@sinclair/typebox'
import { resolveResources, ResourceConfigError } from '../../../lib/schema/resolve-resources.js'
import type { ResourceDeclaration } from '../../../lib/schema/declaration.js'
import { resources } from '../../../examples/app/resources.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

/** A declaration as a user might write it, wrong on purpose: no type checking. */
type Loose = Record<string, any>

const person = (): Loose => ({
  type: 'person',
  path: '/people',
  table: 'people',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { pets: { kind: 'to-many', type: 'pet', inverse: 'owner' } },
})

const pet = (): Loose => ({
  type: 'pet',
  attributes: { name: { schema: Type.String() } },
  relationships: { owner: { kind: 'to-one', type: 'person', foreignKey: 'owner_id' } },
})

function resolve (declarations: unknown) {
  return resolveResources(declarations as readonly ResourceDeclaration[])
}

/** Resolving must fail with a ResourceConfigError naming the resource (and the field, when given). */
function assertConfigError (t: Test, label: string, declarations: unknown, resource: string, field: string | undefined, message: RegExp): void {
  let thrown: unknown
  try {
    resolve(declarations)
  } catch (error) {
    thrown = error
  }
  if (!t.ok(thrown instanceof ResourceConfigError, `${label}: throws a ResourceConfigError`)) return
  const error = thrown as ResourceConfigError
  t.equal(error.name, 'ResourceConfigError', `${label}: name`)
  t.equal(error.code, 'FJA_INVALID_DECLARATION', `${label}: code`)
  const prefix = `fastify-jsonapi: resource '${resource}'${field === undefined ? '' : `, field '${field}'`}: `
  t.equal(error.message.slice(0, prefix.length), prefix, `${label}: names the resource${field === undefined ? '' : ' and the field'}`)
  t.match(error.message.slice(prefix.length), message, `${label}: says what is wrong`)
}

t.test('the example resources resolve', async (t) => {
  const graph = resolveResources(resources)
  t.same(graph.resources.map((resource) => resource.type), resources.map((declaration) => declaration.type))
  t.equal(graph.getResource('user').path, '/users')
  t.equal(graph.findResource('nothing'), undefined)
  t.throws(() => graph.getResource('nothing'), /unknown resource type 'nothing'/)
  t.same(graph.getResource('user').relationships.get('computers')?.storage, { kind: 'inverse', column: 'owner_id', nullable: true, inverseName: 'owner' })
  t.same(graph.getResource('user_bio').relationships.get('user')?.storage, { kind: 'foreign-key', column: 'user_id', nullable: false })
  t.same(graph.getResource('parent').relationships.get('kids')?.storage, {
    kind: 'join', table: 'parent_to_child_associations', sourceKey: 'parent_id', targetKey: 'child_id', values: { extra_data: null },
  })
})

t.test('the resources option', async (t) => {
  assertConfigError(t, 'empty', [], '(none)', undefined, /non-empty array/)
  assertConfigError(t, 'undefined', undefined, '(none)', undefined, /non-empty array/)
  assertConfigError(t, 'not an array', { type: 'person' }, '(none)', undefined, /non-empty array/)
})

t.test('type names and paths', async (t) => {
  assertConfigError(t, 'type with a space', [{ ...person(), type: 'my person' }, pet()], 'my person', undefined, /type name/)
  assertConfigError(t, 'type ending with -', [{ type: 'person-' }], 'person-', undefined, /type name/)
  assertConfigError(t, 'no type', [{ attributes: {} }], 'undefined', undefined, /type name/)
  assertConfigError(t, 'duplicate type', [person(), pet(), person()], 'person', undefined, /declared twice/)
  assertConfigError(t, 'duplicate path', [person(), { ...pet(), path: '/people' }], 'pet', undefined, /'\/people' is already used by resource 'person'/)
  assertConfigError(t, 'default path taken', [{ ...person(), path: '/pet' }, pet()], 'pet', undefined, /'\/pet' is already used by resource 'person'/)
  for (const path of ['people', '/people/', '/', '/pe//ople', '/people/:id', '/people?x=1']) {
    assertConfigError(t, `path ${path}`, [{ ...person(), path }, pet()], 'person', undefined, new RegExp(`'${path.replace(/[?/]/g, '\\$&')}'`))
  }
})

t.test('ids, tables and policies', async (t) => {
  assertConfigError(t, 'unknown id kind', [{ ...person(), id: { kind: 'serial' } }, pet()], 'person', 'id', /unknown id kind 'serial' \(integer, bigint, uuid or text\)/)
  assertConfigError(t, 'text id without a pattern', [{ ...person(), id: { kind: 'text' } }, pet()], 'person', 'id', /needs a `pattern`/)
  assertConfigError(t, 'pattern of an integer id', [{ ...person(), id: { pattern: '[0-9]+' } }, pet()], 'person', 'id', /`pattern` is for text ids only, not integer ids/)
  assertConfigError(t, 'id column', [{ ...person(), id: { column: 'id; drop table people' } }, pet()], 'person', 'id', /not a valid SQL identifier/)
  assertConfigError(t, 'table', [{ ...person(), table: 'people where 1=1' }, pet()], 'person', 'table', /not a valid SQL identifier/)
  assertConfigError(t, 'client id policy', [{ ...person(), clientIds: 'sometimes' }, pet()], 'person', 'clientIds', /unknown policy 'sometimes'/)
})

t.test('attributes', async (t) => {
  for (const name of ['id', 'type', 'links', 'relationships']) {
    assertConfigError(t, `reserved ${name}`, [{ ...person(), attributes: { [name]: { schema: Type.String() } } }, pet()], 'person', name, /reserved/)
  }
  assertConfigError(t, 'name with a space', [{ ...person(), attributes: { 'first name': { schema: Type.String() } } }, pet()], 'person', 'first name', /field names/)
  assertConfigError(t, 'no schema', [{ ...person(), attributes: { age: { required: true } } }, pet()], 'person', 'age', /`schema`/)
  assertConfigError(t, 'column', [{ ...person(), attributes: { age: { schema: Type.Integer(), column: 'age"; --' } } }, pet()], 'person', 'age', /not a valid SQL identifier/)
  assertConfigError(t, 'derived without compute', [{ ...person(), attributes: { label: { schema: Type.String(), derived: { columns: ['name'] } } } }, pet()], 'person', 'label', /`compute`/)
  assertConfigError(t, 'derived column', [{ ...person(), attributes: { label: { schema: Type.String(), derived: { columns: ['bad column'], compute: () => '' } } } }, pet()], 'person', 'label', /not a valid SQL identifier/)
  assertConfigError(t, 'attribute and relationship', [{ ...person(), attributes: { pets: { schema: Type.String() } } }, pet()], 'person', 'pets', /both an attribute and a relationship/)
  assertConfigError(t, 'input.create', [{ ...person(), input: { create: Type.String() } }, pet()], 'person', 'input.create', /Type\.Object/)
  assertConfigError(t, 'input.update', [{ ...person(), input: { update: { type: 'object' } } }, pet()], 'person', 'input.update', /Type\.Object/)
})

t.test('relationships', async (t) => {
  // `person` without its inverse `pets`, so that only the pet's relationship is at fault.
  const lone = (): Loose => ({ ...person(), relationships: {} })
  const withOwner = (owner: unknown): Loose => ({ ...pet(), relationships: { owner } })
  assertConfigError(t, 'unknown target type', [lone(), withOwner({ kind: 'to-one', type: 'human', foreignKey: 'owner_id' })], 'pet', 'owner', /'human' is not declared/)
  assertConfigError(t, 'unknown kind', [lone(), withOwner({ kind: 'one', type: 'person', foreignKey: 'owner_id' })], 'pet', 'owner', /`kind`/)
  assertConfigError(t, 'no storage', [lone(), withOwner({ kind: 'to-one', type: 'person' })], 'pet', 'owner', /`foreignKey`, an `inverse` or a `through`/)
  assertConfigError(t, 'empty foreign key column', [lone(), withOwner({ kind: 'to-one', type: 'person', foreignKey: '' })], 'pet', 'owner', /not a valid SQL identifier/)
  assertConfigError(t, 'undefined foreign key column', [lone(), withOwner({ kind: 'to-one', type: 'person', foreignKey: undefined })], 'pet', 'owner', /not a valid SQL identifier/)
  assertConfigError(t, 'to-many foreign key', [lone(), withOwner({ kind: 'to-many', type: 'person', foreignKey: 'owner_id' })], 'pet', 'owner', /must be to-one/)
  assertConfigError(t, 'inverse naming a missing relationship', [{ ...person(), relationships: { pets: { kind: 'to-many', type: 'pet', inverse: 'keeper' } } }, pet()], 'person', 'pets', /'pet\.keeper' is not declared/)
  assertConfigError(t, 'inverse of an inverse', [
    { ...person(), relationships: { pets: { kind: 'to-many', type: 'pet', inverse: 'owner' } } },
    withOwner({ kind: 'to-one', type: 'person', inverse: 'pets' }),
  ], 'person', 'pets', /must be a to-one foreignKey relationship to 'person'/)
  assertConfigError(t, 'inverse pointing at another type', [
    person(),
    { ...pet(), relationships: { owner: { kind: 'to-one', type: 'pet', foreignKey: 'parent_id' } } },
  ], 'person', 'pets', /must be a to-one foreignKey relationship to 'person'/)
  const through = { table: 'person_pets', sourceKey: 'pet_id', targetKey: 'person_id' }
  assertConfigError(t, 'to-one through', [lone(), withOwner({ kind: 'to-one', type: 'person', through })], 'pet', 'owner', /must be to-many/)
  assertConfigError(t, 'through table', [lone(), withOwner({ kind: 'to-many', type: 'person', through: { ...through, table: 'person pets' } })], 'pet', 'owner', /not a valid SQL identifier/)
  assertConfigError(t, 'through key', [lone(), withOwner({ kind: 'to-many', type: 'person', through: { ...through, targetKey: undefined } })], 'pet', 'owner', /not a valid SQL identifier/)
  assertConfigError(t, 'through values column', [lone(), withOwner({ kind: 'to-many', type: 'person', through: { ...through, values: { 'bad col': 1 } } })], 'pet', 'owner', /not a valid SQL identifier/)
  assertConfigError(t, 'reserved relationship name', [lone(), { ...pet(), relationships: { type: { kind: 'to-one', type: 'person', foreignKey: 'owner_id' } } }], 'pet', 'type', /reserved/)
})

t.test('defaults', async (t) => {
  const graph = resolve([
    { type: 'thing', attributes: { name: { schema: Type.String() } } },
    { type: 'part', relationships: { thing: { kind: 'to-one', type: 'thing', foreignKey: 'thing_id' } } },
  ])
  const thing = graph.getResource('thing')
  t.equal(thing.path, '/thing', 'path: /<type>')
  t.equal(thing.table, 'thing', 'table: the type')
  t.equal(thing.idColumn, 'id', 'id column: id')
  t.equal(thing.idKind, 'integer', 'id kind: integer')
  t.equal(thing.clientIds, 'forbidden')
  t.same(thing.routes, { list: true, create: true, read: true, update: true, delete: true })
  t.same(thing.relationships.size, 0)
  t.ok(Object.isFrozen(thing), 'frozen')
  const name = thing.attributes.get('name')
  t.match(name, {
    name: 'name',
    column: 'name',
    required: false,
    readOnly: false,
    createOnly: false,
    hidden: false,
    sortable: true,
    filterable: true,
    nullable: false,
    hasDefault: false,
    derived: undefined,
    selects: ['name'],
  })
  t.same(thing.visibleAttributes.map((attribute) => attribute.name), ['name'])
  const part = graph.getResource('part')
  t.same(part.attributes.size, 0, 'no attributes')
  t.match(part.relationships.get('thing'), { name: 'thing', ownerType: 'part', targetType: 'thing', toMany: false, required: false })
  t.same(part.relationships.get('thing')?.storage, { kind: 'foreign-key', column: 'thing_id', nullable: true }, 'a foreign key is nullable unless required')

  const declared = resolve([{
    type: 'widget',
    path: '/api/widgets',
    table: 'inventory.widgets',
    id: { column: 'widget_id', kind: 'uuid' },
    clientIds: 'required',
    routes: { delete: false },
    attributes: {
      title: { schema: Type.Union([Type.String(), Type.Null()]), column: 'widget_title' },
      label: { schema: Type.String(), derived: { columns: ['widget_title', 'code'], compute: () => 'x' } },
      secret: { schema: Type.String(), hidden: true },
      code: { schema: Type.String(), sortable: false, filterable: false },
    },
    relationships: {
      maker: { kind: 'to-one', type: 'widget', foreignKey: 'maker_id', required: true },
      spare: { kind: 'to-one', type: 'widget', foreignKey: 'spare_id', required: true, nullable: true },
    },
  }]).getResource('widget')
  t.equal(declared.path, '/api/widgets')
  t.equal(declared.table, 'inventory.widgets')
  t.equal(declared.idColumn, 'widget_id')
  t.equal(declared.idKind, 'uuid')
  t.equal(declared.clientIds, 'required')
  t.same(declared.routes, { list: true, create: true, read: true, update: true, delete: false })
  t.match(declared.attributes.get('title'), { column: 'widget_title', nullable: true, selects: ['widget_title'] })
  t.match(declared.attributes.get('label'), { column: undefined, readOnly: true, sortable: false, filterable: false, selects: ['widget_title', 'code'] }, 'derived: read-only, not sortable')
  t.match(declared.attributes.get('secret'), { hidden: true, sortable: false, filterable: false })
  t.match(declared.attributes.get('code'), { sortable: false, filterable: false })
  t.same(declared.visibleAttributes.map((attribute) => attribute.name), ['title', 'label', 'code'], 'hidden attributes are not rendered')
  t.same(declared.relationships.get('maker')?.storage, { kind: 'foreign-key', column: 'maker_id', nullable: false })
  t.same(declared.relationships.get('spare')?.storage, { kind: 'foreign-key', column: 'spare_id', nullable: true })
})

const account = (input?: Loose): Loose => ({
  type: 'account',
  attributes: {
    name: { schema: Type.String({ minLength: 1 }), required: true },
    status: { schema: Type.String(), required: true, default: 'active' },
    nickname: { schema: Type.Union([Type.String(), Type.Null()]) },
    code: { schema: Type.String(), required: true, createOnly: true },
    created: { schema: Type.String({ format: 'date' }), readOnly: true },
    display: { schema: Type.String(), derived: { columns: ['name'], compute: (row: Loose) => String(row.name) } },
    password: { schema: Type.String(), hidden: true },
  },
  ...(input === undefined ? {} : { input }),
})

t.test('derived create schema: writable attributes, required ones required', async (t) => {
  const resource = resolve([account()]).getResource('account')
  const schema = resource.inputs.createSchema
  t.same(Object.keys(schema.properties), ['name', 'status', 'nickname', 'code', 'password'], 'read-only and derived attributes are not writable')
  t.same([...(schema.required ?? [])].sort(), ['code', 'name'], 'required without a default')
  t.equal(schema.additionalProperties, false, 'closed')
  const check = resource.inputs.create.check
  t.same(check({ name: 'a', code: 'c' }), [])
  t.same(check({ name: 'a', code: 'c', status: 'x', nickname: null, password: 'p' }), [])
  t.same(check({}).map((problem) => [problem.kind, problem.field, problem.path]), [['missing', 'name', '/name'], ['missing', 'code', '/code']])
  t.same(check({ name: '', code: 'c', nickname: 5, other: 1 }).map((problem) => [problem.kind, problem.field, problem.path]).sort(), [
    ['invalid', 'name', '/name'],
    ['invalid', 'nickname', '/nickname'],
    ['unknown', 'other', '/other'],
  ])
  t.same(check({ name: 'a', code: 'c', created: '2020-01-01' }).map((problem) => problem.kind), ['unknown'], 'a read-only attribute is not part of the input')
})

t.test('derived update schema: everything optional, createOnly excluded', async (t) => {
  const resource = resolve([account()]).getResource('account')
  const schema = resource.inputs.updateSchema
  t.same(Object.keys(schema.properties), ['name', 'status', 'nickname', 'password'])
  t.same(schema.required ?? [], [], 'nothing is required')
  t.equal(schema.additionalProperties, false)
  const check = resource.inputs.update.check
  t.same(check({}), [])
  t.same(check({ nickname: 'n' }), [])
  t.same(check({ code: 'c' }).map((problem) => [problem.kind, problem.field]), [['unknown', 'code']], 'createOnly cannot be updated')
  t.same(check({ name: '' }).map((problem) => [problem.kind, problem.field]), [['invalid', 'name']], 'values are still checked')
})

t.test('a user input schema replaces the derived one and is closed to unknown members', async (t) => {
  const update = Type.Object({ name: Type.String(), nickname: Type.Optional(Type.String()) })
  const create = Type.Object({ name: Type.String(), extra: Type.Optional(Type.Integer()) })
  const resource = resolve([account({ create, update })]).getResource('account')
  t.equal(resource.inputs.updateSchema.additionalProperties, false, 'closed')
  t.equal(update.additionalProperties, undefined, 'the user\'s schema object is not modified')
  t.same(resource.inputs.update.check({ name: 'a' }), [])
  t.same(resource.inputs.update.check({}).map((problem) => [problem.kind, problem.field]), [['missing', 'name']], 'the user\'s required members')
  t.same(resource.inputs.update.check({ name: 'a', status: 'x' }).map((problem) => [problem.kind, problem.field, problem.path]), [['unknown', 'status', '/status']])
  t.same(resource.inputs.create.check({ name: 'a' }), [], 'code is no longer required')
  t.same(resource.inputs.create.check({ name: 'a', extra: 1.5 }).map((problem) => [problem.kind, problem.field]), [['invalid', 'extra']])

  const open = Type.Object({ name: Type.String() }, { additionalProperties: true })
  const opened = resolve([account({ update: open })]).getResource('account')
  t.equal(opened.inputs.updateSchema.additionalProperties, true, 'a schema that allows more members stays open')
  t.same(opened.inputs.update.check({ name: 'a', anything: 1 }), [])
  t.same(opened.inputs.create.check({}).map((problem) => problem.field), ['name', 'code'], 'the other input is still derived')
})

t.test('id kinds and exact numbers', async (t) => {
  const graph = resolve([
    { type: 'big', id: { kind: 'bigint' }, attributes: {
      count: { schema: Type.String({ format: 'int64' }) },
      amount: { schema: Type.Union([Type.String({ format: 'decimal' }), Type.Null()]) },
      rate: { schema: Type.Number() },
      small: { schema: Type.Integer() },
    } },
    { type: 'slug', id: { column: 'slug', kind: 'text', pattern: /[a-z]+/, maxLength: 8 } },
  ])
  const big = graph.getResource('big')
  t.equal(big.idKind, 'bigint')
  t.match(big.idAttribute, { valueKind: 'decimal', valueSchema: { type: 'string', format: 'int64' } })
  t.match(big.attributes.get('count'), { valueKind: 'decimal', format: 'decimal' })
  t.match(big.attributes.get('amount'), { valueKind: 'decimal', format: 'decimal', valueSchema: { type: 'string', format: 'decimal' } })
  t.match(big.attributes.get('rate'), { valueKind: 'number', format: 'number' })
  t.match(big.attributes.get('small'), { valueKind: 'integer', format: 'integer' })
  t.same(big.attributes.get('count')?.selects, ['count'])
  const slug = graph.getResource('slug')
  t.equal(slug.idColumn, 'slug')
  t.equal(slug.idPattern?.source, '^(?:[a-z]+)$', 'anchored')
  t.equal(slug.idPattern?.flags, 'u')
  t.equal(slug.idMaxLength, 8)
  t.match(slug.idAttribute, { valueKind: 'string' })
  t.equal(big.idPattern, undefined)
})
