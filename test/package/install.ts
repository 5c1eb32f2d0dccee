// What a user installs is what we test: `npm pack` this checkout, install the tarball into an empty TypeScript app
// with the README's own install commands, and prove that the app
//   - type-checks under NodeNext and under bundler resolution,
//   - serves a request on the embedded database (ESM, and CommonJS through `require()`),
//   - fails to compile the classic declaration mistakes (the typos of issue 11),
// and that the tarball holds the build, its declarations and self-contained source maps, and nothing else.
//
// Not part of `npm test` (it installs from the npm registry and takes about a minute): `.ci/run` runs it as its own
// step through `npm run test:package`.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')

// The scratch app runs as a user's would: without tap's loaders (NODE_OPTIONS) and settings.
const cleanEnvironment = Object.fromEntries(Object.entries({ ...process.env, npm_config_loglevel: 'error' })
  .filter(([name]) => name !== 'NODE_OPTIONS' && !name.startsWith('TAP') && !name.startsWith('_TAP')))

interface Result { readonly code: number, readonly output: string }

async function sh (command: string, cwd: string): Promise<Result> {
  try {
    // tap's process-info hook adds its loaders to the NODE_OPTIONS of every child process: drop them in the shell
    const { stdout, stderr } = await run('bash', ['-c', `unset NODE_OPTIONS; ${command}`], { cwd, maxBuffer: 64 * 1024 * 1024, env: cleanEnvironment })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const failure = error as { code?: number, stdout?: string, stderr?: string }
    return { code: typeof failure.code === 'number' ? failure.code : 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` }
  }
}

/** The `npm install …` lines of the README's "Install" section, as a user would copy them. */
async function documentedInstallCommands (): Promise<string[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const section = /^## Install\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? ''
  const commands = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
    .flatMap((block) => (block[1] ?? '').split('\n'))
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.startsWith('npm install'))
  return commands
}

const work = await mkdtemp(join(tmpdir(), 'fja-package-'))
t.teardown(() => rm(work, { recursive: true, force: true }))
const app = join(work, 'app')
await mkdir(join(app, 'src'), { recursive: true })

t.test('npm pack builds the package and ships the build only', async (t) => {
  const packed = await sh(`npm pack --pack-destination ${JSON.stringify(work)} --json`, root)
  t.equal(packed.code, 0, packed.output)
  const files = (await sh(`tar -tzf ${JSON.stringify(join(work, 'fastify-jsonapi-0.1.0.tgz'))}`, work)).output.split('\n').filter(Boolean)
  for (const needed of ['index.js', 'index.d.ts', 'index.js.map', 'embedded.js', 'embedded.d.ts', 'plugin.js']) {
    t.ok(files.includes(`package/dist/lib/${needed}`), `ships dist/lib/${needed}`)
  }
  for (const needed of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) t.ok(files.includes(`package/${needed}`), `ships ${needed}`)
  t.same(files.filter((file) => !/^package\/(dist\/lib\/.*\.(js|d\.ts|js\.map)|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(file)), [],
    'nothing else: no sources, tests, examples or declaration maps')
  t.ok(files.length > 50, `${files.length} files`)
})

t.test('the package metadata', async (t) => {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
  t.equal(manifest.type, 'module')
  t.equal(manifest.sideEffects, false)
  t.same(Object.keys(manifest.exports), ['.', './embedded', './package.json'])
  t.same(Object.keys(manifest.dependencies), ['fastify-plugin'], 'everything the user also uses is a peer')
  t.same(Object.keys(manifest.peerDependencies).sort(), ['@electric-sql/pglite', '@sinclair/typebox', 'fastify', 'kysely', 'pg'])
  t.same(manifest.peerDependenciesMeta, { '@electric-sql/pglite': { optional: true } })
  for (const key of ['description', 'license', 'author', 'homepage', 'engines', 'keywords']) t.ok(manifest[key], `has ${key}`)
})

t.test('the README install commands install the tarball into an empty app', async (t) => {
  const commands = await documentedInstallCommands()
  t.ok(commands.length >= 2, `README documents the install: ${commands.join(' && ')}`)
  t.ok(commands.some((command) => /\bfastify-jsonapi\b/.test(command)), 'the package itself is in the commands')
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }, null, 2))
  const tarball = join(work, 'fastify-jsonapi-0.1.0.tgz')
  for (const command of commands) {
    const local = command.replace(/(?<=\s)fastify-jsonapi(?=\s|$)/, tarball)
    const installed = await sh(`${local} --no-audit --no-fund --prefer-offline`, app)
    t.equal(installed.code, 0, `${local}\n${installed.output}`)
  }
  const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8'))
  t.ok(manifest.dependencies['fastify-jsonapi'], 'the app depends on the package')
  t.ok(manifest.devDependencies?.typescript, 'TypeScript comes from the documented commands')
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
console.log(JSON.stringify({ posted: posted.statusCode, status: read.statusCode, body: read.json() }))
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
  console.log(JSON.stringify({ status: response.statusCode, body: response.json() }))
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

const nodeNext = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], rootDir: 'src', outDir: 'dist' }

t.test('the app compiles under NodeNext and serves a request on the embedded database', async (t) => {
  await writeFile(join(app, 'src/app.ts'), appSource)
  await writeFile(join(app, 'src/types.cts'), ctsSource)
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: nodeNext, include: ['src/*.ts', 'src/*.cts'] }, null, 2))
  const compiled = await sh('npx tsc -p tsconfig.json', app)
  t.equal(compiled.code, 0, `tsc (NodeNext, strict, no skipLibCheck): ${compiled.output}`)
  const served = await sh('node dist/app.js', app)
  t.equal(served.code, 0, served.output)
  const result = JSON.parse(served.output.trim().split('\n').at(-1) ?? '{}')
  t.equal(result.posted, 201, 'POST /users')
  t.equal(result.status, 200, 'GET /users/1?include=computers')
  t.same(result.body.data, {
    type: 'user',
    id: '1',
    attributes: { name: 'ada' },
    links: { self: '/users/1' },
    relationships: {
      computers: { links: { self: '/users/1/relationships/computers', related: '/users/1/computers' }, data: [{ type: 'computer', id: '1' }] },
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

t.test('require() loads the package from CommonJS', async (t) => {
  await writeFile(join(app, 'require.cjs'), requireSource)
  const served = await sh('node require.cjs', app)
  t.equal(served.code, 0, served.output)
  const result = JSON.parse(served.output.trim().split('\n').at(-1) ?? '{}')
  t.equal(result.status, 200)
  t.same(result.body.data, [{ type: 'thing', id: '1', attributes: {}, links: { self: '/things/1' } }])
})

t.test('cannot compile the classic declaration mistakes', async (t) => {
  const typos = join(app, 'typos')
  await mkdir(typos, { recursive: true })
  await writeFile(join(typos, 'typos.ts'), typoPreamble + typoLines.join('\n') + '\n')
  await writeFile(join(typos, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...nodeNext, rootDir: '.', noEmit: true }, include: ['typos.ts'] }, null, 2))
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
