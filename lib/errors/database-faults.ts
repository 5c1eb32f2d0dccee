import { jsonApiError } from './error-codes.js'
import type { JsonApiError } from './json-api-error.js'

/**
 * A failure of the database rather than of the request:
 * - `unavailable`: unreachable, connection lost, shutting down, too many connections, out of resources;
 * - `timeout`: a statement or lock timeout (or a cancelled statement);
 * - `conflict`: a serialization failure or a deadlock — the transaction was rolled back and may be run again.
 */
export type DatabaseFault = 'unavailable' | 'timeout' | 'conflict'

const FAULT_ERRORS = {
  unavailable: { code: 'FJA_DATABASE_UNAVAILABLE', detail: 'the database is not available at the moment; retry the request later' },
  timeout: { code: 'FJA_DATABASE_TIMEOUT', detail: 'the database did not answer in time; retry the request later' },
  conflict: { code: 'FJA_DATABASE_CONFLICT', detail: 'the request kept conflicting with concurrent changes; retry it later' },
} as const

/** The 503 (with `Retry-After`, in seconds) a client receives for a database fault. */
export function faultError (fault: DatabaseFault, retryAfter: number): JsonApiError {
  const { code, detail } = FAULT_ERRORS[fault]
  return jsonApiError(code, { detail, headers: { 'retry-after': String(retryAfter) } })
}

/**
 * The first fault that `classify` finds along an error's `cause` chain, looking into the errors of an
 * `AggregateError` too (a connection attempt to several addresses gives one); undefined when there is none. Each
 * engine's `fault` is this walk with its own classifier.
 */
export function faultAlongCauses (error: unknown, classify: (error: object) => DatabaseFault | undefined): DatabaseFault | undefined {
  const seen = new Set<unknown>()
  for (let current = error; typeof current === 'object' && current !== null && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current)
    const fault = classify(current)
    if (fault !== undefined) return fault
    if (current instanceof AggregateError && Array.isArray(current.errors)) {
      for (const inner of current.errors as unknown[]) {
        const innerFault = typeof inner === 'object' && inner !== null ? classify(inner) : undefined
        if (innerFault !== undefined) return innerFault
      }
    }
  }
  return undefined
}
