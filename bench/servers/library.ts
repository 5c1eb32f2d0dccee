/**
 * The benchmarked library: the example application (`examples/app`, fastify-jsonapi with the example's resources)
 * on the benchmark database, opened as the example application opens PostgreSQL, logger off. Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import { buildApp } from '../../examples/app/app.js'
import { openLibraryDatabase } from './library-database.js'
import { serve } from './serve.js'

const { db, close } = await openLibraryDatabase()
try {
  const app = await buildApp({ db, logger: false })
  await serve(app, close)
} catch (error) {
  console.error(error)
  await close().catch(() => {})
  process.exit(1)
}
