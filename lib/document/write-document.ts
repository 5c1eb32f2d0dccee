import type { QueryTree } from '../query/query-tree.js'
import type { CursorCodec } from '../query/cursors.js'
import { countMeta, type CursorResult, type ResultSet } from '../contracts/result-set.js'
import { ResourceWriter, type DocumentBudget } from './resource-object.js'
import { documentJson } from './json-text.js'
import { cursorPaginationLinks, paginationLinks } from './pagination-links.js'
import type { RequestLocation } from '../contracts/request-location.js'

/** The `jsonapi` member of every document. */
export const JSONAPI_OBJECT = Object.freeze({ version: '1.0' })

/** A document written as JSON text, and its `links.self`. */
export interface DocumentText {
  readonly text: string
  readonly self: string
}

/**
 * A single-resource document: `data` (or `null`), `links.self` — the resource's own URL, or the request's for a
 * related resource (`/users/1/bio`) — `jsonapi`, and `included` when anything was included; the resource objects
 * already written as text (`JsonText`), as in every document.
 */
function singleDocument (result: ResultSet, query: QueryTree, location: RequestLocation, related = false, budget?: DocumentBudget, codec?: CursorCodec): { readonly document: Record<string, unknown>, readonly self: string } {
  const writer = new ResourceWriter(location.baseUrl, query, result, budget, codec)
  const primary = result.primary[0]
  const self = related || primary === undefined ? `${location.baseUrl}${location.path}` : writer.selfLink(primary.resource, primary.id)
  const document: Record<string, unknown> = { data: primary === undefined ? null : writer.json(primary), links: { self }, jsonapi: JSONAPI_OBJECT }
  if (result.included.length > 0) document.included = writer.array(result.included)
  return { document, self }
}

/**
 * {@link singleDocument} written by the one writer, `documentJson`: what a route sends as it is, and what `If-Match`
 * compares the tag of. `codec` signs the cursors of the `next` links of included to-many pages.
 */
export function singleDocumentText (result: ResultSet, query: QueryTree, location: RequestLocation, related = false, budget?: DocumentBudget, codec?: CursorCodec): DocumentText {
  const { document, self } = singleDocument(result, query, location, related, budget, codec)
  return { text: documentJson(document), self }
}

/**
 * What a cursor page adds to its document (the cursor pagination profile): the cursor of each item
 * (`meta.page.cursor`), the pagination links with cursors, and `meta.page` (`total`, the count, when counted;
 * `rangeTruncated` when a range held more rows than the page).
 */
function cursorParts (result: ResultSet & { cursor: CursorResult }, query: QueryTree, location: RequestLocation, codec: CursorCodec | undefined) {
  if (codec === undefined) throw new Error('fastify-jsonapi: a cursor page needs the cursor codec to be written')
  const context = (query.page.cursor as { context: string }).context
  const cursors = result.cursor.positions.map((position) => codec.encode(position, context))
  // `prev` and `next` are mostly the positions of the first and last items: their cursors are signed once.
  const encoded = new Map(result.cursor.positions.map((position, index) => [position, cursors[index]]))
  const page: Record<string, unknown> = {}
  if (result.count !== undefined) page.total = result.count
  if (result.estimatedCount !== undefined) page.estimatedTotal = { bestGuess: result.estimatedCount }
  if (result.cursor.rangeTruncated) page.rangeTruncated = true
  return {
    itemMeta: (index: number) => ({ page: { cursor: cursors[index] } }),
    links: cursorPaginationLinks(location, result.cursor, (position) => encoded.get(position) ?? codec.encode(position, context)),
    meta: { ...countMeta(result), ...(Object.keys(page).length === 0 ? {} : { page }) },
  }
}

/**
 * A collection document: `data`, `included`, `links` with pagination, `meta.count`; for a cursor page (which `codec`
 * writes the cursors of) also the cursors (see {@link cursorParts}). `codec` also signs the cursors of the `next` links
 * of included to-many pages.
 */
export function collectionDocument (result: ResultSet, query: QueryTree, location: RequestLocation, codec?: CursorCodec, budget?: DocumentBudget): Record<string, unknown> {
  const writer = new ResourceWriter(location.baseUrl, query, result, budget, codec)
  if (result.cursor !== undefined) {
    const parts = cursorParts(result as ResultSet & { cursor: CursorResult }, query, location, codec)
    const document: Record<string, unknown> = {
      data: result.primary.map((item, index) => writer.json(item, parts.itemMeta(index))),
      links: parts.links,
      jsonapi: JSONAPI_OBJECT,
    }
    if (Object.keys(parts.meta).length > 0) document.meta = parts.meta
    if (result.included.length > 0) document.included = writer.array(result.included)
    return document
  }
  const document: Record<string, unknown> = {
    data: writer.array(result.primary),
    links: paginationLinks(location, query.page, result),
    jsonapi: JSONAPI_OBJECT,
  }
  const meta = countMeta(result)
  if (meta.count !== undefined) document.meta = meta
  if (result.included.length > 0) document.included = writer.array(result.included)
  return document
}

/** Resource linkage of the ids: an array for a to-many relationship, an identifier or `null` for a to-one. */
export function linkageData (targetType: string, toMany: boolean, ids: readonly string[]): unknown {
  const identifiers = ids.map((id) => ({ type: targetType, id }))
  return toMany ? identifiers : identifiers[0] ?? null
}

/**
 * A relationship document (`GET /<type>/<id>/relationships/<name>`): linkage in `data`, `links.self` and
 * `links.related`, and for a to-many the pagination links and `meta.count`; with `including`, `included` too.
 */
export function linkageDocument (result: ResultSet, toMany: boolean, targetType: string, query: QueryTree, location: RequestLocation, related: string, codec?: CursorCodec, including?: { readonly budget?: DocumentBudget }): Record<string, unknown> {
  if (toMany && result.cursor !== undefined) {
    // A cursor page of linkage: each identifier carries its cursor.
    const parts = cursorParts(result as ResultSet & { cursor: CursorResult }, query, location, codec)
    const document: Record<string, unknown> = {
      links: { ...parts.links, related: `${location.baseUrl}${related}` },
      data: result.primary.map((item, index) => ({ type: targetType, id: item.id, meta: parts.itemMeta(index) })),
      jsonapi: JSONAPI_OBJECT,
    }
    if (Object.keys(parts.meta).length > 0) document.meta = parts.meta
    return withIncluded(document, result, query, location, codec, including)
  }
  const links = toMany ? paginationLinks(location, query.page, result) : { self: `${location.baseUrl}${location.path}` }
  const document: Record<string, unknown> = {
    links: { ...links, related: `${location.baseUrl}${related}` },
    data: linkageData(targetType, toMany, result.primary.map((item) => item.id)),
    jsonapi: JSONAPI_OBJECT,
  }
  const meta = countMeta(result)
  if (meta.count !== undefined) document.meta = meta
  return withIncluded(document, result, query, location, codec, including)
}

/**
 * A relationship document asked with `include`: the resources its linkage identifies, and those included from them,
 * in `included` (each once: the steps never include a resource of the linkage again).
 */
function withIncluded (document: Record<string, unknown>, result: ResultSet, query: QueryTree, location: RequestLocation, codec: CursorCodec | undefined, including: { readonly budget?: DocumentBudget } | undefined): Record<string, unknown> {
  if (including === undefined || (result.primary.length === 0 && result.included.length === 0)) return document
  const writer = new ResourceWriter(location.baseUrl, query, result, including.budget, codec)
  document.included = writer.array([...result.primary, ...result.included])
  return document
}

/** A document with only `meta` (deletions and relationship changes). */
export function metaDocument (meta: Record<string, unknown>): Record<string, unknown> {
  return { meta, jsonapi: JSONAPI_OBJECT }
}
