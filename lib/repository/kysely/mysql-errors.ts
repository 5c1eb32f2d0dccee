import { StorageError, type StorageErrorKind } from '../../contracts/repository.js'
import { faultAlongCauses, type DatabaseFault } from '../../errors/database-faults.js'

/** Server error numbers (`errno`) of faults, MariaDB's and MySQL's. */
const ERRNOS: ReadonlyMap<number, DatabaseFault> = new Map([
  [1213, 'conflict'], // ER_LOCK_DEADLOCK: the transaction was rolled back, it may run again
  [1205, 'timeout'], // ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout)
  [1969, 'timeout'], // ER_STATEMENT_TIMEOUT (MariaDB's max_statement_time)
  [3024, 'timeout'], // ER_QUERY_TIMEOUT (MySQL's max_execution_time)
  [1317, 'timeout'], // ER_QUERY_INTERRUPTED (KILL QUERY)
  [1040, 'unavailable'], // ER_CON_COUNT_ERROR: too many connections
  [1053, 'unavailable'], // ER_SERVER_SHUTDOWN
  [1927, 'unavailable'], // ER_CONNECTION_KILLED
  [4031, 'unavailable'], // ER_CLIENT_INTERACTION_TIMEOUT
  [1049, 'unavailable'], // ER_BAD_DB_ERROR: the database does not exist (yet)
  [1045, 'unavailable'], // ER_ACCESS_DENIED_ERROR
])

/** `mysql2`'s and Node's codes of a connection that failed or is gone. */
const CONNECTION_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR', 'PROTOCOL_ENQUEUE_AFTER_QUIT',
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
  'ECONNABORTED', 'ENOTCONN', 'ERR_SOCKET_CLOSED', 'ERR_STREAM_DESTROYED', 'FJA_CONNECTION_TIMEOUT',
])

/** Messages of `mysql2`, its pool and Kysely that carry no code. */
const MESSAGES: ReadonlyArray<readonly [RegExp, DatabaseFault]> = [
  [/^Pool is closed\.?$/, 'unavailable'],
  [/^Can't add new command when connection is in closed state$/, 'unavailable'],
  [/^Connection lost/, 'unavailable'],
  [/^driver has already been destroyed$/, 'unavailable'],
]

/** Server error numbers of a constraint or a value the database refused. */
const KINDS: ReadonlyMap<number, StorageErrorKind> = new Map([
  [1062, 'unique'], // ER_DUP_ENTRY
  [1586, 'unique'], // ER_DUP_ENTRY_WITH_KEY_NAME
  [1452, 'foreign-key'], // ER_NO_REFERENCED_ROW_2: the target is missing
  [1216, 'foreign-key'], // ER_NO_REFERENCED_ROW
  [1451, 'foreign-key'], // ER_ROW_IS_REFERENCED_2: a row still points here
  [1217, 'foreign-key'], // ER_ROW_IS_REFERENCED
  [1048, 'not-null'], // ER_BAD_NULL_ERROR
  [1364, 'not-null'], // ER_NO_DEFAULT_FOR_FIELD
  [4025, 'check'], // ER_CONSTRAINT_FAILED (MariaDB)
  [3819, 'check'], // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
  [1406, 'too-long'], // ER_DATA_TOO_LONG
  [1264, 'out-of-range'], // ER_WARN_DATA_OUT_OF_RANGE
  [1366, 'invalid-value'], // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
  [1292, 'invalid-value'], // ER_TRUNCATED_WRONG_VALUE
  [1265, 'invalid-value'], // WARN_DATA_TRUNCATED
  [1411, 'invalid-value'], // ER_WRONG_VALUE_FOR_TYPE
  [3140, 'invalid-value'], // ER_INVALID_JSON_TEXT (MySQL)
  [1139, 'invalid-value'], // ER_REGEXP_ERROR: a pattern REGEXP cannot read (a custom operator's)
  [3685, 'invalid-value'], // ER_REGEXP_ILLEGAL_ARGUMENT (MySQL)
])

function classify (error: object): DatabaseFault | undefined {
  if (error instanceof StorageError) {
    const kind = error.kind
    if (kind === 'unavailable' || kind === 'timeout' || kind === 'conflict') return kind
  }
  const { code, errno, message, fatal } = error as { code?: unknown, errno?: unknown, message?: unknown, fatal?: unknown }
  if (typeof errno === 'number') {
    const fault = ERRNOS.get(errno)
    if (fault !== undefined) return fault
  }
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return 'unavailable'
  if (typeof message === 'string') {
    for (const [pattern, fault] of MESSAGES) if (pattern.test(message)) return fault
  }
  // A fatal error of `mysql2` ends its connection: whatever it was, the statement did not run.
  if (fatal === true && typeof errno !== 'number') return 'unavailable'
  return undefined
}

/**
 * What kind of database fault an error of MariaDB/MySQL, `mysql2`, its pool, Kysely or a socket is, through its
 * `cause` chain (and an `AggregateError`'s errors, as a connection attempt to several addresses gives).
 */
export function mysqlFault (error: unknown): DatabaseFault | undefined {
  return faultAlongCauses(error, classify)
}

/** `` `db`.`table` `` or `` `table` `` as a table name the way the declarations name it (`db.table`, `table`). */
function unquoted (name: string): string {
  return name.split('`.`').map((part) => part.replace(/^`|`$/g, '')).join('.')
}

/** Where a constraint error names its table, constraint and columns (MariaDB and MySQL write the same messages). */
function named (errno: number, message: string): { table?: string, constraint?: string, columns: string[] } {
  if (errno === 1452 || errno === 1451) {
    // "Cannot add or update a child row: a foreign key constraint fails (`db`.`computers`, CONSTRAINT `fk` FOREIGN KEY (`owner_id`) REFERENCES …"
    const match = /\((`[^)]*?`), CONSTRAINT `([^`]+)` FOREIGN KEY \(([^)]*)\)/.exec(message)
    if (match === null) return { columns: [] }
    const table = unquoted(match[1]).split('.').pop()
    return { table, constraint: match[2], columns: match[3].split(',').map((column) => column.trim().replace(/^`|`$/g, '')) }
  }
  if (errno === 1062 || errno === 1586) {
    // "Duplicate entry 'a@b' for key 'users_email_key'" (MySQL 8: 'users.users_email_key')
    const match = /for key '([^']+)'$/.exec(message)
    const key = match?.[1]
    return { constraint: key?.includes('.') === true ? key.slice(key.lastIndexOf('.') + 1) : key, table: key?.includes('.') === true ? key.slice(0, key.lastIndexOf('.')) : undefined, columns: [] }
  }
  // "Column 'name' cannot be null", "Field 'name' doesn't have a default value", "Data too long for column 'x' at row 1"
  const column = /(?:Column|Field|column) '([^']+)'/.exec(message)?.[1]
  if (errno === 4025 || errno === 3819) {
    // "CONSTRAINT `users_age_check` failed for `db`.`users`" / "Check constraint 'users_age_check' is violated."
    const constraint = /CONSTRAINT `([^`]+)` failed/.exec(message)?.[1] ?? /constraint '([^']+)'/.exec(message)?.[1]
    return { constraint, columns: [] }
  }
  return { columns: column === undefined ? [] : [column] }
}

/**
 * Translates an error of MariaDB/MySQL into a {@link StorageError}: a constraint (with its table, name and columns
 * where the message gives them), a value the database refused, or a fault; any other error is returned unchanged.
 */
export function storageErrorFromMysql (error: unknown): unknown {
  if (typeof error !== 'object' || error === null || error instanceof StorageError) return error
  const fault = mysqlFault(error)
  if (fault !== undefined) return new StorageError(fault, (error as Error).message ?? fault, { cause: error })
  const { errno, message } = error as { errno?: unknown, message?: unknown }
  if (typeof errno !== 'number') return error
  const kind = KINDS.get(errno)
  if (kind === undefined) return error
  const { table, constraint, columns } = named(errno, typeof message === 'string' ? message : '')
  return new StorageError(kind, kind, { table, constraint, columns, cause: error })
}
