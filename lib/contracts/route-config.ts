/**
 * What a route of the plugin does, on `request.routeOptions.config.jsonapi`, so that the application's own Fastify
 * hooks can authorise per type and action too.
 */
export type JsonApiAction =
  | 'list' | 'create' | 'read' | 'update' | 'delete'
  | 'read-related' | 'create-related' | 'update-related' | 'delete-related'
  | 'read-relationship' | 'replace-relationship' | 'add-relationship' | 'remove-relationship'
  | 'operations'
  /** A method the URL does not serve (405). */
  | 'method-not-allowed'
  /** A relationship name the type does not have (404). */
  | 'unknown-relationship'

/**
 * The route metadata of every route the plugin registers.
 *
 * @example
 * ```ts
 * app.addHook('preHandler', async (request) => {
 *   const route = request.routeOptions.config.jsonapi
 *   if (route?.type === 'invoice' && route.action === 'delete' && !isAdmin(request)) {
 *     throw new JsonApiError({ status: 403, detail: 'only administrators delete invoices' })
 *   }
 * })
 * ```
 */
export interface JsonApiRouteConfig {
  /** The resource type of the URL (`/users/…` → `user`); absent on the operations endpoint. */
  readonly type?: string
  readonly action: JsonApiAction
  /** The relationship of a related or relationship route. */
  readonly relationship?: string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by fastify-jsonapi on the routes it registers. */
    jsonapi?: JsonApiRouteConfig
  }
}
