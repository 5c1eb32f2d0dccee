import t from 'tap'
import Database from 'better-sqlite3'
import { CompiledQuery, Kysely, sql, type LogEvent, type SqliteDatabase } from 'kysely'
import { JsonApiSqliteDialect, createSqliteDatabase } from '../../../lib/index.js'
import { statementRunnerOf } from '../../../lib/database/statement-runner.js'

// The library's SQLite dialect: statements prepared once per text, single statements outside transactions run at
// once when the one connection is free. These tests hold it to what Kysely's own SqliteDialect answers.

/** A better-sqlite3 database in memory that counts what it prepares. */
function countingDatabase (): { database: SqliteDatabase, prepared: string[] } {
  const database = new Database(':memory:')
  const prepared: string[] = []
  const prepare = database.prepare.bind(database)
  return {
    database: Object.assign(database, {
      prepare: (source: string) => {
        prepared.push(source)
        return prepare(source)
      },
    }) as unknown as SqliteDatabase,
    prepared,
  }
}

async function open (log?: (event: LogEvent) => void): Promise<{ db: Kysely<any>, prepared: string[] }> {
  const { database, prepared } = countingDatabase()
  const db = new Kysely<any>({ dialect: new JsonApiSqliteDialect({ database }), log })
  await sql`create table items (id integer primary key, name text not null unique)`.execute(db)
  prepared.length = 0
  return { db, prepared }
}

t.test('a statement text is prepared once, whatever its values, and answers as Kysely\'s SqliteDialect does', async (t) => {
  const { db, prepared } = await open()
  t.teardown(() => db.destroy())
  const first = await db.insertInto('items').values({ name: 'a' }).executeTakeFirst()
  const second = await db.insertInto('items').values({ name: 'b' }).executeTakeFirst()
  t.equal(first.insertId, 1n)
  t.equal(second.insertId, 2n)
  t.equal(first.numInsertedOrUpdatedRows, 1n)
  t.equal(prepared.length, 1, 'one text, prepared once')
  t.same(await db.selectFrom('items').select(['id', 'name']).where('id', '=', 2).execute(), [{ id: 2, name: 'b' }])
  t.same(await db.selectFrom('items').select(['id', 'name']).where('id', '=', 1).execute(), [{ id: 1, name: 'a' }])
  const updated = await db.updateTable('items').set({ name: sql`name || 'c'` }).where('id', '>', 0).executeTakeFirst()
  t.equal(updated.numUpdatedRows, 2n, 'the rows a write changed')
  t.same(await db.insertInto('items').values({ name: 'd' }).returning(['id', 'name']).execute(), [{ id: 3, name: 'd' }], 'RETURNING answers its rows')
  t.equal(prepared.length, 4)
})

t.test('the prepared statements are bounded: the least recently used text is dropped first', async (t) => {
  const { db, prepared } = await open()
  t.teardown(() => db.destroy())
  const query = (n: number): CompiledQuery => CompiledQuery.raw(`select ${n} as n`)
  for (let n = 0; n < 500; n++) await db.executeQuery(query(n))
  await db.executeQuery(query(0))
  t.equal(prepared.length, 500, 'a kept text is not prepared again')
  await db.executeQuery(query(500))
  await db.executeQuery(query(0))
  t.equal(prepared.length, 501, 'the text used last is still kept when one more arrives')
  await db.executeQuery(query(1))
  t.equal(prepared.length, 502, 'the least recently used one was dropped')
})

t.test('a failed statement fails as on Kysely\'s dialect, and is not kept', async (t) => {
  const { db, prepared } = await open()
  t.teardown(() => db.destroy())
  await t.rejects(db.executeQuery(CompiledQuery.raw('select from nowhere')), { code: 'SQLITE_ERROR' })
  await db.insertInto('items').values({ name: 'a' }).execute()
  await t.rejects(db.insertInto('items').values({ name: 'a' }).execute(), { code: 'SQLITE_CONSTRAINT_UNIQUE' })
  t.same(await db.selectFrom('items').select('name').execute(), [{ name: 'a' }], 'the connection goes on')
  t.equal(prepared.filter((text) => text === 'select from nowhere').length, 1)
})

t.test('single statements: at once while the connection is free, after the transaction that holds it', async (t) => {
  const { db } = await open()
  t.teardown(() => db.destroy())
  const runner = statementRunnerOf(db)
  if (runner === undefined) throw new Error('the dialect offers single statements')
  const count = CompiledQuery.raw('select count(*) as n from items')
  t.same(await runner(count), [{ n: 0 }], 'a statement before Kysely has taken the connection goes through Kysely')
  t.same(await runner(count), [{ n: 0 }])
  const order: string[] = []
  let inside: () => void = () => {}
  const holding = new Promise<void>((resolve) => { inside = resolve })
  let commit: () => void = () => {}
  const committed = new Promise<void>((resolve) => { commit = resolve })
  const transaction = db.transaction().execute(async (trx) => {
    await trx.insertInto('items').values({ name: 'inside' }).execute()
    inside()
    await committed
    order.push('commit')
  })
  await holding
  const seen = runner(count).then((rows) => {
    order.push('single statement')
    return rows
  })
  await new Promise((resolve) => setImmediate(resolve))
  t.same(order, [], 'the statement waits while the transaction holds the connection')
  commit()
  await transaction
  t.same(await seen, [{ n: 1 }], 'it sees the committed row, never the transaction\'s uncommitted one')
  t.same(order, ['commit', 'single statement'])
  const failing = await runner(CompiledQuery.raw('select from nowhere'), (error) => ({ mapped: error })).then(() => undefined, (error: unknown) => error)
  t.match(failing, { mapped: { code: 'SQLITE_ERROR' } }, 'a failure rejects with what mapError makes of it')
  await t.rejects(db.transaction().execute(async (trx) => {
    await trx.insertInto('items').values({ name: 'rolled back' }).execute()
    throw new Error('no')
  }), { message: 'no' })
  t.same(await runner(count), [{ n: 1 }], 'a rolled back transaction left nothing')
})

t.test('single statements are logged as Kysely logs its own', async (t) => {
  const events: LogEvent[] = []
  const { db } = await open((event) => { events.push(event) })
  t.teardown(() => db.destroy())
  const runner = statementRunnerOf(db)
  if (runner === undefined) throw new Error('the dialect offers single statements')
  events.length = 0
  const query = CompiledQuery.raw('select ? + 1 as n', [41])
  t.same(await runner(query), [{ n: 42 }])
  t.equal(events.length, 1)
  t.equal(events[0].level, 'query')
  t.equal(events[0].query, query)
})

t.test('a stream answers the rows in chunks of the size asked, from a statement of its own', async (t) => {
  const { db } = await open()
  t.teardown(() => db.destroy())
  await db.insertInto('items').values(Array.from({ length: 7 }, (_, i) => ({ name: `n${i}` }))).execute()
  const names: string[] = []
  for await (const row of db.selectFrom('items').select('name').orderBy('id').stream(3)) names.push(row.name)
  t.same(names, ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6'], 'Kysely\'s stream answers every row, in order')
  const chunks = await db.getExecutor().provideConnection(async (connection) => {
    const sizes: number[] = []
    for await (const chunk of connection.streamQuery(CompiledQuery.raw('select id from items order by id'), 3)) sizes.push(chunk.rows.length)
    return sizes
  })
  t.same(chunks, [3, 3, 1])
  await t.rejects(db.getExecutor().provideConnection(async (connection) => {
    for await (const chunk of connection.streamQuery(CompiledQuery.raw('delete from items'), 3)) t.fail(`no rows: ${chunk.rows.length}`)
  }), { message: /answers rows/ }, 'a statement that answers no rows cannot be streamed')
  t.same(await db.selectFrom('items').select('name').where('id', '=', 1).execute(), [{ name: 'n0' }], 'the cached statements still run after a stream')
})

t.test('createSqliteDatabase runs on the library\'s dialect; destroyed, a statement fails', async (t) => {
  const { db, close } = await createSqliteDatabase<any>()
  t.ok(statementRunnerOf(db), 'its adapter offers single statements')
  t.same((await sql<{ n: number }>`select 1 as n`.execute(db)).rows, [{ n: 1 }])
  await close()
  await t.rejects(sql`select 1`.execute(db))
})
