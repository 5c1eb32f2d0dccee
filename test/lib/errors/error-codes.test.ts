import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ERROR_CODES, type ErrorCode } from '../../../lib/errors/error-codes.js'
import { JsonApiError } from '../../../lib/errors/json-api-error.js'
import { ResourceConfigError } from '../../../lib/schema/resolve-resources.js'
import { JsonApiOptionsError } from '../../../lib/plugin.js'
import { DatabaseSchemaError } from '../../../lib/repository/kysely/check-database-schema.js'

const DOC = fileURLToPath(new URL('../../../docs/errors.md', import.meta.url))

const codes = Object.keys(ERROR_CODES) as ErrorCode[]

/**
 * Codes the library emits outside ERROR_CODES, which the page may document too: the startup errors, and the
 * default code of a JsonApiError thrown without one (`FJA_ERROR_<status>`, or with a real status).
 */
const registrationCodes = new Set([
  new ResourceConfigError('x', undefined, 'x').code,
  new JsonApiOptionsError('x').code,
  new DatabaseSchemaError([], '').code,
])
const defaultCode = /^FJA_ERROR_(?:\d{3}|<[a-z]+>)$/

t.test('ERROR_CODES is well formed', async (t) => {
  t.ok(codes.length > 0)
  for (const code of codes) {
    t.match(code, /^FJA_[A-Z0-9_]+$/, code)
    const { status, title } = ERROR_CODES[code]
    t.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: an error status`)
    t.ok(typeof title === 'string' && title.length > 0, `${code}: a title`)
  }
  t.equal(new JsonApiError({ status: 418 }).errors[0].code, 'FJA_ERROR_418', 'the default code of a user error')
  t.match(new JsonApiError({ status: 418 }).errors[0].code, defaultCode)
  t.same([...registrationCodes].sort(), ['FJA_INVALID_DECLARATION', 'FJA_INVALID_OPTIONS', 'FJA_SCHEMA_MISMATCH'])
})

t.test('docs/errors.md documents every code, and only codes that exist', async (t) => {
  if (!t.ok(existsSync(DOC), 'docs/errors.md exists')) return
  const lines = readFileSync(DOC, 'utf8').split(/\r?\n/)
  const documenting = lines.filter((line) => /^\s*(?:#{1,6}\s|\|)/.test(line))
  for (const code of codes) {
    const mention = new RegExp(`(?<![A-Z0-9_])${code}(?![A-Z0-9_])`)
    t.ok(documenting.some((line) => mention.test(line)), `${code} has a heading or a table row in docs/errors.md`)
  }
  const mentioned = new Set(lines.flatMap((line) => line.match(/(?<![A-Za-z0-9_])FJA_[A-Z0-9_]*(?:[A-Z0-9]|_<[a-z]+>)/g) ?? []))
  t.ok(mentioned.size >= codes.length, 'the page mentions at least as many codes as ERROR_CODES has')
  for (const code of mentioned) {
    const known = Object.prototype.hasOwnProperty.call(ERROR_CODES, code) || registrationCodes.has(code) || defaultCode.test(code)
    t.ok(known, `${code}, mentioned in docs/errors.md, is a code of the library`)
  }
})
