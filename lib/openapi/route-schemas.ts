import type { FastifyInstance, FastifySchema, FastifySchemaCompiler, RouteOptions } from 'fastify'
import type { ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import { includePage, type QueryLimits } from '../contracts/query-limits.js'
import type { JsonApiAction } from '../contracts/route-config.js'
import { ATOMIC_EXTENSION, CURSOR_MEDIA_TYPE, JSONAPI_MEDIA_TYPE } from '../contracts/media-types.js'
import { documentJson } from '../document/json-text.js'
import { BUILTIN_OPERATORS } from '../query/builtin-operators.js'
import { OpenApiComponents, type JsonSchema } from './components.js'

const ATOMIC_MEDIA_TYPE = `${JSONAPI_MEDIA_TYPE}; ext="${ATOMIC_EXTENSION}"`
/** The media type of a cursor page (the cursor pagination profile applied). */

/** What every route of a registration is described with. */
export interface RouteDocsSettings {
  readonly graph: ResourceGraph
  readonly limits: QueryLimits
  /** The registration's route prefix (`fastify.prefix`): it names its components apart from another registration's. */
  readonly prefix: string
  /** Whether the atomic operations endpoint is served. */
  readonly operations: boolean
  /** Error statuses every route may answer besides its own: the application's (its `context`, its hooks). */
  readonly errors: readonly number[]
}

/** Route options that describe a route without taking over its validation or serialization. */
export type DescribedRoute = Pick<RouteOptions, 'schema' | 'validatorCompiler' | 'serializerCompiler'>

const REASONS: Readonly<Record<number, string>> = {
  400: 'A query parameter, the body or a value in it is malformed (`source` names it).',
  401: 'The application did not recognise the caller (its `context` or hooks).',
  429: 'Too many requests (the application\'s limit).',
  503: 'The database is unavailable, timed out, or kept conflicting with concurrent changes; nothing was written. Retry after `Retry-After` seconds.',
  403: 'Refused: a client id where none is allowed, a read-only relationship, or the application\'s rules.',
  404: 'The resource, or a related resource the body names, does not exist or is not visible.',
  406: 'Every JSON:API media type in `Accept` carries parameters the server does not support.',
  409: 'The body conflicts: a type or id that does not match, a unique value that exists, rows that still refer to it.',
  413: 'The body is too large (or has too many operations).',
  415: 'The `Content-Type` is not JSON:API (or JSON), or names an unsupported extension.',
  412: 'If-Match names none of the resource\'s current ETags (the ETag of `GET /<type>/<id>`): it changed since it was read; nothing was written.',
  422: 'A field is invalid, missing, unknown or read-only (`source.pointer` names it).',
  428: 'The resource requires If-Match on its writes, and the request has none.',
  500: 'The server failed; nothing was written.',
}

/** The media types of a resource or linkage body (plain JSON too: the plugin reads both). */
const BODY_MEDIA_TYPES: readonly string[] = Object.freeze([JSONAPI_MEDIA_TYPE, 'application/json'])
/**
 * The schemas describe requests; the plugin's own readers validate them (with JSON:API errors). The compiler answers
 * no validator at all, so that Fastify skips each part of every request (params, query, headers, body) instead of
 * calling a validator that accepts everything.
 */
const NO_VALIDATION = ((): undefined => undefined) as unknown as FastifySchemaCompiler<unknown>
/** Responses are serialized as `JSON.stringify` would (the routes send JSON text): the schemas describe, they do not filter. */
const PLAIN_SERIALIZER = (): ((value: unknown) => string) => documentJson

function pascal (text: string): string {
  return text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((part) => part[0].toUpperCase() + part.slice(1)).join('')
}

/**
 * Builds the schema of every route of a registration from the resource declarations, for `@fastify/swagger` (or any
 * reader of route schemas): parameters, request bodies and responses per status, all as JSON:API documents under
 * `application/vnd.api+json`, with shared parts as schemas of the plugin's scope (`addSchema`). The plugin's own
 * readers keep validating requests: the schemas never replace them.
 */
export class RouteDocs {
  readonly components: OpenApiComponents
  readonly #settings: RouteDocsSettings
  readonly #namespace: string
  readonly #operationIds = new Set<string>()

  constructor (settings: RouteDocsSettings) {
    this.#settings = settings
    this.#namespace = settings.prefix === '' ? '' : `${settings.prefix.replace(/^\/+/, '').replace(/[^A-Za-z0-9_-]+/g, '_')}.`
    this.components = new OpenApiComponents(settings.graph, settings.limits.maxIncludeDepth, this.#namespace, settings.operations)
  }

  /** Adds the shared schemas to the plugin's scope. */
  register (fastify: FastifyInstance): void {
    for (const [id, schema] of this.components.schemas) fastify.addSchema({ $id: id, ...schema })
  }

  /** A route the document leaves out (405 answers, catch-alls). */
  hidden (): DescribedRoute {
    return { schema: { hide: true } as FastifySchema }
  }

  /** The description of one route of a resource (or of a relationship of it). */
  route (action: JsonApiAction, resource: ResolvedResource, relationship?: ResolvedRelationship): DescribedRoute {
    const schema = this.#conditional(action, resource, this.#schema(action, resource, relationship))
    return { schema: schema as FastifySchema, validatorCompiler: NO_VALIDATION, serializerCompiler: PLAIN_SERIALIZER }
  }

  /** The description of the atomic operations endpoint. */
  operations (): DescribedRoute {
    const c = this.components
    const schema: JsonSchema = {
      operationId: this.#operationId('runOperations'),
      summary: 'Atomic operations',
      description: 'Runs every operation in one transaction (JSON:API atomic extension): all succeed, or none has any effect.',
      tags: ['operations'],
      ...this.#body(c.ref('jsonapi.operations'), [ATOMIC_MEDIA_TYPE, JSONAPI_MEDIA_TYPE]),
      response: {
        200: { description: 'The results, in order.', content: { [ATOMIC_MEDIA_TYPE]: { schema: c.ref('jsonapi.operation-results') }, [JSONAPI_MEDIA_TYPE]: { schema: c.ref('jsonapi.operation-results') } } },
        204: { description: 'Every operation was a removal: no content.', type: 'null' },
        ...this.#errors([400, 403, 404, 406, 409, 412, 413, 415, 422, 500, ...(this.#settings.graph.resources.some((resource) => resource.requireIfMatch) ? [428] : [])]),
      },
    }
    return { schema: schema as FastifySchema, validatorCompiler: NO_VALIDATION, serializerCompiler: PLAIN_SERIALIZER }
  }

  /**
   * Conditional requests: a read's 200 carries an `ETag` and `If-None-Match` may make it a 304; a write of an existing
   * resource takes `If-Match` and may answer 412 (or 428 when the resource requires it).
   */
  #conditional (action: JsonApiAction, resource: ResolvedResource, schema: JsonSchema): JsonSchema {
    const response = schema.response as Record<string, JsonSchema>
    if (action === 'list' || action === 'read' || action === 'read-related' || action === 'read-relationship') {
      const ok = response[200]
      return {
        ...schema,
        headers: { type: 'object', properties: { 'if-none-match': { type: 'string', description: 'ETags of representations the client holds: a 304 when one is current.' } } },
        response: {
          ...response,
          200: { ...ok, headers: { ...(ok.headers as JsonSchema | undefined), ETag: { type: 'string', description: 'The entity tag of this representation (strong: a hash of the bytes).' } } },
          304: { description: 'Not modified: the `If-None-Match` holds the current ETag. No body.', type: 'null', headers: { ETag: { type: 'string' } } },
        },
      }
    }
    if (action === 'update' || action === 'delete' || action === 'replace-relationship' || action === 'add-relationship' || action === 'remove-relationship') {
      return {
        ...schema,
        headers: { type: 'object', properties: { 'if-match': { type: 'string', description: '`*` or the ETag of `GET /<type>/<id>`: the write happens only while it is current (else 412).' } } },
        response: { ...response, ...this.#errors(resource.requireIfMatch ? [412, 428] : [412]) },
      }
    }
    return schema
  }

  #operationId (base: string): string {
    let id = `${this.#namespace === '' ? '' : pascal(this.#namespace)}${base}`
    id = id[0].toLowerCase() + id.slice(1)
    let unique = id
    for (let n = 2; this.#operationIds.has(unique); n++) unique = `${id}${n}`
    this.#operationIds.add(unique)
    return unique
  }

  /** Error responses; a route that can fail (500) can meet a fault of the database too (503 with `Retry-After`). */
  #errors (statuses: readonly number[], paged = false): Record<string, JsonSchema> {
    const all = new Set([...statuses, ...(statuses.includes(500) ? [503] : []), ...this.#settings.errors])
    const responses: Record<string, JsonSchema> = {}
    for (const status of [...all].sort()) {
      responses[status] = {
        description: REASONS[status] ?? 'Refused by the application.',
        ...(status === 503 ? { headers: { 'Retry-After': { type: 'string', pattern: '^[0-9]+$', description: 'Seconds to wait before retrying.' } } } : {}),
        content: {
          [JSONAPI_MEDIA_TYPE]: { schema: this.components.ref('jsonapi.errors') },
          // A page's 400 may be an error of the cursor pagination profile, sent under the media type that names it.
          ...(paged && status === 400 ? { [CURSOR_MEDIA_TYPE]: { schema: this.components.ref('jsonapi.errors') } } : {}),
        },
      }
    }
    return responses
  }

  #success (status: number, description: string, component: string, headers?: JsonSchema): Record<string, JsonSchema> {
    return { [status]: { description, ...(headers === undefined ? {} : { headers }), content: { [JSONAPI_MEDIA_TYPE]: { schema: this.components.ref(component) } } } }
  }

  /** A page of a collection: by number, or by cursor (then under the media type that names the profile). */
  #page (description: string, component: string): Record<string, JsonSchema> {
    const schema = { schema: this.components.ref(component) }
    return { 200: { description, content: { [JSONAPI_MEDIA_TYPE]: schema, [CURSOR_MEDIA_TYPE]: schema } } }
  }

  /**
   * A request body: its schema, and the media types it is sent as in `consumes` (what `@fastify/swagger` turns into
   * the body's `content`). Not `body.content`: for that, Fastify keeps a validator per media type, and then calls its
   * validation on every request even though each of them is none (`NO_VALIDATION`).
   */
  #body (schema: JsonSchema, consumes: readonly string[] = BODY_MEDIA_TYPES): JsonSchema {
    return { body: schema, consumes }
  }

  #params (resource: ResolvedResource): JsonSchema {
    return { type: 'object', required: ['id'], properties: { id: this.components.ref(this.components.of(resource, 'id')) } }
  }

  #schema (action: JsonApiAction, resource: ResolvedResource, relationship?: ResolvedRelationship): JsonSchema {
    const c = this.components
    const graph = this.#settings.graph
    const type = resource.type
    const target = relationship === undefined ? resource : graph.getResource(relationship.targetType)
    const of = (part: string): string => c.of(target, part)
    const reads = [400, 404, 406, 415, 500]
    const writes = [400, 403, 404, 406, 409, 413, 415, 422, 500]
    const created = { Location: { type: 'string', format: 'uri-reference', description: 'The URL of the new resource.' } }
    const deleted = this.#success(200, 'Deleted.', 'jsonapi.meta-document')
    const name = relationship?.name ?? ''
    const base = { tags: [type], params: this.#params(resource) }
    switch (action) {
      case 'list':
        return {
          operationId: this.#operationId(`list${pascal(type)}`),
          summary: `List ${type} resources`,
          tags: [type],
          querystring: this.#query(resource, true),
          response: { ...this.#page(`A page of \`${type}\` resources.`, of('collection')), ...this.#errors([400, 406, 415, 500], true) },
        }
      case 'create':
        return {
          operationId: this.#operationId(`create${pascal(type)}`),
          summary: `Create a ${type}`,
          tags: [type],
          querystring: this.#query(resource, false),
          ...this.#body(c.ref(of('create'))),
          response: { ...this.#success(201, 'Created.', of('document'), created), ...this.#errors(writes) },
        }
      case 'read':
        return {
          operationId: this.#operationId(`read${pascal(type)}`),
          summary: `Fetch a ${type}`,
          ...base,
          querystring: this.#query(resource, false),
          response: { ...this.#success(200, `The \`${type}\`.`, of('document')), ...this.#errors(reads) },
        }
      case 'update':
        return {
          operationId: this.#operationId(`update${pascal(type)}`),
          summary: `Update a ${type}`,
          ...base,
          querystring: this.#query(resource, false),
          ...this.#body(c.ref(of('update'))),
          response: { ...this.#success(200, `The \`${type}\` as stored.`, of('document')), ...this.#errors(writes) },
        }
      case 'delete':
        return {
          operationId: this.#operationId(`delete${pascal(type)}`),
          summary: `Delete a ${type}`,
          ...base,
          response: { ...deleted, ...this.#errors([400, 404, 406, 409, 413, 415, 500]) },
        }
      case 'read-related': {
        const rel = relationship as ResolvedRelationship
        return {
          operationId: this.#operationId(`read${pascal(type)}${pascal(name)}`),
          summary: `Fetch the ${name} of a ${type}`,
          ...base,
          querystring: this.#query(target, rel.toMany),
          response: {
            ...(rel.toMany
              ? this.#page(`The \`${target.type}\` resources of \`${name}\`.`, of('collection'))
              : this.#success(200, `The \`${target.type}\` of \`${name}\`, or \`null\`.`, of('nullable-document'))),
            ...this.#errors(reads, rel.toMany),
          },
        }
      }
      case 'create-related': {
        const rel = relationship as ResolvedRelationship
        const implied = new Set(rel.storage.kind === 'inverse' ? [rel.storage.inverseName] : [])
        return {
          operationId: this.#operationId(`create${pascal(type)}${pascal(name)}`),
          summary: `Create a ${target.type} in the ${name} of a ${type}`,
          description: rel.toMany ? `Creates the resource and adds it to \`${name}\`.` : `Creates the resource and makes it the \`${name}\`.`,
          ...base,
          querystring: this.#query(target, false),
          ...this.#body(implied.size === 0 ? c.ref(of('create')) : c.writeDocument(c.writeData(target, 'create', implied), `Creates a \`${target.type}\`; \`${[...implied].join('`, `')}\` is set by the URL.`)),
          response: { ...this.#success(201, 'Created.', of('document'), created), ...this.#errors(writes) },
        }
      }
      case 'update-related':
        return {
          operationId: this.#operationId(`update${pascal(type)}${pascal(name)}`),
          summary: `Update the ${name} of a ${type}`,
          ...base,
          querystring: this.#query(target, false),
          ...this.#body(c.ref(of('update'))),
          response: { ...this.#success(200, `The \`${target.type}\` as stored.`, of('nullable-document')), ...this.#errors(writes) },
        }
      case 'delete-related':
        return {
          operationId: this.#operationId(`delete${pascal(type)}${pascal(name)}`),
          summary: `Delete the ${name} of a ${type}`,
          ...base,
          response: { ...deleted, ...this.#errors([400, 404, 406, 409, 413, 415, 500]) },
        }
      case 'read-relationship': {
        const rel = relationship as ResolvedRelationship
        return {
          operationId: this.#operationId(`read${pascal(type)}${pascal(name)}Relationship`),
          summary: `Fetch the linkage of the ${name} of a ${type}`,
          ...base,
          querystring: this.#query(target, rel.toMany, true, rel),
          response: {
            ...(rel.toMany
              ? this.#page(`The linkage of \`${name}\`.`, of('to-many-linkage-document'))
              : this.#success(200, `The linkage of \`${name}\`.`, of('to-one-linkage-document'))),
            ...this.#errors(reads, rel.toMany),
          },
        }
      }
      case 'replace-relationship': {
        const rel = relationship as ResolvedRelationship
        const linkage = c.linkageBody(rel)
        return {
          operationId: this.#operationId(`replace${pascal(type)}${pascal(name)}Relationship`),
          summary: `Replace the ${name} of a ${type}`,
          ...base,
          ...this.#body(linkage),
          response: {
            200: {
              description: 'The new linkage.',
              content: {
                [JSONAPI_MEDIA_TYPE]: {
                  schema: {
                    type: 'object',
                    required: ['data', 'links', 'meta'],
                    properties: { links: c.ref('jsonapi.relationship-links'), data: (linkage.properties as JsonSchema).data, meta: c.ref('jsonapi.meta'), jsonapi: c.ref('jsonapi.object') },
                    additionalProperties: false,
                  },
                },
              },
            },
            ...this.#errors(writes),
          },
        }
      }
      case 'add-relationship':
      case 'remove-relationship': {
        const rel = relationship as ResolvedRelationship
        const verb = action === 'add-relationship' ? 'add' : 'remove'
        return {
          operationId: this.#operationId(`${verb}${pascal(type)}${pascal(name)}Members`),
          summary: `${verb === 'add' ? 'Add' : 'Remove'} members ${verb === 'add' ? 'to' : 'from'} the ${name} of a ${type}`,
          ...(rel.toMany ? {} : { description: 'A to-one relationship has no members: 403 for a resource the request can see, else 404.' }),
          ...base,
          ...(rel.toMany ? this.#body(c.linkageBody(rel)) : {}),
          response: rel.toMany
            ? { ...this.#success(200, 'Done.', 'jsonapi.meta-document'), ...this.#errors(writes) }
            : this.#errors([403, 404, 406, 500]),
        }
      }
      default:
        throw new Error(`fastify-jsonapi: no route description for '${action}'`)
    }
  }

  /** The last step of an include path written from `owner`: its relationship and the type that has it. */
  #lastStep (owner: ResolvedResource, path: string): { readonly relationship: ResolvedRelationship; readonly owner: ResolvedResource } {
    let current = owner
    const names = path.split('.')
    for (const name of names.slice(0, -1)) current = this.#settings.graph.getResource((current.relationships.get(name) as ResolvedRelationship).targetType)
    return { relationship: current.relationships.get(names[names.length - 1]) as ResolvedRelationship, owner: current }
  }

  /** The query parameters of a route that returns resources of `resource` (`collection`: a page of them). */
  #query (resource: ResolvedResource, collection: boolean, documents = true, linkage?: ResolvedRelationship): JsonSchema {
    const c = this.components
    const limits = this.#settings.limits
    const properties: Record<string, JsonSchema> = {}
    if (documents) {
      const { paths, types } = c.includable(resource)
      if (linkage !== undefined) {
        // A relationship route: `include` written from the owner; `fields` apply to what it includes.
        properties.include = c.linkageInclude(linkage, limits)
      } else if (paths.length > 0) {
        properties.include = { allOf: [c.ref(c.of(resource, 'include'))], description: `Related resources to include: at most ${limits.maxIncludePaths} comma-separated paths, each at most ${limits.maxIncludeDepth} relationships deep.` }
      }
      for (const type of [resource, ...types.filter((other) => other !== resource)]) {
        properties[`fields[${type.type}]`] = { allOf: [c.ref(c.of(type, 'fields'))], description: `The fields of \`${type.type}\` to return, comma-separated (all by default).` }
      }
      const owner = linkage === undefined ? resource : this.#settings.graph.getResource(linkage.ownerType)
      const written = linkage === undefined ? paths : c.linkageIncludePaths(linkage, limits).paths.filter((path) => path !== linkage.name)
      for (const path of written) {
        const step = this.#lastStep(owner, path)
        if (!step.relationship.toMany) continue
        const { size, maxSize } = includePage(step.relationship, step.owner, this.#settings.graph.getResource(step.relationship.targetType), limits)
        properties[`page[${path}][size]`] = {
          type: 'integer',
          minimum: 1,
          maximum: maxSize,
          description: `With \`${path}\` in \`include\`: the most \`${step.relationship.targetType}\` resources included per \`${step.owner.type}\` (default ${size}), by id; each relationship object tells \`meta.count\` and links \`next\` to the rest.`,
        }
      }
    }
    if (!collection) return { type: 'object', properties }
    properties.sort = { allOf: [c.ref(c.of(resource, 'sort'))], description: `At most ${limits.sort.maxKeys} sort keys, comma-separated, each following at most ${limits.sort.maxDepth} to-one relationships; \`-\` for descending.` }
    properties.filter = {
      'x-consume': 'application/json',
      type: 'array',
      items: c.ref(c.of(resource, 'filter-item')),
      description: 'The JSON filter: an array of filter objects (ANDed), URL-encoded (`[{"name":"age","op":"gt","val":30}]`); a lone object is a 400. See docs/querying.md.',
    }
    for (const attribute of [resource.idAttribute, ...resource.visibleAttributes]) {
      if (!attribute.filterable || !(attribute.operators.has('eq') || BUILTIN_OPERATORS.eq.kinds.includes(attribute.valueKind))) continue
      properties[`filter[${attribute.name}]`] = { type: 'string', description: `Only resources whose \`${attribute.name}\` equals this value.` }
    }
    for (const name of c.countNames(resource)) {
      properties[`filter[${name}]`] = { type: 'string', pattern: '^(?:0|[1-9][0-9]*)$', description: `Only resources with this many related resources (\`${name}\`, those the request may see).` }
    }
    for (const relationship of resource.relationships.values()) {
      properties[`filter[${relationship.name}_id]`] = { type: 'string', description: `Only resources related through \`${relationship.name}\` to the resource of this id.` }
    }
    const maxSize = resource.pagination.maxSize ?? limits.maxPageSize
    const defaultSize = resource.pagination.defaultSize ?? limits.defaultPageSize
    properties['page[number]'] = { type: 'integer', minimum: 1, description: 'The page, from 1 (not with `page[after]` or `page[before]`).' }
    properties['page[size]'] = {
      type: 'integer',
      minimum: limits.unpaged === 'forbidden' ? 1 : 0,
      maximum: maxSize,
      description: `Resources per page (default ${Math.min(defaultSize, maxSize)}, at most ${maxSize})${limits.unpaged === 'allowed' ? '; 0 returns every resource' : limits.unpaged === 'capped' ? `; 0 returns ${maxSize}` : ''}. ` +
        `A cursor page has at least 1; a range (\`page[after]\` with \`page[before]\`) defaults to ${maxSize}.`,
    }
    const cursor = 'An opaque cursor from `meta.page.cursor` of a resource, or from the `prev` / `next` links of a cursor page of this collection with the same `sort` and filter (cursor pagination profile). '
    properties['page[after]'] = { type: 'string', minLength: 1, description: `${cursor}The page starts right after it.` }
    properties['page[before]'] = { type: 'string', minLength: 1, description: `${cursor}The page ends right before it; with \`page[after]\`, the rows between both (a range).` }
    return { type: 'object', properties }
  }
}
