/**
 * The NUL check of inputs (PostgreSQL text cannot hold U+0000): the JSON pointer of the first NUL, found in a value
 * or in a member name at any depth, with `~` and `/` escaped as RFC 6901 writes them.
 */
import t from 'tap'
import { escapePointerToken, findNulCharacter, findUnstorable } from '../../../lib/schema/compiled-input.js'

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
