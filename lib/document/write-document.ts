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

/**
 * A single-resource document: `data` (or `null`), `included` when anything was included, `links.self` — the
 * resource's own URL, or the request's for a related resource (`/users/1/bio`).
 */
export function singleDocument (result: ResultSet, query: QueryTree, location: RequestLocation, related = false): Record<string, unknown> {
  const writer = new ResourceWriter(location.baseUrl, query, result)
  const primary = result.primary[0]
  const self = related || primary === undefined ? `${location.baseUrl}${location.path}` : writer.selfLink(primary.resource, primary.id)
  const document: Record<string, unknown> = {
    data: primary === undefined ? null : writer.write(primary),
    links: { self },
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

/** Resource linkage of the ids: an array for a to-many relationship, an identifier or `null` for a to-one. */
export function linkageData (targetType: string, toMany: boolean, ids: readonly string[]): unknown {
  const identifiers = ids.map((id) => ({ type: targetType, id }))
  return toMany ? identifiers : identifiers[0] ?? null
}

/**
 * A relationship document (`GET /<type>/<id>/relationships/<name>`): linkage in `data`, `links.self` and
 * `links.related`, and for a to-many the pagination links and `meta.count`.
 */
export function linkageDocument (result: ResultSet, toMany: boolean, targetType: string, query: QueryTree, location: RequestLocation, related: string): Record<string, unknown> {
  const links = toMany ? paginationLinks(location, query.page, result) : { self: `${location.baseUrl}${location.path}` }
  const document: Record<string, unknown> = {
    links: { ...links, related: `${location.baseUrl}${related}` },
    data: linkageData(targetType, toMany, result.primary.map((item) => item.id)),
    jsonapi: JSONAPI_OBJECT,
  }
  if (result.count !== undefined) document.meta = { count: result.count }
  return document
}

/** A document with only `meta` (deletions and relationship changes). */
export function metaDocument (meta: Record<string, unknown>): Record<string, unknown> {
  return { meta, jsonapi: JSONAPI_OBJECT }
}
