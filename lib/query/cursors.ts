import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { printSort, type CursorPosition, type CursorValue, type SortNode } from './query-tree.js'
import { printFilter, type FilterNode } from '../schema/filter-nodes.js'

/** The JSON:API cursor pagination profile: its URI names it in `Accept` and `Content-Type`. */
export const CURSOR_PAGINATION_PROFILE = 'https://jsonapi.org/profiles/ethanresnick/cursor-pagination'

/**
 * The `links.type` of the profile's errors. The profile defines three type URIs; its "invalid parameter value" error
 * has none, so it links the profile's section that defines that error.
 */
export const CURSOR_ERROR_TYPES = Object.freeze({
  maxSizeExceeded: `${CURSOR_PAGINATION_PROFILE}/max-size-exceeded`,
  unsupportedSort: `${CURSOR_PAGINATION_PROFILE}/unsupported-sort`,
  rangePaginationNotSupported: `${CURSOR_PAGINATION_PROFILE}/range-pagination-not-supported`,
  invalidParameterValue: `${CURSOR_PAGINATION_PROFILE}/#errors-invalid-query-parameter`,
})

/**
 * What a cursor is bound to (`CursorWindow.context`): the collection (`user`, `user/1/computers`,
 * `user/1/relationships/computers`), its order (the keys of `keysetKeys`) and its filter, canonically written.
 */
export function cursorContext (collection: string, keys: readonly SortNode[], filter: FilterNode | undefined): string {
  return JSON.stringify([collection, printSort(keys), filter === undefined ? null : printFilter(filter)])
}

/** A secret that signs cursors: a string (UTF-8) or bytes, at least {@link MIN_SECRET_BYTES} long. */
export type CursorSecret = string | Uint8Array

/** The shortest secret accepted: 32 bytes, the output size of SHA-256. */
export const MIN_SECRET_BYTES = 32

const MAC_BYTES = 32
/**
 * The most bytes of sort values a cursor carries besides the id (UTF-8, as JSON). Above it the longest values are
 * elided: the cursor keeps a digest of each, and its row (the id, never elided) gives the value back when the cursor
 * is read. So a cursor is at most about 1.5 KB of base64url plus its id (up to `sort.maxKeys` digests), whatever the
 * values, and a link that carries one stays far below what an HTTP server accepts in a request line (Node: 16 KB
 * with every header).
 */
export const MAX_CURSOR_VALUE_BYTES = 1_024
/** The longest cursor read (characters): longer ones are refused before any work. */
const MAX_CURSOR_LENGTH = 16_384
const DIGEST = /^[A-Za-z0-9_-]{22}$/
const FORMAT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/
/** Domain separation: what the MAC covers is a cursor of this library, in this format. */
const PURPOSE = 'fastify-jsonapi cursor v1'

/**
 * Writes and reads the opaque, tamper-evident cursors of cursor pagination. A cursor is
 * `base64url(JSON payload) "." base64url(HMAC-SHA256)`; the payload holds the position (the row's sort key values
 * and id as text, and its edge), the MAC covers the payload and the cursor's context (the collection, its order and
 * its filter: `CursorWindow.context`). A cursor is therefore valid only for the collection, sort and filter
 * it was issued for, by a server holding the same secret. The first secret signs; every secret verifies (so a secret
 * can be rotated).
 *
 * A cursor is signed, not encrypted: it holds the sort key values of its row, which the client could read anyway.
 * Cursors are deterministic (the same row in the same collection always gets the same cursor), so that a response
 * is the same bytes while nothing it shows changed (its `ETag` too).
 */
export class CursorCodec {
  readonly #keys: readonly Buffer[]

  /** @param secrets the secrets (the first signs); none: a random key of this process only */
  constructor (secrets: readonly CursorSecret[] = []) {
    this.#keys = secrets.length === 0
      ? [randomBytes(MAC_BYTES)]
      : secrets.map((secret) => typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret))
  }

  #mac (key: Buffer, context: string, payload: string): Buffer {
    return createHmac('sha256', key).update(`${PURPOSE}\n${context}\n${payload}`).digest()
  }

  /** The cursor of a position in the context (values over {@link MAX_CURSOR_VALUE_BYTES} elided, the longest first). */
  encode (position: CursorPosition, context: string): string {
    const values = boundedValues(position.values)
    const body = position.edge === 'on' ? [values] : [values, position.edge === 'before' ? 'b' : 'a']
    const payload = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url')
    return `${payload}.${this.#mac(this.#keys[0], context, payload).toString('base64url')}`
  }

  /**
   * The position of a cursor issued for `context` with `keys` sort key values, or why it is not one: malformed, not
   * issued by this server (or with another secret), or issued for another collection, sort or filter. The MAC is
   * checked (in constant time) before the payload is parsed: nothing a client made up is ever read.
   */
  decode (text: string, context: string, keys: number): CursorPosition | { readonly problem: string } {
    const format = text.length <= MAX_CURSOR_LENGTH ? FORMAT.exec(text) : null
    if (format === null) return { problem: 'it is not a cursor of this server' }
    const [, payload, mac] = format
    const given = Buffer.from(mac, 'base64url')
    if (given.length !== MAC_BYTES || given.toString('base64url') !== mac) return { problem: 'it is not a cursor of this server' }
    if (!this.#keys.some((key) => timingSafeEqual(this.#mac(key, context, payload), given))) {
      return { problem: 'it was not issued by this server for this collection, sort and filter' }
    }
    let body: unknown
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return { problem: 'it is not a cursor of this server' }
    }
    return positionOf(body, keys) ?? { problem: 'it does not fit the sort of this request' }
  }
}

/**
 * The digest that stands for an elided value: the first 128 bits of its SHA-256, base64url. Only a value equal to the
 * elided one has it (a collision would take about 2^64 tries, and the client cannot choose what a cursor holds).
 */
export function cursorValueDigest (value: string): string {
  return createHash('sha256').update(value, 'utf8').digest().subarray(0, 16).toString('base64url')
}

/** The JSON text of a value in a cursor's payload: a string, null, or `{"d": digest}` for an elided value. */
type PayloadValue = string | null | { readonly d: string }

/**
 * The values a cursor carries: as they are while the JSON of all but the last (the id, which points at the row) fits
 * {@link MAX_CURSOR_VALUE_BYTES}; else the longest of them replaced by their digests until it fits. The same values
 * always give the same result (cursors are deterministic).
 */
function boundedValues (values: readonly CursorValue[]): PayloadValue[] {
  const carried: PayloadValue[] = values.map((value) => value === null || typeof value === 'string' ? value : { d: value.digest })
  const bytes = carried.slice(0, -1).map((value) => typeof value === 'string' ? Buffer.byteLength(JSON.stringify(value), 'utf8') : 0)
  let total = bytes.reduce((sum, size) => sum + size, 0)
  if (total <= MAX_CURSOR_VALUE_BYTES) return carried
  const longest = bytes.map((size, index) => ({ size, index })).filter(({ size }) => size > 0)
    .sort((a, b) => b.size - a.size || a.index - b.index)
  for (const { size, index } of longest) {
    if (total <= MAX_CURSOR_VALUE_BYTES) break
    carried[index] = { d: cursorValueDigest(carried[index] as string) }
    total -= size
  }
  return carried
}

/** A value of a payload read back: a string, null, an elided value; undefined when it is none of them. */
function valueOf (value: unknown): CursorValue | undefined {
  if (value === null || typeof value === 'string') return value
  if (typeof value !== 'object' || Array.isArray(value)) return undefined
  const keys = Object.keys(value)
  const digest = (value as { d?: unknown }).d
  if (keys.length !== 1 || typeof digest !== 'string' || !DIGEST.test(digest)) return undefined
  return Object.freeze({ digest })
}

/** The position a signed payload holds, or undefined when it is not one of `keys` values (the last, the id, set). */
function positionOf (body: unknown, keys: number): CursorPosition | undefined {
  if (!Array.isArray(body) || body.length < 1 || body.length > 2) return undefined
  const [given, edge] = body as [unknown, unknown]
  if (!Array.isArray(given) || given.length !== keys) return undefined
  const values = given.map(valueOf)
  if (values.includes(undefined) || typeof values[keys - 1] !== 'string') return undefined
  if (edge !== undefined && edge !== 'a' && edge !== 'b') return undefined
  return Object.freeze({
    values: Object.freeze(values as CursorValue[]),
    edge: edge === undefined ? 'on' : edge === 'b' ? 'before' : 'after',
  })
}
