import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { createEmbeddedDatabase } from '../../../lib/embedded.js'

// createEmbeddedDatabase({ loadDataDir }) starts from what dumpDataDir() dumped: the tables and rows of the dumped
// database, in a database of its own.

const first = await createEmbeddedDatabase<any>()
t.teardown(() => first.close())
await sql`create table things (id int primary key, name text not null)`.execute(first.db)
await sql`insert into things values (1, 'one')`.execute(first.db)
const dump = await first.dumpDataDir()

async function names (db: typeof first.db): Promise<string[]> {
  const rows = await db.selectFrom('things').select('name').orderBy('id').execute()
  return rows.map((row) => row.name as string)
}

t.test('a database loaded from a dump has its tables and rows, and is independent of the dumped one', async (t) => {
  t.ok(dump.size > 0)
  const loaded = await createEmbeddedDatabase<any>({ loadDataDir: dump })
  t.teardown(() => loaded.close())
  t.same(await names(loaded.db), ['one'])

  await sql`insert into things values (2, 'two in the copy')`.execute(loaded.db)
  await sql`insert into things values (3, 'three in the first')`.execute(first.db)
  t.same(await names(loaded.db), ['one', 'two in the copy'])
  t.same(await names(first.db), ['one', 'three in the first'])
  await sql`delete from things where id = 3`.execute(first.db)
})

t.test('a dump waits for a transaction in progress, and holds its committed rows only', async (t) => {
  let dumped: Promise<Blob> | undefined
  await first.db.transaction().execute(async (trx) => {
    await sql`insert into things values (4, 'four')`.execute(trx)
    dumped = first.dumpDataDir({ compression: 'none' })
    // The dump waits for the connection the transaction holds.
    const settled = await Promise.race([dumped.then(() => true), new Promise((resolve) => setTimeout(resolve, 200, false))])
    t.equal(settled, false, 'not dumped while the transaction is open')
  })
  const plain = await dumped!
  t.ok(plain.size > dump.size, 'a plain tar is larger than the gzip one')
  const loaded = await createEmbeddedDatabase<any>({ loadDataDir: plain })
  t.teardown(() => loaded.close())
  t.same(await names(loaded.db), ['one', 'four'])
  await sql`delete from things where id = 4`.execute(first.db)
})

t.test('a dump fills a new data directory on disk, and is refused by one that holds a database', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fastify-jsonapi-dump-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const onDisk = await createEmbeddedDatabase<any>({ dataDir: join(dir, 'data'), loadDataDir: dump })
  t.same(await names(onDisk.db), ['one'])
  await onDisk.close()
  await t.rejects(onDisk.dumpDataDir(), { message: 'the embedded database is closed' }, 'a closed database does not dump')
  await t.rejects(createEmbeddedDatabase<any>({ dataDir: join(dir, 'data'), loadDataDir: dump }), /already exists/)
})
