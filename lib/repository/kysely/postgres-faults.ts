import { StorageError } from '../../contracts/repository.js'
import { faultAlongCauses, type DatabaseFault } from '../../errors/database-faults.js'

/** SQLSTATE codes (exact) of faults. */
const SQLSTATES: Readonly<Record<string, DatabaseFault>> = {
  40001: 'conflict', // serialization_failure
  '40P01': 'conflict', // deadlock_detected
  57014: 'timeout', // query_canceled (statement_timeout)
  '55P03': 'timeout', // lock_not_available (lock_timeout)
  '25P03': 'unavailable', // idle_in_transaction_session_timeout
  '57P01': 'unavailable', // admin_shutdown (pg_terminate_backend, a fast shutdown)
  '57P02': 'unavailable', // crash_shutdown
  '57P03': 'unavailable', // cannot_connect_now (starting up, recovery)
  '57P05': 'unavailable', // idle_session_timeout
  '3D000': 'unavailable', // invalid_catalog_name: the database does not exist (yet)
}

/** SQLSTATE classes of faults: 08 connection exception, 53 insufficient resources (53300 too many connections). */
const SQLSTATE_CLASSES: Readonly<Record<string, DatabaseFault>> = { '08': 'unavailable', 53: 'unavailable' }

/** Node's socket errors. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
  'ECONNABORTED', 'ENOTCONN', 'ERR_SOCKET_CLOSED', 'ERR_STREAM_DESTROYED',
])

/** Messages of node-postgres, pg-pool and Kysely errors that carry no code. */
const MESSAGES: ReadonlyArray<readonly [RegExp, DatabaseFault]> = [
  [/^Query read timeout$/, 'timeout'],
  [/^Connection terminated/, 'unavailable'],
  [/^timeout exceeded when trying to connect$/, 'unavailable'],
  [/not queryable$/, 'unavailable'],
  [/^Cannot use a pool after calling end on the pool$/, 'unavailable'],
  [/^Client was closed/, 'unavailable'],
  [/^driver has already been destroyed$/, 'unavailable'],
]

function classify (error: object): DatabaseFault | undefined {
  if (error instanceof StorageError) {
    const kind = error.kind
    if (kind === 'unavailable' || kind === 'timeout' || kind === 'conflict') return kind
  }
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (typeof code === 'string') {
    const fault = SQLSTATES[code] ?? (code.length === 5 ? SQLSTATE_CLASSES[code.slice(0, 2)] : undefined)
    if (fault !== undefined) return fault
    if (SOCKET_CODES.has(code)) return 'unavailable'
  }
  if (typeof message === 'string') {
    for (const [pattern, fault] of MESSAGES) if (pattern.test(message)) return fault
  }
  return undefined
}

/**
 * What kind of database fault an error of PostgreSQL, node-postgres, pg-pool, Kysely or a socket is, looking through
 * its `cause` chain (a repository's `StorageError`, an `AggregateError` of a connection attempt): undefined for
 * anything else. The Kysely repository's `faultOf`.
 */
export function postgresFault (error: unknown): DatabaseFault | undefined {
  return faultAlongCauses(error, classify)
}
