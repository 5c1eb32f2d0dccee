// What a user installs is what we test: `npm pack` this checkout, install the tarball into an empty TypeScript app
// with the README's own install commands and `tsconfig.json`, and prove that the app
//   - type-checks under NodeNext (with the newest TypeScript and with the oldest the README names) and under bundler
//     resolution,
//   - serves a request on the embedded database (ESM, and CommonJS through `require()`),
//   - fails to compile the classic declaration mistakes (the typos of issue 11),
// that the tarball holds the build, its declarations and self-contained source maps, the guides (docs/*.md), and
// nothing else, and that every relative link of its Markdown pages leads to a file (and heading) inside it.
//
// Not part of `npm test` (it installs from the npm registry and takes a minute or two): `.ci/run` runs it as its own
// step through `npm run test:package`, on the machine's Node.js and on other majors (the `node` first on PATH runs
// npm, this test and the scratch app alike). FJA_EXPECT_NODE_MAJOR (`22`) makes it fail unless all of them run on
// that major, so that a PATH mistake cannot test the wrong Node.js.
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, normalize, resolve } from 'node:path'
import t from 'tap'
import { sh } from '../helpers/shell.js'

const root = resolve(import.meta.dirname, '../..')
const tarball = (directory: string) => join(directory, 'fastify-jsonapi-0.1.0.tgz')

/** The Node.js major the run must be on (`.ci/run` sets it), or none: then the major of this process. */
const expectedNodeMajor = process.env.FJA_EXPECT_NODE_MAJOR || undefined
const majorOf = (version: string) => version.replace(/^v/, '').split('.')[0]
const nodeMajor = expectedNodeMajor ?? majorOf(process.version)

/** The README's "Install" section (its subsections included). */
async function installSection (): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  return /^## Install\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? ''
}

/** The `npm install …` lines of the README's "Install" section, as a user would copy them. */
async function documentedInstallCommands (): Promise<string[]> {
  const section = await installSection()
  const commands = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
    .flatMap((block) => (block[1] ?? '').split('\n'))
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.startsWith('npm install'))
  return commands
}

/** The `tsconfig.json` of the README's "Install" section, as written, and its compiler options (none if it is not
 * there or not JSON). */
async function documentedTsconfig (): Promise<{ text: string, compilerOptions?: Record<string, unknown> }> {
  const text = [...(await installSection()).matchAll(/^```json\n([\s\S]*?)^```/gm)]
    .map((block) => block[1] ?? '').find((block) => block.includes('"compilerOptions"')) ?? ''
  try {
    return { text, compilerOptions: (JSON.parse(text) as { compilerOptions?: Record<string, unknown> }).compilerOptions }
  } catch {
    return { text }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Relative links of Markdown pages

/** The lines of a Markdown page with those of its fenced code blocks blanked (line numbers stay). */
function proseLines (markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined) {
      if (marker === undefined) return line
      fence = marker
    } else if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) {
      fence = undefined
    }
    return ''
  })
}

/** The anchors of a page as GitHub makes them: each heading's text (inline markup dropped) in lower case, without
 * punctuation, spaces turned into hyphens, `-1`, `-2` … after repeats (github-slugger); and `<a id|name="…">`. */
function anchorsOf (markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    for (const tag of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(tag[1] ?? '')
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '').replace(/\\(.)/g, '$1').replace(/[`*]/g, '')
    const slug = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** The relative targets of a page's links: inline links and images (`[text](target)`), reference definitions
 * (`[name]: target`); not in code. */
function relativeLinksOf (markdown: string): Array<{ line: number, target: string }> {
  return proseLines(markdown).flatMap((prose, index) => {
    const line = prose.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length))
    const targets = [
      ...[...line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? ''),
      ...(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line)?.slice(1) ?? []),
    ].map((target) => target.replace(/^<(.*)>$/, '$1'))
    return targets.filter((target) => !/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(target)).map((target) => ({ line: index + 1, target }))
  })
}

let shipped: string[] = []

const work = await mkdtemp(join(tmpdir(), 'fja-package-'))
t.teardown(() => rm(work, { recursive: true, force: true }))
const app = join(work, 'app')
await mkdir(join(app, 'src'), { recursive: true })

t.test('everything runs on the expected Node.js', async (t) => {
  const shell = (await sh('node -p process.version', work)).output.trim()
  const npm = (await sh('npm version --json 2>/dev/null', work)).output
  const npmNode = (JSON.parse(npm.startsWith('{') ? npm : '{}') as { node?: string }).node ?? `none (${npm})`
  t.comment(`Node.js ${process.version}; the shell's \`node\` ${shell}; npm's ${npmNode}`)
  if (expectedNodeMajor !== undefined) t.match(expectedNodeMajor, /^\d+$/, 'FJA_EXPECT_NODE_MAJOR is a major version')
  t.equal(majorOf(process.version), nodeMajor, `this test runs on Node.js ${nodeMajor}`)
  t.equal(majorOf(shell), nodeMajor, `the scratch app's \`node\` (and \`#!/usr/bin/env node\` scripts: npx, tsc) is ${nodeMajor}`)
  t.equal(majorOf(npmNode), nodeMajor, `npm runs on ${nodeMajor}`)
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
  t.ok(major > 20 || (major === 20 && minor >= 19), 'a Node.js that package.json\'s engines (>=20.19) admits')
})

t.test('npm pack builds the package and ships the build and the guides only', async (t) => {
  const packed = await sh(`npm pack --pack-destination ${JSON.stringify(work)} --json`, root)
  t.equal(packed.code, 0, packed.output)
  const files = (await sh(`tar -tzf ${JSON.stringify(tarball(work))}`, work)).output.split('\n').filter(Boolean)
  for (const needed of ['index.js', 'index.d.ts', 'index.js.map', 'embedded.js', 'embedded.d.ts', 'plugin.js']) {
    t.ok(files.includes(`package/dist/lib/${needed}`), `ships dist/lib/${needed}`)
  }
  for (const needed of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) t.ok(files.includes(`package/${needed}`), `ships ${needed}`)
  const guides = (await readdir(join(root, 'docs'))).filter((name) => name.endsWith('.md'))
  t.ok(guides.length > 10, `${guides.length} guides`)
  for (const guide of guides) t.ok(files.includes(`package/docs/${guide}`), `ships docs/${guide}`)
  t.same(files.filter((file) => !/^package\/(dist\/lib\/.*\.(js|d\.ts|js\.map)|docs\/[^/]+\.md|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(file)), [],
    'nothing else: no sources, tests, examples or declaration maps')
  t.ok(files.length > 50, `${files.length} files`)
  shipped = files.map((file) => file.replace(/^package\//, ''))
})

t.test('every relative link of the Markdown pages in the package leads into the package', async (t) => {
  const unpacked = join(work, 'unpacked')
  await mkdir(unpacked)
  const extracted = await sh(`tar -xzf ${JSON.stringify(tarball(work))} -C ${JSON.stringify(unpacked)}`, work)
  t.equal(extracted.code, 0, extracted.output)
  const files = new Set(shipped)
  const pages = shipped.filter((file) => file.endsWith('.md'))
  t.ok(pages.includes('README.md') && pages.includes('docs/typescript.md'), `${pages.length} pages`)
  const anchors = new Map<string, Set<string>>()
  const anchorsIn = async (file: string) => {
    let known = anchors.get(file)
    if (known === undefined) anchors.set(file, known = anchorsOf(await readFile(join(unpacked, 'package', file), 'utf8')))
    return known
  }
  t.same([...anchorsOf('# A `b` — c: d\n\n```md\n# not a heading\n```\n## A [`b`](x.md) — c: d\n\n## Memory of `page[size]=0`\n')],
    ['a-b--c-d', 'a-b--c-d-1', 'memory-of-pagesize0'], 'anchors as GitHub makes them')
  let links = 0
  for (const page of pages) {
    const broken: string[] = []
    for (const { line, target } of relativeLinksOf(await readFile(join(unpacked, 'package', page), 'utf8'))) {
      links++
      const [path = '', anchor = ''] = target.split('#', 2)
      const file = path === '' ? page : normalize(join(dirname(page), decodeURI(path)))
      if (!files.has(file)) broken.push(`${page}:${line}: ${target}: the package has no ${file}`)
      else if (anchor !== '' && file.endsWith('.md') && !(await anchorsIn(file)).has(decodeURIComponent(anchor))) {
        broken.push(`${page}:${line}: ${target}: ${file} has no heading #${anchor}`)
      }
    }
    t.same(broken, [], `${page}: every relative link resolves`)
  }
  t.ok(links > 50, `${links} relative links checked`)
})

t.test('the package metadata', async (t) => {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
  t.equal(manifest.type, 'module')
  t.equal(manifest.sideEffects, false)
  t.same(Object.keys(manifest.exports), ['.', './embedded', './package.json'])
  t.same(Object.keys(manifest.dependencies), ['fastify-plugin'], 'everything the user also uses is a peer')
  t.same(Object.keys(manifest.peerDependencies).sort(), ['@electric-sql/pglite', '@sinclair/typebox', 'better-sqlite3', 'fastify', 'kysely', 'mysql2', 'pg'])
  t.same(manifest.peerDependenciesMeta, { '@electric-sql/pglite': { optional: true }, 'better-sqlite3': { optional: true }, mysql2: { optional: true } })
  t.equal(manifest.peerDependencies.mysql2, '>=3.9.0 <4.0.0')
  // better-sqlite3 13 needs Node.js 22 (it crashes on Node.js 20), 12 aborts at exit on Node.js 24: both, by Node.js.
  t.equal(manifest.peerDependencies['better-sqlite3'], '>=12.0.0 <14.0.0')
  for (const key of ['description', 'license', 'author', 'homepage', 'engines', 'keywords']) t.ok(manifest[key], `has ${key}`)
})

t.test('the README install commands install the tarball into an empty app', async (t) => {
  const commands = await documentedInstallCommands()
  t.ok(commands.length >= 2, `README documents the install: ${commands.join(' && ')}`)
  t.ok(commands.some((command) => /\bfastify-jsonapi\b/.test(command)), 'the package itself is in the commands')
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }, null, 2))
  for (const command of commands) {
    // The README's own note on the line: better-sqlite3 13 on Node.js 22 and newer.
    const driver = Number(nodeMajor) >= 22 ? command.replace('better-sqlite3@12', 'better-sqlite3@13') : command
    const local = driver.replace(/(?<=\s)fastify-jsonapi(?=\s|$)/, tarball(work))
    const installed = await sh(`${local} --no-audit --no-fund --prefer-offline`, app)
    t.equal(installed.code, 0, `${local}\n${installed.output}`)
  }
  const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8'))
  t.ok(manifest.dependencies['fastify-jsonapi'], 'the app depends on the package')
  t.ok(manifest.devDependencies?.typescript, 'TypeScript comes from the documented commands')
  const tree = await sh('npm ls --all', app)
  t.equal(tree.code, 0, `npm ls --all: every dependency and peer dependency is satisfied\n${tree.output}`)
  t.comment(`TypeScript ${manifest.devDependencies?.typescript}: ${(await sh('npx tsc --version', app)).output.trim()}`)
})

const appSource = `import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { defineResource, defineResources, jsonApi, type CreateAttributes, type ResourceAttributes } from 'fastify-jsonapi'
import { createEmbeddedDatabase } from 'fastify-jsonapi/embedded'

const user = defineResource({
  type: 'user',
  path: '/users',
  table: 'users',
  attributes: { name: { schema: Type.String(), required: true } },
  relationships: { computers: { kind: 'to-many', type: 'computer', inverse: 'owner' } },
})
const computer = defineResource({
  type: 'computer',
  path: '/computers',
  table: 'computers',
  attributes: { serial: { schema: Type.String() } },
  relationships: { owner: { kind: 'to-one', type: 'user', foreignKey: 'owner_id' } },
})
const resources = defineResources([user, computer])
const created: CreateAttributes<typeof user> = { name: 'ada' }
export type User = ResourceAttributes<typeof user>

const { db, close } = await createEmbeddedDatabase()
await sql\`create table users (id serial primary key, name text not null)\`.execute(db)
await sql\`create table computers (id serial primary key, serial text, owner_id integer references users)\`.execute(db)
const app = Fastify()
await app.register(jsonApi, { db, resources })
app.addHook('onClose', close)
const posted = await app.inject({
  method: 'POST',
  url: '/users',
  headers: { 'content-type': 'application/vnd.api+json' },
  payload: { data: { type: 'user', attributes: created } },
})
await sql\`insert into computers (serial, owner_id) values ('A1', 1)\`.execute(db)
const read = await app.inject({ url: '/users/1?include=computers' })
console.log(JSON.stringify({ node: process.version, posted: posted.statusCode, status: read.statusCode, body: read.json() }))
await app.close()
`

const requireSource = `const { jsonApi, defineResource } = require('fastify-jsonapi')
const { createEmbeddedDatabase } = require('fastify-jsonapi/embedded')
const Fastify = require('fastify')

async function main () {
  const { db, close } = await createEmbeddedDatabase()
  await db.schema.createTable('things').addColumn('id', 'serial', (column) => column.primaryKey()).addColumn('name', 'text').execute()
  await db.insertInto('things').values({ name: 'one' }).execute()
  const app = Fastify()
  await app.register(jsonApi, { db, resources: [defineResource({ type: 'thing', path: '/things', table: 'things', attributes: {} })] })
  app.addHook('onClose', close)
  const response = await app.inject({ url: '/things' })
  console.log(JSON.stringify({ node: process.version, status: response.statusCode, body: response.json() }))
  await app.close()
}
main()
`

const ctsSource = `import jsonApiPackage = require('fastify-jsonapi')
import embedded = require('fastify-jsonapi/embedded')
export const names: Array<keyof typeof jsonApiPackage> = ['jsonApi', 'defineResource', 'defineResources']
export const create: typeof embedded.createEmbeddedDatabase = embedded.createEmbeddedDatabase
`

// The four typos of issue 11, one per line; each must be a compile error on its own line.
const typoLines = [
  `export const a = defineResource({ type: 'a', attributes: { name: { schema: Type.String(), requried: true } } })`,
  `export const b = defineResource({ type: 'b', tabel: 'bs' })`,
  `export const c = defineResource({ type: 'c', relationships: { x: { kind: 'to-on', type: 'b', foreignKey: 'x' } } })`,
  `export const d = defineResources([defineResource({ type: 'e', relationships: { x: { kind: 'to-one', type: 'autor', foreignKey: 'x' } } })])`,
]
const typoPreamble = `import { Type } from '@sinclair/typebox'\nimport { defineResource, defineResources } from 'fastify-jsonapi'\n`

const tsconfig = await documentedTsconfig()

t.test("the app compiles with the README's tsconfig.json and serves a request on the embedded database", async (t) => {
  t.match(tsconfig.compilerOptions, { module: 'NodeNext', strict: true, rootDir: 'src', outDir: 'dist' },
    `the README's "Install" section has a tsconfig.json (NodeNext, strict, src/ to dist/):\n${tsconfig.text}`)
  await writeFile(join(app, 'src/app.ts'), appSource)
  await writeFile(join(app, 'src/types.cts'), ctsSource)
  await writeFile(join(app, 'tsconfig.json'), tsconfig.text)
  const compiled = await sh('npx tsc -p tsconfig.json', app)
  t.equal(compiled.code, 0, `tsc (the README's tsconfig.json: NodeNext, strict, no skipLibCheck): ${compiled.output}`)
  const served = await sh('node dist/app.js', app)
  t.equal(served.code, 0, served.output)
  const result = JSON.parse(served.output.trim().split('\n').at(-1) ?? '{}')
  t.equal(majorOf(result.node ?? ''), nodeMajor, `the app runs on Node.js ${nodeMajor}: ${result.node}`)
  t.equal(result.posted, 201, 'POST /users')
  t.equal(result.status, 200, 'GET /users/1?include=computers')
  t.same(result.body.data, {
    type: 'user',
    id: '1',
    attributes: { name: 'ada' },
    links: { self: '/users/1' },
    relationships: {
      computers: { links: { self: '/users/1/relationships/computers', related: '/users/1/computers' }, data: [{ type: 'computer', id: '1' }], meta: { count: 1 } },
    },
  })
  t.equal(result.body.included[0].attributes.serial, 'A1')
})

t.test('the app type-checks under bundler resolution', async (t) => {
  await writeFile(join(app, 'tsconfig.bundler.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'Preserve', moduleResolution: 'Bundler', strict: true, types: ['node'], noEmit: true },
    include: ['src/app.ts'],
  }, null, 2))
  const checked = await sh('npx tsc -p tsconfig.bundler.json', app)
  t.equal(checked.code, 0, checked.output)
})

t.test('the oldest TypeScript the README names compiles the app too', async (t) => {
  const oldest = /TypeScript (\d+\.\d+) or newer/.exec(await installSection())?.[1]
  t.ok(oldest, 'the README\'s "Install" section says "TypeScript X.Y or newer"')
  if (oldest === undefined) return
  const prefix = join(work, 'typescript-oldest')
  const installed = await sh(`npm install --prefix ${JSON.stringify(prefix)} --no-audit --no-fund --prefer-offline typescript@~${oldest}`, work)
  t.equal(installed.code, 0, installed.output)
  const tsc = `node ${JSON.stringify(join(prefix, 'node_modules/typescript/bin/tsc'))}`
  const version = (await sh(`${tsc} --version`, app)).output.trim()
  t.match(version, `Version ${oldest}.`, version)
  const checked = await sh(`${tsc} -p tsconfig.json --noEmit`, app)
  t.equal(checked.code, 0, `${version}, the README's tsconfig.json: ${checked.output}`)
})

// The same app shape on SQLite and on MariaDB, from the package's own helpers, with the drivers the README installs.
const enginesSource = `import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Kysely } from 'kysely'
import { createMysqlDatabase, createSqliteDatabase, defineResource, jsonApi } from 'fastify-jsonapi'

const thing = defineResource({ type: 'thing', path: '/things', table: 'things', attributes: { name: { schema: Type.String() }, done: { schema: Type.Boolean() } } })

async function serve (engine: string, db: Kysely<any>, close: () => Promise<void>): Promise<unknown> {
  await db.schema.createTable('things').addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('name', 'text', (column) => column.notNull()).addColumn('done', 'boolean', (column) => column.notNull()).execute()
  const app = Fastify()
  await app.register(jsonApi, { db, resources: [thing] })
  app.addHook('onClose', close)
  const posted = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'application/vnd.api+json' }, payload: { data: { type: 'thing', attributes: { name: 'one', done: true } } } })
  const read = await app.inject({ url: '/things?filter[done]=true&sort=-name' })
  await app.close()
  return { engine, posted: posted.statusCode, status: read.statusCode, data: read.json().data }
}

const results: unknown[] = []
const sqlite = await createSqliteDatabase()
results.push(await serve('sqlite', sqlite.db, sqlite.close))
const url = process.env.FJA_PACKAGE_MYSQL_URL
if (url !== undefined && url !== '') {
  const mysql = await createMysqlDatabase({ uri: url })
  results.push(await serve('mysql', mysql.db, mysql.close))
}
console.log(JSON.stringify(results))
`

t.test('the app serves from SQLite and from MariaDB through the package\'s helpers and the drivers the README installs', async (t) => {
  await writeFile(join(app, 'src/engines.ts'), enginesSource)
  const compiled = await sh('npx tsc -p tsconfig.json', app)
  t.equal(compiled.code, 0, compiled.output)
  // MariaDB when a server answers at MYSQL_URL (default 127.0.0.1:3306), in a database of its own.
  const { freshMysqlDatabase } = await import('../helpers/database.js')
  const fresh = await freshMysqlDatabase(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/', 'package')
  let own = ''
  if (typeof fresh === 'string') {
    t.comment(`SQLite only: ${fresh}`)
  } else {
    t.teardown(fresh.drop)
    own = fresh.url
  }
  const served = await sh(`FJA_PACKAGE_MYSQL_URL=${JSON.stringify(own)} node dist/engines.js`, app)
  t.equal(served.code, 0, served.output)
  const results = JSON.parse(served.output.trim().split('\n').at(-1) ?? '[]') as Array<Record<string, unknown>>
  const expected = { posted: 201, status: 200, data: [{ type: 'thing', id: '1', attributes: { name: 'one', done: true }, links: { self: '/things/1' } }] }
  t.same(results[0], { engine: 'sqlite', ...expected }, 'SQLite')
  if (own !== '') t.same(results[1], { engine: 'mysql', ...expected }, 'MariaDB')
})

t.test('require() loads the package from CommonJS', async (t) => {
  await writeFile(join(app, 'require.cjs'), requireSource)
  const served = await sh('node require.cjs', app)
  t.equal(served.code, 0, served.output)
  const result = JSON.parse(served.output.trim().split('\n').at(-1) ?? '{}')
  t.equal(majorOf(result.node ?? ''), nodeMajor, `require() on Node.js ${nodeMajor}: ${result.node}`)
  t.equal(result.status, 200)
  t.same(result.body.data, [{ type: 'thing', id: '1', attributes: {}, links: { self: '/things/1' } }])
})

t.test('cannot compile the classic declaration mistakes', async (t) => {
  const typos = join(app, 'typos')
  await mkdir(typos, { recursive: true })
  await writeFile(join(typos, 'typos.ts'), typoPreamble + typoLines.join('\n') + '\n')
  await writeFile(join(typos, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...tsconfig.compilerOptions, rootDir: '.', noEmit: true }, include: ['typos.ts'] }, null, 2))
  const checked = await sh('npx tsc -p typos/tsconfig.json', app)
  t.not(checked.code, 0, 'tsc fails')
  const lines = new Set([...checked.output.matchAll(/typos\.ts\((\d+),\d+\): error/g)].map((match) => Number(match[1])))
  typoLines.forEach((line, index) => t.ok(lines.has(index + 3), `an error on line ${index + 3}: ${line.slice(0, 90)}…\n${checked.output}`))
  t.equal(lines.size, typoLines.length, 'no other errors')
})

t.test('the installed tree', async (t) => {
  const installed = await readdir(join(app, 'node_modules/fastify-jsonapi/dist/lib'))
  t.ok(installed.includes('index.js'))
  const map = JSON.parse(await readFile(join(app, 'node_modules/fastify-jsonapi/dist/lib/index.js.map'), 'utf8'))
  t.equal(map.sources.length, map.sourcesContent?.length, 'every source map carries its sources')
  t.match(map.sourcesContent[0], /export/, 'the TypeScript source')
})
