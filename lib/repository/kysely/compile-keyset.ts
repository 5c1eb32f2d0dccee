import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely'
import type { KeysetBound } from '../../contracts/repository.js'

/** One key of a keyset order, compiled. */
export interface KeysetKey {
  /** What the key orders by: a column, or the correlated subquery of a to-one path (see `compileSort`). */
  readonly expression: RawBuilder<unknown>
  readonly descending: boolean
  /**
   * Whether the key may be NULL: every key but the id. (A declaration is not trusted to say a column holds no NULL:
   * a row it missed would be skipped silently.)
   */
  readonly nullable: boolean
  /**
   * How a value's text is bound for this key, where the engine would not read it as the key's type (see
   * `SqlEngine.numericKeyValue`); as the text itself when undefined.
   */
  readonly bind?: (text: string) => unknown
}

/** A key's value as it is bound (see {@link KeysetKey.bind}). */
function boundValue (key: KeysetKey, value: string): unknown {
  return key.bind === undefined ? value : key.bind(value)
}

/** A bound of a keyset window and the side of it the rows lie on. */
export type SidedBound = readonly [KeysetBound, 'after' | 'before']

const FALSE = sql<SqlBool>`false`

/**
 * `key` lies strictly beyond `value` in the direction of reading: towards larger values (`up`) or smaller ones. The
 * order is PostgreSQL's default, which `ORDER BY` uses: NULLs sort as larger than every value (last ascending, first
 * descending).
 */
function beyond (key: KeysetKey, value: string | null, up: boolean): Expression<SqlBool> {
  const k = key.expression
  if (up) {
    if (value === null) return FALSE
    return key.nullable ? sql<SqlBool>`(${k} > ${boundValue(key, value)} or ${k} is null)` : sql<SqlBool>`${k} > ${boundValue(key, value)}`
  }
  return value === null ? sql<SqlBool>`${k} is not null` : sql<SqlBool>`${k} < ${boundValue(key, value)}`
}

function equal (key: KeysetKey, value: string | null): Expression<SqlBool> {
  return value === null ? sql<SqlBool>`${key.expression} is null` : sql<SqlBool>`${key.expression} = ${boundValue(key, value)}`
}

/**
 * The rows that lie after (`side` `after`) or before a bound in the order of `keys` (the last key is the id: unique,
 * never NULL), NULL-aware in both directions, every value a bound parameter that PostgreSQL reads as the key's type:
 * `k1 > $1 or (k1 = $1 and (k2 > $2 or (k2 = $2 and id > $3)))`, with `is null` where NULLs count.
 */
export function keysetCondition (keys: readonly KeysetKey[], bound: KeysetBound, side: 'after' | 'before'): Expression<SqlBool> {
  const { values, inclusive } = bound
  const ups = keys.map((key) => (side === 'after') !== key.descending)
  const last = keys.length - 1
  // From the last key back: (k_i beyond v_i) or (k_i = v_i and <the rest>); the id includes itself when inclusive.
  let condition: Expression<SqlBool> = inclusive
    ? sql<SqlBool>`${keys[last].expression} ${sql.raw(ups[last] ? '>=' : '<=')} ${values[last]}`
    : beyond(keys[last], values[last], ups[last])
  for (let index = last - 1; index >= 0; index--) {
    const further = beyond(keys[index], values[index], ups[index])
    const tie = sql<SqlBool>`${equal(keys[index], values[index])} and ${condition}`
    condition = further === FALSE ? tie : sql<SqlBool>`(${further} or (${tie}))`
  }
  return condition
}

/**
 * The conditions of the rows within `bounds`, as one or two branches whose rows together are those rows. Every
 * branch starts with a condition on the first key alone that a B-tree index on it (or on it and the id) answers as a
 * range, so that a page starts at its cursor in the index instead of scanning up to it:
 *
 * - Keyed by the id, or without an index to use (a to-one path, `index` false): one branch, the keyset conditions.
 * - Keyed by a column: its non-NULL rows (`k >= $1` or `k <= $1` from each bound, or `k is not null`) and its NULL
 *   rows (`k is null`), each with the keyset conditions they still need; a part that no row of the window can be in
 *   (the NULLs when reading away from them, the values after a NULL bound) is left out. The caller reads each branch
 *   in order with its limit and merges them.
 */
export function keysetBranches (keys: readonly KeysetKey[], bounds: readonly SidedBound[], index: boolean): Array<Array<Expression<SqlBool>>> {
  const conditions = bounds.map(([bound, side]) => keysetCondition(keys, bound, side))
  const first = keys[0]
  if (!index || !first.nullable || bounds.length === 0) return [conditions]
  const k = first.expression
  const values: Array<Expression<SqlBool>> = []
  const nulls: Array<Expression<SqlBool>> = []
  let valuesIn = true
  let nullsIn = true
  let ranged = false
  bounds.forEach(([bound, side], at) => {
    const up = (side === 'after') !== first.descending
    const value = bound.values[0]
    if (value !== null) {
      // Every NULL lies beyond a value when reading up, none when reading down.
      values.push(sql<SqlBool>`${k} ${sql.raw(up ? '>=' : '<=')} ${value}`, conditions[at])
      ranged = true
      if (!up) nullsIn = false
    } else if (up) {
      // Beyond a NULL, reading up: only NULLs (ties, decided by the next keys).
      valuesIn = false
      nulls.push(conditions[at])
    } else {
      // Beyond a NULL, reading down: every value, and the NULLs the next keys put there.
      nulls.push(conditions[at])
    }
  })
  const branches: Array<Array<Expression<SqlBool>>> = []
  if (valuesIn) branches.push(ranged ? values : [sql<SqlBool>`${k} is not null`, ...values])
  if (nullsIn) branches.push([sql<SqlBool>`${k} is null`, ...nulls])
  return branches.length === 0 ? [[FALSE]] : branches
}
