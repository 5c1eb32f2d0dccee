import { StorageError } from '../../contracts/repository.js'
import type { FilterNode } from '../../schema/filter-nodes.js'
import type { ResolvedResource } from '../../schema/resolved.js'

/** The smallest and the largest value an integer column holds. */
export type IntegerRange = readonly [bigint, bigint]

/** The ranges of the integer types, by the type's name as a catalog gives it. */
export const INTEGER_TYPES: Readonly<Record<string, IntegerRange>> = {
  tinyint: [-(2n ** 7n), 2n ** 7n - 1n],
  smallint: [-(2n ** 15n), 2n ** 15n - 1n],
  mediumint: [-(2n ** 23n), 2n ** 23n - 1n],
  int: [-(2n ** 31n), 2n ** 31n - 1n],
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
}

/** The range of an unsigned integer type of `bits`. */
export function unsignedRange (signed: IntegerRange): IntegerRange {
  return [0n, signed[1] * 2n + 1n]
}

/** An integer value as a bigint, or undefined for anything else (a string of digits counts: ids travel as text). */
function integerOf (value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : undefined
  if (typeof value === 'string' && /^[+-]?\d{1,40}$/.test(value)) return BigInt(value)
  return undefined
}

function nulRefusal (resource: ResolvedResource): StorageError {
  return new StorageError('invalid-value', `a filter value of ${resource.table} holds a NUL character`, { table: resource.table })
}

/** Whether a value (a string, or any string in an array or object, keys too) holds a NUL character. */
function holdsNul (value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000')
  if (Array.isArray(value)) return value.some(holdsNul)
  if (typeof value === 'object' && value !== null) return Object.entries(value).some(([key, item]) => key.includes('\u0000') || holdsNul(item))
  return false
}

/**
 * The integer columns of the tables a registration reads, with the values each can hold, read from the catalog at
 * `ready`, for the engines that compare a value its column cannot hold without a word (MariaDB compares `int` with
 * 2^31 and finds nothing; SQLite compares its 64-bit integers with 2^63 as reals): a filter value beyond its column's
 * range is refused before the statement runs, as PostgreSQL refuses it (its parameters take the column's type), so
 * that the request is the same 400 naming the filter on every engine. So is a filter value with a NUL character,
 * which PostgreSQL's text and JSON cannot hold and the other engines would compare.
 */
export class IntegerRanges {
  readonly #columns: ReadonlyMap<string, ReadonlyMap<string, IntegerRange>>

  /** `columns`: table (as the declarations name it) → column → range. */
  constructor (columns: ReadonlyMap<string, ReadonlyMap<string, IntegerRange>>) {
    this.#columns = columns
  }

  /** These ranges and `other`'s (read for another registration's resources). */
  with (other: IntegerRanges): IntegerRanges {
    return new IntegerRanges(new Map([...this.#columns, ...other.#columns]))
  }

  /**
   * An `out-of-range` storage error when a value of `where` (over rows of `resource`) is beyond its column's range,
   * an `invalid-value` one when it holds a NUL character.
   */
  refusal (where: FilterNode | undefined, resource: ResolvedResource): StorageError | undefined {
    if (where === undefined) return undefined
    return this.#walk(where, resource)
  }

  #walk (node: FilterNode, resource: ResolvedResource): StorageError | undefined {
    switch (node.kind) {
      case 'custom':
        return holdsNul(node.value) ? nulRefusal(resource) : undefined
      case 'compare': {
        if (holdsNul(node.value)) return nulRefusal(resource)
        const column = node.attribute.column
        const range = column === undefined ? undefined : this.#columns.get(resource.table)?.get(column)
        if (range === undefined || node.value === null) return undefined
        const values = Array.isArray(node.value) ? node.value as unknown[] : [node.value]
        for (const value of values) {
          const integer = integerOf(value)
          if (integer !== undefined && (integer < range[0] || integer > range[1])) {
            return new StorageError('out-of-range', `the value ${String(value)} is out of the range of ${resource.table}.${column as string}`, { table: resource.table, columns: [column as string] })
          }
        }
        return undefined
      }
      case 'and':
      case 'or':
        for (const item of node.items) {
          const refused = this.#walk(item, resource)
          if (refused !== undefined) return refused
        }
        return undefined
      case 'not':
        return this.#walk(node.item, resource)
      case 'exists':
        return node.where === undefined ? undefined : this.#walk(node.where, node.target)
      default:
        return undefined
    }
  }
}
