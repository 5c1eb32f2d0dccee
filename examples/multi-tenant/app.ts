/**
 * Builds the multi-tenant example: Fastify with the JSON:API plugin, the example's resources, and a request context
 * that names the tenant.
 *
 * The example stands in for authentication with a header: `X-Tenant: <tenant>` names the tenant of the request. A
 * real service derives the tenant from a verified token or a session (and may load what it needs asynchronously)
 * the same way, in the plugin's `context` option. A request without a valid tenant is refused before anything else
 * of it is read.
 *
 * The schema is not migrated here; callers run `migrateToLatest(db)` first (see `server.ts`).
 */
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Kysely } from 'kysely'
import swagger from '@fastify/swagger'
import { jsonApi, JsonApiError, swaggerOptions } from '../../lib/index.js'
import { resources, type TenantContext } from './resources.js'

/** A tenant name: lowercase letters, digits and dashes, 1 to 40 characters. */
const TENANT = /^[a-z0-9-]{1,40}$/

function unknownTenant (detail: string): JsonApiError {
  return new JsonApiError({
    status: 401,
    code: 'unknown_tenant',
    title: 'Unknown tenant',
    detail,
    source: { header: 'X-Tenant' },
  })
}

/** The plugin's `context` option: the tenant of the `X-Tenant` header; 401 when it is missing or malformed. */
export function tenantContext (request: FastifyRequest): TenantContext {
  const header = request.headers['x-tenant']
  if (header === undefined) throw unknownTenant('name the tenant in the X-Tenant header')
  const value = Array.isArray(header) ? header.join(',') : header
  if (!TENANT.test(value)) {
    throw unknownTenant(`X-Tenant '${value.slice(0, 40)}' is not a tenant name (1 to 40 lowercase letters, digits and dashes)`)
  }
  return { tenant: value }
}

export interface BuildTenantAppOptions {
  /** The database the resources live in, already migrated. */
  readonly db: Kysely<any>
  /** Fastify's logger option (off by default). */
  readonly logger?: FastifyServerOptions['logger']
}

/** Creates the Fastify instance with the plugin registered; it is ready but not listening. */
export async function buildTenantApp (options: BuildTenantAppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false })
  // The API's OpenAPI document, at GET /openapi.json; every tenant sees the same routes (and 401 without a tenant).
  await app.register(swagger, swaggerOptions({ info: { title: 'fastify-jsonapi multi-tenant example', version: '1.0.0' } }))
  await app.register(jsonApi, { db: options.db, resources, context: tenantContext, checkDatabaseSchema: true })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  return app
}
