import { JsonApiError, type ErrorLinks, type ErrorSource, type JsonApiErrorInit } from './json-api-error.js'

/**
 * Every error the library itself answers with, by stable code. `docs/errors.md` documents each one; a test keeps
 * the two in sync.
 */
export const ERROR_CODES = {
  FJA_MALFORMED_JSON: { status: 400, title: 'Malformed JSON' },
  FJA_INVALID_DOCUMENT: { status: 400, title: 'Invalid document' },
  FJA_INVALID_QUERY_PARAMETER: { status: 400, title: 'Invalid query parameter' },
  FJA_INVALID_VALUE: { status: 400, title: 'Invalid value' },
  FJA_INVALID_CURSOR: { status: 400, title: 'Invalid cursor' },
  FJA_MAX_PAGE_SIZE_EXCEEDED: { status: 400, title: 'Page size too large' },
  FJA_DOCUMENT_TOO_LARGE: { status: 400, title: 'Document too large' },
  FJA_CLIENT_ID_FORBIDDEN: { status: 403, title: 'Client-generated id not allowed' },
  FJA_TO_ONE_MEMBERS: { status: 403, title: 'Not a to-many relationship' },
  FJA_READ_ONLY_RELATIONSHIP: { status: 403, title: 'Read-only relationship' },
  FJA_FIELD_FORBIDDEN: { status: 403, title: 'Field not writable' },
  FJA_RESOURCE_NOT_FOUND: { status: 404, title: 'Resource not found' },
  FJA_RELATED_NOT_FOUND: { status: 404, title: 'Related resource not found' },
  FJA_ROUTE_NOT_FOUND: { status: 404, title: 'Route not found' },
  FJA_METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  FJA_NOT_ACCEPTABLE: { status: 406, title: 'Not acceptable' },
  FJA_PRECONDITION_FAILED: { status: 412, title: 'Precondition failed' },
  FJA_PRECONDITION_REQUIRED: { status: 428, title: 'Precondition required' },
  FJA_INVALID_HEADER: { status: 400, title: 'Invalid header' },
  FJA_INVALID_URL: { status: 400, title: 'Invalid URL' },
  FJA_BAD_REQUEST: { status: 400, title: 'Bad request' },
  FJA_REQUEST_TIMEOUT: { status: 408, title: 'Request timeout' },
  FJA_URI_TOO_LONG: { status: 414, title: 'URI too long' },
  FJA_HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large' },
  FJA_TYPE_CONFLICT: { status: 409, title: 'Type conflict' },
  FJA_ID_CONFLICT: { status: 409, title: 'Id conflict' },
  FJA_UNIQUE_VIOLATION: { status: 409, title: 'Conflict with an existing resource' },
  FJA_FOREIGN_KEY_VIOLATION: { status: 409, title: 'Conflict with related resources' },
  FJA_PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  FJA_TOO_MANY_OPERATIONS: { status: 413, title: 'Too many operations' },
  FJA_UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  FJA_VALIDATION: { status: 422, title: 'Invalid attribute value' },
  FJA_MISSING_FIELD: { status: 422, title: 'Missing required field' },
  FJA_UNKNOWN_FIELD: { status: 422, title: 'Unknown field' },
  FJA_READ_ONLY_FIELD: { status: 422, title: 'Read-only field' },
  FJA_REQUIRED_RELATIONSHIP: { status: 422, title: 'Required relationship' },
  FJA_UNKNOWN_LID: { status: 422, title: 'Unknown local id' },
  FJA_DUPLICATE_LID: { status: 422, title: 'Local id defined twice' },
  FJA_NOT_NULL_VIOLATION: { status: 422, title: 'Missing required value' },
  FJA_CONSTRAINT_VIOLATION: { status: 422, title: 'Constraint violation' },
  FJA_INTERNAL: { status: 500, title: 'Internal server error' },
  FJA_DATABASE_UNAVAILABLE: { status: 503, title: 'Database unavailable' },
  FJA_DATABASE_TIMEOUT: { status: 503, title: 'Database timeout' },
  FJA_DATABASE_CONFLICT: { status: 503, title: 'Concurrent changes conflicted' },
} as const satisfies Record<string, { status: number; title: string }>

/** A code of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES

/** What an error of a known code adds to its status and title. */
export interface ErrorDetails {
  readonly detail?: string
  readonly source?: ErrorSource
  readonly meta?: Readonly<Record<string, unknown>>
  readonly links?: ErrorLinks
  readonly headers?: Readonly<Record<string, string>>
}

/** The init of one error object of a known code (for {@link JsonApiError.many}). */
export function errorInit (code: ErrorCode, details: ErrorDetails = {}): JsonApiErrorInit {
  const { status, title } = ERROR_CODES[code]
  return { status, code, title, ...details }
}

/** An error of a known code, ready to throw. */
export function jsonApiError (code: ErrorCode, details: ErrorDetails = {}): JsonApiError {
  return new JsonApiError(errorInit(code, details))
}
