import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/** The `$id` under which the document is added to ajv; response schemas are compiled as JSON pointers into it. */
const DOC_ID = 'openapi:doc'
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
const MAX_ERRORS = 5

type Json = Record<string, any>

interface Template {
  path: string
  /** Per segment: the literal text, or a matcher for a segment holding `{param}`. */
  segments: Array<string | RegExp>
  literals: number
}

interface Checker {
  doc: Json
  templates: Template[]
  ajv: Ajv2020
  /** Compiled validators by JSON pointer into the document, or the compilation error's message. */
  validators: Map<string, ValidateFunction | string>
}

const checkers = new WeakMap<FastifyInstance, Checker>()

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function compileTemplate (path: string): Template {
  let literals = 0
  const segments = path.split('/').slice(1).map((segment): string | RegExp => {
    if (!segment.includes('{')) {
      literals++
      return segment
    }
    // `{param}` stands for one non-empty segment; `{name}.json` and the like keep their literal parts.
    const source = segment.split(/\{[^}]*\}/).map(escapeRegExp).join('.+')
    return new RegExp(`^${source}$`, 's')
  })
  return { path, segments, literals }
}

function checker (app: FastifyInstance): Checker | string {
  const cached = checkers.get(app)
  if (cached !== undefined) return cached
  const swagger = (app as any).swagger
  if (typeof swagger !== 'function') {
    return 'the app has no swagger() decorator: it must register @fastify/swagger to be checked against its OpenAPI document'
  }
  let doc: Json
  try {
    doc = swagger.call(app) as Json
  } catch (error) {
    return `app.swagger() failed: ${(error as Error).message}`
  }
  if (typeof doc !== 'object' || doc === null) return 'app.swagger() did not return a document'
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  // The OpenAPI format registry's `decimal` (exact numbers as strings), which ajv-formats does not know.
  ajv.addFormat('decimal', { type: 'string', validate: /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/ })
  // OpenAPI 3.1 schemas are JSON Schema 2020-12: the document, added whole, lets its `#/components/schemas/...`
  // refs (and those of inline schemas) resolve against its root, whatever the component names hold (dots, dashes).
  ajv.addSchema({ $id: DOC_ID, components: doc.components ?? {}, paths: doc.paths ?? {} }, DOC_ID, undefined, false)
  const templates = Object.keys(doc.paths ?? {}).map(compileTemplate)
  const created: Checker = { doc, templates, ajv, validators: new Map() }
  checkers.set(app, created)
  return created
}

/** A JSON pointer (as a URI fragment, without `#`) to the member of the document at `tokens`. */
function pointer (tokens: string[]): string {
  return tokens.map((token) => '/' + encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'))).join('')
}

function validator (checker: Checker, tokens: string[]): ValidateFunction | string {
  const fragment = pointer(tokens)
  let validate = checker.validators.get(fragment)
  if (validate === undefined) {
    try {
      validate = checker.ajv.compile({ $ref: `${DOC_ID}#${fragment}` })
    } catch (error) {
      validate = `cannot compile the schema at #${fragment}: ${(error as Error).message}`
    }
    checker.validators.set(fragment, validate)
  }
  return validate
}

function formatError (error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  const detail = params.additionalProperty !== undefined
    ? ` (${String(params.additionalProperty)})`
    : params.allowedValues !== undefined ? ` (${JSON.stringify(params.allowedValues)})` : ''
  return `${error.instancePath === '' ? '/' : error.instancePath} ${error.message ?? error.keyword}${detail}`
}

/** The problems of `body` against the schema at `tokens` (named `schema` in the problem), prefixed by `what`. */
function schemaProblems (checker: Checker, tokens: string[], body: unknown, what: string, schema: string): string[] {
  const validate = validator(checker, tokens)
  if (typeof validate === 'string') return [`${what}: ${validate}`]
  if (validate(body)) return []
  const errors = validate.errors ?? []
  const listed = errors.slice(0, MAX_ERRORS).map(formatError)
  if (errors.length > MAX_ERRORS) listed.push(`and ${errors.length - MAX_ERRORS} more`)
  return [`${what}: the body does not match ${schema}: ${listed.join('; ')}`]
}

/** The path of `url` (origin, query and fragment dropped), as decoded segments. */
function requestSegments (url: string): { path: string; segments: string[] } {
  let path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '')
  path = path.replace(/[?#].*$/s, '')
  if (!path.startsWith('/')) path = '/' + path
  const segments = path.split('/').slice(1).map((segment) => {
    try {
      return decodeURIComponent(segment)
    } catch {
      return segment
    }
  })
  return { path, segments }
}

/**
 * The most specific template (most literal segments) matching `segments` that has an operation for `method`, as
 * Fastify's router picks per method: a literal `/things/special` without DELETE leaves DELETE to `/things/{id}`.
 */
function matchOperation (checker: Checker, method: string, segments: string[]): { template: Template; operation: Json } | undefined {
  let best: { template: Template; operation: Json } | undefined
  for (const template of checker.templates) {
    if (template.segments.length !== segments.length) continue
    const matches = template.segments.every((expected, index) => typeof expected === 'string'
      ? expected === segments[index]
      : expected.test(segments[index]))
    const operation = matches ? checker.doc.paths[template.path]?.[method] : undefined
    if (typeof operation !== 'object' || operation === null) continue
    if (best === undefined || template.literals > best.template.literals) best = { template, operation }
  }
  return best
}

/** The declared media type answering `contentType`: exact, else `type/*`, else `*\/*`. */
function declaredMediaType (declared: string[], contentType: string): string | undefined {
  const mediaType = contentType.split(';')[0].trim().toLowerCase()
  const lower = declared.map((type) => type.toLowerCase())
  const candidates = [mediaType, `${mediaType.split('/')[0]}/*`, '*/*']
  for (const candidate of candidates) {
    const index = lower.indexOf(candidate)
    if (index !== -1) return declared[index]
  }
  return undefined
}

/** Problems of one response against the app's OpenAPI document; empty when it conforms. */
export function openApiProblems (
  app: FastifyInstance,
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  body: unknown,
): string[] {
  const found = checker(app)
  if (typeof found === 'string') return [found]
  const METHOD = method.toUpperCase()
  const { path, segments } = requestSegments(url)
  const matched = matchOperation(found, method.toLowerCase(), segments)

  if (matched === undefined) {
    const what = `${METHOD} ${path} (undocumented)`
    if (status < 400) return [`${what}: undocumented operation answered ${status}; only error answers (>= 400) are allowed`]
    // The error document of the plugin's registration: `jsonapi.errors`, or `v2.jsonapi.errors` under a prefix.
    const errors = Object.keys(found.doc.components?.schemas ?? {}).find((name) => name === 'jsonapi.errors' || name.endsWith('.jsonapi.errors'))
    if (body === undefined || errors === undefined) return []
    return schemaProblems(found, ['components', 'schemas', errors], body, what, `the component schema ${errors}`)
  }

  const { template, operation } = matched
  const responses: Json = operation.responses ?? {}
  const range = `${Math.floor(status / 100)}XX`
  const key = [String(status), range, range.toLowerCase(), 'default'].find((candidate) => Object.hasOwn(responses, candidate))
  const what = `${METHOD} ${template.path} ${status}`
  if (key === undefined) {
    return [`${METHOD} ${template.path} answered ${status}, which the document does not declare (declared: ${Object.keys(responses).join(', ')})`]
  }
  const response: Json = responses[key] ?? {}
  const content: Json | undefined = response.content
  if (content === undefined || Object.keys(content).length === 0) {
    return body === undefined ? [] : [`${what}: the document declares no content for "${key}", yet the answer has a body`]
  }
  if (body === undefined) return [`${what}: the document declares content for "${key}", yet the answer has no body`]
  const declared = Object.keys(content)
  const mediaType = contentType === undefined ? undefined : declaredMediaType(declared, contentType)
  if (mediaType === undefined) {
    return [`${what}: content-type ${contentType ?? '(none)'} is not among the declared media types (${declared.join(', ')})`]
  }
  if (content[mediaType]?.schema === undefined) return []
  const tokens = ['paths', template.path, method.toLowerCase(), 'responses', key, 'content', mediaType, 'schema']
  return schemaProblems(found, tokens, body, what, `the ${mediaType} schema of response "${key}"`)
}

/** Every operation the app's OpenAPI document declares (method in upper case, path as its template). */
export function openApiOperations (app: FastifyInstance): Array<{ method: string; path: string }> {
  const found = checker(app)
  if (typeof found === 'string') throw new Error(found)
  const operations: Array<{ method: string; path: string }> = []
  for (const [path, item] of Object.entries<Json>(found.doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      if (typeof item?.[method] === 'object' && item[method] !== null) operations.push({ method: method.toUpperCase(), path })
    }
  }
  return operations
}
