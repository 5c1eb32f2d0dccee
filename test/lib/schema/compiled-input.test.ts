/**
 * The NUL check of inputs (PostgreSQL text cannot hold U+0000): the JSON pointer of the first NUL, found in a value
 * or in a member name at any depth, with `~` and `/` escaped as RFC 6901 writes them.
 */
import t from 'tap'
import { escapePointerToken, findNulCharacter } from '../../../lib/schema/compiled-input.js'

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

t.test('escapePointerToken writes ~ and / as RFC 6901 does', async (t) => {
  t.equal(escapePointerToken('name'), 'name')
  t.equal(escapePointerToken('a/b~c'), 'a~1b~0c')
  t.equal(escapePointerToken('~1'), '~01', '~ first, so that ~1 stays two characters')
})
