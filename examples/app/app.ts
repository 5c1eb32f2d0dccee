/**
 * Builds the example application: Fastify with the JSON:API plugin and the example's resources.
 *
 * The schema is not migrated here; callers run `migrateToLatest(db)` first (see `server.ts`).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Kysely } from 'kysely'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { jsonApi, jsonApiClientErrorHandler, jsonApiFrameworkErrors, swaggerOptions } from '../../lib/index.js'
import { resources } from './resources.js'
import { exampleContext } from './context.js'

export interface BuildAppOptions {
  /** The database the resources live in, already migrated. */
  readonly db: Kysely<any>
  /**
   * A read-only database (a streaming replica of `db`) for the reads of GET requests; writes and `/operations` stay
   * on `db` (see docs/deployment.md). Optional.
   */
  readonly readDb?: Kysely<any>
  /** Fastify's logger option (off by default). */
  readonly logger?: FastifyServerOptions['logger']
  /**
   * The secret that signs cursors (at least 32 bytes; `server.ts` takes `CURSOR_SECRET`): the same on every instance,
   * so that a cursor one gave works on another. Without it, a random key of this process (docs/deployment.md).
   */
  readonly cursorSecret?: string
}

/** Creates the Fastify instance with the plugin registered; it is ready but not listening. */
export async function buildApp (options: BuildAppOptions): Promise<FastifyInstance> {
  // Errors before any route (a URL the router refuses, bytes Node's parser refuses) as JSON:API documents too.
  const app = Fastify({ logger: options.logger ?? false, frameworkErrors: jsonApiFrameworkErrors, clientErrorHandler: jsonApiClientErrorHandler })
  // @fastify/swagger first: it collects the routes (and their schemas) as the plugin registers them.
  await app.register(swagger, swaggerOptions({
    info: { title: 'fastify-jsonapi example', version: '1.0.0', description: 'The reference service of fastify-jsonapi.' },
  }))
  // checkDatabaseSchema: `ready()` fails, listing them, when a table or column the declarations name is missing.
  const pagination = options.cursorSecret === undefined ? {} : { pagination: { cursorSecret: options.cursorSecret } }
  await app.register(jsonApi, { db: options.db, readDb: options.readDb, resources, context: exampleContext(options.db), checkDatabaseSchema: true, ...pagination })
  // The document itself, and an interactive page for it.
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(swaggerUi, { routePrefix: '/docs' })
  return app
}
