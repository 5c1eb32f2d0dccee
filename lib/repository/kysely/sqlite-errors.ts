import { StorageError, type StorageErrorKind } from '../../contracts/repository.js'
import { faultAlongCauses, type DatabaseFault } from '../../errors/database-faults.js'

/** `better-sqlite3`'s extended result codes of faults (`SqliteError.code`). */
const FAULTS: ReadonlyArray<readonly [RegExp, DatabaseFault]> = [
  // Another connection holds the database or a table: the transaction may be run again.
  [/^SQLITE_BUSY/, 'conflict'],
  [/^SQLITE_LOCKED/, 'conflict'],
  [/^SQLITE_INTERRUPT$/, 'timeout'],
  [/^SQLITE_(IOERR|CANTOPEN|FULL|NOMEM|CORRUPT|NOTADB|READONLY|PROTOCOL)/, 'unavailable'],
]

/** Messages of `better-sqlite3` and Kysely that carry no code: the database is closed. */
const MESSAGES: ReadonlyArray<readonly [RegExp, DatabaseFault]> = [
  [/^The database connection is not open$/, 'unavailable'],
  [/^driver has already been destroyed$/, 'unavailable'],
]

const KINDS: ReadonlyArray<readonly [string, StorageErrorKind]> = [
  ['SQLITE_CONSTRAINT_UNIQUE', 'unique'],
  ['SQLITE_CONSTRAINT_PRIMARYKEY', 'unique'],
  ['SQLITE_CONSTRAINT_FOREIGNKEY', 'foreign-key'],
  ['SQLITE_CONSTRAINT_NOTNULL', 'not-null'],
  ['SQLITE_CONSTRAINT_CHECK', 'check'],
  ['SQLITE_TOOBIG', 'too-long'],
  ['SQLITE_MISMATCH', 'invalid-value'],
]

function classify (error: object): DatabaseFault | undefined {
  if (error instanceof StorageError) {
    const kind = error.kind
    if (kind === 'unavailable' || kind === 'timeout' || kind === 'conflict') return kind
  }
  const { code, message } = error as { code?: unknown, message?: unknown }
  if (typeof code === 'string') {
    for (const [pattern, fault] of FAULTS) if (pattern.test(code)) return fault
  }
  if (typeof message === 'string') {
    for (const [pattern, fault] of MESSAGES) if (pattern.test(message)) return fault
  }
  return undefined
}

/** What kind of database fault an error of SQLite, `better-sqlite3` or Kysely is, through its `cause` chain. */
export function sqliteFault (error: unknown): DatabaseFault | undefined {
  return faultAlongCauses(error, classify)
}

/**
 * Translates a SQLite error into a {@link StorageError}: a constraint (`UNIQUE constraint failed: users.email`
 * names the table and columns; a foreign key failure names nothing), a value the database refused, or a fault; any
 * other error is returned unchanged.
 */
export function storageErrorFromSqlite (error: unknown): unknown {
  if (typeof error !== 'object' || error === null || error instanceof StorageError) return error
  const fault = sqliteFault(error)
  if (fault !== undefined) return new StorageError(fault, (error as Error).message ?? fault, { cause: error })
  const { code, message } = error as { code?: unknown, message?: unknown }
  if (typeof code !== 'string') return error
  const kind = KINDS.find(([known]) => known === code)?.[1]
  if (kind === undefined) return error
  // "UNIQUE constraint failed: parent_to_child_associations.parent_id, parent_to_child_associations.child_id"
  const named = typeof message === 'string' ? /constraint failed: (.+)$/.exec(message) : null
  const qualified = named === null ? [] : named[1].split(',').map((part) => part.trim()).filter((part) => part.includes('.'))
  const table = qualified.length > 0 ? qualified[0].slice(0, qualified[0].lastIndexOf('.')) : undefined
  return new StorageError(kind, kind, { table, columns: qualified.map((part) => part.slice(part.lastIndexOf('.') + 1)), cause: error })
}
