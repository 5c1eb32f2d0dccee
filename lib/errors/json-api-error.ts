/** Where an error comes from in the request: a JSON pointer into the body, or a query parameter's name. */
export interface ErrorSource {
  /** A JSON pointer into the request document, e.g. `/data/attributes/age`. */
  readonly pointer?: string
  /** The query parameter that caused the error, e.g. `include` or `page[size]`. */
  readonly parameter?: string
  /** The request header that caused the error. */
  readonly header?: string
}

/** The links of an error object (JSON:API 1.1): `about` this occurrence, and the `type` of error it is. */
export interface ErrorLinks {
  /** A link to details about this occurrence of the problem. */
  readonly about?: string
  /** A link that identifies the type of error (e.g. a profile's error type). */
  readonly type?: string
}

/** What a {@link JsonApiError} is made from. */
export interface JsonApiErrorInit {
  /** HTTP status code (400–599). */
  readonly status: number
  /** A stable, documented application code (`FJA_…`); defaults to one derived from the status. */
  readonly code?: string
  /** A short summary that does not change between occurrences; defaults to the status's reason phrase. */
  readonly title?: string
  /** What went wrong in this occurrence. */
  readonly detail?: string
  readonly source?: ErrorSource
  /** Non-standard information for the client. */
  readonly meta?: Readonly<Record<string, unknown>>
  /** `about` and `type` links. */
  readonly links?: ErrorLinks
  /** Extra response headers (e.g. `Allow` for a 405). */
  readonly headers?: Readonly<Record<string, string>>
}

/** One JSON:API error object as rendered in the `errors` array. */
export interface ErrorObject {
  readonly links?: ErrorLinks
  readonly status: string
  readonly code: string
  readonly title: string
  readonly detail?: string
  readonly source?: ErrorSource
  readonly meta?: Readonly<Record<string, unknown>>
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

/** The reason phrase of an HTTP status, `Error` when unknown. */
export function reasonPhrase (status: number): string {
  return REASONS[status] ?? (status >= 500 ? 'Server Error' : 'Error')
}

/**
 * An error that renders as a JSON:API error document. Throw it from hooks or handlers of your own: the plugin's
 * error handler renders it with its status, code, detail and source. Several error objects can be carried at once
 * (one per invalid field, say) with {@link JsonApiError.many}.
 *
 * @example
 * ```ts
 * app.addHook('preHandler', async (request) => {
 *   if (!request.headers.authorization) {
 *     throw new JsonApiError({ status: 401, detail: 'Sign in first.', source: { header: 'Authorization' } })
 *   }
 * })
 * // → 401 {"errors":[{"status":"401","code":"FJA_ERROR_401","title":"Unauthorized","detail":"Sign in first.",...}]}
 * ```
 */
export class JsonApiError extends Error {
  /** The HTTP status of the response. */
  readonly statusCode: number
  /** The error objects, in order. */
  readonly errors: readonly ErrorObject[]
  /** Extra response headers. */
  readonly headers: Readonly<Record<string, string>>

  constructor (init: JsonApiErrorInit | readonly JsonApiErrorInit[]) {
    const list = Array.isArray(init) ? (init as readonly JsonApiErrorInit[]) : [init as JsonApiErrorInit]
    if (list.length === 0) throw new TypeError('JsonApiError needs at least one error object')
    const first = list[0]
    super(first.detail ?? first.title ?? reasonPhrase(first.status))
    this.name = 'JsonApiError'
    this.statusCode = JsonApiError.statusOf(list.map((item) => item.status))
    this.errors = list.map(toErrorObject)
    this.headers = Object.assign({}, ...list.map((item) => item.headers ?? {}))
  }

  /** One error carrying several error objects; the response status is theirs when they agree, else 400 or 500. */
  static many (items: readonly JsonApiErrorInit[]): JsonApiError {
    return new JsonApiError(items)
  }

  private static statusOf (statuses: readonly number[]): number {
    const first = statuses[0]
    if (statuses.every((status) => status === first)) return first
    return statuses.some((status) => status >= 500) ? 500 : 400
  }
}

/**
 * The {@link JsonApiError} of an error another library made for a client's mistake (a Fastify or `http-errors` error
 * with a 4xx `statusCode`): its status, its string `code` and its message as the detail. Undefined for anything
 * else, a {@link JsonApiError} included.
 */
export function clientErrorOf (error: unknown): JsonApiError | undefined {
  if (error instanceof JsonApiError || !(error instanceof Error)) return undefined
  const { statusCode, code } = error as Error & { statusCode?: unknown, code?: unknown }
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return undefined
  return new JsonApiError({ status: statusCode, code: typeof code === 'string' ? code : undefined, detail: error.message })
}

function toErrorObject (init: JsonApiErrorInit): ErrorObject {
  const status = init.status
  const object: { -readonly [K in keyof ErrorObject]: ErrorObject[K] } = {
    ...(init.links === undefined ? {} : { links: init.links }),
    status: String(status),
    code: init.code ?? `FJA_ERROR_${status}`,
    title: init.title ?? reasonPhrase(status),
  }
  if (init.detail !== undefined) object.detail = init.detail
  if (init.source !== undefined) object.source = init.source
  if (init.meta !== undefined) object.meta = init.meta
  return object
}
