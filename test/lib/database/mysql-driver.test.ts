// The library's MariaDB/MySQL dialect (lib/database/mysql-driver.ts) and createMysqlDatabase's pool, on the server of
// `MYSQL_URL` (default mysql://root@127.0.0.1:3306/; skipped without one): single statements outside transactions
// without Kysely's executor, held to what Kysely's MysqlDialect answers; RETURNING; streams; savepoints; the wait for
// a connection that gives up after `connectionTimeout`.
import t from 'tap'
import { CompiledQuery, Kysely, sql, type LogEvent } from 'kysely'
import mysql2 from 'mysql2'
import { JsonApiMysqlDialect, createMysqlDatabase } from '../../../lib/index.js'
import { statementRunnerOf } from '../../../lib/database/statement-runner.js'
import { freshMysqlDatabase } from '../../helpers/database.js'

const fresh = await freshMysqlDatabase(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/', 'driver')
const unavailable = typeof fresh === 'string' ? fresh : false
if (typeof fresh !== 'string') t.teardown(fresh.drop)
const own = typeof fresh === 'string' ? '' : fresh.url

t.test('on MariaDB', { skip: unavailable }, async (t) => {
  const events: LogEvent[] = []
  const { db, close } = await createMysqlDatabase<any>({ uri: own, pool: { connectionLimit: 2 }, log: (event) => { events.push(event) } })
  t.teardown(close)
  await sql`create table items (id integer primary key auto_increment, name varchar(50) not null unique)`.execute(db)
  const runner = statementRunnerOf(db)
  if (runner === undefined) throw new Error('createMysqlDatabase\'s dialect offers single statements')

  t.test('single statements answer rows, are logged as Kysely logs them, and fail with what mapError makes', async (t) => {
    for (const round of [1, 2, 3]) {
      events.length = 0
      const query = CompiledQuery.raw('select ? + 1 as n', [41])
      t.same(await runner(query), [{ n: 42 }], `round ${round}: the first on a connection, then the next`)
      t.equal(events.length, 1)
      t.equal(events[0].query, query)
    }
    const failure = await runner(CompiledQuery.raw('select nothing from nowhere'), (error) => ({ mapped: error })).then(() => undefined, (error: unknown) => error)
    t.match(failure, { mapped: { errno: 1146 } })
    t.same(await runner(CompiledQuery.raw('select 1 as n')), [{ n: 1 }], 'the pool goes on')
  })

  t.test('writes: RETURNING gives the rows, a write without it what it changed', async (t) => {
    t.same(await db.insertInto('items').values({ name: 'a' }).returning(['id', 'name']).execute(), [{ id: 1, name: 'a' }])
    const inserted = await db.insertInto('items').values({ name: 'b' }).executeTakeFirst()
    t.equal(inserted.insertId, 2n)
    const updated = await db.updateTable('items').set({ name: sql`concat(name, 'x')` }).where('id', '>', 0).executeTakeFirst()
    t.equal(updated.numUpdatedRows, 2n)
    t.equal(updated.numChangedRows, 2n)
    t.same(await runner(CompiledQuery.raw('delete from items where id = ? returning name', [2])), [{ name: 'bx' }], 'single statements too')
    await t.rejects(db.insertInto('items').values({ name: 'ax' }).execute(), { code: 'ER_DUP_ENTRY' })
  })

  t.test('transactions, savepoints and streams run as on Kysely\'s dialect', async (t) => {
    await db.deleteFrom('items').execute()
    const trx = await db.startTransaction().setIsolationLevel('serializable').execute()
    await trx.insertInto('items').values({ name: 'kept' }).execute()
    const savepoint = await trx.savepoint('before `odd` name').execute()
    await savepoint.insertInto('items').values({ name: 'undone' }).execute()
    await savepoint.rollbackToSavepoint('before `odd` name').execute()
    await trx.commit().execute()
    t.same(await db.selectFrom('items').select('name').execute(), [{ name: 'kept' }])
    await db.insertInto('items').values(Array.from({ length: 6 }, (_, i) => ({ name: `n${i}` }))).execute()
    const chunks = await db.getExecutor().provideConnection(async (connection) => {
      const sizes: number[] = []
      for await (const chunk of connection.streamQuery(CompiledQuery.raw('select id from items order by id'), 3)) sizes.push(chunk.rows.length)
      return sizes
    })
    t.same(chunks, [3, 3, 1])
    const names: string[] = []
    for await (const row of db.selectFrom('items').select('name').orderBy('id').stream(2)) {
      names.push(row.name)
      if (names.length === 2) break
    }
    t.same(names, ['kept', 'n0'], 'a stream left early ends quietly')
    t.same(await runner(CompiledQuery.raw('select count(*) as n from items')), [{ n: 7 }], 'its connection serves again')
  })
})

t.test('on MariaDB: a dialect with connection hooks runs every statement through Kysely', { skip: unavailable }, async (t) => {
  const pool = mysql2.createPool({ uri: own, connectionLimit: 1 })
  const reserved: number[] = []
  const db = new Kysely<any>({
    dialect: new JsonApiMysqlDialect({
      pool,
      onReserveConnection: async (connection) => { reserved.push((await connection.executeQuery<{ n: number }>(CompiledQuery.raw('select 1 as n'))).rows[0].n) },
    }),
  })
  t.teardown(() => db.destroy())
  t.equal(statementRunnerOf(db), undefined)
  t.same((await sql<{ n: number }>`select 2 as n`.execute(db)).rows, [{ n: 2 }])
  t.same((await sql<{ n: number }>`select 3 as n`.execute(db)).rows, [{ n: 3 }])
  t.same(reserved, [1, 1], 'the hook ran for each statement')
})

t.test('on MariaDB: cannot wait for a connection longer than connectionTimeout; the pool keeps every connection', { skip: unavailable }, async (t) => {
  const { db, close } = await createMysqlDatabase<any>({ uri: own, connectionTimeout: 300, pool: { connectionLimit: 1 } })
  t.teardown(close)
  const runner = statementRunnerOf(db)
  if (runner === undefined) throw new Error('single statements')
  await runner(CompiledQuery.raw('select 1'))
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const transaction = db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx)
    await held
  })
  await new Promise((resolve) => setTimeout(resolve, 50))
  const started = performance.now()
  const waits = [runner(CompiledQuery.raw('select 1')), sql`select 2`.execute(db), runner(CompiledQuery.raw('select 3'))]
  const answers = await Promise.allSettled(waits)
  const waited = performance.now() - started
  t.same(answers.map((answer) => answer.status), ['rejected', 'rejected', 'rejected'], 'every request that waited gives up')
  for (const answer of answers) t.match(answer, { reason: { code: 'FJA_CONNECTION_TIMEOUT', message: /within 300 ms/ } })
  t.ok(waited >= 290, `after the timeout (${Math.round(waited)} ms)`)
  release()
  await transaction
  for (let i = 0; i < 3; i++) t.same(await runner(CompiledQuery.raw('select ? as n', [i])), [{ n: i }], 'the connection that came late went back to the pool')
  t.same((await sql<{ n: number }>`select 4 as n`.execute(db)).rows, [{ n: 4 }])
})
