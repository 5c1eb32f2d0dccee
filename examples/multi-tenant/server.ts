/**
 * The runnable entry of the multi-tenant example: `node --import tsx examples/multi-tenant/server.ts`.
 *
 * Environment:
 * - `DATABASE_URL`: a PostgreSQL connection string; unset → embedded in-memory PGlite (empty at every start).
 * - `HOST` (default `127.0.0.1`), `PORT` (default `3001`).
 */
import { runServer } from '../shared/run-server.js'
import { multiTenantSchema } from '../shared/example-schemas.js'
import { buildTenantApp } from './app.js'
import { resources } from './resources.js'

await runServer({
  name: 'multi-tenant example',
  defaultPort: 3001,
  schema: multiTenantSchema,
  resources,
  apiNote: 'name the tenant in an X-Tenant header',
  // Its logger writes to process.stdout, as console.log does: the lines printed once it listens come after Fastify's.
  build: (db) => buildTenantApp({ db, logger: { stream: process.stdout } }),
})
