/**
 * The cursor codec (signed, bound to a context, rotatable secrets, never reading what it did not sign) and how
 * `readQuery` reads a cursor request into the page node: the window, its context, and every 400 before any SQL.
 */
import t from 'tap'
import { createHmac } from 'node:crypto'
import { CURSOR_ERROR_TYPES, CursorCodec, MAX_CURSOR_VALUE_BYTES, cursorValueDigest } from '../../../lib/query/cursors.js'
import { keysetKeys, printSort } from '../../../lib/query/query-tree.js'
import { readQuery, type CursorReading } from '../../../lib/request/read-query.js'
import type { QueryLimits } from '../../../lib/contracts/query-limits.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { JsonApiError } from '../../../lib/errors/json-api-error.js'
import { resources } from '../../../examples/app/resources.js'

const graph = resolveResources(resources)
const user = graph.getResource('user')

const LIMITS: QueryLimits = {
  defaultPageSize: 30,
  maxPageSize: 100,
  unpaged: 'allowed',
  maxIncludeDepth: 3,
  maxIncludePaths: 10, includePageSize: 10,
  sort: { maxKeys: 10, maxDepth: 3 },
  filter: { maxDepth: 8, maxNodes: 200, maxTextNodes: 5 },
}

t.test('the codec: round trip, edges, context, secrets', async (t) => {
  const codec = new CursorCodec(['a secret of at least thirty-two bytes!'])
  const position = { values: ['2024-03-01 10:00:00.123456+00', null, '42'], edge: 'on' as const }
  const cursor = codec.encode(position, 'ctx')
  t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/, 'base64url payload, a dot, a base64url HMAC-SHA256')
  t.equal(codec.encode(position, 'ctx'), cursor, 'deterministic')
  t.same(codec.decode(cursor, 'ctx', 3), position)
  for (const edge of ['before', 'after'] as const) t.same(codec.decode(codec.encode({ ...position, edge }, 'ctx'), 'ctx', 3), { ...position, edge })
  t.match(codec.decode(cursor, 'other', 3), { problem: /not issued/ }, 'another context')
  t.match(codec.decode(cursor, 'ctx', 2), { problem: /does not fit/ }, 'another number of keys')
  t.match(new CursorCodec().decode(cursor, 'ctx', 3), { problem: /not issued/ }, 'another secret')
  t.match(new CursorCodec().decode(new CursorCodec().encode(position, 'ctx'), 'ctx', 3), { problem: /not issued/ }, 'two random keys differ')
  const rotated = new CursorCodec(['the new secret, thirty-two bytes or more', new TextEncoder().encode('a secret of at least thirty-two bytes!')])
  t.same(rotated.decode(cursor, 'ctx', 3), position, 'an old secret still verifies')
  t.match(codec.decode(rotated.encode(position, 'ctx'), 'ctx', 3), { problem: /not issued/ }, 'the first secret signs')

  const [payload, mac] = cursor.split('.')
  for (const text of ['', '.', 'abc', `${payload}.`, `.${mac}`, `${payload}.${mac}=`, `${payload}.${mac.slice(1)}A`, `${payload}x.${mac}`, `${'A'.repeat(20_000)}.${mac}`]) {
    t.hasProp(codec.decode(text, 'ctx', 3), 'problem', JSON.stringify(text.slice(0, 40)))
  }
  const other = codec.encode({ values: ['x'], edge: 'on' }, 'ctx')
  t.hasProp(codec.decode(`${payload}.${other.split('.')[1]}`, 'ctx', 3), 'problem', 'a payload under the MAC of another')
  t.hasProp(codec.decode(`${other.split('.')[0]}.${mac}`, 'ctx', 1), 'problem', 'and the other way round')
  t.same(CURSOR_ERROR_TYPES.maxSizeExceeded, 'https://jsonapi.org/profiles/ethanresnick/cursor-pagination/max-size-exceeded')
})

t.test('the codec: values too long to carry are elided, the longest first, never the id', async (t) => {
  const secret = 'a secret of at least thirty-two bytes!'
  const codec = new CursorCodec([secret])
  const payloadOf = (cursor: string): unknown => JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8'))
  const long = 'é'.repeat(20_000)
  const medium = 'm'.repeat(700)
  const short = 's'.repeat(200)
  const id = 'i'.repeat(30)
  const position = { values: [short, long, medium, null, id], edge: 'after' as const }
  const cursor = codec.encode(position, 'ctx')
  t.ok(cursor.length < 2 * MAX_CURSOR_VALUE_BYTES, `a 20,000-character value gives a cursor of ${cursor.length} characters`)
  t.same(payloadOf(cursor), [[short, { d: cursorValueDigest(long) }, medium, null, id], 'a'], 'the longest value elided; the others fit')
  t.same(codec.decode(cursor, 'ctx', 5), { values: [short, { digest: cursorValueDigest(long) }, medium, null, id], edge: 'after' }, 'read back as an elided value')
  t.equal(codec.encode(position, 'ctx'), cursor, 'deterministic')
  const two = codec.encode({ values: [medium, medium, medium, id], edge: 'on' }, 'ctx')
  t.same(payloadOf(two), [[{ d: cursorValueDigest(medium) }, { d: cursorValueDigest(medium) }, medium, id]], 'ties: the first ones elided until the rest fits')
  const fits = { values: ['x'.repeat(MAX_CURSOR_VALUE_BYTES - 10), '1'], edge: 'on' as const }
  t.same(payloadOf(codec.encode(fits, 'ctx')), [fits.values], 'values that fit are carried whole')
  const longId = { values: ['a', 'i'.repeat(3000)], edge: 'on' as const }
  t.same(codec.decode(codec.encode(longId, 'ctx'), 'ctx', 2), longId, 'the id is never elided: it points at the row')
  t.equal(cursorValueDigest(long), cursorValueDigest(`${long}`), 'a digest depends on the value only')
  t.not(cursorValueDigest(long), cursorValueDigest(`${long}x`))
  t.match(cursorValueDigest(long), /^[A-Za-z0-9_-]{22}$/, '128 bits, base64url')

  // Payloads this server signed but that hold no position (written here with the secret): refused, never read on.
  const signed = (body: unknown): string => {
    const payload = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url')
    return `${payload}.${createHmac('sha256', secret).update(`fastify-jsonapi cursor v1\nctx\n${payload}`).digest('base64url')}`
  }
  t.same(codec.decode(signed([[{ d: cursorValueDigest(long) }, '1']]), 'ctx', 2), { values: [{ digest: cursorValueDigest(long) }, '1'], edge: 'on' }, 'the signing written here is the codec\'s')
  for (const body of [
    [[{ d: 'short' }, '1']], [[{ d: cursorValueDigest(long), e: 1 }, '1']], [[{ digest: cursorValueDigest(long) }, '1']],
    [[['x'], '1']], [[1, '1']], [['a', { d: cursorValueDigest(long) }]], [['a', null]],
  ]) {
    t.match(codec.decode(signed(body), 'ctx', 2), { problem: /does not fit/ }, JSON.stringify(body))
  }
})

t.test('keysetKeys: the sort up to the id, or with the id appended', async (t) => {
  const read = (sort: string) => readQuery({ sort }, user, graph, LIMITS, true).sort
  t.equal(printSort(keysetKeys(read('name'), user)), 'name,id')
  t.equal(printSort(keysetKeys(read('-age,-id,name'), user)), '-age,-id', 'keys after the id never decide')
  t.equal(printSort(keysetKeys(read('group.id,age'), user)), 'group.id,age,id', 'a related id is not the id')
  t.equal(printSort(keysetKeys([], user)), 'id')
})

t.test('readQuery: a cursor request becomes a window with its context', async (t) => {
  const codec = new CursorCodec()
  const reading = (requested = false, collection = 'user'): CursorReading => ({ codec, collection, requested })
  const plain = readQuery({ 'page[size]': '5' }, user, graph, LIMITS, true, reading())
  t.equal(plain.page.cursor, undefined, 'no cursor, no profile: by number')
  const first = readQuery({ 'page[size]': '5', sort: '-age', 'filter[name]': 'ada' }, user, graph, LIMITS, true, reading(true))
  t.match(first.page, { number: 1, size: 5, cursor: { context: String } })
  t.same(JSON.parse(first.page.cursor!.context), ['user', '-age,id', { name: 'name', op: 'eq', val: 'ada' }])
  t.notOk('after' in first.page.cursor! || 'before' in first.page.cursor!, 'the first page')
  const cursor = codec.encode({ values: ['36', '1'], edge: 'on' }, first.page.cursor!.context)
  const next = readQuery({ 'page[after]': cursor, sort: '-age', 'filter[name]': 'ada' }, user, graph, LIMITS, true, reading())
  t.same(next.page.cursor!.after, { values: ['36', '1'], edge: 'on' })
  t.equal(next.page.size, 30, 'the default size')
  const range = readQuery({ 'page[after]': cursor, 'page[before]': cursor, sort: '-age', 'filter[name]': 'ada' }, user, graph, LIMITS, true, reading())
  t.equal(range.page.size, 100, 'a range: the maximum size')
  t.equal(readQuery({ 'page[after]': 'x' }, user, graph, LIMITS, false, reading()).page.cursor, undefined, 'not a collection: ignored')
  t.equal(readQuery({ 'page[number]': '2' }, user, graph, LIMITS, true, reading(true)).page.number, 2, 'the profile with page[number]: by number')

  const refused = (raw: Record<string, string>, code: string, parameter: string, type: string = CURSOR_ERROR_TYPES.invalidParameterValue, collection = 'user') => {
    try {
      readQuery(raw, user, graph, LIMITS, true, reading(true, collection))
      t.fail(`${JSON.stringify(raw)}: no error`)
    } catch (error) {
      t.type(error, JsonApiError)
      t.match((error as JsonApiError).errors, [{ status: '400', code, source: { parameter }, links: { type } }], JSON.stringify(raw))
    }
  }
  refused({ 'page[size]': '101' }, 'FJA_MAX_PAGE_SIZE_EXCEEDED', 'page[size]', CURSOR_ERROR_TYPES.maxSizeExceeded)
  refused({ 'page[size]': '0' }, 'FJA_INVALID_QUERY_PARAMETER', 'page[size]')
  refused({ 'page[size]': '+1' }, 'FJA_INVALID_QUERY_PARAMETER', 'page[size]')
  refused({ 'page[after]': cursor, 'page[number]': '1' }, 'FJA_INVALID_QUERY_PARAMETER', 'page[number]')
  refused({ 'page[after]': cursor, sort: 'age', 'filter[name]': 'ada' }, 'FJA_INVALID_CURSOR', 'page[after]')
  refused({ 'page[before]': cursor, sort: '-age', 'filter[name]': 'ada' }, 'FJA_INVALID_CURSOR', 'page[before]', undefined, 'user/1/computers')
  refused({ 'page[after]': cursor, sort: '-age' }, 'FJA_INVALID_CURSOR', 'page[after]')
  try {
    readQuery({ 'page[after]': cursor }, user, graph, LIMITS, true)
    t.fail('no error')
  } catch (error) {
    t.match((error as JsonApiError).errors, [{ code: 'FJA_INVALID_QUERY_PARAMETER', source: { parameter: 'page[after]' } }], 'without a codec: no cursor pagination')
  }
})
