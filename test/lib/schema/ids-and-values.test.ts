import t from 'tap'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { isValidId } from '../../../lib/schema/resource-id.js'
import { readValue, writeValue } from '../../../lib/schema/value-codec.js'
import { registerFormats } from '../../../lib/schema/compiled-input.js'
import type { ResourceDeclaration } from '../../../lib/schema/declaration.js'

const graph = resolveResources([
  { type: 'int' },
  { type: 'big', id: { kind: 'bigint' } },
  { type: 'uid', id: { kind: 'uuid' } },
  { type: 'slug', id: { kind: 'text', pattern: '[a-z0-9]+(?:-[a-z0-9]+)*', maxLength: 5 } },
  { type: 'any', id: { kind: 'text', pattern: /.+/u } },
  {
    type: 'values',
    attributes: {
      small: { schema: Type.Integer() },
      rate: { schema: Type.Union([Type.Number(), Type.Null()]) },
      count: { schema: Type.String({ format: 'int64' }) },
      amount: { schema: Type.String({ format: 'decimal' }) },
    },
  },
] as readonly ResourceDeclaration[])

t.test('which ids can exist, per kind', async (t) => {
  const cases: Array<[string, string, boolean]> = [
    ['int', '0', true], ['int', '2147483647', true], ['int', '2147483648', false], ['int', '01', false], ['int', '-1', false],
    ['big', '0', true], ['big', '2147483648', true], ['big', '9007199254740993', true], ['big', '9223372036854775807', true],
    ['big', '9223372036854775808', false], ['big', '10000000000000000000', false], ['big', '01', false], ['big', '-1', false],
    ['big', '1e3', false], ['big', '', false], ['big', ' 1', false],
    ['uid', '0b7f4a4e-7f6c-4b8e-9d3a-2f1e0c9b8a7d', true], ['uid', '0b7f4a4e', false],
    ['slug', 'ab-cd', true], ['slug', 'abc-de', false], ['slug', 'Ab', false], ['slug', 'ab\ncd', false], ['slug', '', false],
    ['any', 'x/y z', true], ['any', 'x\u0000y', false], ['any', '', false],
  ]
  for (const [type, id, valid] of cases) {
    t.equal(isValidId(graph.getResource(type), id), valid, `${type} ${JSON.stringify(id)}`)
  }
})

t.test('the int64 and decimal formats', async (t) => {
  registerFormats()
  const int64 = Type.String({ format: 'int64' })
  const decimal = Type.String({ format: 'decimal' })
  for (const value of ['0', '-9223372036854775808', '9223372036854775807', '42']) t.ok(Value.Check(int64, value), value)
  for (const value of ['9223372036854775808', '-9223372036854775809', '01', '1.0', '1e3', '+1', '']) t.notOk(Value.Check(int64, value), value)
  for (const value of ['0', '-0.5', '12345678901234.123456', '100']) t.ok(Value.Check(decimal, value), value)
  for (const value of ['.5', '1.', '1e3', '01.5', 'NaN', '']) t.notOk(Value.Check(decimal, value), value)
})

t.test('database values of numbers to the wire, exactly', async (t) => {
  const values = graph.getResource('values')
  const attribute = (name: string) => values.attributes.get(name) as NonNullable<ReturnType<typeof values.attributes.get>>
  t.equal(readValue(attribute('small'), '42'), 42, 'an int8 string declared Type.Integer() within the safe range')
  t.equal(readValue(attribute('small'), 7), 7)
  t.equal(readValue(attribute('small'), '9007199254740991'), 9007199254740991)
  t.throws(() => readValue(attribute('small'), '9007199254740993'), /beyond Number\.MAX_SAFE_INTEGER/)
  t.throws(() => readValue(attribute('small'), 9007199254740993n), /declare it Type\.String\(\{ format: 'int64' \}\)/)
  t.equal(readValue(attribute('rate'), '1.500000'), 1.5, 'a numeric declared Type.Number() is a number')
  t.equal(readValue(attribute('rate'), 0.25), 0.25)
  t.equal(readValue(attribute('rate'), null), null)
  t.equal(readValue(attribute('count'), '9007199254740993'), '9007199254740993', 'an int64 stays a string')
  t.equal(readValue(attribute('count'), 9007199254740993n), '9007199254740993', 'a BigInt from the driver too')
  t.equal(readValue(attribute('amount'), '12345678901234.123456'), '12345678901234.123456')
  t.equal(writeValue(attribute('amount'), '1.5'), '1.5', 'written as the string, cast by PostgreSQL')
  t.equal(writeValue(attribute('rate'), 1.5), 1.5)
})
