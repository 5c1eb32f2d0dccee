import { parse } from 'node:querystring'
import type { FastifyRequest } from 'fastify'

/** A query string as the plugin reads it: each name once as a string, a repeated name as an array of strings. */
export type RawQuery = Readonly<Record<string, string | string[]>>

const EMPTY: RawQuery = Object.freeze(Object.create(null) as Record<string, string | string[]>)

/** Decodes a component; an invalid percent-encoding leaves the whole component as sent (as Fastify's parser does). */
function decode (text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/**
 * The query string of a request, parsed from its raw URL with the semantics of Fastify's default parser (`+` is a
 * space, a repeated name gives an array, a name without `=` an empty string, no limit on the number of names). A
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
  if (start === -1) return EMPTY
  const text = url.slice(start + 1)
  // A null-prototype object: a parameter named `constructor` or `__proto__` is a name like any other.
  return Object.freeze(parse(text, '&', '=', { maxKeys: 0, decodeURIComponent: decode }) as Record<string, string | string[]>)
}
