import { FormatRegistry, type TObject, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'

/** One problem found in an input object. `path` is a JSON pointer relative to the object. */
export interface InputProblem {
  readonly kind: 'missing' | 'unknown' | 'invalid'
  /** The member the problem is about (top-level name). */
  readonly field: string
  /** A JSON pointer inside the input, e.g. `/age` or `/words/2`. */
  readonly path: string
  readonly message: string
}

/** A member name as a JSON pointer token (RFC 6901: `~` as `~0`, `/` as `~1`). */
export function escapePointerToken (name: string): string {
  return name.includes('~') || name.includes('/') ? name.replace(/~/g, '~0').replace(/\//g, '~1') : name
}

/** A lone UTF-16 surrogate: a JSON string can hold one (`"\ud800"`); UTF-8 text cannot, and the driver writes U+FFFD. */
const LONE_SURROGATE = /\p{Cs}/u

const NUL = 'contains a NUL character, which cannot be stored'
const SURROGATE = 'contains a lone UTF-16 surrogate, which is not Unicode text and cannot be stored as sent'
const INFINITE = 'is a number beyond the range of a double (JSON.parse reads it as Infinity)'

/** What is wrong with a scalar or a member name (`name` true), or undefined. */
type Problem = (value: unknown, name: boolean) => string | undefined

const nulProblem: Problem = (value) => typeof value === 'string' && value.includes('\u0000') ? NUL : undefined

const unstorableProblem: Problem = (value, name) => {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : INFINITE
  if (typeof value !== 'string') return undefined
  if (value.includes('\u0000')) return NUL
  if (!LONE_SURROGATE.test(value)) return undefined
  return name ? `has a member name that ${SURROGATE}` : SURROGATE
}

/** The first place in `value` (its pointer) where `problem` finds something, at any depth, member names included. */
function firstProblem (value: unknown, problem: Problem): { readonly path: string, readonly message: string } | undefined {
  // The pointer is written only when there is a problem (mostly there is none).
  const found = problemMembers(value, problem)
  if (found === undefined) return undefined
  return { path: found.names.map((name) => `/${escapePointerToken(name)}`).join(''), message: found.message }
}

function problemMembers (value: unknown, problem: Problem): { names: string[], message: string } | undefined {
  if (typeof value !== 'object' || value === null) {
    const message = problem(value, false)
    return message === undefined ? undefined : { names: [], message }
  }
  for (const name of Object.keys(value)) {
    const message = problem(name, true)
    if (message !== undefined) return { names: [name], message }
    const inner = problemMembers((value as Record<string, unknown>)[name], problem)
    if (inner !== undefined) {
      inner.names.unshift(name)
      return inner
    }
  }
  return undefined
}

/** The JSON pointer of the first string holding a NUL character (PostgreSQL text cannot store one), if any. */
export function findNulCharacter (value: unknown): string | undefined {
  return firstProblem(value, nulProblem)?.path
}

/**
 * The first place where a value holds what would not be stored as sent, and why, if anywhere: a NUL character
 * (PostgreSQL text cannot store one), a lone surrogate (UTF-8 cannot encode one), a number JSON read as ±Infinity
 * (`1e400`; JSON text would write it as null) — in a string, a member name or a number, at any depth. The reader of
 * a body has bounded the depth (`MAX_VALUE_DEPTH`).
 */
export function findUnstorable (value: unknown): { readonly path: string, readonly message: string } | undefined {
  return firstProblem(value, unstorableProblem)
}

/** A compiled check of one input schema (the attributes of a create or an update). */
export interface CompiledInput {
  /** Every problem of the value, at most one per path, in schema order. */
  readonly check: (value: unknown) => readonly InputProblem[]
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:?\d{2})$/
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const INT64 = /^-?(?:0|[1-9]\d{0,18})$/
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/

/** Whether a string is a decimal integer in PostgreSQL `bigint` range (the `int64` format), compared exactly. */
export function isInt64 (value: string): boolean {
  if (!INT64.test(value)) return false
  const number = BigInt(value)
  return number >= -9223372036854775808n && number <= 9223372036854775807n
}

/** Whether a string is a real calendar date `YYYY-MM-DD`. */
export function isDate (value: string): boolean {
  const match = DATE.exec(value)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  // Year 0 has no date in PostgreSQL (1 BC is written `0001-01-01 BC`): `0000-01-01` would pass here and be refused there.
  if (year === 0) return false
  // setUTCFullYear, not Date.UTC: Date.UTC maps the years 0–99 to 1900–1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/** Registers the string formats the library checks (once; formats the application registered first are kept). */
export function registerFormats (): void {
  const formats: Record<string, (value: string) => boolean> = {
    date: isDate,
    'date-time': (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)) && isDate(value.slice(0, 10)),
    email: (value) => EMAIL.test(value),
    uuid: (value) => UUID.test(value),
    int64: isInt64,
    decimal: (value) => DECIMAL.test(value),
  }
  for (const [name, check] of Object.entries(formats)) {
    if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, check)
  }
}

/** A short description of what a schema accepts: `integer`, `string (date)`, `integer or null`. */
function describe (schema: TSchema): string {
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined
  if (Array.isArray(members)) return members.map(describe).join(' or ')
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : typeof schema.type === 'string' ? schema.type : 'a value of the schema'
  return typeof schema.format === 'string' ? `${type} (${schema.format})` : type
}

/** Whether a value is of the JSON type a schema names (`integer` takes any number: its own check says more). */
function ofType (schema: TSchema, value: unknown): boolean {
  switch (schema.type) {
    case 'null': return value === null
    case 'integer': case 'number': return typeof value === 'number'
    case 'string': case 'boolean': return typeof value === schema.type
    case 'array': return Array.isArray(value)
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value)
    default: return false
  }
}

/**
 * The message of a value no member of a union accepts. When exactly one member is of the value's type (`-1` against
 * `Integer({ minimum: 0 }) | Null`), what that member says (`Expected integer to be greater or equal to 0`): the limit
 * it failed, as without the union. Otherwise what the union accepts: `expected integer or null, got "old"`.
 */
function unionMessage (error: ValueError): string {
  const members = (error.schema.anyOf ?? error.schema.oneOf) as TSchema[] | undefined
  const candidates = members?.flatMap((member, index) => ofType(member, error.value) ? [index] : []) ?? []
  if (candidates.length === 1) {
    const inner = error.errors[candidates[0]]?.First()
    if (inner !== undefined && inner.path === error.path) return MESSAGES[inner.type] ?? inner.message
  }
  return `expected ${describe(error.schema)}, got ${JSON.stringify(error.value)}`
}

const MESSAGES: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.ObjectRequiredProperty]: 'is required',
  [ValueErrorType.ObjectAdditionalProperties]: 'is not a known field',
}

/**
 * Compiles an input schema once (at registration). The check reports every invalid member with a pointer, so that
 * a response can carry one error object per field.
 */
export function compileInput (schema: TObject): CompiledInput {
  registerFormats()
  const compiled = TypeCompiler.Compile(schema)
  return {
    check (value) {
      if (compiled.Check(value)) {
        const found = findUnstorable(value)
        if (found === undefined) return []
        return [{ kind: 'invalid', field: decodePointerToken(found.path.split('/')[1] ?? ''), path: found.path, message: found.message }]
      }
      const problems: InputProblem[] = []
      const seen = new Set<string>()
      for (const error of compiled.Errors(value)) {
        if (seen.has(error.path)) continue
        seen.add(error.path)
        const field = decodePointerToken(error.path.split('/')[1] ?? '')
        const kind = error.type === ValueErrorType.ObjectRequiredProperty
          ? 'missing'
          : error.type === ValueErrorType.ObjectAdditionalProperties ? 'unknown' : 'invalid'
        const message = error.type === ValueErrorType.Union ? unionMessage(error) : MESSAGES[error.type] ?? error.message
        problems.push({ kind, field, path: error.path, message })
      }
      return problems
    },
  }
}

function decodePointerToken (token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~')
}
