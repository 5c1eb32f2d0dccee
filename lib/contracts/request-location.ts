/** Where the document was asked for: the request's path and query, for links. */
export interface RequestLocation {
  readonly baseUrl: string
  /** The request path without the query string. */
  readonly path: string
  /** The parsed query string. */
  readonly query: Readonly<Record<string, unknown>>
}
