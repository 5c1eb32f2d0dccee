import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { openApiOperations, openApiProblems } from '../helpers/openapi-conformance.js'

const JSONAPI = 'application/vnd.api+json'

const noCompilers = {
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
}

const errorsSchema = {
  $id: 'jsonapi.errors',
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      minItems: 1,
      items: { type: 'object', required: ['status'], properties: { status: { type: 'string' }, title: { type: 'string' } } },
    },
  },
}

const jsonApi = (description: string, schema: unknown) => ({ description, content: { [JSONAPI]: { schema } } })
const errorResponse = jsonApi('an error', { $ref: 'jsonapi.errors#' })
/** Asserts that there is exactly one problem, and that it matches `pattern`. */
function single (t: Test, problems: string[], pattern: RegExp): void {
  t.equal(problems.length, 1, `one problem: ${JSON.stringify(problems)}`)
  t.match(problems[0], pattern)
}

/** The content type of an injected answer, as the helper takes it. */
function contentType (response: { headers: Record<string, unknown> }): string | undefined {
  const value = response.headers['content-type']
  return typeof value === 'string' ? value : undefined
}

const idParams = { type: 'object', properties: { id: { type: 'string' } } }

async function buildApp (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } },
    refResolver: { buildLocalReference: (json: any, _b: unknown, _f: unknown, i: number) => json.$id ?? `def-${i}` },
  })
  await app.register(async (f) => {
    f.addSchema(errorsSchema)
    f.addSchema({
      $id: 'thing-data.item',
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { const: 'things' }, id: { type: 'string' } },
    })
    f.addSchema({ $id: 'thing.resource', type: 'object', required: ['data'], properties: { data: { $ref: 'thing-data.item#' } } })
    f.route({
      method: 'GET',
      url: '/things',
      ...noCompilers,
      schema: {
        response: {
          200: jsonApi('things', {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: { $ref: 'thing-data.item#' } } },
          }),
        },
      },
      handler: async (_request, reply) => reply.type(JSONAPI).send({ data: [{ type: 'things', id: '1' }] }),
    })
    f.route({
      method: 'GET',
      url: '/things/:id',
      ...noCompilers,
      schema: { params: idParams, response: { 200: jsonApi('a thing', { $ref: 'thing.resource#' }), '4XX': errorResponse } },
      handler: async (request, reply) => {
        const { id } = request.params as { id: string }
        if (id === 'missing') return reply.code(404).type(JSONAPI).send({ errors: [{ status: '404', title: 'Not Found' }] })
        return reply.type(`${JSONAPI}; ext="https://jsonapi.org/ext/atomic"`).send({ data: { type: 'things', id } })
      },
    })
    f.route({
      method: 'GET',
      url: '/things/special',
      ...noCompilers,
      schema: {
        response: {
          200: jsonApi('the special thing', {
            type: 'object',
            required: ['meta'],
            additionalProperties: false,
            properties: { meta: { type: 'object', required: ['special'], properties: { special: { const: true } } } },
          }),
        },
      },
      handler: async (_request, reply) => reply.type(JSONAPI).send({ meta: { special: true } }),
    })
    f.route({
      method: 'DELETE',
      url: '/things/:id',
      ...noCompilers,
      schema: { params: idParams, response: { 204: { description: 'no content', type: 'null' }, '4XX': errorResponse } },
      handler: async (_request, reply) => reply.code(204).send(),
    })
  })
  await app.ready()
  return app
}

t.test('openApiProblems', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())

  t.test('real answers of the app conform', async (t) => {
    const one = await app.inject({ method: 'GET', url: '/things/7?include=x' })
    t.equal(one.statusCode, 200)
    t.match(one.headers['content-type'], /; ext=/, 'the media type carries a parameter')
    t.same(openApiProblems(app, 'GET', '/things/7?include=x', one.statusCode, contentType(one), one.json()), [])

    const list = await app.inject({ method: 'GET', url: '/things' })
    t.same(openApiProblems(app, 'GET', '/things', list.statusCode, contentType(list), list.json()), [])

    const missing = await app.inject({ method: 'GET', url: '/things/missing' })
    t.equal(missing.statusCode, 404)
    t.same(openApiProblems(app, 'GET', '/things/missing', 404, contentType(missing), missing.json()), [], 'through 4XX')

    const deleted = await app.inject({ method: 'DELETE', url: '/things/7' })
    t.equal(deleted.statusCode, 204)
    t.equal(deleted.body, '')
    t.same(openApiProblems(app, 'DELETE', '/things/7', 204, contentType(deleted), undefined), [])
  })

  t.test('a wrong body names the failing instance path', async (t) => {
    const problems = openApiProblems(app, 'GET', '/things/7', 200, JSONAPI, { data: { type: 'things', id: 7 } })
    t.equal(problems.length, 1)
    t.match(problems[0], /^GET \/things\/\{id\} 200: /)
    t.match(problems[0], '/data/id must be string')

    const listed = openApiProblems(app, 'get', '/things', 200, JSONAPI, { data: [{ type: 'things', id: '1' }, { type: 'other', id: '2' }] })
    t.equal(listed.length, 1, 'a ref to a dotted, dashed component inside an inline schema resolves')
    t.match(listed[0], '/data/1/type must be equal to one of the allowed values')

    single(t, openApiProblems(app, 'GET', '/things/7', 200, JSONAPI, {}), /\/ must have required property 'data'/)
  })

  t.test('at most five ajv errors are listed', async (t) => {
    const data = Array.from({ length: 7 }, (_, i) => ({ type: 'things', id: i }))
    const [problem, ...rest] = openApiProblems(app, 'GET', '/things', 200, JSONAPI, { data })
    t.same(rest, [])
    for (const i of [0, 1, 2, 3, 4]) t.match(problem, `/data/${i}/id must be string`)
    t.notMatch(problem, '/data/5/id')
    t.match(problem, 'and 2 more')
  })

  t.test('an undeclared status', async (t) => {
    t.same(openApiProblems(app, 'GET', '/things/7', 500, JSONAPI, { errors: [{ status: '500' }] }), [
      'GET /things/{id} answered 500, which the document does not declare (declared: 200, 4XX)',
    ])
    t.same(openApiProblems(app, 'GET', '/things', 404, JSONAPI, { errors: [{ status: '404' }] }), [
      'GET /things answered 404, which the document does not declare (declared: 200)',
    ])
  })

  t.test('a 4xx answer validates against the range key', async (t) => {
    t.same(openApiProblems(app, 'DELETE', '/things/7', 409, JSONAPI, { errors: [{ status: '409' }] }), [])
    single(t, openApiProblems(app, 'GET', '/things/7', 404, JSONAPI, { errors: [] }), /^GET \/things\/\{id\} 404: the body does not match the application\/vnd\.api\+json schema of response "4XX": \/errors must NOT have fewer than 1 items$/)
    single(t, openApiProblems(app, 'GET', '/things/7', 404, JSONAPI, { data: null }), /must have required property 'errors'/)
  })

  t.test('an answer without declared content must have no body', async (t) => {
    single(t, openApiProblems(app, 'DELETE', '/things/7', 204, undefined, {}), /DELETE \/things\/\{id\} 204: .*no content/)
    single(t, openApiProblems(app, 'GET', '/things/7', 200, JSONAPI, undefined), /declares content .* no body/)
  })

  t.test('undocumented routes may only answer errors', async (t) => {
    const error = { errors: [{ status: '404', title: 'Not Found' }] }
    t.same(openApiProblems(app, 'GET', '/nowhere/at/all', 404, JSONAPI, error), [])
    t.same(openApiProblems(app, 'GET', '/nowhere', 404, undefined, undefined), [], 'no body')
    t.same(openApiProblems(app, 'PATCH', '/things/7', 405, JSONAPI, error), [], 'a documented path without the method')
    const thing = { data: { type: 'things', id: '' } }
    single(t, openApiProblems(app, 'GET', '/things/7/extra', 200, JSONAPI, thing), /^GET \/things\/7\/extra .*undocumented operation answered 200/)
    single(t, openApiProblems(app, 'GET', '/things/', 200, JSONAPI, thing), /^GET \/things\/ .*undocumented operation answered 200/)

    single(t, openApiProblems(app, 'GET', '/nowhere', 200, JSONAPI, { data: null }), /undocumented operation answered 200/)
    single(t, openApiProblems(app, 'PATCH', '/things/7', 200, JSONAPI, { data: null }), /^PATCH \/things\/7 .*undocumented operation answered 200/)
    single(t, openApiProblems(app, 'GET', '/nowhere', 404, JSONAPI, { message: 'Not Found' }), /the component schema jsonapi\.errors: \/ must have required property 'errors'$/)
  })

  t.test('a literal path wins over a {param} one', async (t) => {
    const special = { meta: { special: true } }
    const thing = { data: { type: 'things', id: 'special' } }
    t.same(openApiProblems(app, 'GET', '/things/special', 200, JSONAPI, special), [])
    single(t, openApiProblems(app, 'GET', '/things/special', 200, JSONAPI, thing), /^GET \/things\/special 200: /)
    t.same(openApiProblems(app, 'GET', '/things/%73pecial', 200, JSONAPI, special), [], 'segments are percent-decoded')
    single(t, openApiProblems(app, 'GET', '/things/other', 200, JSONAPI, special), /^GET \/things\/\{id\} 200: /)
    t.same(openApiProblems(app, 'GET', '/things/a%2Fb', 200, JSONAPI, { data: { type: 'things', id: 'a/b' } }), [], 'an encoded slash stays in its segment')
    t.same(
      openApiProblems(app, 'DELETE', '/things/special', 204, undefined, undefined),
      [],
      'a literal path without the method leaves it to the {param} path, as the router does',
    )
  })

  t.test('the content type must be declared', async (t) => {
    const body = { data: { type: 'things', id: '7' } }
    t.same(openApiProblems(app, 'GET', '/things/7', 200, 'Application/VND.API+JSON ; charset=utf-8', body), [], 'case and parameters do not matter')
    t.same(openApiProblems(app, 'GET', '/things/7', 200, 'application/json; charset=utf-8', body), [
      `GET /things/{id} 200: content-type application/json; charset=utf-8 is not among the declared media types (${JSONAPI})`,
    ])
    single(t, openApiProblems(app, 'GET', '/things/7', 200, undefined, body), /content-type \(none\) is not among/)
  })
})

t.test('openApiOperations lists every documented operation', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const byPath = (a: { method: string; path: string }, b: { method: string; path: string }) =>
    `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`)
  t.same(openApiOperations(app).sort(byPath), [
    { method: 'GET', path: '/things' },
    { method: 'DELETE', path: '/things/{id}' },
    { method: 'GET', path: '/things/{id}' },
    { method: 'GET', path: '/things/special' },
  ])
})

t.test('an app without @fastify/swagger', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.ready()
  single(t, openApiProblems(app, 'GET', '/', 200, JSONAPI, {}), /must register @fastify\/swagger/)
  t.throws(() => openApiOperations(app), /must register @fastify\/swagger/)
})
