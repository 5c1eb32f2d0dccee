import type { Test } from 'tap'
import Fastify from 'fastify'
import { jsonApi, JsonApiOptionsError, type JsonApiOptions } from '../../lib/index.js'
import { ERROR_CODES, type ErrorCode } from '../../lib/errors/error-codes.js'
import type { TestApp, TestRequest, TestResponse } from './test-app.js'

/** One error object a response must hold. */
export interface ExpectedError {
  readonly status: number
  /** A library code, or an application's own (whose `title` is then given, or only checked to be a string). */
  readonly code: ErrorCode | (string & {})
  readonly title?: string
  /** The `source.pointer`; with neither pointer, parameter nor header the error has no `source`. */
  readonly pointer?: string
  readonly parameter?: string
  readonly header?: string
  readonly meta?: Record<string, unknown>
  /** The error's `links` (`type`, `about`); without it the error has no `links`. */
  readonly links?: Record<string, string>
  /** What the detail must say. */
  readonly detail?: RegExp
}

function sourceOf (want: ExpectedError): Record<string, string> | undefined {
  if (want.pointer !== undefined) return { pointer: want.pointer }
  if (want.parameter !== undefined) return { parameter: want.parameter }
  if (want.header !== undefined) return { header: want.header }
  return undefined
}

function keyOf (source: unknown, code: unknown): string {
  const { pointer, parameter, header } = (source ?? {}) as { pointer?: string; parameter?: string; header?: string }
  return `${String(pointer ?? parameter ?? header)} ${String(code)}`
}

/** Asserts an error document: the status, the media type, and exactly these error objects (in any order). */
export function assertErrors (t: Test, response: TestResponse, expected: readonly ExpectedError[]): void {
  t.equal(response.status, expected[0].status, 'status')
  t.match(response.headers['content-type'], /^application\/vnd\.api\+json/)
  t.same(Object.keys(response.body ?? {}).sort(), ['errors', 'jsonapi'])
  t.same(response.body?.jsonapi, { version: '1.0' })
  const errors: Array<Record<string, unknown>> = response.body?.errors ?? []
  t.equal(errors.length, expected.length, 'one error object per problem')
  const actual = [...errors].sort((a, b) => keyOf(a.source, a.code).localeCompare(keyOf(b.source, b.code)))
  const wanted = [...expected].sort((a, b) => keyOf(sourceOf(a), a.code).localeCompare(keyOf(sourceOf(b), b.code)))
  wanted.forEach((want, index) => {
    const { detail, ...rest } = actual[index] ?? {}
    const source = sourceOf(want)
    const title = want.title ?? (want.code in ERROR_CODES ? ERROR_CODES[want.code as ErrorCode].title : rest.title)
    t.type(rest.title, 'string', 'every error has a title')
    t.same(rest, {
      status: String(want.status),
      code: want.code,
      title,
      ...(source === undefined ? {} : { source }),
      ...(want.meta === undefined ? {} : { meta: want.meta }),
      ...(want.links === undefined ? {} : { links: want.links }),
    }, `error ${want.code} at ${String(want.pointer ?? want.parameter)}`)
    t.type(detail, 'string', 'every error has a detail')
    if (want.detail !== undefined) t.match(detail, want.detail)
  })
}

/** Asserts an error document with exactly one error object. */
export function assertError (t: Test, response: TestResponse, want: ExpectedError): void {
  assertErrors(t, response, [want])
}

/** Sends a request that must fail with these errors and leave every table as it was. */
export async function failsUnchanged (
  t: Test,
  api: TestApp,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  url: string,
  request: TestRequest,
  expected: ExpectedError | readonly ExpectedError[],
): Promise<TestResponse> {
  const before = await api.snapshot()
  const response = await api.request(method, url, request)
  assertErrors(t, response, Array.isArray(expected) ? expected : [expected as ExpectedError])
  t.same(await api.snapshot(), before, `${method} ${url}: the database is unchanged`)
  return response
}

/**
 * Registers the plugin once per case with `base` and the case's options on a fresh Fastify; each registration must
 * fail with a `JsonApiOptionsError` (`FJA_INVALID_OPTIONS`) whose message starts with `fastify-jsonapi: ` and matches.
 */
export async function assertOptionsErrors (t: Test, base: JsonApiOptions, cases: ReadonlyArray<readonly [string, Partial<JsonApiOptions>, RegExp]>): Promise<void> {
  for (const [label, options, message] of cases) {
    const app = Fastify()
    try {
      await app.register(jsonApi, { ...base, ...options })
      t.fail(`${label}: registration should fail`)
    } catch (error) {
      t.ok(error instanceof JsonApiOptionsError, `${label}: JsonApiOptionsError`)
      t.equal((error as JsonApiOptionsError).code, 'FJA_INVALID_OPTIONS', label)
      t.match((error as Error).message, /^fastify-jsonapi: /, label)
      t.match((error as Error).message, message, label)
    } finally {
      await app.close()
    }
  }
}
