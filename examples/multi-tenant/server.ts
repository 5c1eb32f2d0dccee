/**
 * The runnable entry of the multi-tenant example: `node --import tsx examples/multi-tenant/server.ts`.
 *
 * Environment:
 * - `DATABASE_URL`: a PostgreSQL connection string; unset → embedded in-memory PGlite (empty at every start).
 * - `HOST` (default `127.0.0.1`), `PORT` (default `3001`).
 */
import { runServer } from '../shared/run-server.js'
import { buildTenantApp } from './app.js'
import { migrateToLatest } from './migrations.js'

await runServer({
  defaultPort: 3001,
  migrate: (db) => migrateToLatest(db),
  build: (db) => buildTenantApp({ db, logger: true }),
})
