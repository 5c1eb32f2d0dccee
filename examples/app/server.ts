/**
 * The `npm start` entry of the example application.
 *
 * Environment:
 * - `DATABASE_URL`: a PostgreSQL connection string; unset → embedded in-memory PGlite.
 * - `SEED=1`: load the demo data set (only into an empty database).
 * - `HOST` (default `127.0.0.1`), `PORT` (default `3000`).
 * - `CURSOR_SECRET`: the secret that signs cursors (at least 32 characters); unset → a random key of this process.
 */
import { runServer } from '../shared/run-server.js'
import { appSchema } from '../shared/example-schemas.js'
import { buildApp } from './app.js'
import { resources } from './resources.js'
import { seed } from './seed.js'

await runServer({
  name: 'example app',
  defaultPort: 3000,
  schema: appSchema,
  resources,
  prepare: async (db) => {
    if (process.env.SEED === '1') await seed(db)
  },
  // Its logger writes to process.stdout, as console.log does: the lines printed once it listens come after Fastify's.
  build: (db) => buildApp({ db, logger: { stream: process.stdout }, cursorSecret: process.env.CURSOR_SECRET }),
})
