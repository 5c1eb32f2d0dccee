import type { FastifyRequest } from 'fastify'
import { jsonApiError } from '../errors/error-codes.js'
import { ATOMIC_EXTENSION, JSONAPI_MEDIA_TYPE } from '../contracts/media-types.js'

/** A parsed media type: essence (lowercase `type/subtype`) and parameters (lowercase names, unquoted values). */
interface MediaType {
  readonly essence: string
  readonly parameters: ReadonlyMap<string, string>
}

const ALLOWED_PARAMETERS = new Set(['ext', 'profile'])
const SUPPORTED_EXTENSIONS = new Set([ATOMIC_EXTENSION])

/** The pieces between separators outside double quotes (`ext="a;b"` stays whole). */
const SPLITTERS = { ';': /(?:[^;"]|"[^"]*")+/g, ',': /(?:[^,"]|"[^"]*")+/g } as const

function splitOutsideQuotes (value: string, separator: keyof typeof SPLITTERS): string[] {
  return value.match(SPLITTERS[separator]) ?? []
}

function parseMediaType (value: string): MediaType {
  const [essence, ...parts] = splitOutsideQuotes(value, ';')
  const parameters = new Map<string, string>()
  for (const part of parts) {
    const at = part.indexOf('=')
    const name = (at < 0 ? part : part.slice(0, at)).trim().toLowerCase()
    if (name === '') continue
    parameters.set(name, at < 0 ? '' : part.slice(at + 1).trim().replace(/^"(.*)"$/, '$1'))
  }
  return { essence: (essence ?? '').trim().toLowerCase(), parameters }
}

/** Why a JSON:API media type's parameters are not supported, or undefined when they are. */
function unsupported (media: MediaType, ignore: ReadonlySet<string>): string | undefined {
  for (const [name, value] of media.parameters) {
    if (ignore.has(name)) continue
    if (!ALLOWED_PARAMETERS.has(name)) return `the media type parameter '${name}' is not supported (only ext and profile)`
    if (name === 'ext') {
      const extension = value.split(/\s+/).find((uri) => uri !== '' && !SUPPORTED_EXTENSIONS.has(uri))
      if (extension !== undefined) return `the extension '${extension}' is not supported (only ${ATOMIC_EXTENSION})`
    }
  }
  return undefined
}

function hasBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

const NONE: ReadonlySet<string> = new Set()
/** What every JSON:API media range contains, in any case (the essence is compared lowercased). */
const MENTIONS_JSONAPI = /vnd\.api\+json/i

const QUALITY: ReadonlySet<string> = new Set(['q'])

/**
 * Content negotiation of JSON:API 1.0, with the `ext` and `profile` parameters of 1.1: a body must be
 * `application/vnd.api+json` (only `ext` — of a supported extension — and `profile`) or `application/json`, else
 * 415; an `Accept` that names the JSON:API media type only with unsupported parameters is a 406 (whatever else it
 * accepts).
 */
export function negotiate (request: FastifyRequest): void {
  const headers = request.headers
  const contentType = headers['content-type']
  // The JSON:API media type exactly, as most clients send it: nothing to check.
  if (contentType !== undefined && contentType !== JSONAPI_MEDIA_TYPE && hasBody(request)) {
    const media = parseMediaType(contentType)
    if (media.essence === JSONAPI_MEDIA_TYPE) {
      const problem = unsupported(media, NONE)
      if (problem !== undefined) throw jsonApiError('FJA_UNSUPPORTED_MEDIA_TYPE', { detail: problem, source: { header: 'Content-Type' } })
    } else if (media.essence !== 'application/json') {
      throw jsonApiError('FJA_UNSUPPORTED_MEDIA_TYPE', {
        detail: `'${media.essence}' is not supported: send ${JSONAPI_MEDIA_TYPE}`,
        source: { header: 'Content-Type' },
      })
    }
  }
  const accept = headers.accept
  // Most requests: no Accept, or one without the JSON:API media type, or exactly it (nothing to check).
  if (accept !== undefined && accept !== JSONAPI_MEDIA_TYPE && MENTIONS_JSONAPI.test(accept)) {
    const ranges = splitOutsideQuotes(accept, ',').map(parseMediaType).filter((range) => range.essence === JSONAPI_MEDIA_TYPE)
    if (ranges.length > 0 && ranges.every((range) => unsupported(range, QUALITY) !== undefined)) {
      throw jsonApiError('FJA_NOT_ACCEPTABLE', {
        detail: `every ${JSONAPI_MEDIA_TYPE} in Accept carries unsupported parameters: ${unsupported(ranges[0], QUALITY) as string}`,
        source: { header: 'Accept' },
      })
    }
  }
}

/**
 * Whether the request's `Accept` asks for a profile: a JSON:API media range (with only parameters the server
 * supports, and not `q=0`) whose `profile` parameter (a space-separated list of URIs) names it.
 */
export function acceptsProfile (request: FastifyRequest, profile: string): boolean {
  const accept = request.headers.accept
  if (accept === undefined || !/profile/i.test(accept)) return false
  return splitOutsideQuotes(accept, ',').map(parseMediaType).some((range) => range.essence === JSONAPI_MEDIA_TYPE &&
    unsupported(range, QUALITY) === undefined &&
    !/^0(?:\.0{0,3})?$/.test(range.parameters.get('q') ?? '1') &&
    (range.parameters.get('profile') ?? '').split(/\s+/).includes(profile))
}
