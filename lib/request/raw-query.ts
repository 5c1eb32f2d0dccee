import { parse } from 'node:querystring'
import type { FastifyRequest } from 'fastify'
import { jsonApiError } from '../errors/error-codes.js'
import type { QueryTree } from '../query/query-tree.js'

/** A query string as the plugin reads it: each name once as a string, a repeated name as an array of strings. */
export type RawQuery = Readonly<Record<string, string | string[]>>

/**
 * Where a parsing that may be kept carries the query string it was read from (not enumerable: never a parameter):
 * what is read from it can be kept by that text (see `KeptQueries`). A parsing of a longer text carries none.
 */
const QUERY_TEXT: unique symbol = Symbol('fastify-jsonapi.queryText')

/** The longest query string whose parsing, and what is read from it, a registration keeps. */
const MAX_KEPT_LENGTH = 1024

function withText (raw: Record<string, string | string[]>, text: string): RawQuery {
  Object.defineProperty(raw, QUERY_TEXT, { value: text })
  return Object.freeze(raw)
}

/** The parsing of no query string, shared by every request without one. */
export const NO_QUERY: RawQuery = withText(Object.create(null) as Record<string, string | string[]>, '')

/** The query string a parsing was read from, when it is one whose readings may be kept (see {@link rawQuery}). */
export function queryTextOf (raw: object): string | undefined {
  return (raw as { readonly [QUERY_TEXT]?: string })[QUERY_TEXT]
}

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
 * changes nothing the plugin sees. With `kept` (the registration's), a query string parsed lately is not parsed again.
 */
export function rawQuery (request: FastifyRequest, kept?: KeptQueries): RawQuery {
  const url = request.url
  // Where the router splits the path from the query string: at the first `?` (or `#`).
  const start = url.search(/[?#]/)
  // Most reads of one resource have no query string: nothing to parse.
  if (start === -1) return NO_QUERY
  const text = url.slice(start + 1)
  const known = kept?.parsed(text)
  if (known !== undefined) return known
  // A null-prototype object: a parameter named `constructor` or `__proto__` is a name like any other.
  undecodable = false
  const parsed = parse(text, '&', '=', { maxKeys: 0, decodeURIComponent: decode }) as Record<string, string | string[]>
  if (undecodable) refuseUndecodable(text)
  if (text.length > MAX_KEPT_LENGTH) return Object.freeze(parsed)
  const raw = withText(parsed, text)
  kept?.keepParsed(text, raw)
  return raw
}

/** The most query strings kept, and the most query trees: the oldest go first. */
const MAX_KEPT = 500

/**
 * The query strings a registration parsed lately, each with its (frozen) parsing, and the query trees read from them
 * per resource and kind of request: a request with the same query string as one before gets the same parsing and
 * the same tree without reading them again. Keyed by the text of the query string (a value), bounded (at most 500 of
 * each, the oldest going first, so that a client that invents query strings cannot grow them), and owned by the
 * registration's route context: two registrations never share or evict each other's entries.
 */
export class KeptQueries {
  readonly #parsed = new Map<string, RawQuery>()
  readonly #trees = new Map<string, QueryTree>()

  /** The parsing kept for a query string. */
  parsed (text: string): RawQuery | undefined {
    return this.#parsed.get(text)
  }

  keepParsed (text: string, raw: RawQuery): void {
    keep(this.#parsed, text, raw)
  }

  /** The tree kept for `key` (a resource's type, a kind of request and a query string), read by `read` the first time. */
  tree (key: string, read: () => QueryTree): QueryTree {
    const known = this.#trees.get(key)
    if (known !== undefined) return known
    const tree = read()
    keep(this.#trees, key, tree)
    return tree
  }
}

function keep<V> (map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_KEPT) map.delete(map.keys().next().value as string)
  map.set(key, value)
}
