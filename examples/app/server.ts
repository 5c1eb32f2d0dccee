/**
 * The `npm start` entry of the example application.
 *
 * Environment:
 * - `DATABASE_URL`: a PostgreSQL connection string; unset → embedded in-memory PGlite.
 * - `SEED=1`: load the demo data set (only into an empty database).
 * - `HOST` (default `127.0.0.1`), `PORT` (default `3000`).
 */
import { runServer } from '../shared/run-server.js'
import { buildApp } from './app.js'
import { migrateToLatest } from './migrations.js'
import { seed } from './seed.js'

await runServer({
  defaultPort: 3000,
  migrate: (db) => migrateToLatest(db),
  prepare: async (db) => {
    if (process.env.SEED === '1') await seed(db)
  },
  build: (db) => buildApp({ db, logger: true }),
})
