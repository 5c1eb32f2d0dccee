// The driver's fast path relies on `pg`'s custom-query interface and on `pg/lib/utils` (`prepareValue`): internals,
// not API. `peerDependencies` pins the `pg` versions it is tested with; this runs the driver's own tests
// (test/lib/database/) on the oldest and the newest `pg` of that range, each installed from the npm registry into a
// scratch copy of this checkout (lib/, test/, examples/ copied; every other package linked from node_modules/).
//
// Not part of `npm test` (it installs from the npm registry): `.ci/run` runs it as its own step through
// `npm run test:pg`. FJA_PG_VERSIONS (`8.11.0 8.23.1`) names other versions; DATABASE_URL, when set, is passed on.
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import t from 'tap'
import { sh } from '../helpers/shell.js'

const root = resolve(import.meta.dirname, '../..')

/** The oldest and the newest `pg` that the peer range `>=A <B` admits, as the npm registry lists them. */
async function versionsOfPeerRange (): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
  const range = manifest.peerDependencies.pg
  const listed = await sh(`npm view 'pg@${range}' version --json`, root)
  if (listed.code !== 0) throw new Error(`npm view pg@${range}: ${listed.output}`)
  // The registry lists them in the order they were published, not by version.
  const key = (version: string): number[] => version.split('.').map(Number)
  const versions = [JSON.parse(listed.output) as string | string[]].flat().filter((version) => /^\d+\.\d+\.\d+$/.test(version))
    .sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] })
  return [...new Set([versions[0], versions[versions.length - 1]])]
}

const wanted = process.env.FJA_PG_VERSIONS?.trim()
const versions = wanted !== undefined && wanted !== '' ? wanted.split(/\s+/) : await versionsOfPeerRange()
t.ok(versions.length > 0, `pg ${versions.join(', ')}`)

for (const version of versions) {
  t.test(`the driver's tests on pg ${version}`, async (t) => {
    const scratch = await mkdtemp(join(tmpdir(), `fjsonapi-pg-${version}-`))
    t.teardown(() => rm(scratch, { recursive: true, force: true }))
    for (const entry of ['lib', 'test', 'examples', 'package.json', 'tsconfig.json']) {
      await cp(join(root, entry), join(scratch, entry), { recursive: true })
    }
    // Every package of this checkout but pg, linked; pg (and its own dependencies) installed beside.
    await mkdir(join(scratch, 'node_modules'))
    for (const entry of await readdir(join(root, 'node_modules'))) {
      if (entry === 'pg') continue
      await symlink(join(root, 'node_modules', entry), join(scratch, 'node_modules', entry))
    }
    const installed = await sh(`npm install --prefix .pg --no-audit --no-fund --no-save 'pg@${version}'`, scratch)
    if (!t.equal(installed.code, 0, `npm install pg@${version}`)) {
      t.comment(installed.output)
      return
    }
    await symlink(join(scratch, '.pg', 'node_modules', 'pg'), join(scratch, 'node_modules', 'pg'))
    const seen = await sh('node -p "require(\'pg/package.json\').version"', join(scratch, 'test'))
    t.equal(seen.output.trim(), version, 'the tests resolve that pg')
    const tested = await sh('node_modules/.bin/tap --disable-coverage --reporter=tap test/lib/database/', scratch)
    t.equal(tested.code, 0, `test/lib/database/ on pg ${version}`)
    if (tested.code !== 0) t.comment(tested.output.slice(-20_000))
  })
}
