/**
 * The benchmarked library on the application's own Kysely instance, built as `docs/getting-started.md` says: a plain
 * `pg.Pool` (with an `error` listener) under the library's dialect, `JsonApiPostgresDialect`, instead of the
 * library's `createPostgresDatabase`. The example application on it, logger off. Started by `bench/run.ts` as a child
 * process; see `serve.ts`.
 */
import pg from 'pg'
import { Kysely } from 'kysely'
import { JsonApiPostgresDialect } from '../../lib/index.js'
import { buildApp } from '../../examples/app/app.js'
import { BENCH_CURSOR_SECRET } from './documents.js'
import { POOL_SETTINGS, benchDatabaseUrl, serveBuilt } from './serve.js'

const pool = new pg.Pool({ connectionString: benchDatabaseUrl(), ...POOL_SETTINGS })
pool.on('error', () => {})
const db = new Kysely<any>({ dialect: new JsonApiPostgresDialect({ pool }) })
const close = (): Promise<void> => db.destroy()
await serveBuilt(() => buildApp({ db, logger: false, cursorSecret: BENCH_CURSOR_SECRET }), close)
