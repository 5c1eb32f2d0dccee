// The MariaDB/MySQL engine (lib/repository/kysely/mysql-engine.ts, mysql-errors.ts): its errors read as storage
// errors and faults from their numbers and messages (no server needed), and, on the server of `MYSQL_URL` (default
// mysql://root@127.0.0.1:3306/; skipped without one), its catalog reads: the foreign keys that enforce a
// relationship, the schema check, and a unique violation completed with its columns.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { createMysqlDatabase, defineResource, StorageError } from '../../../lib/index.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { MYSQL } from '../../../lib/repository/kysely/mysql-engine.js'
import { mysqlFault, storageErrorFromMysql } from '../../../lib/repository/kysely/mysql-errors.js'
import { storedDateTime } from '../../../lib/repository/kysely/text-stored-values.js'
import { freshMysqlDatabase } from '../../helpers/database.js'

/** An error as mysql2 gives one. */
function serverError (errno: number, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { errno, code: 'ER_X', sqlState: 'HY000', ...extra })
}

t.test('server errors are storage errors with the table, constraint and columns the message names', async (t) => {
  const foreignKey = storageErrorFromMysql(serverError(1452, 'Cannot add or update a child row: a foreign key constraint fails (`app`.`computers`, CONSTRAINT `computers_owner_id_fk` FOREIGN KEY (`owner_id`) REFERENCES `users` (`id`) ON DELETE SET NULL)'))
  t.ok(foreignKey instanceof StorageError)
  t.match(foreignKey, { kind: 'foreign-key', table: 'computers', constraint: 'computers_owner_id_fk', columns: ['owner_id'] })
  t.match(storageErrorFromMysql(serverError(1062, "Duplicate entry 'a@b' for key 'users_email_key'")), { kind: 'unique', constraint: 'users_email_key', table: undefined })
  t.match(storageErrorFromMysql(serverError(1062, "Duplicate entry 'a@b' for key 'users.users_email_key'")), { kind: 'unique', constraint: 'users_email_key', table: 'users' }, 'MySQL 8 names the table')
  t.match(storageErrorFromMysql(serverError(1048, "Column 'name' cannot be null")), { kind: 'not-null', columns: ['name'] })
  t.match(storageErrorFromMysql(serverError(1364, "Field 'name' doesn't have a default value")), { kind: 'not-null', columns: ['name'] })
  t.match(storageErrorFromMysql(serverError(1406, "Data too long for column 'extra_data' at row 1")), { kind: 'too-long', columns: ['extra_data'] })
  t.match(storageErrorFromMysql(serverError(1264, "Out of range value for column 'age' at row 1")), { kind: 'out-of-range', columns: ['age'] })
  t.match(storageErrorFromMysql(serverError(4025, 'CONSTRAINT `users_age_check` failed for `app`.`users`')), { kind: 'check', constraint: 'users_age_check' })
  const other = serverError(1146, "Table 'app.nothing' doesn't exist")
  t.equal(storageErrorFromMysql(other), other, 'any other error unchanged')
})

t.test('faults: deadlocks conflict, timeouts, lost connections and a pool that is gone are unavailable', async (t) => {
  t.equal(mysqlFault(serverError(1213, 'Deadlock found when trying to get lock')), 'conflict')
  t.equal(mysqlFault(serverError(1205, 'Lock wait timeout exceeded')), 'timeout')
  t.equal(mysqlFault(serverError(1969, 'Query execution was interrupted (max_statement_time exceeded)')), 'timeout')
  t.equal(mysqlFault(Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true })), 'unavailable')
  t.equal(mysqlFault(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })), 'unavailable')
  t.equal(mysqlFault(new Error('Pool is closed.')), 'unavailable')
  t.equal(mysqlFault(new Error('x', { cause: serverError(1927, 'Connection was killed') })), 'unavailable', 'through the cause chain')
  t.equal(mysqlFault(serverError(1062, 'Duplicate entry')), undefined, 'a constraint is no fault')
  const wrapped = storageErrorFromMysql(serverError(1213, 'Deadlock found'))
  t.match(wrapped, { kind: 'conflict' }, 'a fault as a storage error of its kind')
})

t.test('date-times are stored in UTC, to the microsecond, in one form whose order is theirs', async (t) => {
  t.equal(storedDateTime('mysql', '2021-06-01T02:00:00+02:00'), '2021-06-01 00:00:00.000000')
  t.equal(storedDateTime('mysql', '2021-06-01T00:00:00.123456Z'), '2021-06-01 00:00:00.123456')
  t.equal(storedDateTime('sqlite', '2021-05-31T23:30:00.5-01:00'), '2021-06-01T00:30:00.500000Z')
  t.equal(storedDateTime('mysql', new Date('2020-01-01T10:00:00.250Z')), '2020-01-01 10:00:00.250000')
  t.equal(storedDateTime('mysql', 'not a date'), 'not a date', 'anything else as it is')
})

const fresh = await freshMysqlDatabase(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/', 'engine')
const unavailable = typeof fresh === 'string' ? fresh : false
if (typeof fresh !== 'string') t.teardown(fresh.drop)

t.test('on MariaDB: the catalog', { skip: unavailable }, async (t) => {
  if (typeof fresh === 'string') return
  const { db, close } = await createMysqlDatabase<any>({ uri: fresh.url })
  t.teardown(close)
  await sql`create table fk_targets (id integer primary key auto_increment, code varchar(20) not null, constraint fk_targets_code unique (code))`.execute(db)
  await sql`create table fk_pairs (a integer not null, b integer not null, primary key (a, b))`.execute(db)
  await sql`create table fk_sources (
    id integer primary key auto_increment,
    target_id integer, constraint fk_sources_target foreign key (target_id) references fk_targets (id),
    loose_id integer,
    pa integer, pb integer, constraint fk_sources_pair foreign key (pa, pb) references fk_pairs (a, b)
  )`.execute(db)
  const link = (foreignKey: string) => ({ kind: 'to-one' as const, type: 'target', foreignKey })
  const graph = resolveResources([
    defineResource({ type: 'source', table: 'fk_sources', attributes: {}, relationships: { target: link('target_id'), loose: link('loose_id'), pair: link('pa') } }),
    defineResource({ type: 'target', table: 'fk_targets', attributes: { code: { schema: Type.String() } } }),
  ])
  const source = graph.getResource('source')
  const target = graph.getResource('target')
  const enforced = await MYSQL.readForeignKeys(db, graph)
  t.equal(enforced.constraintOf(source, 'target_id', target), 'fk_sources_target', 'a single-column foreign key to the id enforces its relationship')
  t.equal(enforced.constraintOf(source, 'loose_id', target), undefined, 'a column without a constraint does not')
  t.equal(enforced.constraintOf(source, 'pa', target), undefined, 'nor one column of a constraint of two')
  t.equal(enforced.size, 1)

  await t.resolves(MYSQL.checkSchema(db, graph), 'every table and column there: the check passes')
  const missing = resolveResources([defineResource({ type: 'ghost', table: 'fk_ghosts', attributes: { code: { schema: Type.String() } } }),
    defineResource({ type: 'target', table: 'fk_targets', attributes: { nothing: { schema: Type.String() } } })])
  await t.rejects(MYSQL.checkSchema(db, missing), /no table or view 'fk_ghosts'[\s\S]*no column 'nothing' in 'fk_targets'/, 'a missing table and a missing column, both named')

  await sql`insert into fk_targets (code) values ('a')`.execute(db)
  const duplicate = await sql`insert into fk_targets (code) values ('a')`.execute(db).then(() => undefined, (error: unknown) => MYSQL.storageError(error))
  t.match(duplicate, { kind: 'unique', constraint: 'fk_targets_code', columns: [] }, 'MariaDB names the index only')
  const complete = MYSQL.completeError
  if (complete === undefined) throw new Error('the MariaDB engine completes unique violations')
  t.match(await complete(db, duplicate, 'fk_targets'), { kind: 'unique', table: 'fk_targets', constraint: 'fk_targets_code', columns: ['code'] }, 'completed from information_schema')
})
