import t from 'tap'
import { countRowsQueries } from '../../helpers/rows-query-counter.js'
import { spawnSync } from 'node:child_process'
import pg from 'pg'
import { CompiledQuery } from 'kysely'
import { createPostgresDatabase } from '../../../lib/index.js'
import { createEmbeddedDatabase } from '../../../lib/embedded.js'
import { RowDecoders, RowsQuery, loadPrepareValue, prepareValueOrWarn } from '../../../lib/database/rows-query.js'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { onPostgresServer } from '../../helpers/engine.js'

// The driver of a database the library made (JsonApiPostgresDialect) sends its statements as RowsQuery (its own pg
// custom query, decoding rows with a decoder kept per statement text). These tests hold its rows to pg's own (pg's
// Query, on a plain pool of the same kind of server), and its failures to the driver's contract: one answer, the
// connection usable afterwards.

const url = process.env.DATABASE_URL
// The PostgreSQL driver's own tests: on a PostgreSQL server when DATABASE_URL names one, else on the embedded PGlite.
const onPostgres = onPostgresServer()
const opened = onPostgres
  ? await createPostgresDatabase<any>({ connectionString: url, pool: { max: 1 } })
  : await createEmbeddedDatabase<any>()
const { db } = opened
t.teardown(() => opened.close())
/** A statement through the library's driver: its rows. */
const runner = async (query: CompiledQuery): Promise<unknown[]> => (await db.executeQuery(query)).rows as unknown[]
/** A plain pool of the same kind of server, whose statements run as pg's own Query. */
const plain = onPostgres ? new pg.Pool({ connectionString: url, max: 1 }) : await embeddedPool()
t.teardown(() => plain.end())

async function embeddedPool (): Promise<pg.Pool> {
  const [{ PGlite }, { createPgConfig }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/node-postgres')])
  const pglite = new PGlite('memory://')
  await pglite.waitReady
  t.teardown(() => pglite.close())
  return new pg.Pool({ ...createPgConfig(pglite), max: 1 } as unknown as pg.PoolConfig)
}

/** The statements sent as RowsQuery (the library's query object), to tell the two paths apart. */
const sent = countRowsQueries(t.teardown)

/** The rows of a statement as pg's own Query decodes them (a plain pool, not the library's driver). */
async function pgRows (query: CompiledQuery): Promise<unknown[]> {
  const before = sent.count
  const { rows } = await plain.query(query.sql, [...query.parameters])
  if (sent.count !== before) throw new Error('the plain pool sent a RowsQuery')
  return rows
}

const pid = async (): Promise<unknown> => (await runner(CompiledQuery.raw('select pg_backend_pid() as pid')))[0]

const EVERY_TYPE = `select 1::int2 as i2, 2::int4 as i4, 9007199254740993::int8 as i8, 1.50::numeric as num,
  1.25::float4 as f4, 2.5::float8 as f8, true as yes, false as no, 'text'::text as t, 'v'::varchar(3) as v, 'c'::char(3) as c,
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid as id, '2024-02-29'::date as d, '2024-02-29 12:34:56.789'::timestamp as ts,
  '2024-02-29 12:34:56.789+02'::timestamptz as tstz, '12:34:56'::time as tm, '1 day 2 hours'::interval as iv,
  '{"a": [1, "x", null]}'::json as j, '{"b": {"c": true}}'::jsonb as jb, '"just a string"'::jsonb as js,
  '\\x00ff10'::bytea as bin, array['a', null, 'c"d']::text[] as texts, array[1, 2, 3]::int4[] as ints,
  array[array[1, 2], array[3, 4]]::int8[] as nested, null::int4 as nothing, null::text as none, ''::text as empty`

t.test('rows decode as pg decodes them, with parameters (extended protocol) and without (simple protocol)', async (t) => {
  const plain = CompiledQuery.raw(EVERY_TYPE)
  const before = sent.count
  const rows = await runner(plain)
  t.equal(sent.count, before + 1, 'sent as RowsQuery')
  t.strictSame(rows, await pgRows(plain), 'every type, without parameters')
  const withParameters = CompiledQuery.raw(`${EVERY_TYPE}, $1::int4 as p1, $2::text as p2, $3::jsonb as p3, $4::timestamptz as p4, $5::int4[] as p5, $6::text as p6`,
    [42, 'ünïcode ✓', { nested: ['x', 1, null] }, new Date('2024-03-01T10:00:00.000Z'), [1, null, 3], null])
  t.strictSame(await runner(withParameters), await pgRows(withParameters), 'every type and parameter of every kind')
  const [row] = await runner(withParameters) as Array<Record<string, unknown>>
  t.equal(row.i8, '9007199254740993', 'int8 as text, as pg does')
  t.type(row.tstz, Date)
  t.same(row.p3, { nested: ['x', 1, null] })
  t.same(row.p5, [1, null, 3])
  t.equal(row.nothing, null)
  t.equal(row.empty, '')
  t.same(Object.keys(row).slice(0, 3), ['i2', 'i4', 'i8'], 'the columns in order')
})

t.test('several rows, none, and the same text again answer as pg does', async (t) => {
  const many = CompiledQuery.raw('select n, n * 2 as twice, case when n % 2 = 0 then null else \'odd\' end as kind from generate_series(1, $1::int) as n', [50])
  t.strictSame(await runner(many), await pgRows(many))
  t.equal((await runner(many)).length, 50)
  const none = CompiledQuery.raw('select n from generate_series(1, $1::int) as n where n > 100', [3])
  t.strictSame(await runner(none), [])
  t.strictSame(await runner(CompiledQuery.raw('select n from generate_series(1, $1::int) as n', [2])), [{ n: 1 }, { n: 2 }])
  t.strictSame(await runner(CompiledQuery.raw('select n from generate_series(1, $1::int) as n', [3])), [{ n: 1 }, { n: 2 }, { n: 3 }], 'the kept decoder, other parameters')
})

t.test('column names are property names whatever they hold; __proto__ is a property, not the prototype', async (t) => {
  const odd = CompiledQuery.raw(`select 1 as "a""b", 2 as "c\\d", 3 as "e
f", 4 as "}; throw new Error('x'); ({", 5 as "ü ✓", 6 as "constructor", 7 as "0", $1::int as "$1"`, [8])
  const [row] = await runner(odd) as Array<Record<string, unknown>>
  t.strictSame(row, (await pgRows(odd))[0])
  t.equal(row['a"b'], 1)
  t.equal(row['c\\d'], 2)
  t.equal(row['e\nf'], 3)
  t.equal(row["}; throw new Error('x'); ({"], 4)
  t.equal(row['ü ✓'], 5)
  t.equal(Object.getOwnPropertyDescriptor(row, 'constructor')?.value, 6)
  t.equal(row['0'], 7)
  t.equal(row.$1, 8)

  const proto = CompiledQuery.raw('select 1 as "__proto__", $1::int as b', [2])
  const [protoRow] = await runner(proto) as Array<Record<string, unknown>>
  t.equal(Object.getPrototypeOf(protoRow), Object.prototype, 'the prototype stays')
  t.equal(Object.getOwnPropertyDescriptor(protoRow, '__proto__')?.value, 1, 'an own property named __proto__')
  t.equal(protoRow.b, 2)
  t.same(Object.keys(protoRow), ['__proto__', 'b'], 'its columns, in order')
  // pg's own rows agree where pg makes `__proto__` a property too (its older versions set the prototype instead).
  const pgRow = (await pgRows(proto))[0] as object
  if (Object.hasOwn(pgRow, '__proto__')) t.same(Object.keys(protoRow), Object.keys(pgRow), 'as pg\'s own rows')

  const twice = CompiledQuery.raw('select 1 as a, 2 as a, $1::int as b', [3])
  t.strictSame(await runner(twice), [{ a: 2, b: 3 }], 'a duplicate name keeps its last column')
  t.strictSame(await runner(twice), await pgRows(twice))
})

t.test('a row description that changed for the same text gets a decoder of its own', async (t) => {
  const table = `rows_query_${process.pid}`
  await db.executeQuery(CompiledQuery.raw(`create table ${table} (a int4)`))
  t.teardown(async () => { await db.executeQuery(CompiledQuery.raw(`drop table if exists ${table}`)) })
  await db.executeQuery(CompiledQuery.raw(`insert into ${table} values (1)`))
  const read = CompiledQuery.raw(`select * from ${table} where $1::int = 1`, [1])
  t.strictSame(await runner(read), [{ a: 1 }], 'an integer column: a number')
  await db.executeQuery(CompiledQuery.raw(`alter table ${table} alter column a type text`))
  t.strictSame(await runner(read), [{ a: '1' }], 'the same text on a text column: a string')
  await db.executeQuery(CompiledQuery.raw(`alter table ${table} rename column a to b`))
  t.strictSame(await runner(read), [{ b: '1' }], 'a renamed column: its new name')
})

t.test('a parameter pg cannot convert rejects the statement, once, and its connection serves the next', async (t) => {
  const before = await pid()
  await t.rejects(runner(CompiledQuery.raw('select $1::text as v', [{ toPostgres () { throw new Error('cannot convert') } }])), { message: 'cannot convert' })
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  await t.rejects(runner(CompiledQuery.raw('select $1::jsonb as v', [cyclic])), TypeError, 'a cyclic object')
  t.same(await pid(), before, 'the same connection')
  t.strictSame(await runner(CompiledQuery.raw('select $1::int + 1 as n', [1])), [{ n: 2 }], 'which answers the next statement')
})

t.test('a value a type parser refuses rejects the statement once the server is done, and the connection serves the next', async (t) => {
  const MONEY = 790
  pg.types.setTypeParser(MONEY, () => { throw new Error('no money') })
  t.teardown(() => { pg.types.setTypeParser(MONEY, (value: string) => value) })
  const before = await pid()
  await t.rejects(runner(CompiledQuery.raw('select $1::money as m, n from generate_series(1, 3) as n', ['12.50'])), { message: 'no money' })
  t.same(await pid(), before, 'the same connection')
  t.strictSame(await runner(CompiledQuery.raw('select $1::int as n', [5])), [{ n: 5 }])
})

t.test('the pool\'s own type parsers decode the rows', { skip: onPostgres ? false : 'the embedded database takes no pool options' }, async (t) => {
  const custom = await createPostgresDatabase<any>({
    connectionString: url,
    pool: {
      max: 1,
      types: { getTypeParser: (oid: number, format?: any) => oid === 23 ? (value: string) => `int4:${value}` : pg.types.getTypeParser(oid, format) },
    },
  })
  t.teardown(() => custom.close())
  const customRunner = async (query: CompiledQuery): Promise<unknown[]> => (await custom.db.executeQuery(query)).rows as unknown[]
  t.strictSame(await customRunner(CompiledQuery.raw('select $1::int4 as n, $2::text as s', [7, 'x'])), [{ n: 'int4:7', s: 'x' }])
  t.strictSame(await customRunner(CompiledQuery.raw('select 8::int4 as n')), [{ n: 'int4:8' }], 'without parameters too')
})

t.test('a client that asks for binary results goes through pg\'s Query', { skip: onPostgres ? false : 'the embedded database takes no pool options' }, async (t) => {
  const binary = await createPostgresDatabase<any>({ connectionString: url, pool: { max: 1, binary: true } as pg.PoolConfig })
  t.teardown(() => binary.close())
  const before = sent.count
  t.strictSame((await binary.db.executeQuery(CompiledQuery.raw('select $1::int4 as n', [7]))).rows, [{ n: 7 }])
  t.equal(sent.count, before, 'not sent as RowsQuery')
})

t.test('a server error rejects with it, and the connection serves the next', async (t) => {
  const before = await pid()
  await t.rejects(runner(CompiledQuery.raw('select 1 / $1::int as n', [0])), { code: '22012' })
  await t.rejects(runner(CompiledQuery.raw('select n from no_such_table_here as n')), { code: '42P01' }, 'without parameters too')
  t.same(await pid(), before)
  t.strictSame(await runner(CompiledQuery.raw('select 1 as n')), [{ n: 1 }])
})

t.test('decoders are kept per text and row description, at most LIMIT of them, the oldest dropped first', async (t) => {
  const types = { getTypeParser: pg.types.getTypeParser }
  const decoders = new RowDecoders()
  const int = [{ name: 'a', dataTypeID: 23, format: 'text' }]
  const text = [{ name: 'a', dataTypeID: 25, format: 'text' }]
  const first = decoders.of('select a', int, types)
  t.equal(decoders.of('select a', [{ ...int[0] }], types), first, 'an equal description: the kept decoder')
  t.strictSame(first.decode(['12']), { a: 12 })
  const changed = decoders.of('select a', text, types)
  t.not(changed, first, 'another type: another decoder')
  t.strictSame(changed.decode(['12']), { a: '12' })
  t.not(decoders.of('select a', [{ ...text[0], name: 'b' }], types), changed, 'another name')
  t.not(decoders.of('select a', [...text, ...text], types), changed, 'another count')
  t.equal(decoders.size, 1, 'one per text')
  for (let i = 0; i < RowDecoders.LIMIT + 5; i++) decoders.of(`select ${i}`, int, types)
  t.equal(decoders.size, RowDecoders.LIMIT, 'at most LIMIT')
  const oldest = decoders.of('select 4', int, types)
  t.equal(decoders.of('select 4', int, types), oldest)
  t.equal(decoders.size, RowDecoders.LIMIT)
})

t.test('a type parser source that throws fails its statement when the server is done, once, without throwing into pg', async (t) => {
  const answers: Array<[Error | null, unknown]> = []
  const broken = { getTypeParser (): never { throw new Error('no parser') } }
  const query = new RowsQuery('select 1 as a', [], new RowDecoders(), broken, (value) => value, (error, rows) => { answers.push([error, rows]) })
  t.doesNotThrow(() => { query.handleRowDescription({ fields: [{ name: 'a', dataTypeID: 23 }] }) })
  t.doesNotThrow(() => { query.handleDataRow({ fields: ['1'] }) })
  t.same(answers, [], 'no answer before the server is done')
  query.handleReadyForQuery()
  t.equal(answers.length, 1)
  t.match(answers[0][0], { message: 'no parser' })
})

t.test('a process that refuses to make code from text decodes rows by copying an empty row', async (t) => {
  const module = new URL('../../../lib/database/rows-query.ts', import.meta.url).href
  const script = `
    const { RowDecoders } = await import(${JSON.stringify(module)})
    let refused = false
    try { new Function('return 1') } catch { refused = true }
    const types = { getTypeParser: (oid) => oid === 23 ? (value) => Number(value) : (value) => value }
    const decoder = new RowDecoders().of('select', [{ name: 'a', dataTypeID: 23, format: 'text' }, { name: 'b"', dataTypeID: 25, format: 'text' }], types)
    console.log(JSON.stringify({ refused, rows: [decoder.decode(['1', null]), decoder.decode([null, 'x'])] }))
  `
  const child = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
  t.equal(child.status, 0, child.stderr)
  t.same(JSON.parse(child.stdout), { refused: true, rows: [{ a: 1, 'b"': null }, { a: null, 'b"': 'x' }] })
})

t.test('pg\'s own conversion of parameters is found', async (t) => {
  const prepareValue = loadPrepareValue()
  t.type(prepareValue, 'function')
  t.equal(prepareValue!([1, null, 'a"b']), '{"1",NULL,"a\\"b"}')
})

t.test('pg\'s prepareValue is found where pg\'s exports hide lib/ (8.15 to 8.16.2); without one, a warning, once', async (t) => {
  const real = createRequire(import.meta.url)
  // pg's utils by path (as every pg 8 has them, whatever its exports allow)
  const expected = (real(join(dirname(real.resolve('pg')), 'utils.js')) as { prepareValue: unknown }).prepareValue
  t.type(expected, 'function')
  t.equal(loadPrepareValue(), expected, 'as pg/lib/utils, or beside pg')
  const hidden = Object.assign((id: string): unknown => {
    if (id === 'pg/lib/utils') throw Object.assign(new Error(`Package subpath './lib/utils' is not defined by "exports"`), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
    return real(id)
  }, { resolve: real.resolve, cache: real.cache, main: real.main, extensions: real.extensions }) as unknown as NodeJS.Require
  t.equal(loadPrepareValue(hidden), expected, 'beside the file pg resolves to')
  const missing = Object.assign(() => { throw new Error('Cannot find module') }, { resolve: () => { throw new Error('Cannot find module') } }) as unknown as NodeJS.Require
  t.equal(loadPrepareValue(missing), undefined, 'no pg internals: none')
  const warnings: Error[] = []
  const listen = (warning: Error): void => { warnings.push(warning) }
  process.on('warning', listen)
  t.teardown(() => { process.off('warning', listen) })
  t.equal(prepareValueOrWarn(() => undefined), undefined)
  t.equal(prepareValueOrWarn(() => undefined), undefined)
  await new Promise((resolve) => setImmediate(resolve))
  t.match(warnings, [{ code: 'FJA_PG_FAST_PATH_UNAVAILABLE', message: /pg's own Query/ }], 'one warning for the process')
  t.equal(prepareValueOrWarn(), expected, 'with pg\'s internals: no warning')
})
