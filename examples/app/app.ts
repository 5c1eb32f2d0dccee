/**
 * Builds the example application: Fastify with the JSON:API plugin and the example's resources.
 *
 * The schema is not migrated here; callers run `migrateToLatest(db)` first (see `server.ts`).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Kysely } from 'kysely'
import { jsonApi } from '../../lib/index.js'
import { resources } from './resources.js'
import { exampleContext } from './context.js'

export interface BuildAppOptions {
  /** The database the resources live in, already migrated. */
  readonly db: Kysely<any>
  /** Fastify's logger option (off by default). */
  readonly logger?: FastifyServerOptions['logger']
}

/** Creates the Fastify instance with the plugin registered; it is ready but not listening. */
export async function buildApp (options: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false })
  await app.register(jsonApi, { db: options.db, resources, context: exampleContext(options.db) })
  return app
}
