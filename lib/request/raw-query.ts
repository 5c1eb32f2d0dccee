import { parse } from 'node:querystring'
import type { FastifyRequest } from 'fastify'
import { jsonApiError } from '../errors/error-codes.js'

/** A query string as the plugin reads it: each name once as a string, a repeated name as an array of strings. */
export type RawQuery = Readonly<Record<string, string | string[]>>

/** The parsing of no query string, shared by every request without one. */
export const NO_QUERY: RawQuery = Object.freeze(Object.create(null) as Record<string, string | string[]>)

/** Whether a component of the query string failed to decode, in the parse under way (see {@link decode}). */
let undecodable = false

/** Decodes a component; an invalid percent-encoding leaves it as sent, and is noted (see {@link refuseUndecodable}). */
function decode (text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    undecodable = true
    return text
  }
}

/**
 * The 400 of a query string with a component that is not percent-encoded UTF-8 (`filter%5Bname%FF%5D=x`): such a
 * parameter is neither ignored (the request would answer as if it had no filter) nor read as some other name. Its
 * `source.parameter` is the first such parameter, by its decoded name where the name decodes.
 */
function refuseUndecodable (text: string): never {
  for (const pair of text.split('&')) {
    const equals = pair.indexOf('=')
    const [name, value] = equals < 0 ? [pair, ''] : [pair.slice(0, equals), pair.slice(equals + 1)]
    let decodedName: string
    try {
      decodedName = decodeURIComponent(name.replace(/\+/g, ' '))
    } catch {
      throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', { detail: `the parameter name '${name.slice(0, 100)}' is not percent-encoded UTF-8`, source: { parameter: name } })
    }
    try {
      decodeURIComponent(value.replace(/\+/g, ' '))
    } catch {
      throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', { detail: `the value of '${decodedName.slice(0, 100)}' is not percent-encoded UTF-8`, source: { parameter: decodedName } })
    }
  }
  throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', { detail: 'the query string is not percent-encoded UTF-8', source: { parameter: text.slice(0, 100) } })
}

/**
 * The query string of a request, parsed from its raw URL with the semantics of Fastify's default parser (`+` is a
 * space, a repeated name gives an array, a name without `=` an empty string, no limit on the number of names); a name
 * or value that is not percent-encoded UTF-8 is a 400 naming the parameter. A
 * route reads it once and passes it on, to `readQuery` and to its document's links. The plugin reads every JSON:API
 * parameter (`include`, `fields[type]`, `sort`, `page[…]`, `filter…`) from here, never from `request.query`: a host
 * application's `querystringParser` (`qs`, say, which turns `fields[user]=name` into `{ fields: { user: 'name' } }`)
 * changes nothing the plugin sees.
 */
export function rawQuery (request: FastifyRequest): RawQuery {
  const url = request.url
  // Where the router splits the path from the query string: at the first `?` (or `#`).
  const start = url.search(/[?#]/)
  // Most reads of one resource have no query string: nothing to parse.
  if (start === -1) return NO_QUERY
  const text = url.slice(start + 1)
  const known = PARSED.get(text)
  if (known !== undefined) return known
  // A null-prototype object: a parameter named `constructor` or `__proto__` is a name like any other.
  undecodable = false
  const raw = Object.freeze(parse(text, '&', '=', { maxKeys: 0, decodeURIComponent: decode }) as Record<string, string | string[]>)
  if (undecodable) refuseUndecodable(text)
  if (text.length <= MAX_KEPT_LENGTH) {
    if (PARSED.size >= MAX_KEPT) PARSED.delete(PARSED.keys().next().value as string)
    PARSED.set(text, raw)
    SHARED.add(raw)
  }
  return raw
}

/**
 * The query strings parsed lately, each with its (frozen) parsing: a request with the same query string as one before
 * gets the same object, and what was read from it (its query tree, see `readQuery`) can be kept with it. At most
 * {@link MAX_KEPT} of at most {@link MAX_KEPT_LENGTH} characters each, the oldest going first, so that a client that
 * invents query strings cannot grow it without bound.
 */
const PARSED = new Map<string, RawQuery>()
const MAX_KEPT = 500
const MAX_KEPT_LENGTH = 1024
/** The parsings that requests share (those of {@link PARSED}, and the empty one). */
const SHARED = new WeakSet<RawQuery>([NO_QUERY])

/** Whether a parsed query string is one that requests share (see {@link rawQuery}): what is read from it can be kept. */
export function isSharedRawQuery (raw: object): boolean {
  return SHARED.has(raw as RawQuery)
}
