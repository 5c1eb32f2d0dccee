import { NUMERIC_KINDS, type ResolvedAttribute, type ValueKind } from '../schema/resolved.js'
import type { BuiltinOperator } from '../schema/filter-nodes.js'

/** What `val` a built-in operator takes. */
export type OperandShape =
  /** One value of the attribute's type; `null` (IS [NOT] NULL) on nullable attributes for eq/ne. */
  | 'value'
  /** `[low, high]` of the attribute's type. */
  | 'pair'
  /** An array of values of the attribute's type. */
  | 'list'
  /** `null` only. */
  | 'null'
  /** A string pattern or text. */
  | 'text'

// `decimal` (exact numbers as strings): the value is bound as a parameter of the column's type, so the database
// compares (and sorts) numerically.
const ORDERED: readonly ValueKind[] = ['string', 'integer', 'number', 'decimal', 'date', 'date-time']
const SCALAR: readonly ValueKind[] = [...ORDERED, 'boolean']
const ANY: readonly ValueKind[] = [...SCALAR, 'array', 'object', 'other']
const TEXT: readonly ValueKind[] = ['string']

/**
 * The built-in operators: the attribute kinds each one is allowed on (a whitelist, not whatever the database would
 * accept) and the shape of its value.
 */
export const BUILTIN_OPERATORS: Readonly<Record<BuiltinOperator, { readonly kinds: readonly ValueKind[]; readonly operand: OperandShape }>> = {
  eq: { kinds: SCALAR, operand: 'value' },
  ne: { kinds: SCALAR, operand: 'value' },
  gt: { kinds: ORDERED, operand: 'value' },
  ge: { kinds: ORDERED, operand: 'value' },
  lt: { kinds: ORDERED, operand: 'value' },
  le: { kinds: ORDERED, operand: 'value' },
  between: { kinds: ORDERED, operand: 'pair' },
  in_: { kinds: SCALAR, operand: 'list' },
  notin_: { kinds: SCALAR, operand: 'list' },
  is_: { kinds: ANY, operand: 'null' },
  isnot: { kinds: ANY, operand: 'null' },
  like: { kinds: TEXT, operand: 'text' },
  notlike: { kinds: TEXT, operand: 'text' },
  ilike: { kinds: TEXT, operand: 'text' },
  notilike: { kinds: TEXT, operand: 'text' },
  startswith: { kinds: TEXT, operand: 'text' },
  endswith: { kinds: TEXT, operand: 'text' },
  match: { kinds: TEXT, operand: 'text' },
}

/**
 * Whether a built-in operator applies to an attribute: its kind is one the operator allows, and a text operator
 * (`like`, `startswith`, `match` …) is not applied to a UUID (PostgreSQL has no `uuid ~~ text`).
 */
export function operatorApplies (op: BuiltinOperator, attribute: ResolvedAttribute): boolean {
  const { kinds, operand } = BUILTIN_OPERATORS[op]
  return kinds.includes(attribute.valueKind) && !(operand === 'text' && attribute.valueSchema.format === 'uuid')
}

/** Whether a string names a built-in operator. */
export function isBuiltinOperator (op: string): op is BuiltinOperator {
  return Object.prototype.hasOwnProperty.call(BUILTIN_OPERATORS, op)
}

/** The operators that compare two attributes of the same row (`field`). */
export const FIELD_OPERATORS: ReadonlySet<string> = new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le'])

/**
 * Whether two attributes can be compared with each other (`field`), decided from the declarations before any SQL
 * runs: the same kind (or two numbers: `integer`, `number` and `decimal` — a `bigint` id, an `int64` or `decimal`
 * string — compare as numbers in PostgreSQL) that the comparison operators allow, and a UUID only with a UUID
 * (PostgreSQL has no `uuid = text`). A text id is a string, compared with strings.
 */
export function fieldsComparable (attribute: ResolvedAttribute, other: ResolvedAttribute): boolean {
  const sameKind = other.valueKind === attribute.valueKind || (NUMERIC_KINDS.has(other.valueKind) && NUMERIC_KINDS.has(attribute.valueKind))
  const uuid = (item: ResolvedAttribute): boolean => item.valueSchema.format === 'uuid'
  return sameKind && uuid(attribute) === uuid(other) && BUILTIN_OPERATORS.eq.kinds.includes(attribute.valueKind)
}
