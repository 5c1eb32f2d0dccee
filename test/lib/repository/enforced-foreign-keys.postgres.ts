import t from 'tap'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { defineResource, KyselyRepository, StorageError } from '../../../lib/index.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { constantNode } from '../../../lib/schema/filter-nodes.js'
import type { RequiredRow } from '../../../lib/contracts/repository.js'
import type { ResolvedResource } from '../../../lib/schema/resolved.js'
import { openTestDatabase } from '../../helpers/database.js'

const database = await openTestDatabase()
t.teardown(database.close)
const { db, counter } = database

await sql`create table fk_targets (id serial primary key)`.execute(db)
await sql`create table fk_hidden (id serial primary key)`.execute(db)
await sql`alter table fk_hidden enable row level security`.execute(db)
await sql`create table fk_sources (
  id serial primary key,
  label text,
  target_id integer constraint fk_sources_target references fk_targets,
  loose_id integer,
  late_id integer constraint fk_sources_late references fk_targets deferrable initially immediate,
  hidden_id integer constraint fk_sources_hidden references fk_hidden,
  off_id integer constraint fk_sources_off references fk_targets,
  twin_id integer constraint fk_sources_twin_a references fk_targets constraint fk_sources_twin_b references fk_targets
)`.execute(db)
// The check triggers of one constraint disabled: the constraint no longer refuses anything.
const { rows: triggers } = await sql<{ name: string }>`
  select g.tgname as "name" from pg_trigger g join pg_constraint k on k.oid = g.tgconstraint
  where k.conname = 'fk_sources_off' and g.tgrelid = 'fk_sources'::regclass`.execute(db)
for (const trigger of triggers) await sql`alter table fk_sources disable trigger ${sql.id(trigger.name)}`.execute(db)
await sql`insert into fk_targets default values`.execute(db)
await sql`insert into fk_targets default values`.execute(db)
await sql`insert into fk_hidden default values`.execute(db)

const link = (foreignKey: string, type = 'target') => ({ kind: 'to-one' as const, type, foreignKey })
const graph = resolveResources([
  defineResource({
    type: 'source',
    table: 'fk_sources',
    attributes: { label: { schema: Type.Union([Type.String(), Type.Null()]) } },
    relationships: {
      target: link('target_id'),
      loose: link('loose_id'),
      late: link('late_id'),
      hidden: link('hidden_id', 'hidden'),
      off: link('off_id'),
      twin: link('twin_id'),
    },
  }),
  defineResource({ type: 'target', table: 'fk_targets', attributes: {} }),
  defineResource({ type: 'hidden', table: 'fk_hidden', attributes: {} }),
])
const source = graph.getResource('source')
const target = graph.getResource('target')
const hidden = graph.getResource('hidden')

function required (resource: ResolvedResource, id: string, scoped = false): RequiredRow {
  return { resource, id, scope: scoped ? constantNode(true) : undefined }
}

async function labelled (label: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from fk_sources where label = ${label}`.execute(db)
  return rows[0].n
}

const repository = new KyselyRepository(db)
const foreignKeys = await repository.readForeignKeys(graph)

t.test('reads only the constraints that refuse a missing target on every statement', async (t) => {
  t.equal(triggers.length, 2, 'the disabled checks: of inserts and of updates')
  t.equal(foreignKeys.size, 2, 'target_id, and twin_id (twice)')
  t.equal(foreignKeys.constraintOf(source, 'target_id', target), 'fk_sources_target')
  t.match(foreignKeys.constraintOf(source, 'twin_id', target), /^fk_sources_twin_[ab]$/)
  t.equal(foreignKeys.constraintOf(source, 'loose_id', target), undefined, 'no constraint')
  t.equal(foreignKeys.constraintOf(source, 'late_id', target), undefined, 'deferrable')
  t.equal(foreignKeys.constraintOf(source, 'hidden_id', hidden), undefined, 'the target table has row-level security')
  t.equal(foreignKeys.constraintOf(source, 'off_id', target), undefined, 'its check trigger is disabled')
  t.equal(foreignKeys.constraintOf(source, 'target_id', hidden), undefined, 'another target')
})

t.test('the constraints that check a new row: each required row\'s, all of them, or undefined when one is unchecked', async (t) => {
  const row = { label: 'x', target_id: '1', twin_id: '2', loose_id: '1' }
  const names = Object.keys(row)
  t.same([...foreignKeys.enforcing(source, row, names, [required(target, '1')]) ?? []], ['fk_sources_target'])
  t.same([...foreignKeys.enforcing(source, row, names, [required(target, '2')]) ?? []].sort(), ['fk_sources_twin_a', 'fk_sources_twin_b'], 'both constraints of one column')
  t.same([...foreignKeys.enforcing(source, row, names, [required(target, '1'), required(target, '2')]) ?? []].sort(),
    ['fk_sources_target', 'fk_sources_twin_a', 'fk_sources_twin_b'], 'two required rows: the constraints of both')
  t.same([...foreignKeys.enforcing(source, row, names, [required(target, '2')]) ?? []].sort(), ['fk_sources_twin_a', 'fk_sources_twin_b'],
    'answering for two rows left one row\'s constraints as they were')
  t.same([...foreignKeys.enforcing(source, row, names, []) ?? ['not empty']], [], 'no required row: no constraint')
  t.equal(foreignKeys.enforcing(source, row, names, [required(target, '1', true)]), undefined, 'a target with a scope')
  t.equal(foreignKeys.enforcing(source, { loose_id: '3' }, ['loose_id'], [required(target, '3')]), undefined, 'a column no constraint checks')
  t.equal(foreignKeys.enforcing(source, row, names, [required(target, '1'), required(target, '3')]), undefined, 'one of two rows unchecked')
  t.equal(foreignKeys.enforcing(target, row, names, [required(target, '1')]), undefined, 'a type with no constraints')
})

t.test('a create linked through an enforced foreign key is a plain INSERT', async (t) => {
  counter.reset()
  const row = await repository.insert(source, { label: 'plain', target_id: '1' }, undefined, ['label'], [required(target, '1')])
  t.match(row, { label: 'plain' })
  t.equal(counter.count, 1)
  t.match(counter.statements[0], /^insert into "fk_sources" \("label", "target_id"\) values \(\$1, \$2\) returning /)
  t.equal(await labelled('plain'), 1)
})

t.test('a create whose enforced target is missing answers no row, and writes nothing', async (t) => {
  counter.reset()
  t.equal(await repository.insert(source, { label: 'missing', target_id: '99' }, undefined, ['label'], [required(target, '99')]), undefined)
  t.equal(counter.count, 1, 'the refused INSERT')
  t.equal(await labelled('missing'), 0)
})

t.test('an update of an enforced foreign key is a plain UPDATE; a missing target answers no row and changes nothing', async (t) => {
  const { rows: [{ id }] } = await sql<{ id: number }>`insert into fk_sources (label, target_id) values ('to-update', 1) returning id`.execute(db)
  counter.reset()
  const row = await repository.update({ resource: source, id: String(id), scope: undefined }, { target_id: '2' }, ['label'], [required(target, '2')])
  t.match(row, { label: 'to-update' })
  t.equal(counter.count, 1)
  t.notMatch(counter.statements[0], /exists/)
  counter.reset()
  t.equal(await repository.update({ resource: source, id: String(id), scope: undefined }, { label: 'changed', target_id: '99' }, ['label'], [required(target, '99')]), undefined)
  t.equal(counter.count, 1, 'the refused UPDATE')
  const { rows: [after] } = await sql<{ label: string; target_id: number }>`select label, target_id from fk_sources where id = ${id}`.execute(db)
  t.same(after, { label: 'to-update', target_id: 2 })
  counter.reset()
  await repository.update({ resource: source, id: String(id), scope: undefined }, { loose_id: '1' }, ['label'], [required(target, '1')])
  t.match(counter.statements[0], /exists/, 'a link no constraint enforces: checked in the statement')
})

t.test('a create checks its targets in its own statement when the database does not enforce them all', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RequiredRow[]]> = [
    ['no constraint', { loose_id: '1' }, [required(target, '1')]],
    ['deferrable', { late_id: '1' }, [required(target, '1')]],
    ['row-level security', { hidden_id: '1' }, [required(hidden, '1')]],
    ['trigger disabled', { off_id: '1' }, [required(target, '1')]],
    ['a scope', { target_id: '1' }, [required(target, '1', true)]],
    ['one of two', { target_id: '1', loose_id: '2' }, [required(target, '1'), required(target, '2')]],
  ]
  for (const [name, values, requires] of cases) {
    counter.reset()
    const row = await repository.insert(source, { label: name, ...values }, undefined, ['label'], requires)
    t.match(row, { label: name }, name)
    t.match(counter.statements[0], /^insert into "fk_sources" .* where \(?exists/, name)
  }
  counter.reset()
  t.equal(await repository.insert(source, { label: 'gone', loose_id: '99' }, undefined, ['label'], [required(target, '99')]), undefined, 'a missing target: no row')
  t.equal(await labelled('gone'), 0)
})

t.test('a target held by two columns is enforced when one of them is', async (t) => {
  counter.reset()
  const row = await repository.insert(source, { label: 'twice', target_id: '2', loose_id: '2' }, undefined, ['label'], [required(target, '2'), required(target, '2')])
  t.match(row, { label: 'twice' })
  t.notMatch(counter.statements[0], /exists/, 'the constraint on target_id refuses a missing target 2 for both')
})

t.test('a link two constraints enforce: the refusal of either is a missing target', async (t) => {
  counter.reset()
  t.equal(await repository.insert(source, { label: 'twin', twin_id: '99' }, undefined, ['label'], [required(target, '99')]), undefined)
  t.equal(counter.count, 1)
  t.notMatch(counter.statements[0], /exists/)
  t.equal(await labelled('twin'), 0)
})

t.test('a resource of another graph, on the same tables, is not taken for one whose constraints were read', async (t) => {
  const other = resolveResources([
    defineResource({ type: 'source', table: 'fk_sources', attributes: {}, relationships: { target: link('target_id') } }),
    defineResource({ type: 'target', table: 'fk_targets', attributes: {} }),
  ])
  t.equal(foreignKeys.constraintOf(other.getResource('source'), 'target_id', other.getResource('target')), undefined)
  counter.reset()
  await repository.insert(other.getResource('source'), { target_id: '1' }, undefined, [], [required(other.getResource('target'), '1')])
  t.match(counter.statements[0], /where exists/)
})

t.test('a refusal by a constraint of the same name on another table (a trigger\'s insert) is not taken for a missing target', async (t) => {
  await sql`create table fk_log (target_id integer constraint fk_sources_target references fk_targets)`.execute(db)
  await sql`create function fk_log_insert () returns trigger language plpgsql as $$
    begin insert into fk_log (target_id) values (new.loose_id); return new; end $$`.execute(db)
  await sql`create trigger fk_sources_log after insert on fk_sources for each row when (new.label = 'logged') execute function fk_log_insert()`.execute(db)
  const error = await repository.insert(source, { label: 'logged', target_id: '1', loose_id: '99' }, undefined, ['label'], [required(target, '1')])
    .then(() => undefined, (failure: unknown) => failure)
  t.ok(error instanceof StorageError, 'the error, not "no row"')
  t.match(error, { kind: 'foreign-key', constraint: 'fk_sources_target', table: 'fk_log' })
  t.equal(await labelled('logged'), 0)
})

t.test('constraints read for a second graph are added to the first\'s', async (t) => {
  const shared = new KyselyRepository(db)
  await shared.readForeignKeys(graph)
  const other = resolveResources([
    defineResource({ type: 'source', table: 'fk_sources', attributes: {}, relationships: { target: link('target_id') } }),
    defineResource({ type: 'target', table: 'fk_targets', attributes: {} }),
  ])
  t.equal((await shared.readForeignKeys(other)).size, 1)
  for (const [owner, to] of [[source, target], [other.getResource('source'), other.getResource('target')]] as const) {
    counter.reset()
    await shared.insert(owner, { target_id: '1' }, undefined, [], [required(to, '1')])
    t.notMatch(counter.statements[0], /exists/, owner === source ? 'the first graph' : 'the second graph')
  }
})

t.test('a foreign key the create did not ask about still fails it', async (t) => {
  const error = await repository.insert(source, { label: 'other', target_id: '1', hidden_id: '99' }, undefined, ['label'], [required(target, '1')])
    .then(() => undefined, (failure: unknown) => failure)
  t.ok(error instanceof StorageError)
  t.equal((error as StorageError).kind, 'foreign-key')
  t.equal((error as StorageError).constraint, 'fk_sources_hidden')
  t.equal(await labelled('other'), 0)
})

t.test('in a transaction a create checks its targets in its own statement, and a missing one leaves the transaction usable', async (t) => {
  counter.reset()
  const label = await repository.transaction(async (inner) => {
    t.equal(await inner.insert(source, { label: 'inner-missing', target_id: '99' }, undefined, ['label'], [required(target, '99')]), undefined)
    const row = await inner.insert(source, { label: 'inner', target_id: '1' }, undefined, ['label'], [required(target, '1')])
    return row?.label
  })
  t.equal(label, 'inner')
  t.ok(counter.statements.filter((statement) => statement.startsWith('insert')).every((statement) => /where exists/.test(statement)))
  t.equal(await labelled('inner'), 1)
  t.equal(await labelled('inner-missing'), 0)
})

t.test('a repository that has not read the constraints checks its targets in its own statement', async (t) => {
  counter.reset()
  const row = await new KyselyRepository(db).insert(source, { label: 'unread', target_id: '1' }, undefined, ['label'], [required(target, '1')])
  t.match(row, { label: 'unread' })
  t.match(counter.statements[0], /where exists/)
})

t.test('a graph without relationships stored in a row reads nothing', async (t) => {
  counter.reset()
  const none = await new KyselyRepository(db).readForeignKeys(resolveResources([defineResource({ type: 'target', table: 'fk_targets', attributes: {} })]))
  t.equal(none.size, 0)
  t.equal(counter.count, 0)
})
