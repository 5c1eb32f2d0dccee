/**
 * The NUL check of inputs (PostgreSQL text cannot hold U+0000): the JSON pointer of the first NUL, found in a value
 * or in a member name at any depth, with `~` and `/` escaped as RFC 6901 writes them.
 */
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { compileInput, escapePointerToken, findNulCharacter, findUnstorable } from '../../../lib/schema/compiled-input.js'

t.test('findNulCharacter points at the first NUL, in a value or a member name, at any depth', async (t) => {
  t.equal(findNulCharacter({ name: 'plain', words: ['a', 'b'], n: 3, nothing: null }), undefined, 'none')
  t.equal(findNulCharacter('a\u0000b'), '', 'the value itself')
  t.equal(findNulCharacter(3), undefined)
  t.equal(findNulCharacter({ name: 'a\u0000b' }), '/name')
  t.equal(findNulCharacter({ ok: 'x', words: ['a', 'b\u0000'] }), '/words/1', 'an array item')
  t.equal(findNulCharacter({ deep: { 'a/b': { 'c~d': '\u0000' } } }), '/deep/a~1b/c~0d', 'escaped tokens')
  t.equal(findNulCharacter({ outer: { 'bad\u0000name': 1 } }), '/outer/bad\u0000name', 'a member name')
  t.equal(findNulCharacter({ first: '\u0000', second: '\u0000' }), '/first', 'the first one')
})

t.test('findUnstorable finds what would not be stored as sent: NUL, a lone surrogate, a number JSON read as Infinity', async (t) => {
  t.equal(findUnstorable({ name: 'plain 😀', words: ['a', 'b'], n: -5e-324, max: Number.MAX_VALUE, nothing: null, yes: true }), undefined, 'none')
  t.match(findUnstorable({ a: { b: 'x\u0000' } }), { path: '/a/b', message: /NUL character/ })
  t.match(findUnstorable({ a: ['ok', 'x\ud800y'] }), { path: '/a/1', message: /lone UTF-16 surrogate/ })
  t.match(findUnstorable({ a: '\udc00' }), { path: '/a', message: /lone UTF-16 surrogate/ }, 'a low surrogate alone')
  t.equal(findUnstorable({ a: '\ud83d\ude00' }), undefined, 'a surrogate pair is one character')
  t.match(findUnstorable({ 'k\ud800': 1 }), { path: '/k\ud800', message: /member name that contains a lone UTF-16 surrogate/ })
  t.match(findUnstorable({ 'k\u0000': 1 }), { path: '/k\u0000', message: /NUL character/ })
  t.match(findUnstorable({ a: [1, Infinity] }), { path: '/a/1', message: /beyond the range of a double/ })
  t.match(findUnstorable(-Infinity), { path: '', message: /beyond the range of a double/ }, 'the value itself')
  t.match(findUnstorable({ first: NaN, second: '\u0000' }), { path: '/first' }, 'the first one')
})

t.test('escapePointerToken writes ~ and / as RFC 6901 does', async (t) => {
  t.equal(escapePointerToken('name'), 'name')
  t.equal(escapePointerToken('a/b~c'), 'a~1b~0c')
  t.equal(escapePointerToken('~1'), '~01', '~ first, so that ~1 stays two characters')
})

t.test('a nullable schema names the limit a value failed, as the schema without null does', async (t) => {
  const input = compileInput(Type.Object({
    age: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    plain: Type.Optional(Type.Integer({ minimum: 0 })),
    name: Type.Optional(Type.Union([Type.String({ maxLength: 3 }), Type.Null()])),
    day: Type.Optional(Type.Union([Type.String({ format: 'date' }), Type.Null()])),
    kind: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
    either: Type.Optional(Type.Union([Type.String(), Type.Integer({ minimum: 0 })])),
  }, { additionalProperties: false }))
  const [nullable] = input.check({ age: -1 })
  const [plain] = input.check({ plain: -1 })
  t.match(nullable, { kind: 'invalid', field: 'age', path: '/age', message: /greater or equal to 0/ })
  t.equal(nullable.message, plain.message, 'the same message with or without null')
  t.match(input.check({ age: 1.5 })[0].message, /integer/)
  t.match(input.check({ name: 'abcd' })[0].message, /length less or equal to 3/)
  t.match(input.check({ day: '2020-02-30' })[0].message, /'date' format/)
  t.equal(input.check({ age: 'old' })[0].message, 'expected integer or null, got "old"', 'a value of no member\'s type: what the union accepts')
  t.equal(input.check({ kind: 'c' })[0].message, 'expected "a" or "b", got "c"')
  t.equal(input.check({ either: -1 })[0].message, input.check({ plain: -1 })[0].message, 'the one member of the value\'s type')
  t.same(input.check({ age: null, name: null, day: null }), [])
})
