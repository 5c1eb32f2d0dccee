import type { TSchema } from '@sinclair/typebox'
import type { CountStrategy, ResolvedAttribute, ResolvedRelationship, ResolvedResource, ResourceGraph } from '../schema/resolved.js'
import { BUILTIN_OPERATORS, FIELD_OPERATORS, fieldsComparable, operatorApplies } from '../query/builtin-operators.js'
import type { BuiltinOperator } from '../schema/filter-nodes.js'

/** A JSON Schema (2020-12, as OpenAPI 3.1 reads it), plain data. */
export type JsonSchema = Record<string, unknown>

/** A reference to a shared schema, in the form Fastify's `addSchema` resolves (`<$id>#`). */
export function ref (id: string): JsonSchema {
  return { $ref: `${id}#` }
}

/** A copy of a TypeBox schema as plain JSON Schema: TypeBox's symbol keys are dropped. */
export function plain (schema: TSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema
}

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] })
const closed = (properties: Record<string, JsonSchema>, required: readonly string[] = []): JsonSchema =>
  ({ type: 'object', ...(required.length === 0 ? {} : { required: [...required] }), properties, additionalProperties: false })
const arrayOf = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra })
/** Whether a to-one relationship may be emptied (`data: null`); a to-many is emptied with `[]` whatever this says. */
const clearable = (relationship: ResolvedRelationship): boolean => relationship.storage.kind !== 'join' && relationship.storage.nullable
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A pattern for a comma-separated list of the given items (each optionally prefixed by `-` when `signed`). */
export function listPattern (items: readonly string[], signed = false, empty = false): string {
  const item = `${signed ? '-?' : ''}(?:${items.map(escapeRegExp).join('|')})`
  return `^${empty ? '(?:' : ''}${item}(?:,${item})*${empty ? ')?' : ''}$`
}

/** The schema of a type's ids on the wire (always strings), by id kind. */
function idSchema (resource: ResolvedResource): JsonSchema {
  switch (resource.idKind) {
    case 'integer': return { type: 'string', pattern: '^(?:0|[1-9][0-9]*)$', description: 'An integer, as a string.' }
    case 'bigint': return { type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$', description: 'A 64-bit integer (at most 9223372036854775807), as a string.' }
    case 'uuid': return { type: 'string', format: 'uuid', description: 'A UUID.' }
    case 'text': return {
      type: 'string',
      pattern: (resource.idPattern as RegExp).source,
      ...(resource.idMaxLength === undefined ? {} : { maxLength: resource.idMaxLength }),
      description: 'A text id.',
    }
  }
}

/** The component of the `meta` of a collection, by the count strategy of its type. */
const COLLECTION_META: Readonly<Record<CountStrategy, string>> = {
  exact: 'jsonapi.collection-meta',
  estimated: 'jsonapi.estimated-collection-meta',
  none: 'jsonapi.uncounted-collection-meta',
}

/** The most include paths (and sort keys) listed for one resource; beyond it the document lists the first ones only. */
const MAX_LISTED_PATHS = 300

/**
 * The JSON:API schemas of one registration, shared by its routes: documents, resource objects, identifiers, write
 * bodies and filters of every type, named `<type>.<part>` (`user.resource`, `user.create`) plus `jsonapi.<part>` for
 * what every type shares (`jsonapi.errors`). The routes reference them; `@fastify/swagger` turns them into
 * `components.schemas`.
 */
export class OpenApiComponents {
  readonly schemas = new Map<string, JsonSchema>()
  readonly #graph: ResourceGraph
  readonly #maxIncludeDepth: number
  readonly #namespace: string
  readonly #includePaths = new Map<ResolvedResource, { readonly paths: string[]; readonly types: ResolvedResource[]; readonly complete: boolean }>()

  constructor (graph: ResourceGraph, maxIncludeDepth: number, namespace: string, operations: boolean) {
    this.#graph = graph
    this.#maxIncludeDepth = maxIncludeDepth
    this.#namespace = namespace
    this.#shared(operations)
    for (const resource of graph.resources) this.#resource(resource)
  }

  /** The `$id` of a component. */
  id (name: string): string {
    return `${this.#namespace}${name}`
  }

  /** A reference to a component. */
  ref (name: string): JsonSchema {
    return ref(this.id(name))
  }

  /** The component name of a part of a type (`user.resource`). */
  of (resource: ResolvedResource, part: string): string {
    return `${resource.type.replace(/[^A-Za-z0-9_-]/g, '_')}.${part}`
  }

  #add (name: string, schema: JsonSchema): void {
    this.schemas.set(this.id(name), schema)
  }

  #shared (operations: boolean): void {
    const link = { type: 'string', format: 'uri-reference' }
    this.#add('jsonapi.link', link)
    this.#add('jsonapi.object', {
      type: 'object',
      description: 'The `jsonapi` member: the version of JSON:API the document follows and the extensions it uses.',
      properties: { version: { type: 'string' }, ext: arrayOf({ type: 'string', format: 'uri' }), profile: arrayOf({ type: 'string', format: 'uri' }), meta: { type: 'object' } },
      additionalProperties: false,
    })
    this.#add('jsonapi.meta', { type: 'object', description: 'Non-standard information.' })
    this.#add('jsonapi.item-meta', {
      type: 'object',
      description: 'Non-standard information. In a cursor page (cursor pagination profile), `page.cursor`: the cursor of this item, for `page[after]` or `page[before]`.',
      properties: { page: { type: 'object', properties: { cursor: { type: 'string', description: 'An opaque cursor.' } } } },
    })
    this.#add('jsonapi.error', {
      ...closed({
        id: { type: 'string' },
        links: closed({ about: this.ref('jsonapi.link'), type: this.ref('jsonapi.link') }),
        status: { type: 'string', pattern: '^[45][0-9]{2}$', description: 'The HTTP status, as a string.' },
        code: { type: 'string', description: 'A stable code: `FJA_…` for the library\'s errors (see docs/errors.md), or the application\'s own.' },
        title: { type: 'string' },
        detail: { type: 'string' },
        source: closed({
          pointer: { type: 'string', description: 'A JSON pointer into the request document.' },
          parameter: { type: 'string', description: 'The query parameter at fault.' },
          header: { type: 'string', description: 'The request header at fault.' },
        }),
        meta: this.ref('jsonapi.meta'),
      }, ['status', 'code', 'title']),
    })
    this.#add('jsonapi.errors', {
      ...closed({ errors: arrayOf(this.ref('jsonapi.error'), { minItems: 1 }), meta: this.ref('jsonapi.meta'), jsonapi: this.ref('jsonapi.object') }, ['errors']),
      description: 'A JSON:API error document.',
    })
    this.#add('jsonapi.meta-document', {
      ...closed({ meta: this.ref('jsonapi.meta'), jsonapi: this.ref('jsonapi.object') }, ['meta']),
      description: 'A document with only `meta` (a deletion, a change of relationship members).',
    })
    this.#add('jsonapi.resource-links', closed({ self: this.ref('jsonapi.link') }, ['self']))
    this.#add('jsonapi.relationship-links', closed({ self: this.ref('jsonapi.link'), related: this.ref('jsonapi.link') }, ['self', 'related']))
    this.#add('jsonapi.to-many-relationship-links', {
      ...closed({ self: this.ref('jsonapi.link'), related: this.ref('jsonapi.link'), next: this.ref('jsonapi.link') }, ['self', 'related']),
      description: 'Included, the linkage is a page of the owner\'s related resources: `next`, when more exist, is the relationship route\'s page after it (`page[size]` and a `page[after]` cursor of the cursor pagination profile); followed to the end, it yields the rest once each, in the same order (by id).',
    })
    this.#add('jsonapi.to-many-relationship-meta', {
      ...closed({ count: { type: 'integer', minimum: 0, description: 'How many related resources the owner has that the request may see.' } }, ['count']),
      description: 'Included: the size of the whole relationship, of which `data` is the first page.',
    })
    const pagination = {
      self: this.ref('jsonapi.link'),
      first: this.ref('jsonapi.link'),
      prev: this.ref('jsonapi.link'),
      next: this.ref('jsonapi.link'),
      last: this.ref('jsonapi.link'),
    }
    const paged = 'By number: `prev` is absent on the first page, `next` on the last, `last` when the collection is not counted exactly ' +
      '(`count: false`, or an estimated count: `meta.countEstimated`). ' +
      'By cursor (cursor pagination profile): `prev` and `next` carry `page[before]` / `page[after]`, absent when no row lies in that direction; no `last`.'
    this.#add('jsonapi.pagination-links', { ...closed(pagination, ['self']), description: paged })
    this.#add('jsonapi.relationship-pagination-links', { ...closed({ ...pagination, related: this.ref('jsonapi.link') }, ['self', 'related']), description: paged })
    this.#collectionMeta()
    if (operations) this.#operations()
  }

  /**
   * The `meta` of collections, one schema per count strategy in use (`jsonapi.collection-meta`, exact, is always
   * there): exact, `count` and the cursor profile's `page.total`; estimated, `count` with `countEstimated` and
   * `page.estimatedTotal` when it is the planner's estimate; none, neither.
   */
  #collectionMeta (): void {
    const strategies = new Set<CountStrategy>(['exact', ...this.#graph.resources.map((resource) => resource.count)])
    const rangeTruncated = { const: true, description: 'A range (`page[after]` with `page[before]`) held more rows than the page: the first ones are returned.' }
    const page = (members: Record<string, JsonSchema>): JsonSchema => ({
      ...closed({ ...members, rangeTruncated }),
      description: 'Pagination metadata of a cursor page (cursor pagination profile).',
    })
    const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description })
    const schemas: Record<CountStrategy, () => JsonSchema> = {
      exact: () => closed({
        count: count('The number of resources the filter matches, over every page.'),
        page: page({ total: count('The same number as `count`.') }),
      }),
      estimated: () => ({
        ...closed({
          count: count('The number of resources the filter matches, over every page: the database planner\'s estimate when `countEstimated` is ' +
            'there, else exact (the page showed it: the last page, when the rows before it are known).'),
          countEstimated: { const: true, description: '`count` is an estimate (not a `count(*)`): it may differ from the number of rows.' },
          page: page({
            total: count('The same number as `count`, when it is exact.'),
            estimatedTotal: {
              ...closed({ bestGuess: count('The same number as `count`.') }, ['bestGuess']),
              description: 'The estimate of `count`, when it is one (cursor pagination profile).',
            },
          }),
        }),
        description: 'The collection of a type counted by estimate (`count: \'estimated\'`).',
      }),
      none: () => ({
        ...closed({ page: page({}) }),
        description: 'The collection of a type without a count (`count: false`).',
      }),
    }
    for (const strategy of strategies) this.#add(COLLECTION_META[strategy], schemas[strategy]())
  }

  #resource (resource: ResolvedResource): void {
    const name = (part: string): string => this.of(resource, part)
    this.#add(name('id'), idSchema(resource))
    this.#add(name('identifier'), closed({ type: { const: resource.type }, id: this.ref(name('id')), meta: this.ref('jsonapi.meta') }, ['type', 'id']))

    const attributes: Record<string, JsonSchema> = {}
    for (const attribute of resource.visibleAttributes) attributes[attribute.name] = this.#attributeSchema(resource, attribute)
    const relationships: Record<string, JsonSchema> = {}
    for (const relationship of resource.relationships.values()) {
      relationships[relationship.name] = closed({
        links: this.ref(relationship.toMany ? 'jsonapi.to-many-relationship-links' : 'jsonapi.relationship-links'),
        data: this.#linkage(relationship, true),
        ...(relationship.toMany ? { meta: this.ref('jsonapi.to-many-relationship-meta') } : {}),
      }, ['links'])
    }
    this.#add(name('resource'), {
      ...closed({
        type: { const: resource.type },
        id: this.ref(name('id')),
        attributes: { ...closed(attributes), description: 'The attributes of the sparse fieldset (all visible ones by default).' },
        ...(resource.relationships.size === 0 ? {} : { relationships: { ...closed(relationships), description: 'Links of every relationship of the fieldset; `data` (linkage) when it was included: of a to-many, a page per owner, with `meta.count` and a `next` link to the rest.' } }),
        links: this.ref('jsonapi.resource-links'),
        meta: this.ref('jsonapi.item-meta'),
      }, ['type', 'id', 'attributes', 'links']),
      description: `A \`${resource.type}\` resource object.`,
    })

    const included = this.includable(resource).types
    const includedMember: Record<string, JsonSchema> = included.length === 0
      ? {}
      : { included: arrayOf(included.length === 1 ? this.ref(this.of(included[0], 'resource')) : { oneOf: included.map((type) => this.ref(this.of(type, 'resource'))) }, { description: 'The resources of `include`, each once.' }) }
    const jsonapi = { jsonapi: this.ref('jsonapi.object') }
    this.#add(name('document'), closed({ data: this.ref(name('resource')), ...includedMember, links: this.ref('jsonapi.resource-links'), ...jsonapi }, ['data', 'links']))
    this.#add(name('nullable-document'), closed({ data: nullable(this.ref(name('resource'))), ...includedMember, links: this.ref('jsonapi.resource-links'), ...jsonapi }, ['data', 'links']))
    this.#add(name('collection'), closed({
      data: arrayOf(this.ref(name('resource'))),
      ...includedMember,
      links: this.ref('jsonapi.pagination-links'),
      meta: this.ref(COLLECTION_META[resource.count]),
      ...jsonapi,
    }, ['data', 'links']))

    // A relationship document asked with `include`: the resources of its linkage (this type) and those included from them.
    const linked = [resource, ...included.filter((type) => type !== resource)]
    const linkedMember = { included: arrayOf(linked.length === 1 ? this.ref(this.of(linked[0], 'resource')) : { oneOf: linked.map((type) => this.ref(this.of(type, 'resource'))) }, { description: 'With `include`: the resources of the linkage, and those included from them, each once.' }) }
    this.#add(name('to-many-linkage-document'), closed({
      links: this.ref('jsonapi.relationship-pagination-links'),
      data: arrayOf(this.ref(name('identifier'))),
      meta: this.ref(COLLECTION_META[resource.count]),
      ...linkedMember,
      ...jsonapi,
    }, ['links', 'data']))
    this.#add(name('to-one-linkage-document'), closed({ links: this.ref('jsonapi.relationship-links'), data: nullable(this.ref(name('identifier'))), ...linkedMember, ...jsonapi }, ['links', 'data']))

    for (const mode of ['create', 'update'] as const) {
      this.#add(name(`${mode}-data`), this.writeData(resource, mode))
      this.#add(name(mode), this.writeDocument(this.ref(name(`${mode}-data`)), mode === 'create' ? `Creates a \`${resource.type}\`.` : 'Changes the attributes and relationships sent; the others keep their values.'))
    }
    this.#filter(resource)
    this.#parameters(resource)
  }

  /** The values of the `include`, `sort` and `fields[<type>]` parameters of a type. */
  #parameters (resource: ResolvedResource): void {
    const { paths, complete } = this.includable(resource)
    const list = (items: readonly string[]): string => items.map((item) => `\`${item}\``).join(', ')
    if (paths.length > 0) {
      this.#add(this.of(resource, 'include'), {
        type: 'string',
        ...(complete ? { pattern: listPattern(paths) } : {}),
        description: `Include paths of \`${resource.type}\`, comma-separated: ${list(paths)}${complete ? '' : ' …'}.`,
      })
    }
    const fields = [...resource.visibleAttributes.map((attribute) => attribute.name), ...resource.relationships.keys()]
    this.#add(this.of(resource, 'fields'), {
      type: 'string',
      ...(fields.length === 0 ? { maxLength: 0 } : { pattern: listPattern(fields, false, true) }),
      description: `Fields of \`${resource.type}\`, comma-separated: ${list(fields) || 'none'}.`,
    })
    const keys = this.sortKeys(resource)
    this.#add(this.of(resource, 'sort'), {
      type: 'string',
      pattern: listPattern(keys, true),
      description: `Sort keys of \`${resource.type}\`, comma-separated, \`-\` for descending: ${list(keys)}. Keys follow to-one relationships at any depth (\`author.name\`); the deepest ones are not listed.`,
    })
  }

  /** The schema of an attribute's values in responses. */
  #attributeSchema (resource: ResolvedResource, attribute: ResolvedAttribute): JsonSchema {
    const schema = plain(attribute.schema)
    if (attribute.readOnly || attribute.derived !== undefined) schema.readOnly = true
    if (attribute.aggregate !== undefined) {
      const { fn, path, of } = attribute.aggregate
      schema.description = `Computed by the database: ${fn}(${[...path, ...(of === undefined ? [] : [of])].join('.')}), over the related resources the request may see.${attribute.inDefaultFieldset ? '' : ' Rendered only when `fields` names it.'}`
    } else if (attribute.computed !== undefined) {
      schema.description = 'Computed by the database from the resource\'s own columns: filterable and sortable like a stored attribute.'
    }
    const rules = resource.rules.get(attribute.name)
    if (rules !== undefined) {
      const notes = [
        ...(rules.read === undefined ? [] : ['Absent from the resource objects the request may not read it on (a field rule); `filter` and `sort` see it as null there.']),
        ...(rules.write === undefined ? [] : ['Written only where a field rule lets the request (else 403 at the attribute).']),
      ]
      schema.description = [schema.description, ...notes].filter((note) => note !== undefined).join(' ')
    }
    return schema
  }

  /** The linkage of a relationship; `nullable` for a to-one read (an empty to-one is `null`). */
  #linkage (relationship: ResolvedRelationship, nullableToOne: boolean): JsonSchema {
    const target = this.#graph.getResource(relationship.targetType)
    const identifier = this.ref(this.of(target, 'identifier'))
    if (relationship.toMany) return arrayOf(identifier)
    return nullableToOne ? nullable(identifier) : identifier
  }

  /** The body that replaces a relationship's linkage (PATCH), or adds or removes members (POST, DELETE). */
  linkageBody (relationship: ResolvedRelationship): JsonSchema {
    return closed({ data: this.#linkage(relationship, clearable(relationship)), meta: this.ref('jsonapi.meta') }, ['data'])
  }

  /** A create or update document around its `data`. */
  writeDocument (data: JsonSchema, description: string): JsonSchema {
    return { ...closed({ data, meta: this.ref('jsonapi.meta'), jsonapi: this.ref('jsonapi.object') }, ['data']), description }
  }

  /**
   * The resource object of a create or an update body: the writable attributes (the schema in force), the writable
   * relationships' linkage, `id` as the client-id policy allows. `implied` relationships are set by the URL (a
   * related route), so never required.
   */
  writeData (resource: ResolvedResource, mode: 'create' | 'update', implied: ReadonlySet<string> = new Set()): JsonSchema {
    const attributes = plain(mode === 'create' ? resource.inputs.createSchema : resource.inputs.updateSchema)
    const relationships: Record<string, JsonSchema> = {}
    const requiredRelationships: string[] = []
    for (const relationship of resource.relationships.values()) {
      if (relationship.readOnly || (mode === 'update' && relationship.createOnly)) continue
      relationships[relationship.name] = this.linkageBody(relationship)
      if (mode === 'create' && relationship.required && !implied.has(relationship.name)) requiredRelationships.push(relationship.name)
    }
    const required = ['type']
    const data: Record<string, JsonSchema> = { type: { const: resource.type } }
    if (mode === 'update' || resource.clientIds !== 'forbidden') data.id = this.ref(this.of(resource, 'id'))
    if (mode === 'update' || resource.clientIds === 'required') required.push('id')
    if (mode === 'create') data.lid = { type: 'string', minLength: 1, description: 'A local id (atomic operations).' }
    data.attributes = attributes
    if (Array.isArray(attributes.required) && attributes.required.length > 0) required.push('attributes')
    if (Object.keys(relationships).length > 0) {
      data.relationships = closed(relationships, requiredRelationships)
      if (requiredRelationships.length > 0) required.push('relationships')
    }
    data.links = { type: 'object' }
    data.meta = this.ref('jsonapi.meta')
    return closed(data, required)
  }

  /**
   * The JSON filter of a type (`filter=[…]`): comparisons of its filterable attributes with the operators each one
   * allows, relationship filters (`any`/`has`) with the related type's filter, `and`/`or`/`not`, and dotted names
   * through relationships.
   */
  #filter (resource: ResolvedResource): void {
    const item = this.of(resource, 'filter-item')
    const forms: JsonSchema[] = []
    const filterable = [resource.idAttribute, ...resource.attributes.values()].filter((attribute) => attribute.filterable && !attribute.hidden)
    for (const attribute of filterable) {
      const operators = (Object.keys(BUILTIN_OPERATORS) as BuiltinOperator[]).filter((op) => operatorApplies(op, attribute)) as string[]
      for (const op of attribute.operators.keys()) if (!operators.includes(op)) operators.push(op)
      const comparable = filterable.filter((other) => other !== attribute && fieldsComparable(attribute, other))
      const properties: Record<string, JsonSchema> = { name: { const: attribute.name }, op: { enum: operators }, val: {} }
      if (comparable.length > 0) {
        properties.field = { enum: comparable.map((other) => other.name), description: `Compare with another attribute (${[...FIELD_OPERATORS].join(', ')}).` }
      }
      forms.push(closed(properties, ['name', 'op']))
    }
    const counts = this.countNames(resource)
    if (counts.length > 0) {
      const numeric = (Object.keys(BUILTIN_OPERATORS) as BuiltinOperator[]).filter((op) => BUILTIN_OPERATORS[op].kinds.includes('integer'))
      forms.push({
        ...closed({ name: { enum: counts }, op: { enum: numeric }, val: {} }, ['name', 'op']),
        description: 'A comparison of how many related resources a resource has (those the request may see): `count(<to-many relationship>)`, after to-one steps.',
      })
    }
    for (const relationship of resource.relationships.values()) {
      const target = this.#graph.getResource(relationship.targetType)
      forms.push(closed({
        name: { const: relationship.name },
        op: { const: relationship.toMany ? 'any' : 'has' },
        val: this.ref(this.of(target, 'filter')),
      }, ['name', 'op']))
    }
    if (resource.relationships.size > 0) {
      forms.push({
        ...closed({ name: { type: 'string', pattern: '^[^.]+(?:\\.[^.]+)+$' }, op: { type: 'string' }, val: {}, field: { type: 'string' } }, ['name', 'op']),
        description: 'A comparison of an attribute of a related resource: `name` is the dotted path through relationships (`author.name`).',
      })
    }
    const self = this.ref(item)
    forms.push(closed({ and: arrayOf(self, { minItems: 1 }) }, ['and']))
    forms.push(closed({ or: arrayOf(self, { minItems: 1 }) }, ['or']))
    forms.push(closed({ not: self }, ['not']))
    this.#add(item, { anyOf: forms })
    this.#add(this.of(resource, 'filter'), {
      anyOf: [arrayOf(self), self],
      description: `A filter of \`${resource.type}\` inside a relationship filter's \`val\`: one filter object or an array of them (ANDed).`,
    })
  }

  #operations (): void {
    const resources = this.#graph.resources
    const target = closed({ type: { enum: resources.map((resource) => resource.type) }, id: { type: 'string' }, lid: { type: 'string' }, relationship: { type: 'string' } }, ['type'])
    const bodies = resources.flatMap((resource) => [this.ref(this.of(resource, 'create-data')), this.ref(this.of(resource, 'update-data'))])
    const identifiers = resources.map((resource) => this.ref(this.of(resource, 'identifier')))
    const linkage = { anyOf: [{ type: 'null' }, ...identifiers, arrayOf({ anyOf: identifiers })] }
    this.#add('jsonapi.operation', {
      ...closed({ op: { enum: ['add', 'update', 'remove'] }, ref: target, data: this.ref('jsonapi.operation-data'), meta: this.ref('jsonapi.meta') }, ['op']),
      description: 'One operation: `data` is the `data` of a create or update body of the type (add, update), or resource linkage (relationship operations).',
    })
    this.#add('jsonapi.operation-data', { anyOf: [...bodies, linkage] })
    this.#add('jsonapi.operations', {
      ...closed({ 'atomic:operations': arrayOf(this.ref('jsonapi.operation'), { minItems: 1 }), meta: this.ref('jsonapi.meta'), jsonapi: this.ref('jsonapi.object') }, ['atomic:operations']),
      description: 'An atomic operations request (JSON:API atomic extension): all operations succeed, or none has any effect.',
    })
    const results = resources.map((resource) => this.ref(this.of(resource, 'resource')))
    this.#add('jsonapi.operation-results', {
      ...closed({
        'atomic:results': arrayOf(closed({ data: { anyOf: [{ type: 'null' }, ...results] }, meta: { anyOf: [{ type: 'null' }, this.ref('jsonapi.meta')] } })),
        meta: this.ref('jsonapi.meta'),
        jsonapi: this.ref('jsonapi.object'),
      }, ['atomic:results']),
      description: 'One result per operation, in order: the resource of an add or update, `null` otherwise.',
    })
  }

  /**
   * The `include` of a relationship route (`GET /<type>/<id>/relationships/<name>`): paths written from the owner, so
   * each starts with the relationship's name — `<name>` (the linkage's resources), then what follows from them, at
   * most the include depth in all.
   */
  linkageInclude (relationship: ResolvedRelationship, limits: { readonly maxIncludePaths: number, readonly maxIncludeDepth: number }): JsonSchema {
    const { paths: within, complete } = this.linkageIncludePaths(relationship, limits)
    return {
      type: 'string',
      ...(complete ? { pattern: listPattern(within) } : {}),
      description: `The resources of the linkage and what follows from them, at most ${limits.maxIncludePaths} comma-separated paths, each starting with \`${relationship.name}\` and at most ${limits.maxIncludeDepth} relationships deep: ${within.map((path) => `\`${path}\``).join(', ')}${complete ? '' : ' …'}.`,
    }
  }

  /** The include paths of a relationship route, written from the owner (see {@link OpenApiComponents.linkageInclude}). */
  linkageIncludePaths (relationship: ResolvedRelationship, limits: { readonly maxIncludeDepth: number }): { readonly paths: string[]; readonly complete: boolean } {
    const { paths, complete } = this.includable(this.#graph.getResource(relationship.targetType))
    return { paths: [relationship.name, ...paths.filter((path) => path.split('.').length < limits.maxIncludeDepth).map((path) => `${relationship.name}.${path}`)], complete }
  }

  /**
   * The include paths of a type up to the depth limit (the first {@link MAX_LISTED_PATHS}: the walk stops there, so a
   * deep limit over a dense graph costs no more), and every type they reach.
   */
  includable (resource: ResolvedResource): { readonly paths: string[]; readonly types: ResolvedResource[]; readonly complete: boolean } {
    let found = this.#includePaths.get(resource)
    if (found !== undefined) return found
    const paths: string[] = []
    const walk = (owner: ResolvedResource, prefix: string, depth: number): boolean => {
      for (const relationship of owner.relationships.values()) {
        if (paths.length === MAX_LISTED_PATHS) return false
        paths.push(`${prefix}${relationship.name}`)
        if (depth < this.#maxIncludeDepth && !walk(this.#graph.getResource(relationship.targetType), `${prefix}${relationship.name}.`, depth + 1)) return false
      }
      return true
    }
    const complete = walk(resource, '', 1)
    // The types, one relationship step per level: a type reached again is not walked again.
    const types = new Set<ResolvedResource>()
    let level = [resource]
    for (let depth = 1; depth <= this.#maxIncludeDepth && level.length > 0; depth++) {
      const next: ResolvedResource[] = []
      for (const owner of level) {
        for (const relationship of owner.relationships.values()) {
          const target = this.#graph.getResource(relationship.targetType)
          if (!types.has(target)) next.push(target)
          types.add(target)
        }
      }
      level = next
    }
    found = { paths, types: [...types], complete }
    this.#includePaths.set(resource, found)
    return found
  }

  /**
   * The counts of the query language on a type (`count(computers)`, `count(owner.computers)`): each to-many
   * relationship, and those reached through to-one relationships (the deepest ones are not listed).
   */
  countNames (resource: ResolvedResource): string[] {
    const names: string[] = []
    const walk = (owner: ResolvedResource, prefix: string, depth: number): void => {
      for (const relationship of owner.relationships.values()) {
        if (relationship.toMany) names.push(`count(${prefix}${relationship.name})`)
      }
      if (depth >= this.#maxIncludeDepth) return
      for (const relationship of owner.relationships.values()) {
        if (!relationship.toMany && names.length < MAX_LISTED_PATHS) walk(this.#graph.getResource(relationship.targetType), `${prefix}${relationship.name}.`, depth + 1)
      }
    }
    walk(resource, '', 1)
    return names
  }

  /** The sort keys of a type: its sortable attributes and `id`, and theirs through to-one relationships, and its counts. */
  sortKeys (resource: ResolvedResource): string[] {
    const keys: string[] = []
    const walk = (owner: ResolvedResource, prefix: string, depth: number): void => {
      keys.push(`${prefix}id`)
      for (const attribute of owner.visibleAttributes) if (attribute.sortable) keys.push(`${prefix}${attribute.name}`)
      if (depth >= this.#maxIncludeDepth) return
      for (const relationship of owner.relationships.values()) {
        if (!relationship.toMany && keys.length < MAX_LISTED_PATHS) walk(this.#graph.getResource(relationship.targetType), `${prefix}${relationship.name}.`, depth + 1)
      }
    }
    walk(resource, '', 0)
    return [...keys, ...this.countNames(resource)]
  }
}
