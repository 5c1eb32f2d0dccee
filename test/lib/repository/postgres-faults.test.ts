import t from 'tap'
import { faultError } from '../../../lib/errors/database-faults.js'
import { postgresFault } from '../../../lib/repository/kysely/postgres-faults.js'
import { toJsonApiError } from '../../../lib/routes/error-handler.js'
import { StorageError, storageFault } from '../../../lib/contracts/repository.js'
import { storageErrorFromPostgres } from '../../../lib/repository/kysely/storage-error-from-postgres.js'

/** An error as node-postgres reports one from the server: a message and a SQLSTATE `code`. */
function pgError (code: string, message = `error ${code}`): Error {
  return Object.assign(new Error(message), { code })
}

t.test('database faults are recognised by SQLSTATE, socket code and driver message', async (t) => {
  const cases: Array<[unknown, ReturnType<typeof postgresFault>]> = [
    [pgError('08006'), 'unavailable'],
    [pgError('08001'), 'unavailable'],
    [pgError('08P01'), 'unavailable'],
    [pgError('57P01', 'terminating connection due to administrator command'), 'unavailable'],
    [pgError('57P02'), 'unavailable'],
    [pgError('57P03', 'the database system is starting up'), 'unavailable'],
    [pgError('53300', 'sorry, too many clients already'), 'unavailable'],
    [pgError('53100', 'could not extend file: No space left on device'), 'unavailable'],
    [pgError('3D000', 'database "x" does not exist'), 'unavailable'],
    [pgError('57014', 'canceling statement due to statement timeout'), 'timeout'],
    [pgError('55P03', 'canceling statement due to lock timeout'), 'timeout'],
    [pgError('40001', 'could not serialize access due to concurrent update'), 'conflict'],
    [pgError('40P01', 'deadlock detected'), 'conflict'],
    [pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'), 'unavailable'],
    [pgError('ECONNRESET', 'read ECONNRESET'), 'unavailable'],
    [new Error('Connection terminated unexpectedly'), 'unavailable'],
    [new Error('Connection terminated due to connection timeout'), 'unavailable'],
    [new Error('timeout exceeded when trying to connect'), 'unavailable'],
    [new Error('Client has encountered a connection error and is not queryable'), 'unavailable'],
    [new Error('Cannot use a pool after calling end on the pool'), 'unavailable'],
    [new Error('Query read timeout'), 'timeout'],
    [new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')], ''), 'unavailable'],
    [new Error('wrapped', { cause: pgError('57P01') }), 'unavailable'],
    [new StorageError('unavailable', 'down'), 'unavailable'],
    [new StorageError('timeout', 'slow'), 'timeout'],
    [new StorageError('conflict', 'again'), 'conflict'],
    // Not faults: the request's own mistakes, and anything else.
    [pgError('23505'), undefined],
    [pgError('22P02'), undefined],
    [pgError('42P01', 'relation "x" does not exist'), undefined],
    [new StorageError('unique', 'taken'), undefined],
    [new Error('boom'), undefined],
    [new TypeError('x is not a function'), undefined],
    ['57P01', undefined],
    [null, undefined],
    [undefined, undefined],
  ]
  for (const [error, fault] of cases) {
    t.equal(postgresFault(error), fault, `${error instanceof Error ? `${error.constructor.name} ${(error as { code?: string }).code ?? ''} ${error.message}` : String(error)} → ${String(fault)}`)
  }
  const looped: Error & { cause?: unknown } = new Error('a cause chain that loops')
  looped.cause = looped
  t.equal(postgresFault(looped), undefined, 'a cause chain that loops ends')
})

t.test('only serialization failures and deadlocks are retried', async (t) => {
  t.ok(postgresFault(pgError('40001')) === 'conflict')
  t.ok(postgresFault(pgError('40P01')) === 'conflict')
  t.ok(postgresFault(new StorageError('conflict', 'x', { cause: pgError('40001') })) === 'conflict')
  t.notOk(postgresFault(pgError('57P01')) === 'conflict', 'a lost connection may have committed: never retried')
  t.notOk(postgresFault(pgError('57014')) === 'conflict')
  t.notOk(postgresFault(pgError('23505')) === 'conflict')
})

t.test('without a repository of its own faultOf, only storage errors of a fault kind are faults', async (t) => {
  t.equal(storageFault(new StorageError('timeout', 'x')), 'timeout')
  t.equal(storageFault(new Error('wrapped', { cause: new StorageError('unavailable', 'x') })), 'unavailable', 'through the cause chain')
  t.equal(storageFault(new StorageError('unique', 'x', { cause: pgError('40001') })), undefined, 'a constraint error is none, whatever its cause')
  t.equal(storageFault(pgError('57P01')), undefined, 'a driver error is for the repository to recognise')
  t.equal(toJsonApiError(pgError('57P01')).statusCode, 500, 'so the error handler without it answers 500')
  t.equal(toJsonApiError(new StorageError('conflict', 'x')).statusCode, 503)
})

t.test('a fault is a 503 with Retry-After', async (t) => {
  const codes = { unavailable: 'FJA_DATABASE_UNAVAILABLE', timeout: 'FJA_DATABASE_TIMEOUT', conflict: 'FJA_DATABASE_CONFLICT' } as const
  for (const [fault, code] of Object.entries(codes)) {
    const error = faultError(fault as keyof typeof codes, 2)
    t.equal(error.statusCode, 503)
    t.same(error.headers, { 'retry-after': '2' })
    t.equal(error.errors[0].code, code)
    t.equal(error.errors[0].status, '503')
  }
  const rendered = toJsonApiError(pgError('57P01'), 7, postgresFault)
  t.equal(rendered.statusCode, 503)
  t.equal(rendered.errors[0].code, 'FJA_DATABASE_UNAVAILABLE')
  t.same(rendered.headers, { 'retry-after': '7' })
  t.equal(toJsonApiError(pgError('57014'), undefined, postgresFault).headers['retry-after'], '1', 'one second by default')
  t.equal(toJsonApiError(new Error('boom')).statusCode, 500, 'anything else is still a 500')
})

t.test('the Kysely repository reports faults and data exceptions as storage errors', async (t) => {
  const conflict = storageErrorFromPostgres(pgError('40001'))
  t.ok(conflict instanceof StorageError)
  t.equal((conflict as StorageError).kind, 'conflict')
  t.equal((storageErrorFromPostgres(pgError('57014')) as StorageError).kind, 'timeout')
  t.equal((storageErrorFromPostgres(pgError('53300')) as StorageError).kind, 'unavailable')
  t.equal((storageErrorFromPostgres(new Error('Connection terminated unexpectedly')) as StorageError).kind, 'unavailable')
  t.equal((storageErrorFromPostgres(pgError('2201B', 'invalid regular expression: parentheses () not balanced')) as StorageError).kind, 'invalid-value', 'any data exception (class 22) is a value the database could not use')
  t.equal((storageErrorFromPostgres(pgError('22003')) as StorageError).kind, 'out-of-range')
  const other = pgError('42P01')
  t.equal(storageErrorFromPostgres(other), other, 'anything else is returned unchanged')
  const storage = new StorageError('unique', 'x')
  t.equal(storageErrorFromPostgres(storage), storage, 'a storage error stays as it is')
})
