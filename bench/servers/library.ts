/**
 * The benchmarked library: the example application (`examples/app`, fastify-jsonapi with the example's resources)
 * on the benchmark database, logger off. Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import { buildApp } from '../../examples/app/app.js'
import { openDatabase, serve } from './serve.js'

const db = openDatabase()
try {
  const app = await buildApp({ db, logger: false })
  await serve(app, () => db.destroy())
} catch (error) {
  console.error(error)
  await db.destroy().catch(() => {})
  process.exit(1)
}
