// The OpenAPI document: valid OpenAPI 3.1 for the example app and for an app configured every other way, every
// served route documented and nothing else, what each parameter, body and response says, and the example app's
// /openapi.json and /docs. (Every response of every HTTP test is also checked against its app's document, in
// `injectJsonApi`.)
import t from 'tap'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { Validator } from '@seriousme/openapi-schema-validator'
import { defineOperator, defineResource, jsonApi, JsonApiOptionsError, type Row } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, startTestApp } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { openApiOperations, openApiProblems } from '../helpers/openapi-conformance.js'
import { testEngine } from '../helpers/engine.js'

type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } }

const example = await startTestApp(t.teardown.bind(t))
const exampleDoc = JSON.parse((await example.app.inject({ method: 'GET', url: '/openapi.json' })).body) as Doc

// A second application, configured every way the example is not: uuid ids with client ids, a required client id,
// a custom operator, derived and read-only attributes, a join table, fewer routes, a prefix, a base URL, its own
// page limits and error statuses, no operations endpoint.
const database = await openTestDatabase()
t.teardown(() => database.close())
const db = database.db
const engine = testEngine()
if (engine === 'postgres') {
  await sql`create table o_authors (id integer primary key, name text not null)`.execute(db)
  await sql`create table o_tags (id uuid primary key default gen_random_uuid(), label text not null)`.execute(db)
  await sql`create table o_articles (
    id serial primary key, title text not null, meta jsonb not null default '{}', created_at date not null default current_date,
    author_id integer references o_authors
  )`.execute(db)
  await sql`create table o_article_tags (article_id integer references o_articles on delete cascade, tag_id uuid references o_tags on delete cascade)`.execute(db)
} else {
  // The same tables as MariaDB and SQLite hold them: a UUID made by the database as text (`uuid()`; on SQLite a random
  // version 4 UUID built from `randomblob`), JSON in `json` (JSON text in `text` on SQLite), ids assigned by
  // `auto_increment` (`autoincrement`); on MariaDB in `utf8mb4` compared by code point.
  const mysql = engine === 'mysql'
  const table = (name: string) => mysql ? db.schema.createTable(name).modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : db.schema.createTable(name)
  const uuid = mysql ? sql`char(36)` : sql`text`
  const newUuid = mysql
    ? sql`(uuid())`
    : sql`(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))`
  await table('o_authors').addColumn('id', 'integer', (col) => col.primaryKey()).addColumn('name', 'text', (col) => col.notNull()).execute()
  await table('o_tags').addColumn('id', uuid, (col) => col.primaryKey().notNull().defaultTo(newUuid)).addColumn('label', 'text', (col) => col.notNull()).execute()
  await table('o_articles')
    .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('meta', mysql ? sql`json` : sql`text`, (col) => col.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'date', (col) => col.notNull().defaultTo(mysql ? sql`(curdate())` : sql`(current_date)`))
    .addColumn('author_id', 'integer', (col) => col.references('o_authors.id'))
    .execute()
  await table('o_article_tags')
    .addColumn('article_id', 'integer', (col) => col.references('o_articles.id').onDelete('cascade'))
    .addColumn('tag_id', uuid, (col) => col.references('o_tags.id').onDelete('cascade'))
    .execute()
}

/** `meta` contains `val` (an object): PostgreSQL's `@>`, MariaDB's `json_contains`, on SQLite every member of `val` equal. */
const jsonbContains = defineOperator({
  name: 'jsonb_contains',
  schema: Type.Record(Type.String(), Type.Unknown()),
  apply: ({ column, value, engine }) => {
    if (engine === 'postgres') return sql<boolean>`${column} @> ${JSON.stringify(value)}::jsonb`
    if (engine === 'mysql') return sql<boolean>`(json_type(${column}) = 'OBJECT' and json_contains(${column}, ${JSON.stringify(value)}))`
    return sql<boolean>`json_type(${column}) = 'object' and not exists (select 1 from json_each(${JSON.stringify(value)}) as m where json_extract(${column}, '$."' || m.key || '"') is not json_extract(${JSON.stringify(value)}, '$."' || m.key || '"'))`
  },
})
const author = defineResource({
  type: 'author',
  path: '/authors',
  table: 'o_authors',
  clientIds: 'required',
  routes: { delete: false, update: false },
  attributes: { name: { schema: Type.String({ minLength: 1 }), required: true } },
  relationships: { articles: { kind: 'to-many', type: 'article', inverse: 'author' } },
})
const tag = defineResource({
  type: 'tag',
  path: '/tags',
  table: 'o_tags',
  id: { column: 'id', kind: 'uuid' },
  clientIds: 'allowed',
  attributes: { label: { schema: Type.String(), required: true } },
})
const article = defineResource({
  type: 'article',
  path: '/articles',
  table: 'o_articles',
  routes: { delete: false },
  pagination: { maxSize: 50 },
  attributes: {
    title: { schema: Type.String(), required: true },
    meta: { schema: Type.Record(Type.String(), Type.Unknown()), operators: [jsonbContains] },
    created_at: { schema: Type.String({ format: 'date' }), readOnly: true },
    shout: { schema: Type.String(), derived: { columns: ['title'], compute: (row: Row) => String(row.title).toUpperCase() } },
  },
  relationships: {
    author: { kind: 'to-one', type: 'author', foreignKey: 'author_id' },
    tags: { kind: 'to-many', type: 'tag', through: { table: 'o_article_tags', sourceKey: 'article_id', targetKey: 'tag_id' } },
  },
})

async function buildOther (): Promise<{ app: FastifyInstance; routes: RouteOptions[] }> {
  const app = await documentedFastify()
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => { routes.push(route) })
  await app.register(jsonApi, {
    db,
    resources: [author, tag, article],
    prefix: '/v2',
    baseUrl: 'https://api.example.com',
    operations: { enabled: false },
    pagination: { maxSize: 200, unpaged: 'forbidden' },
    maxIncludeDepth: 2,
    openapi: { errors: [429] },
  })
  await app.ready()
  t.teardown(() => app.close())
  return { app, routes }
}
const other = await buildOther()
const otherDoc = (other.app as unknown as { swagger: () => Doc }).swagger()

async function validationErrors (document: unknown): Promise<unknown> {
  const result = await new Validator().validate(document as Parameters<Validator['validate']>[0])
  return result.valid ? [] : result.errors
}

/** The documented operations of every route served (HEAD aside): `GET /users/{id}`. */
function servedOperations (routes: readonly RouteOptions[]): string[] {
  const served = new Set<string>()
  for (const route of routes) {
    if ((route.schema as { hide?: boolean } | undefined)?.hide === true) continue
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue
      served.add(`${method} ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`)
    }
  }
  return [...served].sort()
}

t.test('the documents are valid OpenAPI 3.1', async (t) => {
  t.same(await validationErrors(exampleDoc), [], 'the example app')
  t.same(await validationErrors(otherDoc), [], 'the differently configured app')
  t.equal((exampleDoc as unknown as { openapi: string }).openapi, '3.1.0')
})

t.test('cannot validate a broken document: the validator is not a rubber stamp', async (t) => {
  const broken = structuredClone(exampleDoc) as any
  broken.paths['/users'].get.responses['200'].content['application/vnd.api+json'].schema = { $ref: 7 }
  t.not(await validationErrors(broken), [], 'a bad $ref is reported')
  const noResponses = structuredClone(exampleDoc) as any
  delete noResponses.paths['/users'].get.responses
  t.not(await validationErrors(noResponses), [], 'an operation without responses is reported')
})

t.test('every served route is documented with its methods, and nothing else is', async (t) => {
  const routes: RouteOptions[] = []
  const app = await documentedFastify()
  app.addHook('onRoute', (route) => { routes.push(route) })
  await app.register(jsonApi, { db: example.db, resources })
  await app.ready()
  t.teardown(() => app.close())
  const documented = (application: FastifyInstance): string[] => openApiOperations(application).map(({ method, path }) => `${method} ${path}`).sort()
  t.same(documented(app), servedOperations(routes), 'the example resources')
  t.same(documented(other.app), servedOperations(other.routes), 'the other app')
  t.ok(documented(app).length > 100, 'a real number of operations')
  t.ok(documented(app).includes('POST /operations'))
  t.same(Object.keys(exampleDoc.paths['/users']).sort(), ['get', 'post'], 'no 405 methods on a collection')
  t.same(Object.keys(exampleDoc.paths['/users/{id}']).sort(), ['delete', 'get', 'patch'])
  t.same(Object.keys(exampleDoc.paths['/users/{id}/bio']).sort(), ['delete', 'get', 'patch', 'post'], 'a to-one related path')
  t.same(Object.keys(exampleDoc.paths['/users/{id}/computers']).sort(), ['get', 'post'], 'a to-many related path')
  t.same(Object.keys(exampleDoc.paths['/users/{id}/relationships/computers']).sort(), ['delete', 'get', 'patch', 'post'])
  t.notOk('/users/{id}/{relationship}' in exampleDoc.paths, 'catch-alls are hidden')
  t.notOk('/openapi.json' in exampleDoc.paths, 'the document is not in itself')
  const ids = Object.values(exampleDoc.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId))
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
  t.ok(ids.includes('readUserComputers') && ids.includes('replaceUserComputersRelationship') && ids.includes('runOperations'))
})

t.test('the query parameters say what each family accepts', async (t) => {
  const schemas = exampleDoc.components.schemas
  const parameters = (path: string, method: string): Record<string, any> =>
    Object.fromEntries((exampleDoc.paths[path][method].parameters as any[]).map((parameter) => [parameter.name, parameter]))
  const list = parameters('/users', 'get')
  t.same(list.sort.schema, { allOf: [{ $ref: '#/components/schemas/user.sort' }] })
  const sort = new RegExp(schemas['user.sort'].pattern)
  for (const key of ['name', '-age', 'id,-name', 'group.name', 'bio.birth_city', 'display_name', '-count(computers),name', 'computer_count', 'count(group.users)']) {
    t.match(key, sort, `sort=${key} is accepted`)
  }
  for (const key of ['nothing', 'computers.serial', 'name,', 'count(group)', 'count(computers']) t.notMatch(key, sort, `sort=${key} is not`)
  const include = new RegExp(schemas['user.include'].pattern)
  for (const path of ['computers', 'computers.owner', 'bio,group', 'computers.owner.group']) t.match(path, include, `include=${path} is accepted`)
  for (const path of ['nothing', 'computers.owner.group.users', 'computers,']) t.notMatch(path, include, `include=${path} is not`)
  const fields = new RegExp(schemas['user.fields'].pattern)
  for (const value of ['', 'name', 'name,age,computers']) t.match(value, fields)
  t.notMatch('password', fields)
  t.ok(list['fields[computer]'] && list['fields[user_bio]'], 'fields of the types an include reaches')
  t.match(list.filter.content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/user.filter-item' } }, 'the JSON filter is JSON content: an array of filter objects')
  t.ok(list['filter[name]'] && list['filter[group_id]'] && list['filter[id]'], 'the simple filter forms')
  t.ok(list['filter[display_name]'], 'a computed attribute is filterable')
  t.ok(list['filter[count(computers)]'] && list['filter[count(notes)]'], 'counts of the to-many relationships')
  t.notOk(list['filter[count(group)]'], 'no count of a to-one relationship')
  t.same(list['page[size]'].schema, { type: 'integer', minimum: 0, maximum: 1000 })
  t.same(list['page[number]'].schema, { type: 'integer', minimum: 1 })
  const detail = parameters('/users/{id}', 'get')
  t.same(Object.keys(detail).filter((name) => !name.startsWith('fields[') && !/^page\[.+\]\[size\]$/.test(name)).sort(), ['id', 'if-none-match', 'include'], 'no sort, filter or page on one resource (If-None-Match is a header)')
  // The page per owner of every to-many step of the include paths listed, on one resource and on a collection alike.
  const includePages = (of: Record<string, any>): string[] => Object.keys(of).filter((name) => /^page\[.+\]\[size\]$/.test(name)).sort()
  t.same(includePages(detail), includePages(list))
  for (const name of ['page[computers][size]', 'page[group.users][size]', 'page[computers.owner.computers][size]', 'page[bio.user.posts][size]']) {
    t.ok(detail[name], `${name} is described`)
  }
  for (const name of ['page[group][size]', 'page[computers.owner][size]', 'page[computers.owner.group.users][size]']) {
    t.notOk(detail[name], `${name} is not: a to-one step, or deeper than the include depth`)
  }
  t.same(detail['page[computers][size]'].schema, { type: 'integer', minimum: 1, maximum: 1000 })
  t.match(detail['page[computers][size]'].description, /default 10/)
  const pagedLinkage = parameters('/users/{id}/relationships/computers', 'get')
  t.ok(pagedLinkage['page[computers.owner.computers][size]'], 'a relationship route: the paths written from the owner')
  t.notOk(pagedLinkage['page[computers][size]'], "not the linkage's own page: that is page[size]")
  const relationship = schemas['user.resource'].properties.relationships.properties
  t.same(relationship.computers.properties.meta, { $ref: '#/components/schemas/jsonapi.to-many-relationship-meta' }, 'a to-many relationship object has meta.count')
  t.same(relationship.computers.properties.links, { $ref: '#/components/schemas/jsonapi.to-many-relationship-links' }, 'and links.next')
  t.ok(schemas['jsonapi.to-many-relationship-links'].properties.next)
  t.notOk(relationship.group.properties.meta, 'a to-one has neither')
  t.same(detail.id.schema, { $ref: '#/components/schemas/user.id' })
  t.same(schemas['user.id'].pattern, '^(?:0|[1-9][0-9]*)$')
  const linkage = parameters('/users/{id}/relationships/computers', 'get')
  t.match(linkage.include.description, /starting with `computers`/, 'a relationship route\'s include starts with the relationship')
  const includePattern = new RegExp(linkage.include.schema.pattern)
  t.ok(includePattern.test('computers') && includePattern.test('computers.owner') && includePattern.test('computers,computers.owner'))
  t.notOk(includePattern.test('group') || includePattern.test('owner') || includePattern.test('computers.owner.computers.owner'), 'nothing else, nothing deeper')
  t.ok(linkage['fields[computer]'], 'fields of what it includes')
  const toOne = parameters('/computers/{id}/relationships/owner', 'get')
  t.ok(toOne.include && !toOne.sort, 'a to-one linkage: include, no sort or page')
  t.ok(linkage.sort && linkage['page[size]'], 'a to-many linkage is paged and sorted')
  const filterItem = schemas['user.filter-item'].anyOf as any[]
  const age = filterItem.find((form) => form.properties?.name?.enum?.[0] === 'age')
  t.ok(age.properties.op.enum.includes('between') && !age.properties.op.enum.includes('like'), 'operators by kind')
  const computers = filterItem.find((form) => form.properties?.name?.enum?.[0] === 'computers')
  t.same(computers.properties.op, { enum: ['any'] })
  t.same(computers.properties.val, { $ref: '#/components/schemas/computer.filter' })
})

t.test('bodies: required attributes, read-only ones absent, relationships by their rules', async (t) => {
  const schemas = exampleDoc.components.schemas
  const body = exampleDoc.paths['/users'].post.requestBody
  t.same(Object.keys(body.content).sort(), ['application/json', 'application/vnd.api+json'])
  t.same(body.content['application/vnd.api+json'].schema, { $ref: '#/components/schemas/user.create' })
  const create = schemas['user.create-data']
  t.same(create.required, ['type', 'attributes'])
  t.same(create.properties.type, { enum: ['user'] })
  t.notOk('id' in create.properties, 'no client ids for users')
  t.ok(create.properties.attributes.required.includes('name'))
  t.notOk('date_create' in create.properties.attributes.properties, 'read-only attributes are not written')
  t.notOk('display_name' in create.properties.attributes.properties, 'derived attributes are not written')
  t.notOk('notes' in create.properties.relationships.properties, 'a read-only relationship is not written')
  t.same(schemas['post.create-data'].properties.relationships.required, ['user'], 'a required relationship')
  t.ok('owner' in schemas['note.create-data'].properties.relationships.properties, 'createOnly: in a create')
  t.notOk('owner' in (schemas['note.update-data'].properties.relationships?.properties ?? {}), 'createOnly: not in an update')
  t.same(schemas['user.update-data'].required, ['type', 'id'])
  t.notOk('required' in schemas['user.update-data'].properties.attributes, 'an update sends what it changes')
  const relatedBody = exampleDoc.paths['/users/{id}/posts'].post.requestBody
  const related = relatedBody.content['application/vnd.api+json'].schema
  t.notOk(related.properties.data.required?.includes('relationships'), 'a related create does not require the relationship its URL sets')
  t.same(relatedBody.content['application/json'].schema, related, 'plain JSON: the same schema')
  t.equal(relatedBody.description, 'Creates a `post`; `user` is set by the URL.', 'and the body says so')
  const operations = exampleDoc.paths['/operations'].post.requestBody
  t.same(Object.keys(operations.content).sort(), ['application/vnd.api+json', 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"'])
  t.same(operations.content['application/vnd.api+json'].schema, { $ref: '#/components/schemas/jsonapi.operations' })
  const resource = schemas['user.resource']
  t.same(resource.properties.attributes.properties.date_create.readOnly, true)
  t.same(resource.properties.attributes.properties.display_name.readOnly, true)
  t.notOk('required' in resource.properties.attributes, 'sparse fieldsets leave any attribute out')
  t.match(resource.properties.attributes.properties.phone.description, /^Absent from the resource objects the request may not read it on \(a field rule\).* Written only where a field rule lets the request/,
    'an attribute with field rules says it may be absent, and may be refused')
  t.equal(resource.properties.attributes.properties.name.description, undefined)
  const created = exampleDoc.paths['/users'].post.responses['201']
  t.ok(created.headers.Location, 'a 201 declares its Location')
  t.same(Object.keys(exampleDoc.paths['/users'].post.responses).sort(), ['201', '400', '401', '403', '404', '406', '409', '413', '415', '422', '500', '503'])
  t.same(Object.keys(exampleDoc.paths['/users'].get.responses).sort(), ['200', '304', '400', '401', '403', '406', '415', '500', '503'], 'the context adds 401 and 403')
  t.same(Object.keys(exampleDoc.paths['/users'].get.responses['503'].headers), ['Retry-After'], 'a database fault says when to retry')
  t.same(exampleDoc.paths['/operations'].post.responses['204'], { description: 'Every operation was a removal: no content.' }, 'no body')
  t.ok(schemas['user.collection'].properties.included.items.oneOf.length >= 5, 'included: a union of the includable types')
})

t.test('the differently configured app', async (t) => {
  const schemas = otherDoc.components.schemas
  t.ok('/v2/articles' in otherDoc.paths, 'the prefix is in every path')
  t.notOk(Object.keys(otherDoc.paths).some((path) => path.includes('operations')), 'no operations endpoint')
  t.same(Object.keys(otherDoc.paths['/v2/articles/{id}']).sort(), ['get', 'patch'], 'routes: { delete: false }')
  t.same(Object.keys(otherDoc.paths['/v2/authors']).sort(), ['get', 'post'])
  t.same(Object.keys(otherDoc.paths['/v2/authors/{id}']).sort(), ['get'])
  t.ok('v2.article.resource' in schemas && !('article.resource' in schemas), 'components are named after the prefix')
  t.same(schemas['v2.tag.id'], { type: 'string', format: 'uuid', description: 'A UUID.' })
  t.same(schemas['v2.tag.create-data'].required, ['type', 'attributes'], 'a client id is allowed…')
  t.ok('id' in schemas['v2.tag.create-data'].properties, '…and described')
  t.same(schemas['v2.author.create-data'].required, ['type', 'id', 'attributes'], 'a required client id')
  const meta = (schemas['v2.article.filter-item'].anyOf as any[]).find((form) => form.properties?.name?.enum?.[0] === 'meta')
  t.ok(meta.properties.op.enum.includes('jsonb_contains'), 'custom operators are listed')
  t.notOk('shout' in schemas['v2.article.create-data'].properties.attributes.properties)
  t.same(schemas['v2.article.resource'].properties.attributes.properties.shout, { type: 'string', readOnly: true })
  const pageSize = (otherDoc.paths['/v2/articles'].get.parameters as any[]).find((parameter) => parameter.name === 'page[size]')
  t.same(pageSize.schema, { type: 'integer', minimum: 1, maximum: 50 }, 'the resource\'s maximum; unpaged forbidden')
  for (const [path, item] of Object.entries(otherDoc.paths)) {
    for (const [method, operation] of Object.entries(item)) t.ok('429' in operation.responses, `${method} ${path} declares the application's 429`)
  }
  // Its answers conform (injectJsonApi checks each against the document), links with the base URL included.
  const send = injectJsonApi.bind(null, other.app)
  t.equal((await send('POST', '/v2/authors', { body: { data: { type: 'author', id: '7', attributes: { name: 'Ann' } } } })).status, 201)
  const tagged = await send('POST', '/v2/tags', { body: { data: { type: 'tag', attributes: { label: 'news' } } } })
  t.equal(tagged.status, 201)
  const created = await send('POST', '/v2/articles', {
    body: { data: { type: 'article', attributes: { title: 'hello', meta: { colour: 'red' } }, relationships: { author: { data: { type: 'author', id: '7' } }, tags: { data: [{ type: 'tag', id: tagged.body.data.id }] } } } },
  })
  t.equal(created.status, 201)
  t.match(created.body.data.links.self, /^https:\/\/api\.example\.com\/v2\/articles\/\d+$/, 'links carry the base URL and the prefix')
  t.equal(created.headers.location, created.body.data.links.self)
  const related = await send('GET', `/v2/articles/${created.body.data.id as string}/relationships/tags`)
  t.same(related.body.links, {
    self: `https://api.example.com/v2/articles/${created.body.data.id as string}/relationships/tags`,
    related: `https://api.example.com/v2/articles/${created.body.data.id as string}/tags`,
    first: `https://api.example.com/v2/articles/${created.body.data.id as string}/relationships/tags`,
    last: `https://api.example.com/v2/articles/${created.body.data.id as string}/relationships/tags`,
  })
  const listed = await send('GET', `/v2/articles?include=author,tags&filter=${encodeURIComponent('[{"name":"meta","op":"jsonb_contains","val":{"colour":"red"}}]')}`)
  t.equal(listed.status, 200)
  t.same(listed.body.data.map((item: { attributes: { shout: string } }) => item.attributes.shout), ['HELLO'])
  t.equal(listed.body.included.length, 2)
  t.equal((await send('GET', '/v2/articles?page[size]=0')).status, 400)
  t.equal((await send('DELETE', '/v2/articles/1')).status, 405, 'an undocumented method answers an error')
})

t.test('cannot answer what the document does not declare: the conformance check bites', async (t) => {
  const app = await documentedFastify()
  app.addHook('preHandler', async (request, reply) => {
    if (request.headers['x-limit'] !== undefined) return reply.code(429).type('application/vnd.api+json').send({ errors: [{ status: '429', code: 'slow_down', title: 'Slow down' }] })
  })
  await app.register(jsonApi, { db: example.db, resources })
  await app.ready()
  t.teardown(() => app.close())
  const limited = await app.inject({ method: 'GET', url: '/groups', headers: { 'x-limit': '1' } })
  t.equal(limited.statusCode, 429)
  const problems = openApiProblems(app, 'GET', '/groups', 429, 'application/vnd.api+json', JSON.parse(limited.body))
  t.match(problems, [/GET \/groups answered 429, which the document does not declare/])
  const wrong = openApiProblems(app, 'GET', '/groups', 200, 'application/vnd.api+json', { data: [{ type: 'group', id: 'x', attributes: {}, links: { self: '/groups/x' } }], links: { self: '/groups' } })
  t.match(wrong, [/\/data\/0\/id must match pattern/], 'an id that is not an integer')
  await t.rejects(injectJsonApi(app, 'GET', '/groups', { headers: { 'x-limit': '1' } }), /does not declare/, 'injectJsonApi fails the test')
})

t.test('cannot declare error statuses that are not HTTP errors', async (t) => {
  for (const errors of [[200], [600], [4.5], 'x']) {
    const app = await documentedFastify()
    await t.rejects(async () => { await app.register(jsonApi, { db: example.db, resources, openapi: { errors: errors as number[] } }) }, JsonApiOptionsError, `errors: ${JSON.stringify(errors)}`)
    await app.close()
  }
})

t.test('the example app serves its document and a docs page', async (t) => {
  const document = await example.app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(document.statusCode, 200)
  t.match(document.headers['content-type'], /^application\/json/)
  t.equal(JSON.parse(document.body).info.title, 'fastify-jsonapi example')
  const page = await example.app.inject({ method: 'GET', url: '/docs' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /swagger-ui/i)
  const initializer = await example.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
  t.equal(initializer.statusCode, 200, 'the page\'s assets are served by the app itself')
  const json = await example.app.inject({ method: 'GET', url: '/docs/json' })
  t.same(JSON.parse(json.body).paths['/users'] !== undefined, true, 'the page reads the same document')
})
