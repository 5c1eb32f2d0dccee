/**
 * The requests in the documentation answer what it prints. Every HTTP request shown in README.md, docs/*.md (every
 * page, new ones included) and examples/README.md runs through `inject` against the app and the data its page names,
 * and its answer is checked against what the page says — as test/docs/code-blocks.test.ts type-checks the code.
 *
 * What a request is:
 *
 * - In a plain ``` block or an ```http block, a line `METHOD /path?query` (GET, HEAD, POST, PUT, PATCH, DELETE,
 *   OPTIONS). Text after two or more spaces is an explanation, not part of the URL. Lines `Name: value` right after it
 *   are its headers; a blank line then JSON is its body (an ```http block). Lines starting with `#` are comments. The
 *   URL is shown unencoded: each query parameter is sent as a client sends it, name and value with
 *   `encodeURIComponent` (a JSON `filter` value is read to its closing bracket, so `&` inside it stays in it).
 * - In a ```sh block, each `curl` command, as curl would send it: `-X`, `-H`, `-d`/`--data`/`--data-raw`,
 *   `--data-urlencode`, `-G`, the URL (`http://127.0.0.1:3000` or `http://localhost:3000`, the example app's address)
 *   sent as written (brackets too: `-g`), a body without `Content-Type` sent as curl sends it
 *   (`application/x-www-form-urlencoded`), `Accept: *\/*`. Shell variables assigned in the block (`API=…`, `H='…'`)
 *   are expanded; `NAME=$(curl … | grep -i '^etag:' …)` runs that curl and takes the value of the header it greps.
 *   Other commands (`npm`, `npx`, the rest of a pipeline) are not run.
 *
 * What the page says it answers:
 *
 * - A block right after the request block — separated from it by blank lines only, or by a status line
 *   `` `201`, `Location: /computers/5`: `` (the status, and headers the answer must have) — is part of its exchange:
 *   a ```json block is the printed answer; two ```json blocks after a POST, PATCH, PUT or DELETE without a body of its
 *   own are its body, then the answer; an ```http or plain block starting with `HTTP/1.1 <status>` is the response
 *   (status, headers, and a body after a blank line, or else in a ```json block right after it). The exchange belongs
 *   to the last request of the block. A block that is not right after its request names it:
 *   `<!-- requests: answer of GET /users/1?include=computers -->` (the request as the page shows it, on the page
 *   before; `…` elides) as the last thing before its fence.
 * - The explanation of a request line (`GET /users/99   404`), or the shell comment on a curl's line or on the
 *   lines right after it, says: a status when it starts with one (`# 404`, `# 200; …`, `# HTTP/1.1 304 Not Modified`),
 *   an empty answer when it has the word `empty` (`# an empty list`), and, after a `curl -i`, a header of the answer
 *   (`# ETag: "…"`, its value a pattern like a string's below, up to two spaces). Any other text is prose.
 *
 * What is checked, for each request (one assertion, `<page>:<line> METHOD /url`):
 *
 * - no 5xx; the status the page shows (the response's, the status line's, the explanation's, or the `status` of every
 *   error of a printed error document), and a 2xx when it shows none;
 * - every body of a JSON:API media type is a valid JSON:API document (test/helpers/jsonapi-schema.ts; atomic results
 *   as such), and on the example app an answer its OpenAPI document declares (other bodies, `GET /openapi.json`'s,
 *   are not JSON:API);
 * - a printed answer matches the actual document as a pattern (below);
 * - **a GET finds something**: a 200 whose document has `data` has a non-empty one (an array with members, or a
 *   resource), unless the page prints `"data": []` or `"data": null`, or says `empty` — and then it is empty. A
 *   sample that matches nothing is exactly what this catches.
 *
 * Printed answers are JSON with `…` (U+2026) for what is elided, matched strictly otherwise:
 *
 * - `…` as an object member (`{ "type": "user", … }`): the object may have more members; without it, it has exactly
 *   the printed members (in any order). `{ … }`: any object.
 * - `…` as an array element: any run of elements there, none included (`[ … ]`: any array; `[{…}, …]`: at least one);
 *   without it, exactly the printed elements in order.
 * - `…` as a value: anything. `…` inside a string: any text there (`"W1siZ3…"`, `"…"`: any string); a string without it
 *   is equal. Numbers, booleans and `null` are equal; nothing matches across JSON types.
 *
 * Which app and data — `<!-- requests: … -->` HTML comments (GitHub does not render them), on a line of their own:
 *
 * - `<!-- requests: example-app <data> -->`: from here on, until the next such comment, the page's requests run
 *   against the example app (examples/app) on a database loaded at this comment with `<data>`: `SEED=1` (the demo data
 *   of examples/app/seed.ts, `SEED=1 npm start`), `empty` (`npm start`), or `linked-rows` (the rows of
 *   test/helpers/seed-linked-rows.ts that docs/relationships.md lists). The page's requests then share that database
 *   in page order: a request sees what the requests before it wrote (create, then read).
 *   `<!-- requests: example-app <data>, each block fresh -->`: every request block starts from a fresh copy of the
 *   data instead (for pages whose examples each start from the same data).
 * - `<!-- requests: page-app -->`: the app that the page's last TypeScript block before the comment builds and
 *   listens with (`await app.listen(…)`): that block runs as a module (written under tmp/, its `fastify-jsonapi`
 *   imports mapped to lib/, without the `listen`, its logger off), on the fresh database it creates itself.
 * - `<!-- requests: skip (the reason) -->`, the last thing before a request block's fence: the block is not run; the
 *   reason is required, and the skips are counted and printed. For requests that cannot run here only.
 * - `<!-- requests: answer of <request> -->`: see above.
 *
 * A page with a request must say which app and data it runs on before it. One example app (one PGlite, or a schema on
 * `DATABASE_URL`) serves every page, emptied and reloaded at each `example-app` comment (and block, with `each block
 * fresh`); each `page-app` starts the database its block creates.
 */
import t from 'tap'
import { fencedBlocks } from '../helpers/markdown.js'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { seed } from '../../examples/app/seed.js'
import { atomicResultsErrors, jsonApiSchemaErrors } from '../helpers/jsonapi-schema.js'
import { openApiProblems } from '../helpers/openapi-conformance.js'
import { seedLinkedRows } from '../helpers/seed-linked-rows.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { onlyOn } from '../helpers/engine.js'
import type { EngineName } from '../../lib/index.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The pages whose requests run: the README, every page of docs/ (new ones included), the examples' README. */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`),
  'examples/README.md',
]

const ELLIPSIS = '…'

// ---------------------------------------------------------------------------------------------------------------
// Printed answers: JSON patterns with `…`

type Pattern =
  | { readonly kind: 'anything' }
  | { readonly kind: 'scalar', readonly value: null | boolean | number }
  | { readonly kind: 'string', readonly parts: readonly string[] }
  | { readonly kind: 'array', readonly items: ReadonlyArray<Pattern | 'gap'> }
  | { readonly kind: 'object', readonly members: ReadonlyMap<string, Pattern>, readonly open: boolean }

/** Reads a printed answer: JSON, with `…` as an object member, an array element or a value. Throws on anything else. */
function parsePattern (text: string): Pattern {
  let at = 0
  const fail = (what: string): never => {
    const line = text.slice(0, at).split('\n').length
    throw new Error(`${what} at line ${line} of the block, near ${JSON.stringify(text.slice(at, at + 20))}`)
  }
  const space = () => {
    while (at < text.length && /\s/.test(text[at])) at++
  }
  const take = (token: string): boolean => {
    space()
    if (!text.startsWith(token, at)) return false
    at += token.length
    return true
  }
  const string = (): string => {
    const start = at
    at++
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1
    if (at >= text.length) fail('an unterminated string')
    at++
    return JSON.parse(text.slice(start, at)) as string
  }
  const value = (): Pattern => {
    space()
    if (take(ELLIPSIS)) return { kind: 'anything' }
    if (take('{')) {
      const members = new Map<string, Pattern>()
      let open = false
      if (take('}')) return { kind: 'object', members, open }
      do {
        if (take(ELLIPSIS)) {
          if (open) fail('a second … in one object')
          open = true
          continue
        }
        space()
        if (text[at] !== '"') fail('a member name expected')
        const name = string()
        if (members.has(name)) fail(`the member "${name}" twice`)
        if (!take(':')) fail('":" expected')
        members.set(name, value())
      } while (take(','))
      if (!take('}')) fail('"," or "}" expected')
      return { kind: 'object', members, open }
    }
    if (take('[')) {
      const items: Array<Pattern | 'gap'> = []
      if (take(']')) return { kind: 'array', items }
      do {
        space()
        // `…` alone is a gap; `…` before anything else (none in JSON) would be an error below.
        if (take(ELLIPSIS)) items.push('gap')
        else items.push(value())
      } while (take(','))
      if (!take(']')) fail('"," or "]" expected')
      return { kind: 'array', items }
    }
    if (text[at] === '"') return { kind: 'string', parts: string().split(ELLIPSIS) }
    for (const [word, literal] of [['true', true], ['false', false], ['null', null]] as const) {
      if (take(word)) return { kind: 'scalar', value: literal }
    }
    const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(at))
    if (number !== null) {
      at += number[0].length
      return { kind: 'scalar', value: Number(number[0]) }
    }
    return fail('a JSON value or … expected')
  }
  const pattern = value()
  space()
  if (at < text.length) fail('text after the value')
  return pattern
}

/** Whether `actual` is text that the parts of a string pattern (split at `…`) match. */
function matchesText (parts: readonly string[], actual: string): boolean {
  if (parts.length === 1) return actual === parts[0]
  const first = parts[0]
  const last = parts[parts.length - 1]
  if (actual.length < first.length + last.length || !actual.startsWith(first) || !actual.endsWith(last)) return false
  let position = first.length
  const end = actual.length - last.length
  for (const part of parts.slice(1, -1)) {
    const found = actual.indexOf(part, position)
    if (found === -1 || found + part.length > end) return false
    position = found + part.length
  }
  return true
}

const show = (value: unknown): string => {
  const text = value === undefined ? 'nothing' : JSON.stringify(value)
  return text.length > 160 ? `${text.slice(0, 157)}…` : text
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The first difference between a pattern and a value (`$.data[0].id: …`), or undefined when it matches. */
function mismatch (pattern: Pattern, actual: unknown, path = '$'): string | undefined {
  switch (pattern.kind) {
    case 'anything':
      return actual === undefined ? `${path}: missing` : undefined
    case 'scalar':
      return actual === pattern.value ? undefined : `${path}: expected ${show(pattern.value)}, got ${show(actual)}`
    case 'string':
      return typeof actual === 'string' && matchesText(pattern.parts, actual)
        ? undefined
        : `${path}: expected ${show(pattern.parts.join(ELLIPSIS))}, got ${show(actual)}`
    case 'array': {
      if (!Array.isArray(actual)) return `${path}: expected an array, got ${show(actual)}`
      const items = pattern.items
      if (!items.includes('gap')) {
        if (items.length !== actual.length) return `${path}: expected ${items.length} elements, got ${actual.length}: ${show(actual)}`
        for (let i = 0; i < items.length; i++) {
          const found = mismatch(items[i] as Pattern, actual[i], `${path}[${i}]`)
          if (found !== undefined) return found
        }
        return undefined
      }
      const fits = (i: number, j: number): boolean => {
        if (i === items.length) return j === actual.length
        const item = items[i]
        if (item === 'gap') {
          for (let k = j; k <= actual.length; k++) if (fits(i + 1, k)) return true
          return false
        }
        return j < actual.length && mismatch(item, actual[j]) === undefined && fits(i + 1, j + 1)
      }
      return fits(0, 0) ? undefined : `${path}: the ${actual.length} elements do not match the printed ones (… being any run of elements): ${show(actual)}`
    }
    case 'object': {
      if (!isObject(actual)) return `${path}: expected an object, got ${show(actual)}`
      for (const [name, member] of pattern.members) {
        const where = /^[A-Za-z_][\w]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`
        if (!Object.hasOwn(actual, name)) return `${where}: missing`
        const found = mismatch(member, actual[name], where)
        if (found !== undefined) return found
      }
      const more = Object.keys(actual).filter((name) => !pattern.members.has(name))
      if (!pattern.open && more.length > 0) return `${path}: members not printed (and no …): ${more.join(', ')}`
      return undefined
    }
  }
}

/** The status an error document shows, when every error of it has the same `status`. */
function printedErrorStatus (pattern: Pattern): number | undefined {
  if (pattern.kind !== 'object') return undefined
  const errors = pattern.members.get('errors')
  if (errors?.kind !== 'array') return undefined
  const statuses = new Set(errors.items.map((item) => {
    if (item === 'gap' || item.kind !== 'object') return undefined
    const status = item.members.get('status')
    return status?.kind === 'string' && status.parts.length === 1 ? status.parts[0] : undefined
  }))
  const [status] = statuses
  return statuses.size === 1 && status !== undefined && /^[1-5]\d\d$/.test(status) ? Number(status) : undefined
}

/** Whether a printed answer shows an empty primary data (`"data": []` or `"data": null`). */
function printsEmptyData (pattern: Pattern | undefined): boolean {
  if (pattern?.kind !== 'object') return false
  const data = pattern.members.get('data')
  return (data?.kind === 'scalar' && data.value === null) || (data?.kind === 'array' && data.items.length === 0)
}

t.test('the pattern matcher of printed answers', async (t) => {
  const matches = (pattern: string, actual: unknown) => mismatch(parsePattern(pattern), actual) === undefined
  const must = [
    ['{ "a": 1, "b": "x" }', { b: 'x', a: 1 }, 'members in any order'],
    ['{ "a": 1, … }', { a: 1, b: 2 }, 'an open object'],
    ['{ … }', {}, '{ … } is any object, an empty one too'],
    ['{ "links": { … } }', { links: { self: '/x' } }, 'a nested open object'],
    ['[ … ]', [], '[ … ] is any array, an empty one too'],
    ['[1, …]', [1, 2, 3], 'a gap at the end'],
    ['[…, 3]', [1, 2, 3], 'a gap at the start'],
    ['[1, …, 3]', [1, 3], 'a gap of no element'],
    ['[{ "id": "2", … }, …]', [{ id: '2', type: 'user' }], 'open objects in an array'],
    ['"…"', '', '"…" is any string'],
    ['"W1sia…"', 'W1siaWQiXV0.abc', 'a string prefix'],
    ['"…/max-size-exceeded"', 'https://x/max-size-exceeded', 'a string suffix'],
    ['"a…b…c"', 'a-b-b-c', 'several elisions in a string'],
    ['"\\"harvard mark\\""', '"harvard mark"', 'escapes'],
    ['{ "n": 1.0, "z": null, "b": false }', { n: 1, z: null, b: false }, 'numbers by value, null and booleans'],
    ['{ "data": … }', { data: [1] }, '… as a value'],
  ] as const
  for (const [pattern, actual, what] of must) t.ok(matches(pattern, actual), `matches: ${what}`)
  const mustNot = [
    ['{ "a": 1 }', { a: 1, b: 2 }, 'a member that is not printed, without …'],
    ['{ "a": 1, … }', { b: 2 }, 'a printed member that is missing'],
    ['{ "a": null }', {}, 'null is not a missing member'],
    ['{ "a": … }', {}, '… as a value is not a missing member'],
    ['[1, 2]', [1, 2, 3], 'an element more'],
    ['[1, 2]', [2, 1], 'another order'],
    ['[]', [{}], '[] is empty'],
    ['[1, …]', [2, 1], 'a gap does not reorder'],
    ['[…, 3]', [3, 1], 'a gap at the start still ends with the printed element'],
    ['[{ "id": "1", … }, …]', [], 'a printed element needs an element'],
    ['"A1"', 'AE-1815', 'another string'],
    ['"AE-…"', 'MARK-2', 'another prefix'],
    ['"…-2"', 'MARK-3', 'another suffix'],
    ['"a…b…c"', 'acb', 'the parts in order'],
    ['"ab…ba"', 'aba', 'the parts do not overlap'],
    ['1', '1', 'a number is not a string'],
    ['"1"', 1, 'a string is not a number'],
    ['"…"', 5, '"…" is a string'],
    ['{ … }', [], 'an array is not an object'],
    ['[ … ]', {}, 'an object is not an array'],
    ['null', false, 'null is not false'],
    ['{ "data": [{ "id": "1", … }] }', { data: [{ id: '2' }] }, 'a difference deep inside'],
  ] as const
  for (const [pattern, actual, what] of mustNot) t.notOk(matches(pattern, actual), `does not match: ${what}`)
  t.equal(mismatch(parsePattern('{ "data": [{ "id": "1", … }] }'), { data: [{ id: '2' }] }), '$.data[0].id: expected "1", got "2"', 'says where')
  for (const [broken, what] of [
    ['{ "a": 1, }', 'a trailing comma'],
    ['{ "a" }', 'a member without a value'],
    ['{ "a": 1, "a": 2 }', 'a member twice'],
    ['{ …, … }', 'two … in one object'],
    ['[1 2]', 'a missing comma'],
    ['{ "a": 1 } x', 'text after the value'],
    ['...', 'three dots instead of …'],
    ['{ a: 1 }', 'an unquoted name'],
  ] as const) t.throws(() => parsePattern(broken), `is no pattern: ${what}`)
  t.ok(printsEmptyData(parsePattern('{ "data": [], … }')) && printsEmptyData(parsePattern('{ "data": null }')), 'empty data printed')
  t.notOk(printsEmptyData(parsePattern('{ "data": [ … ] }')), '[ … ] does not print empty data')
  t.equal(printedErrorStatus(parsePattern('{ "errors": [{ "status": "404", … }, { "status": "404" }] }')), 404, 'the status of an error document')
  t.equal(printedErrorStatus(parsePattern('{ "errors": [{ "status": "404" }, { "status": "409" }] }')), undefined, 'none when errors differ')
})

// ---------------------------------------------------------------------------------------------------------------
// Markdown: fenced blocks and `requests:` comments

interface Line {
  readonly text: string
  readonly line: number
}

interface Block {
  readonly page: string
  /** The line of its opening fence (1-based). */
  readonly line: number
  readonly lang: string
  readonly lines: readonly Line[]
  /** The non-blank lines between the previous block (or the start of the page) and this fence. */
  readonly gap: readonly Line[]
}

function readBlocks (page: string): Block[] {
  const source = readFileSync(join(ROOT, page), 'utf8').split(/\r?\n/)
  let after = 0
  return fencedBlocks(source).map(({ start, end, lang, lines }) => {
    // the non-blank lines between the previous block and this one
    const gap = source.slice(after, start).flatMap((text, index) => text.trim() === '' ? [] : [{ text: text.trim(), line: after + index + 1 }])
    after = end + 1
    return { page, line: start + 1, lang, lines, gap }
  })
}

type Data = 'SEED=1' | 'empty' | 'linked-rows'
const DATA: readonly Data[] = ['SEED=1', 'empty', 'linked-rows']

type Setting =
  | { readonly app: 'example-app', readonly data: Data, readonly eachBlockFresh: boolean, readonly line: number }
  | { readonly app: 'page-app', readonly block: Block, readonly line: number }

type Directive =
  | { readonly kind: 'setting', readonly setting: Setting }
  | { readonly kind: 'skip', readonly reason: string }
  | { readonly kind: 'answer', readonly of: string }
  | { readonly kind: 'invalid', readonly problem: string }

const DIRECTIVE = /^<!--\s*requests:\s*(.*?)\s*-->$/

function readDirective (text: string, line: number, blocks: readonly Block[], page: string): Directive {
  const body = DIRECTIVE.exec(text)?.[1]
  if (body === undefined) return { kind: 'invalid', problem: `${page}:${line}: a requests: comment stands on one line, <!-- requests: … -->` }
  const skip = /^skip\s*\((.*\S.*)\)$/.exec(body)
  if (skip !== null) return { kind: 'skip', reason: skip[1].trim() }
  const answer = /^answer of\s+(\S.*)$/.exec(body)
  if (answer !== null) return { kind: 'answer', of: answer[1] }
  const example = /^example-app\s+(\S+?)(,\s*each block fresh)?$/.exec(body)
  if (example !== null) {
    const data = example[1] as Data
    if (!DATA.includes(data)) return { kind: 'invalid', problem: `${page}:${line}: unknown data '${example[1]}' (known: ${DATA.join(', ')})` }
    return { kind: 'setting', setting: { app: 'example-app', data, eachBlockFresh: example[2] !== undefined, line } }
  }
  if (body === 'page-app') {
    const block = blocks.filter((block) => block.line < line && (block.lang === 'ts' || block.lang === 'typescript'))
      .filter((block) => block.lines.some(({ text }) => /^\s*await app\.listen\(/.test(text))).at(-1)
    if (block === undefined) return { kind: 'invalid', problem: `${page}:${line}: page-app, but no TypeScript block before it listens (\`await app.listen(…)\`)` }
    return { kind: 'setting', setting: { app: 'page-app', block, line } }
  }
  return {
    kind: 'invalid',
    problem: `${page}:${line}: '${body}' is not a requests: comment: write 'example-app <data>[, each block fresh]', 'page-app', 'skip (<reason>)' or 'answer of <request>'`,
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

interface Expectation {
  /** The status the page shows, and where. */
  status?: { readonly status: number, readonly line: number }
  readonly headers: Array<{ readonly name: string, readonly parts: readonly string[], readonly line: number }>
  answer?: { readonly pattern: Pattern, readonly line: number }
  /** The page says the answer is empty. */
  empty: boolean
}

interface DocRequest {
  readonly page: string
  readonly line: number
  readonly method: string
  /** The method and URL as the page shows them (the address of the app left out). */
  readonly shown: string
  /** As sent; `\uE000<n>\uE000` stands for the value a `$(…)` before it captured. */
  readonly url: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  body?: string
  readonly expect: Expectation
  /** A `$(curl … | grep -i '^etag:')`: the header whose value the request captures, and its placeholder. */
  readonly capture?: { readonly header: string, readonly key: string }
  /** Where it came from: a line of a plain or http block, with or without a body of its own; a curl. */
  readonly form: 'line' | 'curl'
  /** A `curl -i`: its comments may show headers of the answer. */
  readonly showsHeaders?: boolean
}

/** A request block: its requests, in order, with the app and data they run on. */
interface Unit {
  readonly block: Block
  readonly setting: Setting
  readonly requests: DocRequest[]
}

interface PagePlan {
  readonly page: string
  readonly units: Unit[]
  readonly skipped: Array<{ readonly block: Block, readonly reason: string }>
  readonly problems: string[]
}

const METHODS = 'GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS'
/** `METHOD /url`, then, after two or more spaces, an explanation. */
const REQUEST_LINE = new RegExp(`^(${METHODS}) (/.*?)(?:\\s{2,}(\\S.*?))?\\s*$`)
const RESPONSE_LINE = /^HTTP\/[\d.]+ (\d{3})\b/
const HEADER_LINE = /^([A-Za-z][A-Za-z0-9-]*): (.*)$/
/** `` `201`, `Location: /computers/5`: `` before a printed answer. */
const STATUS_PROSE = /^`([1-5]\d\d)`((?:, `[A-Za-z][A-Za-z0-9-]*: [^`]+`)*):$/

/** What an explanation or a shell comment says about the answer. */
function readRemark (text: string, expect: Expectation, line: number, headers: boolean): void {
  const status = RESPONSE_LINE.exec(text) ?? /^([1-5]\d\d)\b/.exec(text)
  if (status !== null) expect.status = { status: Number(status[1]), line }
  const header = HEADER_LINE.exec(text)
  if (headers && header !== null && status === null) expect.headers.push({ name: header[1], parts: header[2].split(/\s{2,}/)[0].split(ELLIPSIS), line })
  if (/\bempty\b/i.test(text)) expect.empty = true
}

const emptyExpectation = (): Expectation => ({ headers: [], empty: false })

/** The query string of a URL shown unencoded, encoded as a client sends it. */
function encodeShownUrl (shown: string): string {
  const question = shown.indexOf('?')
  const path = encodeUrlText(question === -1 ? shown : shown.slice(0, question))
  if (question === -1) return path
  const query = shown.slice(question + 1)
  const parameters: string[] = []
  let at = 0
  while (at < query.length) {
    let end = at
    while (end < query.length && query[end] !== '=' && query[end] !== '&') end++
    const name = query.slice(at, end)
    if (query[end] !== '=') {
      parameters.push(encodeURIComponent(name))
      at = end + 1
      continue
    }
    let valueEnd = end + 1
    if (query[valueEnd] === '[' || query[valueEnd] === '{') {
      // A JSON value: read to its closing bracket (strings respected), so that `&` inside it stays in it.
      let depth = 0
      for (; valueEnd < query.length; valueEnd++) {
        const char = query[valueEnd]
        if (char === '"') {
          for (valueEnd++; valueEnd < query.length && query[valueEnd] !== '"'; valueEnd++) if (query[valueEnd] === '\\') valueEnd++
        } else if (char === '[' || char === '{') depth++
        else if (char === ']' || char === '}') {
          depth--
          if (depth === 0) {
            valueEnd++
            break
          }
        }
      }
    }
    while (valueEnd < query.length && query[valueEnd] !== '&') valueEnd++
    parameters.push(`${encodeURIComponent(name)}=${encodeURIComponent(query.slice(end + 1, valueEnd))}`)
    at = valueEnd + 1
  }
  return `${path}?${parameters.join('&')}`
}

/** Text of a URL as curl sends it: characters a URL cannot hold percent-encoded, the rest (brackets too) as written. */
function encodeUrlText (text: string): string {
  return text.replace(/[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu, (char) => encodeURIComponent(char))
}

/** Reads the requests (or the response) of a plain or http block. */
function readPlainBlock (block: Block, problems: string[]): { requests: DocRequest[], response?: { expect: Expectation, hasBody: boolean } } | undefined {
  const lines = block.lines
  const first = lines.find(({ text }) => text.trim() !== '')
  if (first === undefined) return undefined
  const response = RESPONSE_LINE.exec(first.text)
  if (response !== null) {
    const expect = emptyExpectation()
    expect.status = { status: Number(response[1]), line: first.line }
    let i = lines.indexOf(first) + 1
    for (; i < lines.length && HEADER_LINE.test(lines[i].text); i++) {
      const [, name, value] = HEADER_LINE.exec(lines[i].text) ?? []
      expect.headers.push({ name, parts: value.split(ELLIPSIS), line: lines[i].line })
    }
    const rest = lines.slice(i).filter(({ text }) => text.trim() !== '')
    if (rest.length > 0) {
      try {
        expect.answer = { pattern: parsePattern(lines.slice(i).map(({ text }) => text).join('\n')), line: rest[0].line }
      } catch (error) {
        problems.push(`${block.page}:${rest[0].line}: the printed answer is not a pattern: ${(error as Error).message}`)
      }
    }
    return { requests: [], response: { expect, hasBody: rest.length > 0 } }
  }
  if (!lines.some(({ text }) => REQUEST_LINE.test(text))) return undefined
  const requests: DocRequest[] = []
  for (let i = 0; i < lines.length; i++) {
    const { text, line } = lines[i]
    if (text.trim() === '' || text.startsWith('#')) continue
    const match = REQUEST_LINE.exec(text)
    if (match === null) {
      problems.push(`${block.page}:${line}: neither a request line (\`METHOD /url\`), a header of one, nor a comment: ${show(text)}`)
      continue
    }
    const [, method, shown, remark] = match
    const expect = emptyExpectation()
    if (remark !== undefined) readRemark(remark, expect, line, false)
    const headers: Array<[string, string]> = []
    for (; i + 1 < lines.length && HEADER_LINE.test(lines[i + 1].text); i++) {
      const [, name, value] = HEADER_LINE.exec(lines[i + 1].text) ?? []
      headers.push([name, value])
    }
    let body: string | undefined
    const next = lines.slice(i + 1).find(({ text }) => text.trim() !== '')
    if (next !== undefined && lines[i + 1]?.text.trim() === '' && /^[[{]/.test(next.text.trim())) {
      body = lines.slice(i + 1).map(({ text }) => text).join('\n').trim()
      i = lines.length
      try {
        JSON.parse(body)
      } catch (error) {
        problems.push(`${block.page}:${next.line}: the body is not JSON: ${(error as Error).message}`)
      }
    }
    requests.push({ page: block.page, line, method, shown: `${method} ${shown}`, url: encodeShownUrl(shown), headers, body, expect, form: 'line' })
  }
  return { requests }
}

// --- shell blocks ---

interface ShellCommand {
  readonly code: string
  readonly line: number
  /** Its trailing comment and the comment lines right after it. */
  readonly remarks: Line[]
}

/** Splits a shell block into commands (a quote or a trailing backslash continues a line) and their comments. */
function readShellCommands (block: Block): ShellCommand[] {
  const commands: ShellCommand[] = []
  let last: ShellCommand | undefined
  let code = ''
  let start: number | undefined
  let quote: '"' | "'" | undefined
  for (const { text, line } of block.lines) {
    let comment: string | undefined
    let i = 0
    for (; i < text.length; i++) {
      const char = text[i]
      if (quote !== undefined) {
        if (char === '\\' && quote === '"') i++
        else if (char === quote) quote = undefined
        continue
      }
      if (char === "'" || char === '"') quote = char
      else if (char === '\\') i++
      else if (char === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
        comment = text.slice(i + 1).trim()
        break
      }
    }
    const part = text.slice(0, i)
    if (quote !== undefined) {
      code += `${part}\n`
      start ??= line
      continue
    }
    if (part.trimEnd().endsWith('\\') && comment === undefined) {
      code += `${part.trimEnd().slice(0, -1)} `
      start ??= line
      continue
    }
    code += part
    if (code.trim() !== '') {
      last = { code: code.trim(), line: start ?? line, remarks: comment === undefined ? [] : [{ text: comment, line }] }
      commands.push(last)
    } else if (comment !== undefined && last !== undefined) {
      last.remarks.push({ text: comment, line })
    } else if (text.trim() === '') {
      last = undefined
    }
    code = ''
    start = undefined
  }
  return commands
}

/** Splits at `sep` outside quotes and `$(…)`: `|`, or the command lists `&&`, `||`, `;`. */
function splitOutside (code: string, separators: RegExp): string[] {
  const parts: string[] = []
  let quote: string | undefined
  let depth = 0
  let current = ''
  for (let i = 0; i < code.length; i++) {
    const char = code[i]
    if (quote !== undefined) {
      if (char === '\\' && quote === '"') {
        current += char + (code[i + 1] ?? '')
        i++
        continue
      }
      if (char === quote) quote = undefined
      current += char
      continue
    }
    if (char === "'" || char === '"') quote = char
    else if (char === '$' && code[i + 1] === '(') depth++
    else if (char === ')' && depth > 0) depth--
    separators.lastIndex = i
    const separator = depth === 0 ? separators.exec(code) : null
    if (separator !== null && separator.index === i) {
      parts.push(current)
      current = ''
      i += separator[0].length - 1
      continue
    }
    current += char
  }
  parts.push(current)
  return parts.map((part) => part.trim()).filter((part) => part !== '')
}

interface Shell {
  readonly vars: Map<string, string>
  /** Runs a `$(…)`: returns its placeholder (and adds the request it runs). */
  readonly substitute: (inner: string) => string
}

/** The words of a command: quotes removed, `$NAME`, `${NAME}` and `$(…)` expanded (not in single quotes). */
function shellWords (code: string, shell: Shell): string[] {
  const words: string[] = []
  let current: string | undefined
  let i = 0
  const expand = (): string => {
    // at `$`
    if (code[i + 1] === '(') {
      let depth = 1
      let j = i + 2
      let quote: string | undefined
      for (; j < code.length && depth > 0; j++) {
        const char = code[j]
        if (quote !== undefined) {
          if (char === quote) quote = undefined
        } else if (char === "'" || char === '"') quote = char
        else if (char === '(') depth++
        else if (char === ')') depth--
      }
      const inner = code.slice(i + 2, j - 1)
      i = j
      return shell.substitute(inner)
    }
    const name = /^\$(?:\{(\w+)\}|(\w+))/.exec(code.slice(i))
    if (name === null) {
      i++
      return '$'
    }
    i += name[0].length
    return shell.vars.get(name[1] ?? name[2]) ?? ''
  }
  while (i < code.length) {
    const char = code[i]
    if (/\s/.test(char)) {
      if (current !== undefined) words.push(current)
      current = undefined
      i++
      continue
    }
    current ??= ''
    if (char === "'") {
      const end = code.indexOf("'", i + 1)
      current += code.slice(i + 1, end === -1 ? code.length : end)
      i = end === -1 ? code.length : end + 1
    } else if (char === '"') {
      i++
      while (i < code.length && code[i] !== '"') {
        if (code[i] === '\\' && '"\\$`'.includes(code[i + 1] ?? '')) {
          current += code[i + 1]
          i += 2
        } else if (code[i] === '$') current += expand()
        else current += code[i++]
      }
      i++
    } else if (char === '\\') {
      current += code[i + 1] ?? ''
      i += 2
    } else if (char === '$') current += expand()
    else current += code[i++]
  }
  if (current !== undefined) words.push(current)
  return words
}

const APP_ORIGIN = /^https?:\/\/(?:127\.0\.0\.1|localhost):3000(?=\/|$)/

/** A curl command as a request, or what keeps it from being one. */
function readCurl (args: readonly string[], page: string, line: number): DocRequest | string {
  let method: string | undefined
  let url: string | undefined
  let get = false
  let include = false
  const headers: Array<[string, string]> = []
  const data: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const value = () => args[++i] ?? ''
    if (arg === '-X' || arg === '--request') method = value()
    else if (arg === '-H' || arg === '--header') {
      const header = HEADER_LINE.exec(value())
      if (header === null) return `\`-H ${args[i]}\` is not a header`
      headers.push([header[1], header[2]])
    } else if (['-d', '--data', '--data-raw', '--data-binary', '--data-ascii'].includes(arg)) data.push(value())
    else if (arg === '--data-urlencode') {
      const content = value()
      const equals = content.indexOf('=')
      data.push(equals === -1 ? encodeURIComponent(content) : `${content.slice(0, equals)}=${encodeURIComponent(content.slice(equals + 1))}`)
    } else if (arg === '-G' || arg === '--get') get = true
    else if (arg === '-i' || arg === '--include') include = true
    else if (['-g', '--globoff', '-s', '--silent', '-S', '--show-error', '-f', '--fail', '-v', '--verbose'].includes(arg)) continue
    else if (arg === '-o' || arg === '--output' || arg === '>') value()
    else if (/^-[a-zA-Z]{2,}$/.test(arg)) {
      for (const flag of arg.slice(1)) {
        if (flag === 'G') get = true
        else if (flag === 'i') include = true
        else if (!'gsSfv'.includes(flag)) return `curl's flag -${flag} (in ${arg}) is not one this test knows`
      }
    } else if (/^https?:\/\//.test(arg)) url = arg
    else return `curl's argument ${show(arg)} is not one this test knows`
  }
  if (url === undefined) return 'a curl without a URL'
  const origin = APP_ORIGIN.exec(url)
  if (origin === null) return `${url} is not the address of the app (http://127.0.0.1:3000)`
  let target = url.slice(origin[0].length) || '/'
  let body: string | undefined
  if (data.length > 0 && get) target += (target.includes('?') ? '&' : '?') + data.join('&')
  else if (data.length > 0) {
    body = data.join('&')
    if (!headers.some(([name]) => name.toLowerCase() === 'content-type')) headers.push(['Content-Type', 'application/x-www-form-urlencoded'])
  }
  if (!headers.some(([name]) => name.toLowerCase() === 'accept')) headers.push(['Accept', '*/*'])
  const verb = method ?? (body !== undefined ? 'POST' : 'GET')
  return { page, line, method: verb, shown: `${verb} ${target}`, url: encodeUrlText(target), headers, body, expect: emptyExpectation(), form: 'curl', showsHeaders: include }
}

/** Reads the curls of a shell block, in order (those a `$(…)` runs first); undefined when it has none. */
function readShellBlock (block: Block, problems: string[]): DocRequest[] | undefined {
  if (!block.lines.some(({ text }) => /(^|[\s(])curl\s/.test(text))) return undefined
  const requests: DocRequest[] = []
  let captures = 0
  const shell: Shell = {
    vars: new Map(),
    substitute: (inner) => {
      const [first, ...rest] = splitOutside(inner, /\|/y)
      const grep = rest.map((part) => shellWords(part, shell)).find((words) => words[0] === 'grep')
      const header = grep?.slice(1).filter((word) => !word.startsWith('-'))[0]?.replace(/^\^/, '').replace(/:$/, '')
      const words = shellWords(first ?? '', shell)
      const request = words[0] === 'curl' ? readCurl(words.slice(1), block.page, current) : 'not a curl'
      if (typeof request === 'string' || header === undefined || !/^[A-Za-z][A-Za-z0-9-]*$/.test(header)) {
        problems.push(`${block.page}:${current}: $(${inner}): only $(curl … | grep -i '^<header>:' …) runs here (${typeof request === 'string' ? request : 'no header grepped'})`)
        return ''
      }
      const key = `\uE000${captures++}\uE000`
      requests.push({ ...request, capture: { header, key } })
      return key
    },
  }
  let current = block.line
  for (const command of readShellCommands(block)) {
    current = command.line
    const lists = splitOutside(command.code, /&&|\|\||;/y)
    let lastCurl: DocRequest | undefined
    for (const list of lists) {
      const [first] = splitOutside(list, /\|(?!\|)/y)
      const words = shellWords(first, shell)
      const assignments = words.filter((word) => /^[A-Za-z_]\w*=/.test(word))
      if (assignments.length === words.length) {
        for (const assignment of assignments) {
          const equals = assignment.indexOf('=')
          shell.vars.set(assignment.slice(0, equals), assignment.slice(equals + 1))
        }
        continue
      }
      const program = words.slice(assignments.length)
      if (program[0] !== 'curl') continue
      const request = readCurl(program.slice(1), block.page, command.line)
      if (typeof request === 'string') {
        problems.push(`${block.page}:${command.line}: ${request}`)
        continue
      }
      requests.push(request)
      lastCurl = request
    }
    if (lastCurl !== undefined) {
      for (const remark of command.remarks) readRemark(remark.text, lastCurl.expect, remark.line, lastCurl.showsHeaders === true)
    }
  }
  return requests
}

// --- a page ---

const takesBody = (method: string) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(method)

function planPage (page: string): PagePlan {
  const blocks = readBlocks(page)
  const plan: PagePlan = { page, units: [], skipped: [], problems: [] }
  const { problems } = plan
  let setting: Setting | undefined
  const all: DocRequest[] = []
  /** Blocks that an exchange took (a body, a response, an answer). */
  const taken = new Set<Block>()
  for (let b = 0; b < blocks.length; b++) {
    const block = blocks[b]
    let skip: string | undefined
    let answerOf: string | undefined
    for (const { text, line } of block.gap) {
      if (!/^<!--\s*requests:/.test(text)) continue
      const directive = readDirective(text, line, blocks, page)
      const lastBeforeFence = block.gap.at(-1)?.line === line
      if (directive.kind === 'invalid') problems.push(directive.problem)
      else if (directive.kind === 'setting') setting = directive.setting
      else if (!lastBeforeFence) problems.push(`${page}:${line}: a requests: ${directive.kind} comment is the last thing before the fence of its block`)
      else if (directive.kind === 'skip') skip = directive.reason
      else answerOf = directive.of
    }
    if (answerOf !== undefined) {
      const wanted = answerOf
      const request = all.findLast((request) => matchesText(wanted.split(ELLIPSIS), request.shown))
      if (request === undefined) problems.push(`${page}:${block.line}: 'answer of ${wanted}', but no request before it on the page is shown so`)
      else if (request.expect.answer !== undefined) problems.push(`${page}:${block.line}: ${request.shown} has a printed answer already`)
      else if (block.lang === 'json') readAnswer(block, request.expect, problems)
      else problems.push(`${page}:${block.line}: 'answer of' precedes a block that is not \`\`\`json`)
      taken.add(block)
      continue
    }
    if (taken.has(block)) continue
    let requests: DocRequest[] | undefined
    if (block.lang === '' || block.lang === 'http') {
      const read = readPlainBlock(block, problems)
      if (read?.response !== undefined) problems.push(`${page}:${block.line}: a response that follows no request`)
      requests = read?.requests
    } else if (['sh', 'bash', 'shell', 'console'].includes(block.lang)) {
      requests = readShellBlock(block, problems)
    }
    if (requests === undefined || requests.length === 0) {
      if (skip !== undefined) problems.push(`${page}:${block.line}: 'skip' precedes a block without requests`)
      continue
    }
    // The blocks right after it: its exchange.
    const chain: Block[] = []
    for (let c = b + 1; c < blocks.length; c++) {
      const next = blocks[c]
      // Prose, or a requests: comment (an answer that names its request, a new setting), ends the exchange.
      const gap = next.gap
      if (gap.length > 1 || (gap.length === 1 && !STATUS_PROSE.test(gap[0].text))) break
      const isResponse = (next.lang === '' || next.lang === 'http') && RESPONSE_LINE.test(next.lines.find(({ text }) => text.trim() !== '')?.text ?? '')
      if (next.lang !== 'json' && !isResponse) break
      chain.push(next)
    }
    chain.forEach((next) => taken.add(next))
    if (skip !== undefined) {
      plan.skipped.push({ block, reason: skip })
      continue
    }
    const last = requests[requests.length - 1]
    readExchange(last, chain, problems)
    all.push(...requests)
    if (setting === undefined) {
      problems.push(`${page}:${block.line}: requests, but no <!-- requests: … --> comment before them says which app and data they run on`)
      continue
    }
    plan.units.push({ block, setting, requests })
  }
  return plan
}

/** A printed answer (a ```json block) of a request; the status line before it, if any. */
function readAnswer (block: Block, expect: Expectation, problems: string[]): void {
  readStatusProse(block, expect)
  try {
    expect.answer = { pattern: parsePattern(block.lines.map(({ text }) => text).join('\n')), line: block.line }
  } catch (error) {
    problems.push(`${block.page}:${block.line}: the printed answer is not a pattern: ${(error as Error).message}`)
  }
}

function readStatusProse (block: Block, expect: Expectation): void {
  const prose = block.gap.find(({ text }) => STATUS_PROSE.test(text))
  if (prose === undefined) return
  const [, status, headers] = STATUS_PROSE.exec(prose.text) ?? []
  expect.status = { status: Number(status), line: prose.line }
  for (const [, name, value] of headers.matchAll(/`([A-Za-z][A-Za-z0-9-]*): ([^`]+)`/g)) {
    expect.headers.push({ name, parts: value.split(ELLIPSIS), line: prose.line })
  }
}

/** Gives the blocks right after a request block to its last request: body, response, answer. */
function readExchange (request: DocRequest, chain: readonly Block[], problems: string[]): void {
  let rest = [...chain]
  if (request.form === 'line' && takesBody(request.method) && request.body === undefined && rest[0]?.lang === 'json' && rest.length >= 2) {
    const [bodyBlock] = rest
    rest = rest.slice(1)
    request.body = bodyBlock.lines.map(({ text }) => text).join('\n').trim()
    try {
      JSON.parse(request.body)
    } catch (error) {
      problems.push(`${bodyBlock.page}:${bodyBlock.line}: the body is not JSON: ${(error as Error).message}`)
    }
  }
  const [first, second, ...more] = rest
  if (first === undefined) return
  if (first.lang === 'json') {
    readAnswer(first, request.expect, problems)
    if (second !== undefined) problems.push(`${first.page}:${second.line}: a block after the printed answer of ${request.shown}, but no request of its own`)
    return
  }
  const response = readPlainBlock(first, problems)?.response
  if (response === undefined) return
  readStatusProse(first, request.expect)
  request.expect.status = response.expect.status
  request.expect.headers.push(...response.expect.headers)
  if (response.expect.answer !== undefined) request.expect.answer = response.expect.answer
  if (second !== undefined && !response.hasBody && second.lang === 'json') readAnswer(second, request.expect, problems)
  else if (second !== undefined) problems.push(`${first.page}:${second.line}: a block after the response of ${request.shown}, which has a body`)
  if (more.length > 0) problems.push(`${first.page}:${first.line}: more blocks after ${request.shown} than a body, a response and an answer`)
}

const plans = PAGES.map(planPage)

t.test('requests read as a client sends them', async (t) => {
  t.equal(encodeShownUrl('/users?filter=[{"name":"name","op":"eq","val":"a&b"}]&sort=-age'),
    `/users?filter=${encodeURIComponent('[{"name":"name","op":"eq","val":"a&b"}]')}&sort=-age`, '& inside a JSON value stays in it')
  t.equal(encodeShownUrl('/users?filter[first_name]=%Gr%&fields[user]=name,age'),
    '/users?filter%5Bfirst_name%5D=%25Gr%25&fields%5Buser%5D=name%2Cage', 'names and values encoded, % as text')
  const shell: Shell = { vars: new Map([['API', 'http://127.0.0.1:3000']]), substitute: () => 'X' }
  t.same(shellWords(`curl -sg "$API/users?x=1" -H 'A: $API' -d "{\\"a\\":1}" $(true)`, shell),
    ['curl', '-sg', 'http://127.0.0.1:3000/users?x=1', '-H', 'A: $API', '-d', '{"a":1}', 'X'], 'quotes, variables, substitutions')
  const get = readCurl(['-sg', '-G', 'http://localhost:3000/users?page[size]=10', '--data-urlencode', 'filter=[{"a":1}]'], 'x', 1)
  t.match(get, { method: 'GET', url: `/users?page[size]=10&filter=${encodeURIComponent('[{"a":1}]')}`, body: undefined }, '-G and --data-urlencode')
  const post = readCurl(['-X', 'PATCH', 'http://127.0.0.1:3000/users/1', '-d', '{}'], 'x', 1)
  t.match(post, { method: 'PATCH', body: '{}', headers: [['Content-Type', 'application/x-www-form-urlencoded'], ['Accept', '*/*']] }, 'a body without a content type, as curl sends it')
  t.match(readCurl(['http://127.0.0.1:3001/projects'], 'x', 1), /not the address of the app/, 'another address is refused')
  t.match(readCurl(['--json', '{}', 'http://127.0.0.1:3000/users'], 'x', 1), /not one this test knows/, 'so is an unknown option')
})

// ---------------------------------------------------------------------------------------------------------------
// Running them

/** The example app, started once for the file. */
let exampleApp: TestApp | undefined
async function example (): Promise<TestApp> {
  exampleApp ??= await startTestApp((fn) => t.teardown(fn))
  return exampleApp
}

async function load (api: TestApp, data: Data): Promise<void> {
  if (data === 'linked-rows') return seedLinkedRows(api)
  await api.reset()
  if (data === 'SEED=1') await seed(api.db)
}

const TMP = join(ROOT, 'tmp', `doc-requests-${process.pid}`)

/** Runs a page's TypeScript block that builds and listens with `app`: as a module, without the `listen`. */
async function pageApp (block: Block, teardown: (fn: () => Promise<void>) => void): Promise<FastifyInstance> {
  const file = join(TMP, `${block.page.replace(/[/.]/g, '-')}-${block.line}.ts`)
  const lib = (entry: string) => relative(dirname(file), join(ROOT, 'lib', entry)).split('\\').join('/')
  let source = block.lines.map(({ text }) => text).join('\n')
  const listens = source.match(/^\s*await app\.listen\(.*\)\s*$/gm) ?? []
  if (listens.length !== 1) throw new Error(`${block.page}:${block.line}: the block should call \`await app.listen(…)\` once, on a line of its own`)
  source = source
    .replace(/^\s*await app\.listen\(.*\)\s*$/m, '')
    .replace(/from 'fastify-jsonapi\/embedded'/g, `from '${lib('embedded.js')}'`)
    .replace(/from 'fastify-jsonapi'/g, `from '${lib('index.js')}'`)
    .replace(/\blogger: true\b/g, 'logger: false')
  mkdirSync(TMP, { recursive: true })
  writeFileSync(file, `${source}\nexport { app }\n`)
  const { app } = await import(pathToFileURL(file).href) as { app: FastifyInstance }
  await app.ready()
  teardown(() => app.close())
  return app
}
t.teardown(() => rmSync(TMP, { recursive: true, force: true }))

interface Sent {
  readonly status: number
  readonly headers: Record<string, string | string[] | number | undefined>
  readonly text: string
}

/** What is wrong with the answer to a request. */
function check (request: DocRequest, url: string, sent: Sent, app: FastifyInstance, documented: boolean): { problems: string[], body: unknown } {
  const problems: string[] = []
  const { status, headers, text } = sent
  const expect = request.expect
  if (status >= 500) problems.push(`a ${status}`)
  const wanted = expect.status?.status ?? (expect.answer === undefined ? undefined : printedErrorStatus(expect.answer.pattern))
  if (wanted !== undefined && status !== wanted) problems.push(`status ${status}, the page shows ${wanted}`)
  if (wanted === undefined && (status < 200 || status > 299)) problems.push(`status ${status}, and the page shows no status (so a 2xx)`)
  for (const header of expect.headers) {
    const value = headers[header.name.toLowerCase()]
    const actual = Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value)
    if (actual === undefined || !matchesText(header.parts, actual)) {
      problems.push(`header ${header.name}: ${show(actual)}, the page shows ${show(header.parts.join(ELLIPSIS))} (line ${header.line})`)
    }
  }
  const contentType = String(headers['content-type'] ?? '')
  const jsonApi = /^application\/vnd\.api\+json\b/.test(contentType)
  let body: unknown
  if (text !== '' && (jsonApi || /^application\/json\b/.test(contentType))) {
    try {
      body = JSON.parse(text)
    } catch {
      problems.push('the body is not JSON')
    }
  }
  if (jsonApi && text !== '') {
    const invalid = isObject(body) && 'atomic:results' in body ? atomicResultsErrors(body) : jsonApiSchemaErrors(body)
    if (invalid.length > 0) problems.push(`not a valid JSON:API document: ${show(invalid.slice(0, 3))}`)
  }
  if (documented && jsonApi) problems.push(...openApiProblems(app, request.method, url, status, contentType === '' ? undefined : contentType, body))
  if (expect.answer !== undefined) {
    const found = mismatch(expect.answer.pattern, body)
    if (found !== undefined) problems.push(`not the answer printed at line ${expect.answer.line}: ${found}`)
  }
  if (request.method === 'GET' && status === 200 && jsonApi && isObject(body) && 'data' in body) {
    const empty = body.data === null || (Array.isArray(body.data) && body.data.length === 0)
    if (expect.empty && !empty) problems.push('the page says the answer is empty, but its data is not')
    if (!expect.empty && empty && !printsEmptyData(expect.answer?.pattern)) {
      problems.push('it matches nothing: its data is empty, and the page does not say so (print "data": [] or null, or say empty)')
    }
  } else if (expect.empty) {
    problems.push('the page says the answer is empty, but it is no GET answered by a document with data')
  }
  return { problems, body }
}

/**
 * Requests whose answer, as the page prints it, is one engine's own (docs/databases.md, "What differs between
 * engines"): on the other engines they are skipped, with the reason. By page and the request as the page shows it.
 */
const ENGINE_OWN: ReadonlyArray<{ readonly page: string, readonly shown: string, readonly engines: readonly EngineName[], readonly why: string }> = [
  {
    page: 'docs/querying.md',
    shown: 'GET /users?filter=[{"name":"first_name","op":"match","val":"ada or grace"}]',
    engines: ['postgres'],
    why: '`match` reads `or` as PostgreSQL\'s web search syntax (alternatives); elsewhere every word of the query must appear',
  },
  {
    page: 'docs/querying.md',
    shown: 'GET /photos?filter=[{"name":"words","op":"jsonb_contains","val":{"tags":["sea"]}}]',
    engines: ['postgres', 'mysql'],
    why: 'the example app\'s `jsonb_contains` is containment (`@>`, `json_contains`) on PostgreSQL and MariaDB; on SQLite it compares each member of `val` whole, and `["sea"]` is not the list stored',
  },
]

/** Why a request is not run on this engine (its answer is another engine's own), or false. */
function engineOwn (request: DocRequest): string | false {
  const own = ENGINE_OWN.find((item) => item.page === request.page && item.shown === request.shown)
  return own === undefined ? false : onlyOn(own.engines, own.why)
}

const fill = (text: string, captured: ReadonlyMap<string, string>) => text.replace(/\uE000\d+\uE000/g, (key) => captured.get(key) ?? key)

t.test('every request of the documentation answers what the page shows', async (t) => {
  let count = 0
  let engineSkipped = 0
  let blocks = 0
  for (const plan of plans) {
    const skipped = plan.skipped
    if (plan.units.length === 0 && plan.problems.length === 0 && skipped.length === 0) continue
    await t.test(plan.page, async (t) => {
      t.same(plan.problems, [], `${plan.page}: its requests and requests: comments read`)
      let current: Setting | undefined
      let app: FastifyInstance | undefined
      let documented = false
      const captured = new Map<string, string>()
      for (const unit of plan.units) {
        const setting = unit.setting
        if (setting !== undefined && (setting !== current || (setting.app === 'example-app' && setting.eachBlockFresh))) {
          if (setting.app === 'example-app') {
            const api = await example()
            await load(api, setting.data)
            app = api.app
            documented = true
          } else {
            app = await pageApp(setting.block, (fn) => t.teardown(fn))
            documented = false
          }
          current = setting
        }
        if (app === undefined) continue
        blocks++
        for (const request of unit.requests) {
          const skip = engineOwn(request)
          if (skip !== false) {
            engineSkipped++
            t.pass(`${request.page}:${request.line} ${request.shown}`, { skip })
            continue
          }
          count++
          const url = fill(request.url, captured)
          const headers = Object.fromEntries(request.headers.map(([name, value]) => [name.toLowerCase(), fill(value, captured)]))
          if (request.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/vnd.api+json'
          const response = await app.inject({ method: request.method as any, url, headers, payload: request.body })
          const sent = { status: response.statusCode, headers: response.headers, text: response.body }
          const { problems } = check(request, url, sent, app, documented)
          if (request.capture !== undefined) {
            const value = response.headers[request.capture.header.toLowerCase()]
            if (typeof value !== 'string') problems.push(`no ${request.capture.header} header to capture`)
            else captured.set(request.capture.key, value)
          }
          if (problems.length > 0) problems.push(`answered ${sent.status}: ${sent.text.length > 1500 ? `${sent.text.slice(0, 1500)}…` : sent.text}`)
          t.same(problems, [], `${request.page}:${request.line} ${fill(request.shown, captured)}`)
        }
      }
      for (const { block, reason } of skipped) t.comment(`skipped ${block.page}:${block.line}: ${reason}`)
    })
  }
  const skipped = plans.flatMap((plan) => plan.skipped)
  t.ok(count > 0, 'there are requests to run')
  t.comment(`${count} requests run from ${blocks} blocks of ${plans.filter((plan) => plan.units.length > 0).length} pages, ${skipped.length} blocks skipped, ${engineSkipped} requests skipped on this engine`)
})
