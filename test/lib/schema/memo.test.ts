import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Memo } from '../../../lib/schema/memo.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { selectionOf } from '../../../lib/contracts/selection.js'
import { filterBuilderOf } from '../../../lib/schema/filter-builder.js'
import { resources } from '../../../examples/app/resources.js'

t.test('a value is made once per namespace and key, and namespaces are apart', async (t) => {
  const memo = new Memo()
  let made = 0
  const make = (): object => ({ made: ++made })
  const first = memo.get('a', 'x', make)
  t.equal(memo.get('a', 'x', make), first, 'the same key: the value made before')
  t.equal(made, 1)
  t.not(memo.get('b', 'x', make), first, 'another namespace: another value')
  t.not(memo.get('a', 'y', make), first, 'another key: another value')
  t.equal(made, 3)
})

t.test('cannot grow past its limit: the oldest entry of a namespace goes first, and other namespaces keep theirs', async (t) => {
  const memo = new Memo(3)
  const kept = memo.get('fixed', 'one', () => ({}))
  for (let index = 0; index < 10; index++) memo.get('requests', `key ${index}`, () => index)
  t.equal(memo.size('requests'), 3, 'at most the limit')
  t.equal(memo.get('requests', 'key 9', () => -1), 9, 'the newest kept')
  t.equal(memo.get('requests', 'key 0', () => -1), -1, 'the oldest gone, made again')
  t.equal(memo.get('fixed', 'one', () => ({})), kept, 'another namespace keeps its entries')
})

t.test('each registration keeps its own: selections and filter builders are values of the resource graph they belong to', async (t) => {
  const one = resolveResources(resources).getResource('user')
  const other = resolveResources(resources).getResource('user')
  t.not(one.memo, other.memo, 'a memo per resolved resource')
  t.equal(selectionOf(one, undefined), selectionOf(one, undefined), 'the same selection within a registration')
  t.not(selectionOf(one, undefined), selectionOf(other, undefined), 'not shared with another registration')
  t.same(selectionOf(one, undefined), selectionOf(other, undefined), 'but equal as values')
  const fieldset = new Set(['name', 'computers'])
  t.equal(selectionOf(one, fieldset), selectionOf(one, new Set(['name', 'computers'])), 'a fieldset is kept by its names, not its identity')
  t.equal(selectionOf(one, fieldset).key, selectionOf(one, new Set(['computers', 'name'])).key, 'the same fields in another order: the same key')
  t.not(selectionOf(one, fieldset).key, selectionOf(one, new Set(['name'])).key)
  t.ok(Object.isFrozen(selectionOf(one, fieldset)) && Object.isFrozen(selectionOf(one, fieldset).columns), 'frozen')
  const graph = resolveResources(resources)
  t.equal(filterBuilderOf(graph, graph.getResource('user')), filterBuilderOf(graph, graph.getResource('user')))
})

t.test('cannot keep a cache or a registry in module scope: no module-level Map, Set, WeakMap or WeakSet without entries in lib/', async (t) => {
  const root = fileURLToPath(new URL('../../../lib/', import.meta.url))
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'))
  t.ok(files.length > 50, `${files.length} files read`)
  // A constant set of names (`new Set(['a', 'b'])`) or an empty constant typed read-only is not a cache.
  const empty = /^(?:export )?(?:const|let|var) \w+(?:: (?!Readonly)[^=]+)? = new (?:Weak)?(?:Map|Set)(?:<[^>]*>)?\(\)/m
  const weak = /^(?:export )?(?:const|let|var) \w+[^=]*= new Weak(?:Map|Set|Ref)\b/m
  const found = files.filter((file) => {
    const text = readFileSync(join(root, file), 'utf8')
    return empty.test(text) || weak.test(text)
  })
  t.same(found, [], 'none')
})
