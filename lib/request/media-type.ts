import type { FastifyRequest } from 'fastify'
import { jsonApiError } from '../errors/error-codes.js'
import { JSONAPI_MEDIA_TYPE } from '../errors/error-handler.js'

/** A parsed media type: essence (lowercase `type/subtype`) and parameter names (lowercase). */
interface MediaType {
  readonly essence: string
  readonly parameters: readonly string[]
}

const ALLOWED_PARAMETERS = new Set(['ext', 'profile'])

function parseMediaType (value: string): MediaType {
  const [essence, ...parameters] = value.split(';')
  return {
    essence: essence.trim().toLowerCase(),
    parameters: parameters.map((parameter) => parameter.split('=')[0].trim().toLowerCase()).filter((name) => name !== '' && name !== 'q'),
  }
}

function splitList (value: string): string[] {
  // Commas inside quoted parameter values (ext="a,b") do not separate media ranges.
  return value.match(/(?:[^,"]|"[^"]*")+/g) ?? []
}

function hasBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * Content negotiation of JSON:API (1.0, with the `ext` and `profile` parameters of 1.1):
 * a body must be `application/vnd.api+json` (only `ext`/`profile` parameters) or `application/json`, else 415;
 * an `Accept` that names the JSON:API media type only with other parameters is a 406 (whatever else it accepts).
 */
export function negotiate (request: FastifyRequest): void {
  const contentType = request.headers['content-type']
  if (contentType !== undefined && hasBody(request)) {
    const media = parseMediaType(contentType)
    // `charset` is a parameter of application/json; JSON:API's media type takes none but ext and profile.
    const parameters = media.essence === 'application/json' ? media.parameters.filter((name) => name !== 'charset') : media.parameters
    if (media.essence === JSONAPI_MEDIA_TYPE) {
      const unsupported = parameters.find((name) => !ALLOWED_PARAMETERS.has(name))
      if (unsupported !== undefined) {
        throw jsonApiError('FJA_UNSUPPORTED_MEDIA_TYPE', {
          detail: `the media type parameter '${unsupported}' is not supported (only ext and profile)`,
          source: { header: 'Content-Type' },
        })
      }
    } else if (media.essence !== 'application/json') {
      throw jsonApiError('FJA_UNSUPPORTED_MEDIA_TYPE', {
        detail: `'${media.essence}' is not supported: send ${JSONAPI_MEDIA_TYPE}`,
        source: { header: 'Content-Type' },
      })
    }
  }
  const accept = request.headers.accept
  if (accept !== undefined && accept.trim() !== '') {
    const ranges = splitList(accept).map(parseMediaType)
    const jsonApi = ranges.filter((range) => range.essence === JSONAPI_MEDIA_TYPE)
    const acceptable = jsonApi.some((range) => range.parameters.every((name) => ALLOWED_PARAMETERS.has(name)))
    if (jsonApi.length > 0 && !acceptable) {
      throw jsonApiError('FJA_NOT_ACCEPTABLE', {
        detail: `every ${JSONAPI_MEDIA_TYPE} in Accept carries unsupported media type parameters`,
        source: { header: 'Accept' },
      })
    }
  }
}
