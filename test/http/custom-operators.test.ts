// Custom operators on an application of their own. One named like a built-in replaces it in every form: a
// case-insensitive `eq` is what `filter[word]=SEA` means too. A client value that makes a custom operator fail in the
// database (an invalid regular expression, a number out of its type's range, text that is no date) is the client's
// mistake: a 400 naming the filter parameter, never a 500.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { defineOperator, defineResource, jsonApi } from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { injectJsonApi } from '../helpers/test-app.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { assertError } from '../helpers/assert-errors.js'
import { onlyOn, testEngine } from '../helpers/engine.js'

const database = await openTestDatabase(async () => {})
t.teardown(() => database.close())
const db = database.db
const engine = testEngine()
await db.schema.createTable('co_words')
  .addColumn('id', engine === 'postgres' ? 'serial' : 'integer', (col) => engine === 'postgres' ? col.primaryKey() : col.primaryKey().autoIncrement())
  .addColumn('word', 'text', (col) => col.notNull())
  .addColumn('size', 'integer')
  .execute()
await db.insertInto('co_words').values([{ word: 'sea', size: 3 }, { word: 'hill', size: 4 }, { word: 'mountain', size: 8 }]).execute()

// A regular expression goes to PostgreSQL as it is: only PostgreSQL knows whether it compiles (MariaDB's is `regexp`;
// SQLite has none).
const regex = defineOperator({
  name: 'regex',
  schema: Type.String(),
  apply: ({ column, value, engine }) => engine === 'mysql' ? sql<boolean>`${column} regexp ${value}` : sql<boolean>`${column} ~ ${value}`,
})
// The value is cast in SQL: only PostgreSQL knows whether it fits (MariaDB and SQLite cast without refusing).
const smallerThan = defineOperator({
  name: 'smaller_than',
  schema: Type.String(),
  apply: ({ column, value, engine }) => engine === 'postgres'
    ? sql<boolean>`${column} < ${value}::smallint`
    : engine === 'mysql' ? sql<boolean>`${column} < cast(${value} as signed)` : sql<boolean>`${column} < cast(${value} as integer)`,
})
const since = defineOperator({ name: 'since_day', schema: Type.String(), apply: ({ value }) => sql<boolean>`now() > ${value}::date` })
// Equality without regard to letter case: replaces the built-in `eq` of `word`.
const sameWord = defineOperator({ name: 'eq', schema: Type.String(), apply: ({ column, value }) => sql<boolean>`lower(${column}) = lower(${value})` })
// An `eq` of its own on an integer: the simple form's value is converted to the operator's schema.
const sizeEq = defineOperator({
  name: 'eq',
  schema: Type.Integer(),
  apply: ({ column, value, engine }) => engine === 'postgres' ? sql<boolean>`${column} = ${value}::integer * 1` : sql<boolean>`${column} = ${value} * 1`,
})

const word = defineResource({
  type: 'word',
  path: '/words',
  table: 'co_words',
  attributes: {
    word: { schema: Type.String(), operators: [regex, since, sameWord] },
    size: { schema: Type.Integer(), operators: [smallerThan, sizeEq] },
  },
})

const app = await documentedFastify()
await app.register(jsonApi, { db, resources: [word] })
await app.ready()
t.teardown(() => app.close())

function filtered (filter: unknown): string {
  return `/words?filter=${encodeURIComponent(JSON.stringify(filter))}&sort=id`
}

t.test('a custom operator works with a good value: a regular expression', {
  skip: onlyOn(['postgres', 'mysql'], 'the regex operator needs a regular expression operator, which SQLite does not have'),
}, async (t) => {
  const matched = await injectJsonApi(app, 'GET', filtered([{ name: 'word', op: 'regex', val: '^(s|h)' }]))
  t.equal(matched.status, 200)
  t.same(matched.body.data.map((item: { attributes: { word: string } }) => item.attributes.word), ['sea', 'hill'])
})

t.test('a custom operator works with a good value: a cast number', async (t) => {
  const smaller = await injectJsonApi(app, 'GET', filtered([{ name: 'size', op: 'smaller_than', val: '5' }]))
  t.same(smaller.body.data.map((item: { id: string }) => item.id), ['1', '2'])
})

t.test('an operator named like a built-in replaces it in the JSON filter and in the simple form alike', async (t) => {
  const words = async (url: string): Promise<string[]> => {
    const response = await injectJsonApi(app, 'GET', url)
    t.equal(response.status, 200, url)
    return response.body.data.map((item: { attributes: { word: string } }) => item.attributes.word)
  }
  t.same(await words(filtered([{ name: 'word', op: 'eq', val: 'SEA' }])), ['sea'], 'the JSON filter uses the custom eq')
  t.same(await words('/words?filter[word]=SEA'), ['sea'], 'the simple form is the same eq')
  t.same(await words('/words?filter[word]=Hill&filter[size]=4'), ['hill'])
  t.same(await words('/words?filter[size]=8'), ['mountain'], 'the value is converted to the operator\'s schema')
  const refused = await injectJsonApi(app, 'GET', '/words?filter[size]=eight')
  assertError(t, refused, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter[size]', detail: /"eight" is not a valid value for 'eq' on 'size'/ })
})

t.test('cannot filter with a value the database refuses: 400 naming the filter', {
  skip: onlyOn('postgres', 'the operators\' SQL is PostgreSQL\'s (~, ::smallint, ::date), which PostgreSQL refuses for these values'),
}, async (t) => {
  const cases: Array<[string, unknown]> = [
    ['an invalid regular expression', [{ name: 'word', op: 'regex', val: '(unclosed' }]],
    ['a number out of the cast type\'s range', [{ name: 'size', op: 'smaller_than', val: '99999999' }]],
    ['text that is not a number', [{ name: 'size', op: 'smaller_than', val: 'five' }]],
    ['text that is not a date', [{ name: 'word', op: 'since_day', val: '2024-02-30' }]],
    ['inside or/not', { or: [{ not: { name: 'word', op: 'regex', val: '[z-a]' } }] }],
  ]
  for (const [what, filter] of cases) {
    const response = await injectJsonApi(app, 'GET', filtered(filter))
    assertError(t, response, { status: 400, code: 'FJA_INVALID_QUERY_PARAMETER', parameter: 'filter' })
    t.comment(what)
  }
  const counted = await injectJsonApi(app, 'GET', '/words')
  t.equal(counted.body.meta.count, 3, 'the service answers as before')
})
