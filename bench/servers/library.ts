/**
 * The benchmarked library: the example application (`examples/app`, fastify-jsonapi with the example's resources)
 * on the benchmark database, opened as the example application opens PostgreSQL, logger off. Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import { buildApp } from '../../examples/app/app.js'
import { openLibraryDatabase } from './library-database.js'
import { serveBuilt } from './serve.js'
import { BENCH_CURSOR_SECRET } from './documents.js'

const { db, close } = await openLibraryDatabase()
await serveBuilt(() => buildApp({ db, logger: false, cursorSecret: BENCH_CURSOR_SECRET }), close)
