/**
 * The embedded database of an example, started from a prepared data directory rather than from `initdb`.
 *
 * A fresh PGlite runs `initdb`, most of what its start costs; one loaded from a dumped data directory does not. The
 * dump of an example's migrated, empty database is kept in `node_modules/.cache/fastify-jsonapi/`, in a file named
 * after the example, the PGlite version and a hash of what decides its content (the example's schema sources, the
 * Kysely version): a changed migration, or another PGlite or Kysely, never loads a stale one.
 *
 * - The file exists: the database starts from it, and the migrations run anyway (on an up-to-date database they only
 *   read Kysely's migration table), so that a database loaded from a stale file still ends migrated.
 * - It does not, or it cannot be loaded: a fresh database, migrated, then dumped into the file before the example
 *   serves anything — the dump holds the database's only connection, and PGlite runs on the main thread, so a dump
 *   after the listening line would stall the first requests instead of the start. The fresh database itself comes
 *   from `initdb-pglite-<version>.tar.gz`, the dump of a database as `initdb` leaves it, shared by the examples (and
 *   written by the first `initdb`): a changed migration costs a load and the migrations, not an `initdb`.
 *
 * Each file is written whole under a temporary name and renamed into place, so that no start ever reads half of one;
 * the files it replaces (other sources, other versions) are removed. A file that cannot be written (a read-only
 * directory, a full disk) is a warning, never a failed start. Nothing else goes into the files: data an example loads
 * after its migrations (`SEED=1`) is never kept.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KyselyConfig } from 'kysely'
import { createEmbeddedDatabase, type EmbeddedDatabase } from '../../lib/embedded.js'
import type { ExampleSchema } from './example-schemas.js'

/** Where the prepared data directories are kept: the repository's `node_modules/.cache/fastify-jsonapi/`. */
export const PREPARED_DATABASES_DIR = fileURLToPath(new URL('../../node_modules/.cache/fastify-jsonapi/', import.meta.url))

/** Changed when what goes into a file changes in a way its name would not tell (how it is dumped). */
const FORMAT = 'plain tar after a checkpoint, v1'

/** The version of an installed package, from the `package.json` above its entry point. */
function packageVersion (name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string, version?: string }
      if (manifest.name === name && typeof manifest.version === 'string') return manifest.version
    } catch {
      // no package.json here: look further up
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`cannot find the version of ${name}`)
    dir = parent
  }
}

/**
 * The file of a data directory as `initdb` leaves it: `initdb-pglite-<version>.tar.gz` in
 * {@link PREPARED_DATABASES_DIR}. Compressed (4 MB rather than 40), since it is loaded only when an example's own file
 * is missing.
 */
function initdbFile (): string {
  return join(PREPARED_DATABASES_DIR, `initdb-pglite-${packageVersion('@electric-sql/pglite')}.tar.gz`)
}

/**
 * The file of an example's prepared data directory: `<name>-pglite-<version>-<hash>.tar` in
 * {@link PREPARED_DATABASES_DIR}, the hash being of the example's schema sources and the Kysely version.
 */
export async function preparedDatabaseFile (schema: ExampleSchema): Promise<string> {
  const hash = createHash('sha256').update(FORMAT).update('\0').update(`kysely ${packageVersion('kysely')}`)
  for (const source of schema.sources) hash.update('\0').update(await readFile(source))
  const name = `${schema.name}-pglite-${packageVersion('@electric-sql/pglite')}-${hash.digest('hex').slice(0, 16)}.tar`
  return join(PREPARED_DATABASES_DIR, name)
}

export interface PreparedDatabaseOptions {
  /** Passed to Kysely. */
  readonly log?: KyselyConfig['log']
  /**
   * Told what went wrong without stopping the start (a file that could not be loaded or written); default
   * `console.warn`.
   */
  readonly warn?: (message: string) => void
  /** Told that a fresh database is being prepared, before the seconds that takes; default: nothing. */
  readonly preparing?: (file: string) => void
}

/** An example's embedded database, migrated. */
export interface PreparedDatabase {
  readonly database: EmbeddedDatabase<any>
  /** The file of the example's prepared data directory. */
  readonly file: string
  /**
   * `loaded`: the database started from the file; `written`: it was prepared now, and the file written;
   * `unwritten`: prepared now, and the file could not be written (a warning said why).
   */
  readonly origin: 'loaded' | 'written' | 'unwritten'
}

function reason (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The file's content, or `undefined` when there is none; any other failure to read it is warned about. */
async function readPrepared (file: string, warn: (message: string) => void): Promise<Blob | undefined> {
  try {
    return new Blob([await readFile(file)], { type: file.endsWith('.gz') ? 'application/gzip' : 'application/x-tar' })
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
    if (!missing) warn(`cannot read ${file} (${reason(error)}); preparing the database afresh`)
    return undefined
  }
}

/** Dumps a database into `file` (a `.tar`, or a `.tar.gz`), atomically; `false` (warned about) when it cannot. */
async function writePrepared (database: EmbeddedDatabase<any>, file: string, warn: (message: string) => void): Promise<boolean> {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    await mkdir(dirname(file), { recursive: true })
    const dump = await database.dumpDataDir({ compression: file.endsWith('.gz') ? 'gzip' : 'none' })
    await writeFile(temporary, new Uint8Array(await dump.arrayBuffer()))
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    warn(`cannot keep the prepared database in ${file} (${reason(error)}); the next start prepares it again`)
    return false
  }
  // The example's files for other sources or versions are stale: removed, as far as that goes.
  const prefix = basename(file).replace(/-pglite-.*$/, '-pglite-')
  const stale = (await readdir(dirname(file)).catch(() => [] as string[]))
    .filter((name) => name.startsWith(prefix) && /\.tar(\.gz)?$/.test(name) && name !== basename(file))
  await Promise.all(stale.map((name) => rm(join(dirname(file), name), { force: true }).catch(() => {})))
  return true
}

/** A database loaded from `file`; `undefined` when there is no file, or (warned about) when it cannot be loaded. */
async function load (
  file: string,
  options: PreparedDatabaseOptions,
  warn: (message: string) => void,
): Promise<EmbeddedDatabase<any> | undefined> {
  const prepared = await readPrepared(file, warn)
  if (prepared === undefined) return undefined
  try {
    return await createEmbeddedDatabase<any>({ loadDataDir: prepared, log: options.log })
  } catch (error) {
    warn(`cannot load ${file} (${reason(error)}); preparing the database afresh`)
    return undefined
  }
}

/**
 * A database as `initdb` leaves it: loaded from {@link initdbFile}, or made by `initdb` and dumped there (the test
 * suite's databases of their own schema start here too).
 */
export async function openFreshDatabase (options: PreparedDatabaseOptions = {}, warn: (message: string) => void = options.warn ?? defaultWarn): Promise<EmbeddedDatabase<any>> {
  const file = initdbFile()
  const loaded = await load(file, options, warn)
  if (loaded !== undefined) return loaded
  const database = await createEmbeddedDatabase<any>({ log: options.log })
  try {
    await writePrepared(database, file, warn)
    return database
  } catch (error) {
    await database.close().catch(() => {})
    throw error
  }
}

function defaultWarn (message: string): void {
  console.warn(message)
}

/** Opens an example's embedded database, migrated: from its prepared data directory when there is one. */
export async function openPreparedDatabase (schema: ExampleSchema, options: PreparedDatabaseOptions = {}): Promise<PreparedDatabase> {
  const warn = options.warn ?? defaultWarn
  const file = await preparedDatabaseFile(schema)
  let database = await load(file, options, warn)
  const loaded = database !== undefined
  if (database === undefined) {
    options.preparing?.(file)
    database = await openFreshDatabase(options, warn)
  }
  try {
    await schema.migrate(database.db)
    if (loaded) return { database, file, origin: 'loaded' }
    return { database, file, origin: await writePrepared(database, file, warn) ? 'written' : 'unwritten' }
  } catch (error) {
    await database.close().catch(() => {})
    throw error
  }
}

/**
 * Prepares an example's data directory unless its file exists already (`npm run prepare`): a fresh database (and the
 * `initdb` file, when missing), migrated, dumped into the file. Answers whether it wrote the file; a file it cannot
 * write is warned about.
 */
export async function prepareDatabaseFile (
  schema: ExampleSchema,
  options: Pick<PreparedDatabaseOptions, 'warn'> = {},
): Promise<{ readonly file: string, readonly written: boolean }> {
  const warn = options.warn ?? defaultWarn
  const file = await preparedDatabaseFile(schema)
  if (await stat(file).then(() => true, () => false)) return { file, written: false }
  try {
    await mkdir(dirname(file), { recursive: true })
  } catch (error) {
    warn(`cannot keep the prepared database in ${file} (${reason(error)}); the first start prepares it`)
    return { file, written: false }
  }
  const database = await openFreshDatabase({}, warn)
  try {
    await schema.migrate(database.db)
    return { file, written: await writePrepared(database, file, warn) }
  } finally {
    await database.close()
  }
}
