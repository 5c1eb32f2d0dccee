import type { ResolvedAttribute, ValueFormat } from './resolved.js'

function pad (value: number, length = 2): string {
  return String(value).padStart(length, '0')
}

/**
 * An integer attribute's value as a JS number, exactly: node-postgres reads `bigint` (and `numeric`) as strings, and a
 * value beyond `Number.MAX_SAFE_INTEGER` would silently change. That is a declaration that does not fit the column
 * (a `bigint` whose values exceed 2^53 is declared `Type.String({ format: 'int64' })`): fail loudly, never round.
 */
function exactInteger (value: unknown, attribute: ResolvedAttribute): unknown {
  if (typeof value !== 'string' && typeof value !== 'bigint') return value
  const number = Number(value)
  if (Number.isSafeInteger(number) || !Number.isInteger(number)) return number
  throw new Error(`fastify-jsonapi: the value ${String(value)} of the integer attribute '${attribute.name}' is beyond Number.MAX_SAFE_INTEGER ` +
    "and cannot be a JSON number exactly: declare it Type.String({ format: 'int64' })")
}

const READERS: Record<ValueFormat, (value: unknown, attribute: ResolvedAttribute) => unknown> = {
  // node-postgres reads a `date` as local midnight: format it back in local time so no time zone shifts the day.
  date: (value) => value instanceof Date
    ? `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`
    : typeof value === 'string' ? value.slice(0, 10) : value,
  'date-time': (value) => value instanceof Date ? value.toISOString() : value,
  integer: exactInteger,
  // A `numeric` (read as a string) declared `Type.Number()`: the number the declaration promises.
  number: (value) => typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value,
  // Exact numbers stay decimal strings; a driver configured to read `bigint` as a BigInt gives one too.
  decimal: (value) => typeof value === 'bigint' || typeof value === 'number' ? String(value) : value,
  // A `json` / `jsonb` column: the driver (pg, PGlite) has parsed it already. A string here is a JSON string value,
  // as it was written: parsing it again would turn `"123"` into 123 and fail on `"hello"`.
  json: (value) => value,
  plain: (value) => value,
}

/** Converts a database value of an attribute to its wire value. */
export function readValue (attribute: ResolvedAttribute, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null
  return READERS[attribute.format](raw, attribute)
}

/** Converts a wire value of an attribute to the value bound in SQL. */
export function writeValue (attribute: ResolvedAttribute, value: unknown): unknown {
  if (value === null || value === undefined) return null
  return attribute.format === 'json' ? JSON.stringify(value) : value
}
