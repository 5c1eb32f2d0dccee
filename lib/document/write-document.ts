import type { QueryTree } from '../query/query-tree.js'
import type { ResultSet } from '../service/result-set.js'
import { ResourceWriter } from './resource-object.js'
import { paginationLinks } from './pagination-links.js'

/** The `jsonapi` member of every document. */
export const JSONAPI_OBJECT = Object.freeze({ version: '1.0' })

/** Where the document was asked for: the request's path and query, for links. */
export interface RequestLocation {
  readonly baseUrl: string
  /** The request path without the query string. */
  readonly path: string
  /** The parsed query string. */
  readonly query: Readonly<Record<string, unknown>>
}

/** A single-resource document: `data`, `included` when anything was included, `links.self`. */
export function singleDocument (result: ResultSet, query: QueryTree, location: RequestLocation): Record<string, unknown> {
  const writer = new ResourceWriter(location.baseUrl, query, result)
  const primary = result.primary[0]
  const document: Record<string, unknown> = {
    data: primary === undefined ? null : writer.write(primary),
    links: { self: primary === undefined ? `${location.baseUrl}${location.path}` : writer.selfLink(primary.resource, primary.id) },
    jsonapi: JSONAPI_OBJECT,
  }
  if (result.included.length > 0) document.included = result.included.map((item) => writer.write(item))
  return document
}

/** A collection document: `data`, `included`, `links` with pagination, `meta.count`. */
export function collectionDocument (result: ResultSet, query: QueryTree, location: RequestLocation): Record<string, unknown> {
  const writer = new ResourceWriter(location.baseUrl, query, result)
  const document: Record<string, unknown> = {
    data: result.primary.map((item) => writer.write(item)),
    links: paginationLinks(location, query.page, result),
    jsonapi: JSONAPI_OBJECT,
  }
  if (result.count !== undefined) document.meta = { count: result.count }
  if (result.included.length > 0) document.included = result.included.map((item) => writer.write(item))
  return document
}

/** A document with only `meta` (deletions and relationship changes). */
export function metaDocument (meta: Record<string, unknown>): Record<string, unknown> {
  return { meta, jsonapi: JSONAPI_OBJECT }
}
