import type { CursorPosition, PageNode } from '../query/query-tree.js'
import type { CursorResult, ResultSet } from '../contracts/result-set.js'
import type { RequestLocation } from '../contracts/request-location.js'

function encode (value: string): string {
  // Brackets are percent-encoded: links must be valid URI references (the JSON:API schema checks it).
  return encodeURIComponent(value).replace(/%2C/g, ',')
}

function link (location: RequestLocation, page: number | undefined): string {
  const parts: string[] = []
  for (const [name, value] of Object.entries(location.query)) {
    if (name === 'page[number]') continue
    for (const item of Array.isArray(value) ? value : [value]) parts.push(`${encode(name)}=${encode(String(item))}`)
  }
  if (page !== undefined && page > 1) parts.push(`page%5Bnumber%5D=${page}`)
  parts.sort((a, b) => (a.startsWith('page%5B') ? 1 : 0) - (b.startsWith('page%5B') ? 1 : 0))
  return `${location.baseUrl}${location.path}${parts.length === 0 ? '' : `?${parts.join('&')}`}`
}

/**
 * The links of a collection page: `self`, `first`, `prev` (not on the first page), `next` (not on the last) and
 * `last` (only when the count is known). Every other query parameter is kept.
 */
export function paginationLinks (location: RequestLocation, page: PageNode, totals: Pick<ResultSet, 'count' | 'hasMore'>): Record<string, string> {
  const count = totals.count
  const current = page.number
  const links: Record<string, string> = { self: link(location, current) }
  if (page.size === 0) return links
  links.first = link(location, 1)
  const last = count === undefined ? undefined : Math.max(1, Math.ceil(count / page.size))
  if (current > 1) links.prev = link(location, last === undefined ? current - 1 : Math.min(current - 1, last))
  if (last === undefined ? totals.hasMore === true : current < last) links.next = link(location, current + 1)
  if (last !== undefined) links.last = link(location, last)
  return links
}

const CURSOR_PARAMETERS = new Set(['page[number]', 'page[after]', 'page[before]'])

/** The request's URL with its page parameters replaced by `page` (every other parameter kept, page ones last). */
function cursorLink (location: RequestLocation, page: Readonly<Record<string, string>>): string {
  const parts: string[] = []
  for (const [name, value] of Object.entries(location.query)) {
    if (CURSOR_PARAMETERS.has(name)) continue
    for (const item of Array.isArray(value) ? value : [value]) parts.push(`${encode(name)}=${encode(String(item))}`)
  }
  for (const [name, value] of Object.entries(page)) parts.push(`${encode(name)}=${encode(value)}`)
  parts.sort((a, b) => (a.startsWith('page%5B') ? 1 : 0) - (b.startsWith('page%5B') ? 1 : 0))
  return `${location.baseUrl}${location.path}${parts.length === 0 ? '' : `?${parts.join('&')}`}`
}

/**
 * The links of a cursor page (the cursor pagination profile): `self` (the request), `first` (no cursor), and `prev`
 * and `next`: a URL with `page[before]` / `page[after]` (and the request's `page[size]`, every other parameter kept),
 * absent when no row lies in that direction. (The profile asks for `null` there; JSON:API allows either, the
 * project's documents leave out links that do not apply, and the JSON:API 1.0 schema rejects a `null` link.)
 */
export function cursorPaginationLinks (location: RequestLocation, cursor: CursorResult, encodeCursor: (position: CursorPosition) => string): Record<string, string> {
  const query = location.query
  const self: Record<string, string> = {}
  for (const name of ['page[after]', 'page[before]'] as const) {
    const value = query[name]
    if (typeof value === 'string') self[name] = value
  }
  const links: Record<string, string> = { self: cursorLink(location, self), first: cursorLink(location, {}) }
  if (cursor.prev !== undefined) links.prev = cursorLink(location, { 'page[before]': encodeCursor(cursor.prev) })
  if (cursor.next !== undefined) links.next = cursorLink(location, { 'page[after]': encodeCursor(cursor.next) })
  return links
}
