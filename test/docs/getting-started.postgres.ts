/**
 * The getting-started guide works as written: its SQL creates the tables its declarations (`// resources.ts`) need,
 * the plugin's schema check at `ready()` finds nothing missing, and the service it describes answers. The
 * `resources.ts` block is written to a module of its own (its `fastify-jsonapi` import pointed at lib/) and imported;
 * the SQL block runs on a database of the suite (PGlite, or a schema of its own on `DATABASE_URL`).
 * `code-blocks.test.ts` type-checks the guide's TypeScript blocks as a whole; this runs them.
 *
 * The guide's SQL and server are PostgreSQL's (`serial`, `createPostgresDatabase`): getting-started.test.ts imports
 * this on PostgreSQL and PGlite only.
 */
import t from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { sql } from 'kysely'
import { jsonApi, type AnyResourceDeclaration } from '../../lib/index.js'
import { openTestDatabase } from '../helpers/database.js'
import { documentedFastify } from '../helpers/documented-fastify.js'
import { injectJsonApi } from '../helpers/test-app.js'
import { blockText, fencedBlocks } from '../helpers/markdown.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const page = readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8')

/** The text of the first fenced block of `lang` whose text `test` accepts. */
function block (lang: string, test: (text: string) => boolean): string {
  const found = fencedBlocks(page.split('\n')).map((item) => ({ lang: item.lang, text: blockText(item) })).find((item) => item.lang === lang && test(item.text))
  if (found === undefined) throw new Error(`docs/getting-started.md has no \`\`\`${lang} block like that`)
  return found.text
}

const tables = block('sql', (text) => /create table/i.test(text))
const resources = block('ts', (text) => text.startsWith('// resources.ts'))

// The declarations as a module of their own, inside the repository (so that its node_modules resolve the block's
// imports), in tmp/ (ignored by git, the type check and the linter).
mkdirSync(join(ROOT, 'tmp'), { recursive: true })
const dir = mkdtempSync(join(ROOT, 'tmp', 'getting-started-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const library = pathToFileURL(join(ROOT, 'lib/index.ts')).href
writeFileSync(join(dir, 'resources.ts'), resources.replaceAll("from 'fastify-jsonapi'", `from '${library}'`))
const declared = await import(pathToFileURL(join(dir, 'resources.ts')).href) as Record<string, AnyResourceDeclaration>

const database = await openTestDatabase(async (db) => {
  for (const statement of tables.split(';').map((text) => text.trim()).filter(Boolean)) await sql.raw(statement).execute(db)
})
t.teardown(() => database.close())

t.test('the guide\'s tables are what its declarations need, and the service it describes answers', async (t) => {
  const app = await documentedFastify()
  t.teardown(() => app.close())
  // the check the guide says runs at ready, strict: a table or column the declarations name and the SQL lacks fails
  await app.register(jsonApi, { db: database.db, resources: Object.values(declared), checkDatabaseSchema: true })
  await app.ready()
  const author = await injectJsonApi(app, 'POST', '/authors', { body: { data: { type: 'author', attributes: { name: 'Ursula', born: '1929-10-21' } } } })
  t.equal(author.status, 201)
  const book = await injectJsonApi(app, 'POST', '/books', {
    body: { data: { type: 'book', attributes: { title: 'The Dispossessed' }, relationships: { author: { data: { type: 'author', id: author.body.data.id } } } } },
  })
  t.equal(book.status, 201)
  const read = await injectJsonApi(app, 'GET', `/authors/${author.body.data.id as string}?include=books`)
  t.equal(read.status, 200)
  t.same(read.body.included.map((item: { attributes: { title: string } }) => item.attributes.title), ['The Dispossessed'])
  const orphan = await injectJsonApi(app, 'POST', '/books', { body: { data: { type: 'book', attributes: { title: 'No author' } } } })
  t.equal(orphan.status, 422, 'the required to-one of the guide is required')
})
