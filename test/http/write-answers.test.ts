import t, { type Test } from 'tap'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql, type Kysely } from 'kysely'
import { jsonApi, defineResource, KyselyRepository, type Repository } from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi, type TestRequest, type TestResponse } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError } from '../helpers/assert-errors.js'
import { testEngine } from '../helpers/engine.js'

// A write is answered with the resource as stored, rendered after the row is written. When rendering needs more than
// the written row — the statements of `include`, or the application's code (a derived attribute's `compute`) — the
// write and its answer are one transaction: a failure of the answer (the database lost while reading the includes,
// a `compute` that throws) is an error response with nothing written. A write answered from its own row alone stays
// one statement.

async function migrate (db: Kysely<any>): Promise<void> {
  const engine = testEngine()
  // A table with its `id` column as each engine assigns ids; on MariaDB in `utf8mb4` compared by code point.
  const createTable = (name: string) => {
    const table = engine === 'mysql' ? db.schema.createTable(name).modifyEnd(sql`character set utf8mb4 collate utf8mb4_bin`) : db.schema.createTable(name)
    return engine === 'postgres'
      ? table.addColumn('id', 'serial', (col) => col.primaryKey())
      : table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
  }
  await createTable('makers').addColumn('name', 'text', (col) => col.notNull()).execute()
  await createTable('gadgets')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('maker_id', 'integer', (col) => col.references('makers.id'))
    .execute()
}

/** A `compute` that fails for names that ask it to: an application bug that shows only for some rows. */
function labelOf (row: { readonly name?: unknown }): string {
  const name = String(row.name)
  if (name.startsWith('explode')) throw new Error(`cannot label '${name}'`)
  return name.toUpperCase()
}

const maker = defineResource({
  type: 'maker',
  path: '/makers',
  table: 'makers',
  id: { kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
    title: { schema: Type.String(), derived: { columns: ['name'], compute: labelOf } },
  },
  relationships: { gadgets: { kind: 'to-many', type: 'gadget', inverse: 'maker' } },
})

const gadget = defineResource({
  type: 'gadget',
  path: '/gadgets',
  table: 'gadgets',
  id: { kind: 'integer' },
  attributes: {
    name: { schema: Type.String(), required: true },
    label: { schema: Type.String(), derived: { columns: ['name'], compute: labelOf } },
  },
  relationships: { maker: { kind: 'to-one', type: 'maker', foreignKey: 'maker_id' } },
})

const database = await openTestDatabase(migrate)
t.teardown(() => database.close())
const { db, counter } = database

/** When set, the repository's reads of related rows (`include`) fail as a lost connection does. */
let includesFail = false
/** A lost connection, as each engine's driver reports it. */
const LOST = (): Error => {
  switch (testEngine()) {
    case 'postgres': return Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })
    case 'mysql': return Object.assign(new Error('Connection was killed'), { code: 'ER_CONNECTION_KILLED', errno: 1927 })
    case 'sqlite': return Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })
  }
}

/** The default repository, whose reads of related rows fail on demand, inside transactions too. */
function faulty (inner: KyselyRepository): Repository {
  return new Proxy(inner, {
    get (target, property) {
      if (property === 'findRelated' && includesFail) return () => Promise.reject(LOST())
      if (property === 'transaction') {
        return (work: (repository: Repository) => Promise<unknown>) => target.transaction((bound) => work(faulty(bound as KyselyRepository)))
      }
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

const app: FastifyInstance = await documentedFastify({})
await app.register(jsonApi, { repository: faulty(new KyselyRepository(db)), resources: [maker, gadget] })
await app.ready()
t.teardown(() => app.close())

function send (method: InjectOptions['method'], url: string, options: TestRequest = {}): Promise<TestResponse> {
  return injectJsonApi(app, method, url, options)
}

const OPERATIONS = { 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"', accept: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' }

async function names (table: 'makers' | 'gadgets'): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)} order by id`.execute(db)
  return rows.map((row) => row.name)
}

function newGadget (name: string, makerId?: string): unknown {
  return { data: { type: 'gadget', attributes: { name }, ...(makerId === undefined ? {} : { relationships: { maker: { data: { type: 'maker', id: makerId } } } }) } }
}

function internalError (t: Test, response: TestResponse): void {
  assertError(t, response, { status: 500, code: 'FJA_INTERNAL' })
}

t.beforeEach(async () => {
  includesFail = false
  switch (testEngine()) {
    case 'postgres':
      await sql`truncate gadgets, makers restart identity cascade`.execute(db)
      break
    case 'mysql':
      // TRUNCATE of a table that a foreign key points at needs the checks off (it restarts AUTO_INCREMENT too).
      await db.connection().execute(async (connection) => {
        await sql`set foreign_key_checks = 0`.execute(connection)
        try {
          for (const table of ['gadgets', 'makers']) await sql`truncate table ${sql.table(table)}`.execute(connection)
        } finally {
          await sql`set foreign_key_checks = 1`.execute(connection)
        }
      })
      break
    case 'sqlite':
      for (const table of ['gadgets', 'makers']) await db.deleteFrom(table).execute()
      await db.deleteFrom('sqlite_sequence').where('name', 'in', ['gadgets', 'makers']).execute()
      break
  }
  await sql`insert into makers (name) values ('Acme'), ('explode maker')`.execute(db)
})

t.test('a write answered from its own row is one statement; one whose answer runs a compute is a transaction', async (t) => {
  counter.reset()
  const plain = await send('POST', '/gadgets?fields[gadget]=name,maker', { body: newGadget('plain', '1') })
  t.equal(plain.status, 201)
  t.same(plain.body.data.attributes, { name: 'plain' })
  t.same(counter.statements.map((statement) => statement.split(' ')[0]), ['insert'], 'the insert alone')

  counter.reset()
  const labelled = await send('POST', '/gadgets', { body: newGadget('labelled', '1') })
  t.equal(labelled.status, 201)
  t.same(labelled.body.data.attributes, { name: 'labelled', label: 'LABELLED' })
  t.same(counter.statements.map((statement) => statement.split(' ')[0].toLowerCase()), ['begin', 'insert', 'commit'])

  counter.reset()
  const renamed = await send('PATCH', `/gadgets/${plain.body.data.id as string}?fields[gadget]=name`, { body: { data: { type: 'gadget', id: plain.body.data.id, attributes: { name: 'renamed' } } } })
  t.equal(renamed.status, 200)
  // MariaDB has no UPDATE … RETURNING: the row is read back in the update's transaction (docs/databases.md).
  t.same(counter.statements.map((statement) => statement.split(' ')[0].toLowerCase()),
    testEngine() === 'mysql' ? ['begin', 'update', 'select', 'commit'] : ['update'])
  t.same(await names('gadgets'), ['renamed', 'labelled'])
})

t.test('cannot create a resource whose answer fails to render: 500, nothing written', async (t) => {
  internalError(t, await send('POST', '/gadgets', { body: newGadget('explode 1') }))
  t.same(await names('gadgets'), [], 'the row of the failed answer was rolled back')
  // Without the derived attribute in the fieldset nothing runs the compute: the same create succeeds.
  const sparse = await send('POST', '/gadgets?fields[gadget]=name', { body: newGadget('explode 1') })
  t.equal(sparse.status, 201)
  t.same(await names('gadgets'), ['explode 1'])
})

t.test('cannot update a resource whose answer fails to render: 500, the row as it was', async (t) => {
  const made = await send('POST', '/gadgets', { body: newGadget('steady', '1') })
  const id = made.body.data.id as string
  internalError(t, await send('PATCH', `/gadgets/${id}`, { body: { data: { type: 'gadget', id, attributes: { name: 'explode 2' } } } }))
  t.same(await names('gadgets'), ['steady'])
  internalError(t, await send('PATCH', `/gadgets/${id}?include=maker`, { body: { data: { type: 'gadget', id, relationships: { maker: { data: { type: 'maker', id: '2' } } } } } }))
  const { rows } = await sql<{ maker_id: number }>`select maker_id from gadgets`.execute(db)
  t.same(rows, [{ maker_id: 1 }], 'the link was not changed: the included maker failed to render')
})

t.test('cannot create a resource whose included resource fails to render: 500, nothing written', async (t) => {
  internalError(t, await send('POST', '/gadgets?include=maker', { body: newGadget('fine', '2') }))
  t.same(await names('gadgets'), [])
  const without = await send('POST', '/gadgets', { body: newGadget('fine', '2') })
  t.equal(without.status, 201, 'the maker is only linked, not rendered')
  t.same(await names('gadgets'), ['fine'])
})

t.test('cannot create a resource when the database is lost while its includes are read: 503, nothing written', async (t) => {
  includesFail = true
  const lost = await send('POST', '/gadgets?include=maker', { body: newGadget('lost', '1') })
  assertError(t, lost, { status: 503, code: 'FJA_DATABASE_UNAVAILABLE' })
  t.equal(lost.headers['retry-after'], '1')
  t.same(await names('gadgets'), [], 'the insert was rolled back with the failed read')
  const made = await send('POST', '/gadgets', { body: newGadget('kept', '1') })
  t.equal(made.status, 201, 'a create without includes reads no related rows')
  const id = made.body.data.id as string
  assertError(t, await send('PATCH', `/gadgets/${id}?include=maker`, { body: { data: { type: 'gadget', id, attributes: { name: 'changed' } } } }), { status: 503, code: 'FJA_DATABASE_UNAVAILABLE' })
  t.same(await names('gadgets'), ['kept'], 'nor was the update kept')
  includesFail = false
  const included = await send('POST', '/gadgets?include=maker', { body: newGadget('included', '1') })
  t.equal(included.status, 201)
  t.same(included.body.included.map((item: { id: string }) => item.id), ['1'])
})

t.test('cannot create or update a resource through a related route when its answer fails to render', async (t) => {
  internalError(t, await send('POST', '/makers/1/gadgets', { body: newGadget('explode 3') }))
  t.same(await names('gadgets'), [])
  const made = await send('POST', '/makers/1/gadgets', { body: newGadget('related') })
  t.equal(made.status, 201)
  t.same(made.body.data.attributes, { name: 'related', label: 'RELATED' })
  internalError(t, await send('PATCH', `/gadgets/${made.body.data.id as string}/maker`, { body: { data: { type: 'maker', id: '1', attributes: { name: 'explode 4' } } } }))
  t.same(await names('makers'), ['Acme', 'explode maker'], 'the related maker kept its name')
})

t.test('cannot run operations whose results fail to render: 500, nothing of the batch written', async (t) => {
  const response = await send('POST', '/operations', {
    headers: OPERATIONS,
    body: {
      'atomic:operations': [
        { op: 'add', data: { type: 'maker', attributes: { name: 'Batch maker' } } },
        { op: 'add', data: { type: 'gadget', attributes: { name: 'explode 5' } } },
      ],
    },
  })
  internalError(t, response)
  t.same(await names('makers'), ['Acme', 'explode maker'])
  t.same(await names('gadgets'), [])
  const fine = await send('POST', '/operations', {
    headers: OPERATIONS,
    body: { 'atomic:operations': [{ op: 'add', data: { type: 'gadget', attributes: { name: 'batch gadget' } } }] },
  })
  t.equal(fine.status, 200)
  t.same(fine.body['atomic:results'][0].data.attributes, { name: 'batch gadget', label: 'BATCH GADGET' })
})
