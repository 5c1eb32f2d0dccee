import type { ResolvedAttribute } from '../../schema/resolved.js'

/**
 * The values that SQLite and MariaDB/MySQL store otherwise than they travel (see `SqlEngine.converts`): booleans as
 * integers (0 and 1), arrays and objects that PostgreSQL stores natively (`text[]`, `jsonb` read as values) as JSON
 * text, JSON attributes, written as JSON text everywhere, read back as text (MariaDB's `json` is `longtext`; a driver
 * that parses JSON columns itself, as `mysql2` does on MySQL, gives the value, which is kept), and date-times, which
 * have no time zone there: stored in UTC, in one form whose text order is their order.
 */
export function storedAsText (attribute: ResolvedAttribute): boolean {
  return attribute.valueKind === 'boolean' || attribute.valueKind === 'date-time' || attribute.format === 'json' ||
    attribute.valueKind === 'array' || attribute.valueKind === 'object'
}

/** An RFC 3339 date-time (the wire's `date-time`), or the same without its offset (a value stored in UTC). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$/

/**
 * A date-time in UTC: its date and time (`YYYY-MM-DD`, `HH:MM:SS`) and its fraction of a second to the microsecond
 * (six digits, as PostgreSQL keeps it); undefined for a value that is not one.
 */
function utc (value: unknown): readonly [string, string, string] | undefined {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined
    const iso = value.toISOString()
    return [iso.slice(0, 10), iso.slice(11, 19), `${iso.slice(20, 23)}000`]
  }
  if (typeof value !== 'string') return undefined
  const match = DATE_TIME.exec(value)
  if (match === null) return undefined
  const [, date, time, fraction = '', zone = 'Z'] = match
  const offset = zone === 'Z' || zone === 'z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`
  const milliseconds = Date.parse(`${date}T${time}${offset}`)
  if (Number.isNaN(milliseconds)) return undefined
  const iso = new Date(milliseconds).toISOString()
  return [iso.slice(0, 10), iso.slice(11, 19), fraction.slice(0, 6).padEnd(6, '0')]
}

/** The engines that store values as text or integers, and the form each gives a date-time. */
export type TextStorage = 'sqlite' | 'mysql'

/**
 * A date-time as the engine stores and compares it: `YYYY-MM-DDTHH:MM:SS.ffffffZ` on SQLite (text), `YYYY-MM-DD
 * HH:MM:SS.ffffff` on MariaDB/MySQL (`datetime(6)`), both in UTC; a value that is not a date-time unchanged (the
 * database refuses it, or compares it as it is).
 */
export function storedDateTime (storage: TextStorage, value: unknown): unknown {
  const parts = utc(value)
  if (parts === undefined) return value
  const [date, time, fraction] = parts
  return storage === 'sqlite' ? `${date}T${time}.${fraction}Z` : `${date} ${time}.${fraction}`
}

/** A filter's value as the engine binds it: booleans as integers, date-times in their stored form. */
export function bindAsStored (storage: TextStorage, value: unknown, attribute: ResolvedAttribute): unknown {
  if (typeof value === 'boolean') return Number(value)
  return attribute.valueKind === 'date-time' ? storedDateTime(storage, value) : value
}

/** A stored value of an attribute that {@link storedAsText} holds for, as PostgreSQL's driver would give it. */
export function readTextStored (attribute: ResolvedAttribute, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (attribute.valueKind === 'boolean') return typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' ? Number(value) !== 0 : value
  if (attribute.valueKind === 'date-time') {
    // Stored in UTC: a Date as pg gives one (a driver's Date is kept; text without an offset is UTC).
    if (value instanceof Date || typeof value !== 'string') return value
    const parts = utc(value)
    return parts === undefined ? value : new Date(`${parts[0]}T${parts[1]}.${parts[2].slice(0, 3)}Z`)
  }
  return typeof value === 'string' ? JSON.parse(value) : value
}

/** A value of an attribute that {@link storedAsText} holds for, as the engine stores it. */
export function toTextStored (storage: TextStorage, attribute: ResolvedAttribute, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (attribute.valueKind === 'boolean') return typeof value === 'boolean' ? Number(value) : value
  if (attribute.valueKind === 'date-time') return storedDateTime(storage, value)
  // A JSON attribute arrives as its JSON text (`writeValue`); an array or object stored natively, as a value.
  return attribute.format === 'json' ? value : JSON.stringify(value)
}
