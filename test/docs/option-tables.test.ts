/**
 * The reference tables of the documentation list exactly the keys the code accepts: the README's plugin options
 * against OPTION_KEYS, and docs/resources.md's resource, attribute and relationship (per kind) options against
 * DECLARATION_KEYS. A key added to a type (its key list does not compile without it) fails here until it is
 * documented; a row for a key that does not exist (`pagination.allowUnpaged`) fails too.
 *
 * A table's first column names its keys in code spans (`` `filterable`, `sortable` ``). A key whose value is an object
 * with keys of its own (`pagination`) is documented either by a row per nested key (`pagination.maxSize`) or by one
 * row whose other cells name every nested key in code (`routes`: `` `list` (`GET <path>`), `create` … ``).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { OPTION_KEYS } from '../../lib/options.js'
import { DECLARATION_KEYS } from '../../lib/schema/declaration.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

interface Row {
  /** Its line in the page. */
  readonly line: number
  readonly cells: readonly string[]
  /** The keys its first cell names. */
  readonly keys: readonly string[]
}

interface Table {
  /** The heading the table is under. */
  readonly heading: string
  readonly header: readonly string[]
  readonly rows: readonly Row[]
}

const codeSpans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1])
const cellsOf = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((cell) => cell.trim())

/** The tables of a Markdown page (outside code blocks), each with the heading above it. */
function readTables (page: string): Table[] {
  const lines = readFileSync(fileURLToPath(new URL(`../../${page}`, import.meta.url)), 'utf8').split(/\r?\n/)
  const tables: Table[] = []
  let heading = ''
  let fenced = false
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(```|~~~)/.test(lines[i])) fenced = !fenced
    if (fenced) continue
    const title = /^#{1,6}\s+(.*)$/.exec(lines[i])
    if (title !== null) heading = title[1].trim()
    if (!lines[i].trim().startsWith('|') || !/^\s*\|[\s:|-]+\|\s*$/.test(lines[i + 1] ?? '')) continue
    const header = cellsOf(lines[i])
    const rows: Row[] = []
    let j = i + 2
    for (; j < lines.length && lines[j].trim().startsWith('|'); j++) {
      const cells = cellsOf(lines[j])
      rows.push({ line: j + 1, cells, keys: codeSpans(cells[0] ?? '') })
    }
    tables.push({ heading, header, rows })
    i = j - 1
  }
  return tables
}

/** The first table under `heading` whose header starts with `option`. */
function optionTable (t: Test, page: string, heading: string, header = (cells: readonly string[]) => cells[0] === 'option'): Table | undefined {
  const table = readTables(page).find((table) => table.heading === heading && header(table.header))
  t.ok(table !== undefined, `${page} has its options table under "${heading}"`)
  return table
}

const sorted = (keys: Iterable<string>) => [...new Set(keys)].sort()

/**
 * The rows list exactly `keys`, and each key of `nested` (an object-valued key) exactly its keys: dotted rows, or
 * one row that names them all in code.
 */
function listsExactly (t: Test, what: string, rows: readonly Row[], keys: readonly string[], nested: Readonly<Record<string, readonly string[]>>) {
  const all = rows.flatMap((row) => row.keys)
  t.same(all.filter((key, index) => all.indexOf(key) !== index), [], `${what}: no key has two rows`)
  t.same(sorted(all.map((key) => key.split('.')[0])), sorted(keys), `${what}: a row for every key, and only for keys`)
  for (const [parent, children] of Object.entries(nested)) {
    if (!keys.includes(parent)) continue
    const dotted = all.filter((key) => key.startsWith(`${parent}.`)).map((key) => key.slice(parent.length + 1))
    if (dotted.length > 0) {
      t.same(sorted(dotted), sorted(children), `${what}: the rows of \`${parent}.…\` are its keys, all of them`)
      continue
    }
    const row = rows.find((row) => row.keys.includes(parent))
    const named = codeSpans(row?.cells.slice(1).join(' | ') ?? '')
    const missing = children.filter((child) => !named.some((span) => new RegExp(`(?<![\\w.])${child}(?![\\w])`).test(span)))
    t.same(missing, [], `${what}: the row of \`${parent}\` names each of its keys (${children.join(', ')})`)
  }
  const strays = all.filter((key) => key.includes('.') && !Object.hasOwn(nested, key.split('.')[0]))
  t.same(strays, [], `${what}: dotted rows only for keys whose value has keys of its own`)
  t.same(rows.filter((row) => row.keys.length === 0).map((row) => row.line), [], `${what}: every row names its key in code (the lines of those that do not)`)
}

t.test("the README's table lists every plugin option", async (t) => {
  const table = optionTable(t, 'README.md', 'Options')
  if (table === undefined) return
  const { options, fastify: _fastify, ...nested } = OPTION_KEYS
  t.same(Object.keys(nested).filter((key) => !(options as readonly string[]).includes(key)), [], 'every nested key list is of an option')
  listsExactly(t, 'README.md options', table.rows, options, nested)
  const defaults = table.header.indexOf('default')
  t.same(table.rows.filter((row) => (row.cells[defaults] ?? '') === '').map((row) => row.line), [], 'README.md options: every row has a default')
})

/** The keys of a declaration each table documents, and the objects nested in them. */
const RESOURCE_NESTED = {
  id: DECLARATION_KEYS.id,
  input: DECLARATION_KEYS.input,
  routes: DECLARATION_KEYS.routes,
  pagination: DECLARATION_KEYS.pagination,
  hooks: DECLARATION_KEYS.hooks,
  rules: DECLARATION_KEYS.rules,
} as const
const ATTRIBUTE_NESTED = { derived: DECLARATION_KEYS.derived, operators: DECLARATION_KEYS.operator } as const
const RELATIONSHIP_NESTED = { through: DECLARATION_KEYS.through } as const
/** The relationship kinds, by the header of their column in the relationships table. */
const RELATIONSHIP_KINDS = {
  foreignKey: 'to-one, foreign key here',
  inverse: 'to-one or to-many, inverse',
  manyToMany: 'many-to-many',
} as const

t.test('every key list of DECLARATION_KEYS has its place in a table of docs/resources.md', async (t) => {
  t.same(sorted(Object.keys(DECLARATION_KEYS)), sorted([
    'resource', 'attribute', ...Object.keys(RELATIONSHIP_KINDS),
    ...Object.keys(RESOURCE_NESTED), 'derived', 'operator', ...Object.keys(RELATIONSHIP_NESTED),
  ]), 'a new key list needs a table or a parent here')
})

t.test('docs/resources.md documents every key of a declaration', async (t) => {
  const page = 'docs/resources.md'
  const resource = optionTable(t, page, 'Resource options')
  if (resource !== undefined) listsExactly(t, 'resource options', resource.rows, DECLARATION_KEYS.resource, RESOURCE_NESTED)

  const attribute = optionTable(t, page, 'Attributes')
  if (attribute !== undefined) listsExactly(t, 'attribute options', attribute.rows, DECLARATION_KEYS.attribute, ATTRIBUTE_NESTED)

  const relationship = optionTable(t, page, 'Relationships', (header) => header[0] === 'option' && header.includes(RELATIONSHIP_KINDS.manyToMany))
  if (relationship === undefined) return
  for (const [kind, column] of Object.entries(RELATIONSHIP_KINDS) as Array<[keyof typeof RELATIONSHIP_KINDS, string]>) {
    const index = relationship.header.indexOf(column)
    if (!t.ok(index > 0, `the relationships table has a column "${column}"`)) continue
    const rows = relationship.rows.filter((row) => (row.cells[index] ?? '') !== '')
    listsExactly(t, `relationship options (${column})`, rows, DECLARATION_KEYS[kind], RELATIONSHIP_NESTED)
  }
})
