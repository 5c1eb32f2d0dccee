import type { ResolvedAttribute, ValueFormat } from './resolved.js'

function pad (value: number, length = 2): string {
  return String(value).padStart(length, '0')
}

const READERS: Record<ValueFormat, (value: unknown) => unknown> = {
  // node-postgres reads a `date` as local midnight: format it back in local time so no time zone shifts the day.
  date: (value) => value instanceof Date
    ? `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`
    : typeof value === 'string' ? value.slice(0, 10) : value,
  'date-time': (value) => value instanceof Date ? value.toISOString() : value,
  integer: (value) => typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value,
  json: (value) => typeof value === 'string' ? JSON.parse(value) : value,
  plain: (value) => value,
}

/** Converts a database value of an attribute to its wire value. */
export function readValue (attribute: ResolvedAttribute, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null
  return READERS[attribute.format](raw)
}

/** Converts a wire value of an attribute to the value bound in SQL. */
export function writeValue (attribute: ResolvedAttribute, value: unknown): unknown {
  if (value === null || value === undefined) return null
  return attribute.format === 'json' ? JSON.stringify(value) : value
}
