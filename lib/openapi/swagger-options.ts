/** The parts of an OpenAPI document an application sets itself (everything else is generated). */
export interface OpenApiDocumentOptions {
  /** Title, version and description of the API (default: `JSON:API`, `1.0.0`). */
  readonly info?: { readonly title: string; readonly version: string; readonly description?: string; readonly [key: string]: unknown }
  /** Where the API is served, e.g. `[{ url: 'https://api.example.com' }]`. */
  readonly servers?: ReadonlyArray<{ readonly url: string; readonly description?: string; readonly [key: string]: unknown }>
  /** Any other top-level member of the document (`tags`, `externalDocs`, `security`, `components`…). */
  readonly [member: string]: unknown
}

/** Options for `@fastify/swagger`, as {@link swaggerOptions} returns them. */
export interface SwaggerPluginOptions {
  readonly openapi: Record<string, unknown>
  readonly refResolver: {
    readonly buildLocalReference: (json: Record<string, unknown>, baseUri: unknown, fragment: unknown, index: number) => string
  }
}

/**
 * Options for `@fastify/swagger` that produce an OpenAPI 3.1 document from the plugin's route schemas, with the
 * shared JSON:API schemas under their own names in `components.schemas` (`user.resource`, `jsonapi.errors`) rather
 * than `def-0`, `def-1`…. Register `@fastify/swagger` with them before the plugin.
 *
 * @example
 * ```ts
 * import swagger from '@fastify/swagger'
 *
 * await app.register(swagger, swaggerOptions({ info: { title: 'Library API', version: '2.1.0' } }))
 * await app.register(jsonApi, { db, resources })
 * await app.ready()
 * const document = app.swagger()
 * ```
 */
export function swaggerOptions (document: OpenApiDocumentOptions = {}): SwaggerPluginOptions {
  return {
    openapi: { openapi: '3.1.0', ...document, info: document.info ?? { title: 'JSON:API', version: '1.0.0' } },
    refResolver: {
      buildLocalReference (json, _baseUri, _fragment, index) {
        return typeof json.$id === 'string' ? json.$id : `def-${index}`
      },
    },
  }
}
