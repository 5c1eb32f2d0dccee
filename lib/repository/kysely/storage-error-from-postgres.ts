import { StorageError, type StorageErrorKind } from '../../contracts/repository.js'
import { postgresFault } from './postgres-faults.js'

const KINDS: Readonly<Record<string, StorageErrorKind>> = {
  23505: 'unique',
  23503: 'foreign-key',
  23502: 'not-null',
  23514: 'check',
  '22P02': 'invalid-value',
  22003: 'out-of-range',
  22021: 'invalid-value',
  22007: 'invalid-value',
  22008: 'invalid-value',
  22023: 'invalid-value',
  '22P05': 'invalid-value',
  22001: 'too-long',
}

/**
 * A SQLSTATE not listed above, by its class: 22 (data exception), the database could not use a value it was given;
 * 54 (program limit exceeded: an index row, a `tsvector`, an array over its limit), a value too large for what the
 * database builds from it. Both are caused by data, a client's or one a client stored, never a fault of the server.
 */
function kindOf (code: string): StorageErrorKind | undefined {
  return KINDS[code] ?? (code.startsWith('22') ? 'invalid-value' : code.startsWith('54') ? 'too-long' : undefined)
}

interface PostgresErrorLike {
  readonly code?: unknown
  readonly table?: unknown
  readonly column?: unknown
  readonly constraint?: unknown
  readonly detail?: unknown
}

/**
 * Translates a PostgreSQL error (node-postgres and PGlite both carry SQLSTATE in `code`) into a
 * {@link StorageError}: a constraint or value error, or a fault of the database (unavailable, timeout, conflict);
 * any other error is returned unchanged.
 */
export function storageErrorFromPostgres (error: unknown): unknown {
  if (typeof error !== 'object' || error === null || error instanceof StorageError) return error
  const fault = postgresFault(error)
  if (fault !== undefined) return new StorageError(fault, (error as Error).message ?? fault, { cause: error })
  const pgError = error as PostgresErrorLike
  const kind = typeof pgError.code === 'string' ? kindOf(pgError.code) : undefined
  if (kind === undefined) return error
  const columns: string[] = []
  if (typeof pgError.column === 'string') columns.push(pgError.column)
  // "Key (parent_id, child_id)=(1, 2) already exists."
  const key = typeof pgError.detail === 'string' ? /^Key \(([^)]+)\)=/.exec(pgError.detail) : null
  if (key !== null) columns.push(...key[1].split(',').map((column) => column.trim().replace(/^"|"$/g, '')))
  return new StorageError(kind, kind, {
    table: typeof pgError.table === 'string' ? pgError.table : undefined,
    columns,
    constraint: typeof pgError.constraint === 'string' ? pgError.constraint : undefined,
    cause: error,
  })
}
