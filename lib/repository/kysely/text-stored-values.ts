import type { ResolvedAttribute } from '../../schema/resolved.js'

/**
 * The values that SQLite and MariaDB/MySQL store otherwise than they travel (see `SqlEngine.converts`): booleans as
 * integers (0 and 1), arrays and objects that PostgreSQL stores natively (`text[]`, `jsonb` read as values) as JSON
 * text, and JSON attributes, written as JSON text everywhere, read back as text (MariaDB's `json` is `longtext`; a
 * driver that parses JSON columns itself, as `mysql2` does on MySQL, gives the value, which is kept).
 */
export function storedAsText (attribute: ResolvedAttribute): boolean {
  return attribute.valueKind === 'boolean' || attribute.format === 'json' || attribute.valueKind === 'array' || attribute.valueKind === 'object'
}

/** A stored value of an attribute that {@link storedAsText} holds for, as PostgreSQL's driver would give it. */
export function readTextStored (attribute: ResolvedAttribute, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (attribute.valueKind === 'boolean') return typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' ? Number(value) !== 0 : value
  return typeof value === 'string' ? JSON.parse(value) : value
}

/** A value of an attribute that {@link storedAsText} holds for, as the engine stores it. */
export function toTextStored (attribute: ResolvedAttribute, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (attribute.valueKind === 'boolean') return typeof value === 'boolean' ? Number(value) : value
  // A JSON attribute arrives as its JSON text (`writeValue`); an array or object stored natively, as a value.
  return attribute.format === 'json' ? value : JSON.stringify(value)
}
