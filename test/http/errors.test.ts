import t from 'tap'
import { connect } from 'node:net'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { startTestApp, type TestResponse } from '../helpers/test-app.js'
import { jsonApiSchemaErrors } from '../helpers/jsonapi-schema.js'
import { ERROR_CODES, type ErrorCode, type ErrorSource } from '../../lib/index.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const api = await startTestApp(t.teardown)

const JSONAPI = /^application\/vnd\.api\+json(?:;|$)/

interface ExpectedError {
  readonly status: number
  readonly code: ErrorCode
  /** The whole `source` member; `undefined` asserts that there is none. */
  readonly source?: ErrorSource
  readonly detail?: RegExp
}

/** One error object of a known code, rendered as a JSON:API error document. */
function assertError (t: Test, response: TestResponse, expected: ExpectedError, label: string): void {
  if (!t.equal(response.status, expected.status, `${label}: status`)) return
  t.match(response.headers['content-type'], JSONAPI, `${label}: JSON:API media type`)
  t.same(response.body?.jsonapi, { version: '1.0' }, `${label}: jsonapi member`)
  t.equal(response.body?.errors?.length, 1, `${label}: one error object`)
  const error = response.body?.errors?.[0] ?? {}
  t.equal(error.status, String(expected.status), `${label}: status is a string`)
  t.equal(error.code, expected.code, `${label}: code`)
  t.equal(error.title, ERROR_CODES[expected.code].title, `${label}: title`)
  t.equal(typeof error.detail, 'string', `${label}: detail`)
  if (expected.detail !== undefined) t.match(error.detail, expected.detail, `${label}: detail text`)
  if (expected.source === undefined) t.notOk('source' in error, `${label}: no source`)
  else t.same(error.source, expected.source, `${label}: source`)
  t.notOk('data' in (response.body ?? {}), `${label}: no data next to errors`)
}

const newUser = (name: string) => ({ data: { type: 'user', attributes: { name } } })

async function userNames (): Promise<string[]> {
  const rows = await api.db.selectFrom('users').select('name').orderBy('id').execute()
  return rows.map((row) => row.name as string)
}

t.beforeEach(async () => {
  await api.reset()
  await api.db.insertInto('users').values([{ name: 'ada' }, { name: 'grace' }]).execute()
})

t.test('error documents are served as application/vnd.api+json without media type parameters', async (t) => {
  // JSON:API 1.0, content negotiation: servers MUST send JSON:API documents with
  // `Content-Type: application/vnd.api+json` without any media type parameters.
  const notFound = await api.request('GET', '/nothing')
  t.equal(notFound.headers['content-type'], 'application/vnd.api+json', 'unknown route')
  const malformed = await api.request('POST', '/users', { body: '{"data":' })
  t.equal(malformed.headers['content-type'], 'application/vnd.api+json', 'body parser error')
  const missing = await api.request('GET', '/users/99')
  t.equal(missing.headers['content-type'], 'application/vnd.api+json', 'library error')
})

t.test('malformed JSON is a 400 FJA_MALFORMED_JSON pointing at the document', async (t) => {
  const bodies = ['{"data":', '{data: {}}', '{"data": {"type": "user",}}', 'not json at all', '{"a":1}}']
  for (const contentType of ['application/vnd.api+json', 'application/json']) {
    for (const body of bodies) {
      const response = await api.request('POST', '/users', { body, headers: { 'content-type': contentType } })
      assertError(t, response, { status: 400, code: 'FJA_MALFORMED_JSON', source: { pointer: '' } }, `${contentType} ${body}`)
    }
  }
  const patch = await api.request('PATCH', '/users/1', { body: '{"data": {"type": "user", "id": "1", "attributes": {"name": "x"}', headers: { 'content-type': 'application/vnd.api+json' } })
  assertError(t, patch, { status: 400, code: 'FJA_MALFORMED_JSON', source: { pointer: '' } }, 'PATCH')
  t.same(await userNames(), ['ada', 'grace'], 'nothing was written')
})

t.test('cannot send prototype poisoning: a 400 that says which member is refused and why, not "not valid JSON"', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['{"data": {"type": "user", "attributes": {"name": "x", "__proto__": {"admin": true}}}}', '/data/attributes/__proto__', /member named `__proto__` is refused/],
    ['{"__proto__": null, "data": {"type": "user", "attributes": {"name": "x"}}}', '/__proto__', /`__proto__`/],
    ['{"data": {"type": "user", "attributes": {"name": "x"}, "meta": {"constructor": {"prototype": {"admin": true}}}}}', '/data/meta/constructor', /`constructor` member with a `prototype` is refused/],
  ]
  for (const [body, pointer, detail] of cases) {
    const response = await api.request('POST', '/users', { body, headers: { 'content-type': 'application/vnd.api+json' } })
    assertError(t, response, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer }, detail }, body)
  }
  const malformed = await api.request('POST', '/users', { body: '{"__proto__": ', headers: { 'content-type': 'application/vnd.api+json' } })
  assertError(t, malformed, { status: 400, code: 'FJA_MALFORMED_JSON', source: { pointer: '' } }, 'malformed as well: malformed')
  t.same(await userNames(), ['ada', 'grace'], 'nothing was written')
})

t.test('cannot send a query parameter that is not percent-encoded UTF-8: a 400 naming it, never ignored', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['/users?filter%5Bname%FF%5D=nobody', 'filter%5Bname%FF%5D', /^the parameter name 'filter%5Bname%FF%5D' is not percent-encoded UTF-8$/],
    ['/users?fields%5B%FF%5D=x', 'fields%5B%FF%5D', /is not percent-encoded UTF-8/],
    ['/users?filter[name]=%FF', 'filter[name]', /^the value of 'filter\[name\]' is not percent-encoded UTF-8$/],
    ['/users?sort=name&include=%E2%82', 'include', /the value of 'include'/],
    ['/users/1?fields[user]=%C0%AF', 'fields[user]', /the value of 'fields\[user\]'/],
    ['/users/1/computers?page[size]=%', 'page[size]', /the value of 'page\[size\]'/],
    ['/users/1/relationships/computers?%ZZ', '%ZZ', /the parameter name '%ZZ'/],
  ]
  for (const [url, parameter, detail] of cases) {
    assertError(t, await api.request('GET', url), { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', source: { parameter }, detail }, url)
  }
  const fine = await api.request('GET', '/users?filter[name]=%C3%A9%20x+y')
  t.equal(fine.status, 200, 'valid percent-encoding (and + for a space) is read as before')
})

t.test('an empty body with a JSON content type is a 400', async (t) => {
  for (const contentType of ['application/vnd.api+json', 'application/json']) {
    const post = await api.request('POST', '/users', { body: '', headers: { 'content-type': contentType } })
    assertError(t, post, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer: '' }, detail: /empty/ }, `POST ${contentType}`)
    const patch = await api.request('PATCH', '/users/1', { body: '', headers: { 'content-type': contentType } })
    assertError(t, patch, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer: '' }, detail: /empty/ }, `PATCH ${contentType}`)
  }
  t.same(await userNames(), ['ada', 'grace'])
})

t.test('a body that is not an object is a 400 with a pointer', async (t) => {
  for (const body of ['[]', '[{"data": {}}]', '"data"', '42', 'true', 'null']) {
    const response = await api.request('POST', '/users', { body })
    assertError(t, response, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer: '' } }, `POST ${body}`)
  }
  const patch = await api.request('PATCH', '/users/1', { body: '[1, 2]' })
  assertError(t, patch, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer: '' } }, 'PATCH [1, 2]')
  const noData = await api.request('POST', '/users', { body: { meta: {} } })
  assertError(t, noData, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer: '' }, detail: /data/ }, 'no data member')
  for (const data of [[], 'user', 1, null]) {
    const response = await api.request('POST', '/users', { body: { data } })
    assertError(t, response, { status: 400, code: 'FJA_INVALID_DOCUMENT', source: { pointer: '/data' } }, `data: ${JSON.stringify(data)}`)
  }
  t.same(await userNames(), ['ada', 'grace'])
})

t.test('an unknown route is a 404 FJA_ROUTE_NOT_FOUND', async (t) => {
  const cases: Array<[string, string]> = [
    ['GET', '/nothing'],
    ['GET', '/users/1/nothing/at/all'],
    ['POST', '/nothing'],
    ['DELETE', '/nothing/1'],
    ['GET', '/'],
  ]
  for (const [method, url] of cases) {
    const response = await api.request(method as 'GET', url)
    assertError(t, response, { status: 404, code: 'FJA_ROUTE_NOT_FOUND', source: undefined }, `${method} ${url}`)
    t.match(response.body.errors[0].detail, `${method} ${url}`, `${method} ${url}: detail names the route`)
  }
  const query = await api.request('GET', '/nothing?secret=1')
  t.notMatch(query.body.errors[0].detail, 'secret', 'the query string is not echoed')
})

t.test('a method the route lacks is a 405 with Allow', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['PUT', '/users/1', 'GET, PATCH, DELETE, HEAD'],
    ['POST', '/users/1', 'GET, PATCH, DELETE, HEAD'],
    ['PATCH', '/users', 'GET, POST, HEAD'],
    ['DELETE', '/users', 'GET, POST, HEAD'],
    ['PUT', '/users', 'GET, POST, HEAD'],
    ['PUT', '/computers/1', 'GET, PATCH, DELETE, HEAD'],
    ['DELETE', '/photos', 'GET, POST, HEAD'],
  ]
  for (const [method, url, allow] of cases) {
    const response = await api.request(method as 'GET', url, method === 'DELETE' ? {} : { body: { data: { type: 'user', id: '1', attributes: { name: 'x' } } } })
    assertError(t, response, { status: 405, code: 'FJA_METHOD_NOT_ALLOWED', source: undefined }, `${method} ${url}`)
    t.equal(response.headers.allow, allow, `${method} ${url}: Allow`)
    t.match(response.body.errors[0].detail, method, `${method} ${url}: detail names the method`)
  }
  t.same(await userNames(), ['ada', 'grace'], 'nothing was written')
})

t.test('a Content-Type that is not JSON:API or JSON is a 415', async (t) => {
  const cases: Array<[string, string]> = [
    ['text/plain', JSON.stringify(newUser('x'))],
    ['application/x-www-form-urlencoded', 'data[type]=user&data[attributes][name]=x'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--'],
    ['application/xml', '<data/>'],
    ['application/vnd.api+xml', '<data/>'],
  ]
  for (const [contentType, body] of cases) {
    const response = await api.request('POST', '/users', { body, headers: { 'content-type': contentType } })
    assertError(t, response, { status: 415, code: 'FJA_UNSUPPORTED_MEDIA_TYPE', source: { header: 'Content-Type' } }, contentType)
  }
  const patch = await api.request('PATCH', '/users/1', { body: JSON.stringify({ data: { type: 'user', id: '1', attributes: { name: 'x' } } }), headers: { 'content-type': 'text/plain' } })
  assertError(t, patch, { status: 415, code: 'FJA_UNSUPPORTED_MEDIA_TYPE', source: { header: 'Content-Type' } }, 'PATCH text/plain')
  t.same(await userNames(), ['ada', 'grace'], 'nothing was written')
})

t.test('application/vnd.api+json with parameters other than ext and profile is a 415', async (t) => {
  for (const contentType of [
    'application/vnd.api+json; charset=utf-8',
    'application/vnd.api+json; version=1',
    'application/vnd.api+json;version=1',
    'application/vnd.api+json; profile="https://example.com/p"; version=1',
    'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"; charset=utf-8',
    // JSON:API 1.1: an extension the server does not support is a 415.
    'application/vnd.api+json; ext="https://example.com/ext"',
    'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic https://example.com/ext"',
  ]) {
    const response = await api.request('POST', '/users', { body: newUser('x'), headers: { 'content-type': contentType } })
    assertError(t, response, { status: 415, code: 'FJA_UNSUPPORTED_MEDIA_TYPE', source: { header: 'Content-Type' } }, contentType)
  }
  const patch = await api.request('PATCH', '/users/1', { body: { data: { type: 'user', id: '1', attributes: { name: 'x' } } }, headers: { 'content-type': 'application/vnd.api+json; version=1' } })
  assertError(t, patch, { status: 415, code: 'FJA_UNSUPPORTED_MEDIA_TYPE', source: { header: 'Content-Type' } }, 'PATCH version=1')
  t.same(await userNames(), ['ada', 'grace'], 'nothing was written')
})

t.test('application/vnd.api+json with ext or profile, and application/json, are accepted', async (t) => {
  const accepted = [
    'application/vnd.api+json',
    'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
    'application/vnd.api+json; profile="https://example.com/profiles/a https://example.com/profiles/b"',
    'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"; profile="https://example.com/p"',
    'Application/VND.API+JSON',
    'application/json',
    'application/json; charset=utf-8',
  ]
  for (const [index, contentType] of accepted.entries()) {
    const response = await api.request('POST', '/users', { body: newUser(`user${index}`), headers: { 'content-type': contentType } })
    t.equal(response.status, 201, contentType)
    t.equal(response.body.data.attributes.name, `user${index}`, contentType)
  }
  t.same(await userNames(), ['ada', 'grace', ...accepted.map((_, index) => `user${index}`)])
})

t.test('an Accept whose JSON:API media types all carry unsupported parameters is a 406', async (t) => {
  for (const accept of [
    'application/vnd.api+json; version=1',
    'application/vnd.api+json; charset=utf-8',
    'application/vnd.api+json; version=1, application/vnd.api+json; charset=utf-8',
    'application/vnd.api+json; version=1, application/json',
    'application/vnd.api+json; version=1, */*',
  ]) {
    const response = await api.request('GET', '/users', { headers: { accept } })
    assertError(t, response, { status: 406, code: 'FJA_NOT_ACCEPTABLE', source: { header: 'Accept' } }, accept)
  }
  const post = await api.request('POST', '/users', { body: newUser('x'), headers: { accept: 'application/vnd.api+json; version=1' } })
  assertError(t, post, { status: 406, code: 'FJA_NOT_ACCEPTABLE', source: { header: 'Accept' } }, 'POST with version=1')
  t.same(await userNames(), ['ada', 'grace'], 'a refused request writes nothing')
})

t.test('acceptable Accept headers', async (t) => {
  for (const accept of [
    'application/vnd.api+json',
    'application/vnd.api+json; profile="x"',
    'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
    'application/vnd.api+json; version=1, application/vnd.api+json',
    'application/vnd.api+json; q=0.9',
    '*/*',
    'application/*',
    'application/json',
    'text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8',
  ]) {
    const response = await api.request('GET', '/users', { headers: { accept } })
    t.equal(response.status, 200, accept)
    t.same(response.body.data.map((user: { id: string }) => user.id), ['1', '2'], accept)
  }
  const none = await api.request('GET', '/users')
  t.equal(none.status, 200, 'no Accept')
})

t.test('a JSON body on DELETE is tolerated', async (t) => {
  const response = await api.request('DELETE', '/users/1', { body: { data: { type: 'user', id: '1' } } })
  t.equal(response.status, 200)
  t.same(response.body, { meta: { message: 'Object successfully deleted' }, jsonapi: { version: '1.0' } })
  const json = await api.request('DELETE', '/users/2', { body: { data: { type: 'user', id: '2' } }, headers: { 'content-type': 'application/json' } })
  t.equal(json.status, 200, 'application/json too')
  t.same(await userNames(), [])
})

t.test('a request body that is too large is a 413', async (t) => {
  const response = await api.request('POST', '/users', { body: newUser('x'.repeat(1024 * 1024 + 10)) })
  assertError(t, response, { status: 413, code: 'FJA_PAYLOAD_TOO_LARGE', source: undefined }, 'larger than bodyLimit')
  t.same(await userNames(), ['ada', 'grace'])
})

t.test('library errors carry their code, title and source', async (t) => {
  const missing = await api.request('GET', '/users/99')
  assertError(t, missing, { status: 404, code: 'FJA_RESOURCE_NOT_FOUND', source: undefined }, 'GET /users/99')
  const query = await api.request('GET', '/users?sort=nothing')
  assertError(t, query, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', source: { parameter: 'sort' } }, 'sort=nothing')
  const clientId = await api.request('POST', '/users', { body: { data: { type: 'user', id: '50', attributes: { name: 'x' } } } })
  assertError(t, clientId, { status: 403, code: 'FJA_CLIENT_ID_FORBIDDEN', source: { pointer: '/data/id' } }, 'client id')
  const type = await api.request('POST', '/users', { body: { data: { type: 'computer', attributes: { name: 'x' } } } })
  assertError(t, type, { status: 409, code: 'FJA_TYPE_CONFLICT', source: { pointer: '/data/type' } }, 'type conflict')
  const id = await api.request('PATCH', '/users/1', { body: { data: { type: 'user', id: '2', attributes: { name: 'x' } } } })
  assertError(t, id, { status: 409, code: 'FJA_ID_CONFLICT', source: { pointer: '/data/id' } }, 'id conflict')
  const required = await api.request('POST', '/users', { body: { data: { type: 'user', attributes: {} } } })
  assertError(t, required, { status: 422, code: 'FJA_MISSING_FIELD', source: { pointer: '/data/attributes' } }, 'missing name')
  t.same(required.body.errors[0].meta, { field: 'name' })
  const readOnly = await api.request('POST', '/users', { body: { data: { type: 'user', attributes: { name: 'x', display_name: 'X' } } } })
  assertError(t, readOnly, { status: 422, code: 'FJA_READ_ONLY_FIELD', source: { pointer: '/data/attributes/display_name' } }, 'read-only')
  const invalid = await api.request('POST', '/users', { body: { data: { type: 'user', attributes: { name: 'x', age: 'old' } } } })
  assertError(t, invalid, { status: 422, code: 'FJA_VALIDATION', source: { pointer: '/data/attributes/age' } }, 'invalid age')
  t.same(await userNames(), ['ada', 'grace'])
})

t.test('several invalid fields: one error object each', async (t) => {
  const response = await api.request('POST', '/users', { body: { data: { type: 'user', attributes: { age: 'old', nothing: 1 } } } })
  t.equal(response.status, 422)
  t.match(response.headers['content-type'], JSONAPI)
  const errors = response.body.errors as Array<{ status: string; code: string; source: ErrorSource }>
  t.same(errors.map((error) => [error.status, error.code, error.source.pointer]).sort(), [
    ['422', 'FJA_MISSING_FIELD', '/data/attributes'],
    ['422', 'FJA_UNKNOWN_FIELD', '/data/attributes/nothing'],
    ['422', 'FJA_VALIDATION', '/data/attributes/age'],
  ])
})

/** A raw HTTP exchange with a listening app: the bytes sent, the status and the body answered. */
async function rawExchange (port: number, bytes: string): Promise<{ status: number, contentType: string | undefined, body: string }> {
  const socket = connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk) => chunks.push(chunk))
  await once(socket, 'connect')
  socket.write(bytes)
  await once(socket, 'close')
  const text = Buffer.concat(chunks).toString('utf8')
  const [head, ...rest] = text.split('\r\n\r\n')
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
    contentType: /^content-type: *(.*)$/im.exec(head)?.[1]?.trim(),
    body: rest.join('\r\n\r\n'),
  }
}

t.test('cannot reach a route with a URL or request the router or HTTP parser refuses: JSON:API errors, not Fastify\'s JSON', async (t) => {
  const routerErrors: Array<[string, number, ErrorCode]> = [
    ['/users/%FF', 400, 'FJA_INVALID_URL'],
    ['/users/%E2%82', 400, 'FJA_INVALID_URL'],
    [`/users/${'1'.repeat(101)}`, 414, 'FJA_URI_TOO_LONG'],
    [`/users/1/relationships/${'x'.repeat(200)}`, 414, 'FJA_URI_TOO_LONG'],
  ]
  for (const [url, status, code] of routerErrors) {
    const response = await api.app.inject({ method: 'GET', url })
    const body = response.json()
    const rendered: TestResponse = { status: response.statusCode, headers: response.headers, text: response.body, body }
    assertError(t, rendered, { status, code }, url)
    t.same(jsonApiSchemaErrors(body), [], `${url}: a valid JSON:API document`)
  }
  // Node's parser, before there is a request: only over a socket
  await api.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = api.app.server.address() as AddressInfo
  const parserErrors: Array<[string, string, number, ErrorCode]> = [
    ['headers over 16 KiB', `GET /users HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'FJA_HEADERS_TOO_LARGE'],
    ['bytes that are not HTTP', 'HELLO THERE\r\n\r\n', 400, 'FJA_BAD_REQUEST'],
    ['a header line without a colon', 'GET /users HTTP/1.1\r\nHost x\r\n\r\n', 400, 'FJA_BAD_REQUEST'],
  ]
  for (const [label, bytes, status, code] of parserErrors) {
    const answer = await rawExchange(port, bytes)
    t.equal(answer.status, status, `${label}: status`)
    t.equal(answer.contentType, 'application/vnd.api+json', `${label}: media type`)
    const body = JSON.parse(answer.body)
    t.same(jsonApiSchemaErrors(body), [], `${label}: a valid JSON:API document`)
    t.match(body, { errors: [{ status: String(status), code, title: ERROR_CODES[code].title }], jsonapi: { version: '1.0' } }, label)
  }
  const fine = await rawExchange(port, 'GET /users/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(fine.status, 200, 'a well-formed request over the same server is answered as always')
})
