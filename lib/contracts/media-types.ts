import { CURSOR_PAGINATION_PROFILE } from '../query/cursors.js'

/** The JSON:API media type. */
export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json'

/** The JSON:API media type naming the cursor pagination profile: a cursor page's, and its errors'. */
export const CURSOR_MEDIA_TYPE = `${JSONAPI_MEDIA_TYPE}; profile="${CURSOR_PAGINATION_PROFILE}"`

/** The URI of JSON:API's atomic extension. */
export const ATOMIC_EXTENSION = 'https://jsonapi.org/ext/atomic'
