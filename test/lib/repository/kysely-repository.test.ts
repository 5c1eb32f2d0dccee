import t from 'tap'
import { Type } from '@sinclair/typebox'
import { sql, type Kysely } from 'kysely'
import { defineOperator, defineResource, KyselyRepository } from '../../../lib/index.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { readFilter } from '../../../lib/request/read-filter.js'
import { sortNode } from '../../../lib/query/query-tree.js'
import { andNode, compareNode, constantNode, customNode, existsNode, fieldCompareNode, linkedToNode, notNode, orNode, referencesNode, type FilterNode } from '../../../lib/schema/filter-nodes.js'
import { AliasCounter, FilterCompiler } from '../../../lib/repository/kysely/compile-filter.js'
import { POSTGRES } from '../../../lib/repository/kysely/postgres-engine.js'
import type { QueryLayer } from '../../../lib/contracts/repository.js'
import type { ResolvedResource } from '../../../lib/schema/resolved.js'
import { openTestDatabase } from '../../helpers/database.js'
import { testEngine } from '../../helpers/engine.js'
import { storedDateTime } from '../../../lib/repository/kysely/text-stored-values.js'

const database = await openTestDatabase()
t.teardown(database.close)
const { db, counter } = database

// The same table on every engine: a date-time in UTC where the engine has no time zones (stored as the repository
// stores one: see text-stored-values.ts), booleans as integers where it has none.
const engine = testEngine()
const serial = engine === 'postgres' ? sql`serial primary key` : engine === 'mysql' ? sql`integer primary key auto_increment` : sql`integer primary key autoincrement`
const moment = engine === 'postgres' ? sql`timestamptz` : engine === 'mysql' ? sql`datetime(6)` : sql`text`
await sql`create table samples (id ${serial}, ratio double precision, flag boolean, moment ${moment}, label text)`.execute(db)
await sql`create table sample_parts (id ${serial}, sample_id integer references samples (id), label text not null)`.execute(db)
/** The statements' text is asserted as PostgreSQL's: the other engines write their own (their rows are asserted alike). */
const postgresText = engine === 'postgres'
/** A boolean as the fixture writes it: SQLite's driver binds no booleans. */
const bool = (value: boolean): unknown => engine === 'sqlite' ? Number(value) : value
const stored = (value: string): unknown => engine === 'postgres' ? value : storedDateTime(engine, value)
await db.insertInto('samples').values([
  { ratio: 0.5, flag: bool(true), moment: stored('2020-01-01T10:00:00Z'), label: 'a' },
  { ratio: 1.5, flag: bool(false), moment: stored('2021-06-01T00:00:00Z'), label: 'b' },
  { ratio: null, flag: null, moment: null, label: null },
]).execute()
await db.insertInto('sample_parts').values([{ sample_id: 1, label: 'x' }, { sample_id: 1, label: 'y' }, { sample_id: 2, label: 'x' }]).execute()

const graph = resolveResources([
  defineResource({
    type: 'sample',
    table: 'samples',
    attributes: {
      ratio: { schema: Type.Union([Type.Number(), Type.Null()]) },
      flag: { schema: Type.Union([Type.Boolean(), Type.Null()]) },
      moment: { schema: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) },
      label: { schema: Type.Union([Type.String(), Type.Null()]) },
    },
    relationships: { parts: { kind: 'to-many', type: 'part', inverse: 'sample' } },
  }),
  defineResource({
    type: 'part',
    table: 'sample_parts',
    attributes: { label: { schema: Type.String() } },
    relationships: { sample: { kind: 'to-one', type: 'sample', foreignKey: 'sample_id' } },
  }),
])
const sample = graph.getResource('sample')
const repository = new KyselyRepository(db)

/** A layer reading ids of `resource`, in id order, with the given parts. */
function layer (resource: ResolvedResource, parts: Partial<QueryLayer>): QueryLayer {
  return { resource, where: undefined, sort: [], page: { offset: 0, limit: undefined }, columns: [], include: [], ...parts }
}

function filter (value: unknown): FilterNode | undefined {
  return readFilter({ filter: JSON.stringify(value) }, sample, graph, { maxDepth: 8, maxNodes: 200, maxTextNodes: 5 })
}

async function ids (value: unknown): Promise<number[]> {
  const rows = await repository.findMany(layer(sample, { where: filter(value) }))
  return rows.map((row) => row.id as number)
}

t.test('operators on number, boolean and date-time columns', async (t) => {
  const cases: Array<[unknown, number[]]> = [
    [{ name: 'ratio', op: 'gt', val: 1 }, [2]],
    [{ name: 'ratio', op: 'between', val: [0, 1] }, [1]],
    [{ name: 'ratio', op: 'in_', val: [0.5, 1.5] }, [1, 2]],
    [{ name: 'ratio', op: 'is_', val: null }, [3]],
    [{ name: 'flag', op: 'eq', val: true }, [1]],
    [{ name: 'flag', op: 'ne', val: true }, [2]],
    [{ name: 'flag', op: 'in_', val: [false] }, [2]],
    [{ name: 'flag', op: 'eq', val: null }, [3]],
    [{ name: 'moment', op: 'lt', val: '2021-01-01T00:00:00Z' }, [1]],
    [{ name: 'moment', op: 'ge', val: '2021-06-01T02:00:00+02:00' }, [2]],
    [{ name: 'moment', op: 'between', val: ['2019-01-01T00:00:00Z', '2022-01-01T00:00:00Z'] }, [1, 2]],
    [{ name: 'label', op: 'notin_', val: ['a'] }, [2]],
  ]
  for (const [condition, expected] of cases) t.same(await ids([condition]), expected, JSON.stringify(condition))
})

t.test('the compiled SQL: aliases, EXISTS, bound values only', async (t) => {
  counter.reset()
  const found = await ids([{ or: [{ name: 'parts', op: 'any', val: { name: 'label', op: 'eq', val: 'y' } }, { not: { name: 'parts', op: 'any' } }] }, { name: 'label', op: 'startswith', val: "a'%" }])
  t.same(found, [])
  if (postgresText) t.equal(counter.statements[0],
    'select "r0"."id" from "samples" as "r0" where ((exists (select 1 as "one" from "sample_parts" as "r1" where "r1"."sample_id" = "r0"."id" and "r1"."label" = $1) or not exists (select 1 as "one" from "sample_parts" as "r2" where "r2"."sample_id" = "r0"."id")) and "r0"."label" like $2) order by "r0"."id" asc')
  t.same(await ids([{ or: [{ name: 'parts', op: 'any', val: { name: 'label', op: 'eq', val: 'y' } }, { not: { name: 'parts', op: 'any' } }] }]), [1, 3])
})

t.test("related rows paged per owner: each owner's first rows by id and its total, in one statement", async (t) => {
  const part = graph.getResource('part')
  const parts = sample.relationships.get('parts')!
  const label = part.attributes.get('label')!
  counter.reset()
  const firstOfEach = await repository.findRelated(sample, parts, ['1', '2', '3'], layer(part, { columns: ['label'], page: { offset: 0, limit: 1 } }))
  t.same(firstOfEach.map(({ ownerId, row, total }) => [ownerId, row.id, total]), [['1', 1, 2], ['2', 3, 1]], 'one row of each owner, with its total; none of an owner without rows')
  t.equal(counter.count, 1, 'one statement')
  if (postgresText) {
    t.equal(counter.statements[0], 'select "p"."id", "p"."label", "p"."__owner", "p"."__total" from (select "id", "label", "sample_id" as "__owner", ' +
      'row_number() over(partition by "sample_id" order by "id") as "__rank", count(*) over(partition by "sample_id") as "__total" ' +
      'from "sample_parts" where "sample_id" = any($1)) as "p" where "p"."__rank" <= $2 order by "p"."id"')
  }
  const scoped = await repository.findRelated(sample, parts, ['1', '2'], layer(part, { columns: ['label'], where: compareNode(label, 'ne', 'x'), page: { offset: 0, limit: 5 } }))
  t.same(scoped.map(({ ownerId, row, total }) => [ownerId, row.id, total]), [['1', 2, 1]], 'the total counts only the rows of the layer')
  const second = await repository.findRelated(sample, parts, ['1'], layer(part, { page: { offset: 1, limit: 5 } }))
  t.same(second.map(({ row, total }) => [row.id, total]), [[2, 2]], 'an offset skips the first rows of each owner')
  const unpaged = await repository.findRelated(sample, parts, ['1'], layer(part, { page: undefined }))
  t.same(unpaged.map(({ row, total }) => [row.id, total]), [[1, undefined], [2, undefined]], 'without a page: every row, no total')

  // An index in owner, then id order, read from the catalog at ready: on PostgreSQL each owner's page is then read by
  // LATERAL subqueries that stop after the page; the same rows and totals.
  await sql`create index sample_parts_sample_id_id_index on sample_parts (sample_id, id)`.execute(db)
  const ordered = new KyselyRepository(db)
  await ordered.readForeignKeys(graph)
  counter.reset()
  const again = await ordered.findRelated(sample, parts, ['1', '2', '3'], layer(part, { columns: ['label'], page: { offset: 0, limit: 1 } }))
  t.same(again.map(({ ownerId, row, total }) => [ownerId, row.id, total]), [['1', 1, 2], ['2', 3, 1]], 'the same rows and totals')
  if (postgresText) {
    t.equal(counter.statements.at(-1), 'select "p"."id", "p"."label", "o"."__owner", "t"."__total" from (select "o"."id" as "__owner" from "samples" as "o" where "o"."id" = any($1)) as "o" ' +
      'cross join lateral (select count(*) as "__total" from "sample_parts" as "r0" where "r0"."sample_id" = "o"."__owner") as "t" ' +
      'cross join lateral (select "r0"."id", "r0"."label" from "sample_parts" as "r0" where "r0"."sample_id" = "o"."__owner" order by "r0"."id" limit $2) as "p" order by "p"."id"')
  } else {
    t.match(counter.statements.at(-1), /row_number\(\) over\(partition by/, 'without LATERAL: ranked by window functions whatever the indexes')
  }
  const scopedAgain = await ordered.findRelated(sample, parts, ['1', '2'], layer(part, { columns: ['label'], where: compareNode(label, 'ne', 'x'), page: { offset: 0, limit: 5 } }))
  t.same(scopedAgain.map(({ ownerId, row, total }) => [ownerId, row.id, total]), [['1', 2, 1]], 'the total counts only the rows of the layer')
  const secondAgain = await ordered.findRelated(sample, parts, ['1'], layer(part, { page: { offset: 1, limit: 5 } }))
  t.same(secondAgain.map(({ row, total }) => [row.id, total]), [[2, 2]], 'an offset skips the first rows of each owner')
})

t.test('a statement that names no other table names its own without an alias, its columns unqualified', async (t) => {
  const part = graph.getResource('part')
  const label = sample.attributes.get('label')
  const ratio = sample.attributes.get('ratio')
  const owner = part.relationships.get('sample')
  const parts = sample.relationships.get('parts')
  if (label === undefined || ratio === undefined || owner === undefined || parts === undefined) throw new Error('declarations')
  const where = andNode([compareNode(label, 'ne', 'z'), orNode([compareNode(ratio, 'gt', 1), notNode(compareNode(ratio, 'is_', null))]), fieldCompareNode(ratio, 'eq', ratio)])
  counter.reset()
  const rows = await repository.findMany(layer(sample, { columns: ['label'], where, sort: [sortNode([], ratio, true)], page: { offset: 1, limit: 5 } }))
  t.same(rows, [{ id: 1, label: 'a' }], 'the same rows')
  if (postgresText) t.equal(counter.statements[0], 'select "id", "label" from "samples" where ("label" <> $1 and ("ratio" > $2 or not "ratio" is null) and "ratio" = "ratio") order by "ratio" desc, "id" asc limit $3 offset $4')
  t.equal(await repository.count(layer(sample, { where })), 2)
  if (postgresText) t.equal(counter.statements[1], 'select count(*) as "count" from "samples" where ("label" <> $1 and ("ratio" > $2 or not "ratio" is null) and "ratio" = "ratio")')
  t.same((await repository.findMany(layer(part, { where: referencesNode(owner, sample, ['2']) }))).map((row) => row.id), [3], 'a foreign key compared in the row')
  if (postgresText) t.equal(counter.statements[2], 'select "id" from "sample_parts" where "sample_id" = $1 order by "id" asc')
  t.same((await repository.findMany(layer(part, { where: linkedToNode(sample, parts, '1') }))).map((row) => row.id), [1, 2], 'linked through an inverse foreign key')
  if (postgresText) t.equal(counter.statements[3], 'select "id" from "sample_parts" where "sample_id" = $1 order by "id" asc')
  const related = await repository.findRelated(sample, parts, ['1', '2'], layer(part, { columns: ['label'], where: compareNode(part.attributes.get('label')!, 'ne', 'y'), page: undefined }))
  t.same(related.map(({ ownerId, row }) => [ownerId, row.id]), [['1', 1], ['2', 3]], 'related rows of an inverse foreign key')
  if (postgresText) t.equal(counter.statements[4], 'select "id", "label", "sample_id" as "__owner" from "sample_parts" where "sample_id" = any($1) and "label" <> $2 order by "id"')
  // Another table in the statement: every column qualified by its alias.
  await repository.findRelated(part, owner, ['1'], layer(sample, { columns: ['label'], page: undefined }))
  if (postgresText) t.match(counter.statements[5], /^select "r0"\."id", "r0"\."label", "o"\."id" as "__owner" from "sample_parts" as "o" inner join "samples" as "r0"/, 'through a foreign key: joined, aliased')
  await repository.findMany(layer(sample, { where: existsNode(parts, part, undefined) }))
  if (postgresText) t.match(counter.statements[6], /^select "r0"\."id" from "samples" as "r0" where exists \(select 1 as "one" from "sample_parts" as "r1" where "r1"\."sample_id" = "r0"\."id"\)/, 'a subquery: aliased')
  // An application's operator may write a subquery of its own: its column stays qualified.
  const sameLabel = defineOperator({ name: 'same_label', schema: Type.String(), apply: ({ column, value, eb }) => eb(column, '=', value) })
  t.same((await repository.findMany(layer(sample, { where: customNode(label, sameLabel, 'b') }))).map((row) => row.id), [2])
  if (postgresText) t.equal(counter.statements[7], 'select "r0"."id" from "samples" as "r0" where "r0"."label" = $1 order by "r0"."id" asc')
  await repository.estimateCount(layer(sample, { where: compareNode(label, 'eq', 'a') }))
  if (postgresText) t.equal(counter.statements[8], 'explain (format json) select 1 as "one" from "samples" where "label" = $1')
  t.throws(() => new FilterCompiler(POSTGRES).filter(existsNode(parts, part, undefined), sample, '', new AliasCounter()), /needs its table aliased/, 'a subquery is never compiled against an unaliased table')
})

t.test('count runs the same filter; a to-many filter never duplicates rows', async (t) => {
  t.equal(await repository.count(layer(sample, { where: filter([{ name: 'parts', op: 'any', val: { name: 'label', op: 'ne', val: 'none' } }]) })), 2)
  t.same(await ids([{ name: 'parts.label', op: 'in_', val: ['x', 'y'] }]), [1, 2])
})

t.test('sort by a to-one path is a correlated subquery', async (t) => {
  const part = graph.getResource('part')
  const relationship = part.relationships.get('sample')
  const ratio = sample.attributes.get('ratio')
  if (relationship === undefined || ratio === undefined) throw new Error('declarations')
  counter.reset()
  const rows = await repository.findMany(layer(part, { sort: [sortNode([{ relationship, target: sample }], ratio, true)] }))
  t.same(rows.map((row) => row.id), [3, 1, 2])
  if (postgresText) t.match(counter.statements[0], /order by \(select "s1"\."ratio" from "samples" as "s1" where "s1"\."id" = "r0"\."sample_id" limit 1\) desc, "r0"\."id" asc/)
})

t.test('references: linkage compared without reading the related table (foreign key), or through its key (inverse)', async (t) => {
  const part = graph.getResource('part')
  const owner = part.relationships.get('sample')
  const parts = sample.relationships.get('parts')
  if (owner === undefined || parts === undefined) throw new Error('declarations')
  const idsOf = async (resource: ResolvedResource, where: FilterNode) => (await repository.findMany(layer(resource, { where }))).map((row) => row.id)
  counter.reset()
  t.same(await idsOf(part, referencesNode(owner, sample, ['1'])), [1, 2])
  if (postgresText) t.match(counter.statements[0], /from "sample_parts" where "sample_id" = \$1 order/)
  t.same(await idsOf(part, referencesNode(owner, sample, ['1', '2'])), [1, 2, 3])
  t.same(await idsOf(part, referencesNode(owner, sample, [])), [])
  t.same(await idsOf(sample, referencesNode(parts, part, ['3'])), [2])
  t.same(await idsOf(sample, referencesNode(parts, part, null)), [3], 'null: linked to none')
  t.same(await idsOf(sample, constantNode(false)), [])
  t.same(await idsOf(sample, constantNode(true)), [1, 2, 3])
})

t.test('writes address only rows within the target\'s scope; link changes leave rows outside it alone', async (t) => {
  const part = graph.getResource('part')
  const parts = sample.relationships.get('parts')
  const label = part.attributes.get('label')
  if (parts === undefined || label === undefined) throw new Error('declarations')
  const onlyX = compareNode(label, 'eq', 'x')
  const partsOf = async (on: Kysely<any> = db) => (await sql<{ id: number; sample_id: number | null }>`select id, sample_id from sample_parts order by id`.execute(on)).rows
  await repository.transaction(async (trx) => {
    const inside = trx.kysely as Kysely<any>
    t.equal(await trx.update({ resource: part, id: '2', scope: onlyX }, { label: 'z' }, []), undefined, 'a row outside the scope is not updated')
    t.equal(await trx.delete({ resource: part, id: '2', scope: onlyX }), false, 'nor deleted')
    await trx.replaceLinks({ resource: sample, id: '1', scope: undefined }, parts, { resource: part, ids: [], scope: onlyX })
    t.same(await partsOf(inside), [{ id: 1, sample_id: null }, { id: 2, sample_id: 1 }, { id: 3, sample_id: 2 }], 'only the linked part within the scope is unlinked')
    await trx.addLinks({ resource: sample, id: '1', scope: undefined }, parts, { resource: part, ids: ['3'], scope: onlyX })
    t.same((await partsOf(inside))[2], { id: 3, sample_id: 1 }, 'a part within the scope is linked')
    throw new Error('roll back')
  }).catch((error: Error) => { if (error.message !== 'roll back') throw error })
  t.same(await partsOf(), [{ id: 1, sample_id: 1 }, { id: 2, sample_id: 1 }, { id: 3, sample_id: 2 }])
  counter.reset()
  await repository.update({ resource: part, id: '1', scope: onlyX }, { label: 'x' }, [])
  if (postgresText) t.match(counter.statements[0], /^update "sample_parts" as "r0" set "label" = \$1 where "r0"\."id" = \$2 and "r0"\."label" = \$3 returning/)
})
