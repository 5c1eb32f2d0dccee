import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import { DECLARATION_KEYS, type AnyResourceDeclaration } from './declaration.js'
import { type AggregateDeclaration, type AggregateFunction, type AttributeDeclaration, type IdKind, type RelationshipDeclaration } from './fields.js'
import { compileInput } from './compiled-input.js'
import { closestName, didYouMean, unknownKey, unknownKeyMessage } from './known-keys.js'
import { Memo } from './memo.js'
import { NUMERIC_KINDS, selectedAs } from './resolved.js'
import type {
  AggregateSpec, CountStrategy, RelationshipStorage, ResolvedAttribute, ResolvedFieldRules, ResolvedHooks, ResolvedRelationship, ResolvedResource, ResourceGraph, ValueFormat, ValueKind,
} from './resolved.js'

/** A resource declaration that cannot be served; thrown at registration. */
export class ResourceConfigError extends Error {
  readonly code = 'FJA_INVALID_DECLARATION'
  constructor (resource: string, field: string | undefined, message: string) {
    super(`fastify-jsonapi: resource '${resource}'${field === undefined ? '' : `, field '${field}'`}: ${message}`)
    this.name = 'ResourceConfigError'
  }
}

const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?$/
const HOOKS = DECLARATION_KEYS.hooks
const RESERVED_FIELDS = new Set(['id', 'type', 'links', 'relationships'])

/**
 * Resolves the declarations into an immutable resource graph: every default applied, every reference checked,
 * input schemas derived and compiled. Throws a {@link ResourceConfigError} naming the resource and field at fault.
 */
/**
 * What the declarations allow but cannot work as they likely mean, one sentence each naming the resource and field:
 * a text id that nothing assigns (clients may not send it, no `beforeCreate` hook sets it, and a database seldom has
 * a default for text), so that every create of the type fails.
 */
export function registrationWarnings (graph: ResourceGraph): string[] {
  const warnings: string[] = []
  for (const resource of graph.resources) {
    if (resource.idKind === 'text' && resource.clientIds === 'forbidden' && resource.routes.create && resource.hooks.beforeCreate === undefined) {
      warnings.push(`fastify-jsonapi: resource '${resource.type}', field 'id': a text id is never assigned — clients may not send one (clientIds: 'forbidden') `
        + `and no beforeCreate hook sets it, so a create works only if the database gives column '${resource.idColumn}' a default. `
        + 'Set clientIds to \'required\' (or \'allowed\'), or assign the id in beforeCreate')
    }
  }
  return warnings
}

export function resolveResources (declarations: readonly AnyResourceDeclaration[]): ResourceGraph {
  if (!Array.isArray(declarations) || declarations.length === 0) {
    throw new ResourceConfigError('(none)', undefined, 'the `resources` option must be a non-empty array')
  }
  const byType = new Map<string, AnyResourceDeclaration>()
  const paths = new Map<string, string>()
  for (const declaration of declarations) {
    const type = declaration?.type
    if (typeof type !== 'string' || !NAME.test(type)) {
      throw new ResourceConfigError(String(type), undefined, 'the type name must be letters, digits, `-` or `_`')
    }
    checkKeys(type, undefined, declaration, DECLARATION_KEYS.resource, 'a resource')
    if (byType.has(type)) throw new ResourceConfigError(type, undefined, 'the type is declared twice')
    byType.set(type, declaration)
    const path = resolvePath(declaration)
    const other = paths.get(path)
    if (other !== undefined) {
      throw new ResourceConfigError(type, undefined, `the path '${path}' is already used by resource '${other}'`)
    }
    paths.set(path, type)
  }

  const resources = new Map<string, ResolvedResource>()
  for (const declaration of declarations) {
    resources.set(declaration.type, resolveResource(declaration, byType))
  }
  for (const resource of resources.values()) checkAggregates(resource, resources)
  const list = Object.freeze([...resources.values()])
  return Object.freeze({
    resources: list,
    findResource: (type: string) => resources.get(type),
    getResource (type: string) {
      const resource = resources.get(type)
      if (resource === undefined) throw new Error(`fastify-jsonapi: unknown resource type '${type}'`)
      return resource
    },
  })
}

/** Each declared aggregate's path leads through to-one relationships to a to-many one, and to an attribute it can aggregate. */
function checkAggregates (resource: ResolvedResource, resources: ReadonlyMap<string, ResolvedResource>): void {
  for (const attribute of resource.attributes.values()) {
    const spec = attribute.aggregate
    if (spec === undefined) continue
    let owner = resource
    spec.path.forEach((step, index) => {
      const relationship = owner.relationships.get(step)
      const last = index === spec.path.length - 1
      if (relationship === undefined) {
        throw new ResourceConfigError(resource.type, attribute.name, `the aggregate's '${step}' is not a relationship of '${owner.type}'${didYouMean(step, [...owner.relationships.keys()])}`)
      }
      if (relationship.toMany !== last) {
        throw new ResourceConfigError(resource.type, attribute.name, last
          ? `the aggregate's '${step}' is a to-one relationship: an aggregate ends with a to-many relationship`
          : `the aggregate's '${step}' is a to-many relationship: only its last step may be (the steps before it are to-one)`)
      }
      owner = resources.get(relationship.targetType) as ResolvedResource
    })
    if (spec.of === undefined) continue
    const of = owner.attributes.get(spec.of)
    if (of === undefined || of.hidden || of.column === undefined) {
      throw new ResourceConfigError(resource.type, attribute.name, `'${spec.of}' is not a stored attribute of '${owner.type}'${didYouMean(spec.of, [...owner.attributes.keys()])}`)
    }
    // A total over values some requests may not read would tell them about those values.
    if (owner.rules.get(spec.of)?.read !== undefined) {
      throw new ResourceConfigError(resource.type, attribute.name, `'${owner.type}.${spec.of}' has a read rule: an aggregate of it would disclose what the rule hides`)
    }
    // The database would refuse the statement of every request that uses it (a 500): refused here instead.
    if ((spec.fn === 'sum' || spec.fn === 'avg') && !NUMERIC_KINDS.has(of.valueKind)) {
      throw new ResourceConfigError(resource.type, attribute.name, `\`${spec.fn}\` adds numbers: '${owner.type}.${spec.of}' is ${of.valueKind}`)
    }
  }
}

function resolvePath (declaration: AnyResourceDeclaration): string {
  const path = declaration.path ?? `/${declaration.type}`
  if (!/^\/[A-Za-z0-9_\-./]*[A-Za-z0-9_-]$/.test(path) || path.includes('//') || path.includes(':')) {
    throw new ResourceConfigError(declaration.type, undefined, `the path '${path}' must start with '/' and not end with '/'`)
  }
  return path
}

/** An unknown key of a declaration object is a mistake: it names the key and suggests the closest known one. */
function checkKeys (type: string, field: string | undefined, object: object, known: readonly string[], of: string): void {
  const key = unknownKey(object, known)
  if (key !== undefined) throw new ResourceConfigError(type, field, unknownKeyMessage(key, known, of))
}

/** `; did you mean 'x'?` to end a parenthesis listing the choices, or nothing. */
function orDidYouMean (value: unknown, choices: readonly string[]): string {
  const closest = typeof value === 'string' ? closestName(value, choices) : undefined
  return closest === undefined ? '' : `; did you mean '${closest}'?`
}

/** An optional member that must be an object of known keys when given. */
function checkOptionalObject (type: string, field: string, value: unknown, known: readonly string[], of: string): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ResourceConfigError(type, field, 'must be an object')
  checkKeys(type, field, value, known, of)
}

const ID_KINDS: readonly IdKind[] = ['integer', 'bigint', 'uuid', 'text']

/** The schema of the `id` pseudo-attribute (filters, sort) of each id kind. */
const ID_SCHEMAS: Record<IdKind, () => TSchema> = {
  // PostgreSQL `integer`: a filter value outside its range can be no id (a 400 where it was written, not the
  // database's out-of-range error).
  integer: () => Type.Integer({ minimum: -2147483648, maximum: 2147483647 }),
  bigint: () => Type.String({ format: 'int64' }),
  uuid: () => Type.String({ format: 'uuid' }),
  text: () => Type.String(),
}

/** The primary key of a declaration: its column, its kind and, for a text id, its anchored pattern and length. */
function resolveId (type: string, id: AnyResourceDeclaration['id']): { column: string; kind: IdKind; pattern: RegExp | undefined; maxLength: number | undefined } {
  if (id !== undefined && (typeof id !== 'object' || id === null)) throw new ResourceConfigError(type, 'id', 'must be an object ({ column, kind })')
  if (id !== undefined) checkKeys(type, 'id', id, DECLARATION_KEYS.id, 'an id')
  const kind = id?.kind ?? 'integer'
  if (!ID_KINDS.includes(kind)) {
    throw new ResourceConfigError(type, 'id', `unknown id kind '${String(kind)}' (integer, bigint, uuid or text${orDidYouMean(kind, ID_KINDS)})`)
  }
  const column = checkIdentifier(type, 'id', id?.column ?? 'id')
  const { pattern, maxLength } = (id ?? {}) as { pattern?: unknown; maxLength?: unknown }
  if (kind !== 'text') {
    for (const [option, value] of [['pattern', pattern], ['maxLength', maxLength]] as const) {
      if (value !== undefined) throw new ResourceConfigError(type, 'id', `\`${option}\` is for text ids only, not ${kind} ids`)
    }
    return { column, kind, pattern: undefined, maxLength: undefined }
  }
  if (maxLength !== undefined && (typeof maxLength !== 'number' || !Number.isInteger(maxLength) || maxLength < 1)) {
    throw new ResourceConfigError(type, 'id', '`maxLength` must be a positive integer')
  }
  return { column, kind, pattern: idPattern(type, pattern), maxLength }
}

/** A text id's pattern, anchored and compiled with the `u` flag (as JSON Schema reads it). */
function idPattern (type: string, pattern: unknown): RegExp {
  let source: string
  if (pattern instanceof RegExp) {
    if (pattern.flags !== '' && pattern.flags !== 'u') {
      throw new ResourceConfigError(type, 'id', `the pattern's flags '${pattern.flags}' are not supported: write it without flags (it is compiled with 'u')`)
    }
    source = pattern.source
  } else if (typeof pattern === 'string' && pattern !== '') {
    source = pattern
  } else {
    throw new ResourceConfigError(type, 'id', 'a text id needs a `pattern` (a RegExp or its source): the ids that can exist')
  }
  try {
    // Compiled alone first: a source such as `a)|(b` must not escape the anchors it is wrapped in.
    void new RegExp(source, 'u')
    return new RegExp(`^(?:${source})$`, 'u')
  } catch (error) {
    throw new ResourceConfigError(type, 'id', `the pattern is not a valid regular expression: ${(error as Error).message}`)
  }
}

function resolveResource (declaration: AnyResourceDeclaration, byType: ReadonlyMap<string, AnyResourceDeclaration>): ResolvedResource {
  const type = declaration.type
  const id = resolveId(type, declaration.id)
  const idKind = id.kind
  const clientIds = declaration.clientIds ?? 'forbidden'
  const policies = ['forbidden', 'allowed', 'required']
  if (!policies.includes(clientIds)) {
    throw new ResourceConfigError(type, 'clientIds', `unknown policy '${String(clientIds)}' (forbidden, allowed or required${orDidYouMean(clientIds, policies)})`)
  }
  checkOptionalObject(type, 'input', declaration.input, DECLARATION_KEYS.input, "'input'")
  checkOptionalObject(type, 'routes', declaration.routes, DECLARATION_KEYS.routes, "'routes'")
  checkOptionalObject(type, 'pagination', declaration.pagination, DECLARATION_KEYS.pagination, "a resource's 'pagination'")
  const attributes = new Map<string, ResolvedAttribute>()
  for (const [name, attribute] of Object.entries(declaration.attributes ?? {}) as Array<[string, AttributeDeclaration]>) {
    attributes.set(name, resolveAttribute(type, name, attribute))
  }
  const relationships = new Map<string, ResolvedRelationship>()
  for (const [name, relationship] of Object.entries(declaration.relationships ?? {}) as Array<[string, RelationshipDeclaration]>) {
    checkFieldName(type, name)
    if (attributes.has(name)) throw new ResourceConfigError(type, name, 'is both an attribute and a relationship')
    relationships.set(name, resolveRelationship(declaration, name, relationship, byType))
  }
  const createSchema = closedObject(type, 'input.create', declaration.input?.create) ?? deriveInputSchema(attributes, 'create')
  const updateSchema = closedObject(type, 'input.update', declaration.input?.update) ?? deriveInputSchema(attributes, 'update')
  const routes = declaration.routes ?? {}
  const idColumn = id.column
  const hooks = resolveHooks(type, declaration.hooks)
  const rules = resolveRules(type, declaration.rules, attributes)
  const pagination = declaration.pagination ?? {}
  for (const [key, value] of Object.entries(pagination)) {
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < 1)) {
      throw new ResourceConfigError(type, `pagination.${key}`, 'must be a positive integer')
    }
  }
  return Object.freeze({
    type,
    path: resolvePath(declaration),
    table: checkIdentifier(type, 'table', declaration.table ?? type),
    idColumn,
    idKind,
    idPattern: id.pattern,
    idMaxLength: id.maxLength,
    clientIds,
    idAttribute: resolveAttribute(type, 'id', {
      schema: ID_SCHEMAS[idKind](),
      column: idColumn,
      readOnly: true,
    }, true),
    pagination: Object.freeze({ ...pagination }),
    count: countStrategy(type, declaration.count),
    requireIfMatch: booleanOption(type, 'requireIfMatch', declaration.requireIfMatch),
    attributes,
    relationships,
    visibleAttributes: Object.freeze([...attributes.values()].filter((attribute) => !attribute.hidden)),
    computedSelects: new Map([...attributes.values()].filter((attribute) => attribute.computed !== undefined).map((attribute) => [selectedAs(attribute), attribute])),
    allColumns: Object.freeze([...new Set([...attributes.values()].flatMap((attribute) => attribute.selects))]),
    routes: Object.freeze({
      list: routes.list ?? true,
      create: routes.create ?? true,
      read: routes.read ?? true,
      update: routes.update ?? true,
      delete: routes.delete ?? true,
    }),
    inputs: Object.freeze({
      create: compileInput(createSchema),
      update: compileInput(updateSchema),
      createSchema,
      updateSchema,
    }),
    hooks,
    rules,
    readRuled: Object.freeze([...attributes.values()].filter((attribute) => rules.get(attribute.name)?.read !== undefined)),
    hasWriteHooks: HOOKS.some((name) => name !== 'scope' && hooks[name] !== undefined),
    hasReadOnlyAttributes: [...attributes.values()].some((attribute) => attribute.readOnly),
    memo: new Memo(),
  })
}

const COUNT_STRATEGIES = ['exact', 'estimated']

/** The `count` option: `true` or `'exact'` (the default), `'estimated'`, or `false` (none). */
function countStrategy (type: string, count: unknown): CountStrategy {
  if (count === undefined || count === true || count === 'exact') return 'exact'
  if (count === false) return 'none'
  if (count === 'estimated') return 'estimated'
  const shown = typeof count === 'string' ? `'${count}'` : showValue(count)
  throw new ResourceConfigError(type, 'count', `unknown count strategy ${shown} (true or 'exact': count(*); 'estimated': the planner's estimate; false: no count${orDidYouMean(count, COUNT_STRATEGIES)})`)
}

/** An optional boolean of a declaration (false when absent). */
function booleanOption (type: string, name: string, value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw new ResourceConfigError(type, name, 'must be true or false')
  return value
}

/** Each rule names an attribute and holds `read` and/or `write` functions. */
function resolveRules (type: string, rules: AnyResourceDeclaration['rules'], attributes: ReadonlyMap<string, ResolvedAttribute>): ReadonlyMap<string, ResolvedFieldRules> {
  const resolved = new Map<string, ResolvedFieldRules>()
  if (rules === undefined) return resolved
  if (typeof rules !== 'object' || rules === null) throw new ResourceConfigError(type, 'rules', 'must be an object of field rules by attribute name')
  for (const [name, rule] of Object.entries(rules as Record<string, unknown>)) {
    if (rule === undefined) continue
    const attribute = attributes.get(name)
    if (attribute === undefined) {
      throw new ResourceConfigError(type, `rules.${name}`, `is not an attribute${didYouMean(name, [...attributes.keys()]) || ' (field rules are declared for attributes)'}`)
    }
    if (typeof rule !== 'object' || rule === null) throw new ResourceConfigError(type, `rules.${name}`, 'must be an object with `read` and/or `write`')
    checkKeys(type, `rules.${name}`, rule, DECLARATION_KEYS.rules, 'a field rule')
    const { read, write } = rule as { read?: unknown, write?: unknown }
    for (const [kind, value] of [['read', read], ['write', write]] as const) {
      if (value !== undefined && typeof value !== 'function') throw new ResourceConfigError(type, `rules.${name}.${kind}`, 'must be a function of the context and `where` that returns a condition, true or false')
    }
    if (write !== undefined && (attribute.readOnly || attribute.derived !== undefined)) {
      throw new ResourceConfigError(type, `rules.${name}.write`, 'the attribute is never written by a client: a write rule would never apply')
    }
    resolved.set(name, Object.freeze({ read: read as ResolvedFieldRules['read'], write: write as ResolvedFieldRules['write'] }))
  }
  return resolved
}

function resolveHooks (type: string, hooks: AnyResourceDeclaration['hooks']): ResolvedHooks {
  if (hooks === undefined) return Object.freeze({})
  if (typeof hooks !== 'object' || hooks === null) throw new ResourceConfigError(type, 'hooks', 'must be an object of hook functions')
  for (const [name, hook] of Object.entries(hooks)) {
    if (!(HOOKS as readonly string[]).includes(name)) {
      throw new ResourceConfigError(type, `hooks.${name}`, `is not a hook${didYouMean(name, HOOKS) || ` (the hooks: ${HOOKS.join(', ')})`}`)
    }
    if (hook !== undefined && typeof hook !== 'function') throw new ResourceConfigError(type, `hooks.${name}`, 'must be a function')
  }
  return Object.freeze({ ...hooks })
}

/** A user's input schema, closed to unknown members unless it says otherwise. */
function closedObject (type: string, field: string, schema: TObject | undefined): TObject | undefined {
  if (schema === undefined) return undefined
  if (schema?.type !== 'object' || typeof schema.properties !== 'object') {
    throw new ResourceConfigError(type, field, 'must be a TypeBox Type.Object schema')
  }
  return schema.additionalProperties === undefined ? { ...schema, additionalProperties: false } : schema
}

function checkFieldName (type: string, name: string): void {
  if (!NAME.test(name)) throw new ResourceConfigError(type, name, 'field names must be letters, digits, `-` or `_`')
  if (RESERVED_FIELDS.has(name)) throw new ResourceConfigError(type, name, 'is reserved by JSON:API')
}

function checkIdentifier (type: string, field: string, identifier: unknown): string {
  if (typeof identifier !== 'string' || !/^[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)?$/.test(identifier)) {
    throw new ResourceConfigError(type, field, `'${String(identifier)}' is not a valid SQL identifier`)
  }
  return identifier
}

function resolveAttribute (type: string, name: string, attribute: AttributeDeclaration, isId = false): ResolvedAttribute {
  if (!isId) checkFieldName(type, name)
  if (typeof attribute !== 'object' || attribute === null) throw new ResourceConfigError(type, name, 'must be an object with a TypeBox `schema`')
  if (!isId) checkKeys(type, name, attribute, DECLARATION_KEYS.attribute, 'an attribute')
  if (attribute.schema === undefined || typeof attribute.schema !== 'object') {
    throw new ResourceConfigError(type, name, 'needs a TypeBox `schema`')
  }
  const derived = attribute.derived
  if (derived !== undefined && (typeof derived !== 'object' || derived === null || typeof derived.compute !== 'function' || !Array.isArray(derived.columns))) {
    throw new ResourceConfigError(type, name, '`derived` needs `columns` and a `compute` function')
  }
  if (derived !== undefined) checkKeys(type, name, derived, DECLARATION_KEYS.derived, "'derived'")
  if (attribute.storage !== undefined && attribute.storage !== 'json' && attribute.storage !== 'native') {
    throw new ResourceConfigError(type, name, `\`storage\` must be 'json' or 'native', not '${String(attribute.storage)}'${didYouMean(String(attribute.storage), ['json', 'native'])}`)
  }
  // A derived attribute is computed after the rows are read: SQL can neither order nor filter by it.
  if (derived !== undefined && attribute.sortable === true) throw new ResourceConfigError(type, name, 'a derived attribute cannot be sortable: it is computed after the rows are read (declare it `computed`, an SQL expression, to sort by it)')
  if (derived !== undefined && attribute.filterable === true) throw new ResourceConfigError(type, name, 'a derived attribute cannot be filterable: it is computed after the rows are read (declare it `computed`, an SQL expression, to filter by it)')
  const computed = attribute.computed
  const aggregate = attribute.aggregate === undefined ? undefined : aggregateSpec(type, name, attribute.aggregate)
  const kinds = [derived && '`derived`', computed && '`computed`', aggregate && '`aggregate`', attribute.column !== undefined && '`column`'].filter(Boolean)
  if (kinds.length > 1) throw new ResourceConfigError(type, name, `give one of ${kinds.join(', ')}: they are different ways to get the value`)
  if (computed !== undefined && typeof computed !== 'function') throw new ResourceConfigError(type, name, '`computed` must be a function that returns an SQL expression')
  const database = computed !== undefined || aggregate !== undefined
  if (database && attribute.readOnly === false) throw new ResourceConfigError(type, name, 'a computed or aggregate attribute is read-only: it is never stored')
  if (attribute.rendered !== undefined && attribute.rendered !== 'always' && attribute.rendered !== 'on-request') {
    throw new ResourceConfigError(type, name, `\`rendered\` must be 'always' or 'on-request', not '${String(attribute.rendered)}'`)
  }
  const column = derived === undefined && !database ? checkIdentifier(type, name, attribute.column ?? name) : undefined
  const hidden = attribute.hidden ?? false
  const stored = derived === undefined && !hidden
  const hasDefault = Object.prototype.hasOwnProperty.call(attribute, 'default')
  const format = valueFormat(attribute.schema, attribute.storage)
  const core = coreSchema(attribute.schema)
  const operators = new Map<string, NonNullable<AttributeDeclaration['operators']>[number]>()
  for (const operator of attribute.operators ?? []) {
    if (typeof operator?.name !== 'string' || !/^[a-z][a-z0-9_]*$/.test(operator.name) || typeof operator.apply !== 'function' || typeof operator.schema !== 'object') {
      throw new ResourceConfigError(type, name, 'a custom operator needs a lowercase `name`, a TypeBox `schema` and an `apply` function')
    }
    checkKeys(type, name, operator, DECLARATION_KEYS.operator, `the operator '${operator.name}'`)
    if (operators.has(operator.name)) throw new ResourceConfigError(type, name, `the operator '${operator.name}' is declared twice`)
    operators.set(operator.name, operator)
  }
  if (operators.size > 0 && derived !== undefined) throw new ResourceConfigError(type, name, 'a derived attribute cannot be filtered')
  if (operators.size > 0 && aggregate !== undefined) throw new ResourceConfigError(type, name, 'an aggregate takes the built-in operators only')
  if (hasDefault) checkDefault(type, name, attribute, derived !== undefined || database)
  const valueKind = kindOf(core)
  if (aggregate !== undefined && !NUMERIC_KINDS.has(valueKind) && aggregate.fn !== 'min' && aggregate.fn !== 'max') {
    throw new ResourceConfigError(type, name, `the schema of a \`${aggregate.fn}\` aggregate is a number (Type.Integer(), Type.Number()), not ${valueKind}`)
  }
  return Object.freeze({
    name,
    schema: attribute.schema,
    column,
    required: attribute.required ?? false,
    readOnly: attribute.readOnly === true || derived !== undefined || database,
    createOnly: attribute.createOnly ?? false,
    hidden,
    filterable: attribute.filterable ?? stored,
    sortable: attribute.sortable ?? stored,
    nullable: isNullable(attribute.schema),
    hasDefault,
    defaultValue: attribute.default,
    derived,
    format,
    valueKind,
    // An attribute's own limits are input rules, not what a filter may compare with; an id's are its column's.
    valueSchema: isId ? core : bareSchema(core, valueKind),
    operators,
    selects: Object.freeze(derived !== undefined
      ? derived.columns.map((c) => checkIdentifier(type, name, c))
      : computed !== undefined ? [selectedAs({ name })] : aggregate !== undefined ? [] : [column as string]),
    computed,
    aggregate,
    inDefaultFieldset: (attribute.rendered ?? (aggregate === undefined ? 'always' : 'on-request')) === 'always',
  })
}

const AGGREGATE_FUNCTIONS: readonly AggregateFunction[] = ['count', 'sum', 'min', 'max', 'avg']

/**
 * An `aggregate` declaration read: one function, with a dotted path (`count`: of relationships; the others: of
 * relationships and the related attribute). The path is checked against the graph once every type is resolved.
 */
function aggregateSpec (type: string, name: string, declaration: AggregateDeclaration): AggregateSpec {
  const keys = typeof declaration === 'object' && declaration !== null ? Object.keys(declaration) : []
  const fn = keys[0] as AggregateFunction
  const path = keys.length === 1 ? (declaration as Record<string, unknown>)[fn] : undefined
  if (keys.length !== 1 || !AGGREGATE_FUNCTIONS.includes(fn) || typeof path !== 'string' || path === '') {
    throw new ResourceConfigError(type, name, `\`aggregate\` is one of { count: '<relationship>' }, { sum | min | max | avg: '<relationship>.<attribute>' }${keys.length === 1 ? didYouMean(keys[0], AGGREGATE_FUNCTIONS) : ''}`)
  }
  const steps = path.split('.')
  if (fn === 'count') return Object.freeze({ fn, path: Object.freeze(steps), of: undefined })
  if (steps.length < 2) throw new ResourceConfigError(type, name, `\`${fn}\` takes '<relationship>.<attribute>' (the related attribute it aggregates), not '${path}'`)
  const of = steps.pop() as string
  return Object.freeze({ fn, path: Object.freeze(steps), of })
}

function resolveRelationship (
  declaration: AnyResourceDeclaration,
  name: string,
  relationship: RelationshipDeclaration,
  byType: ReadonlyMap<string, AnyResourceDeclaration>,
): ResolvedRelationship {
  const type = declaration.type
  if (typeof relationship !== 'object' || relationship === null) throw new ResourceConfigError(type, name, 'must be an object ({ kind, type, … })')
  const storageKeys = (['foreignKey', 'inverse', 'through'] as const).filter((key) => key in relationship)
  if (storageKeys.length > 1) {
    throw new ResourceConfigError(type, name, `give one of \`foreignKey\`, \`inverse\` or \`through\`, not ${storageKeys.map((key) => `\`${key}\``).join(' and ')}`)
  }
  const [keys, of] = {
    foreignKey: [DECLARATION_KEYS.foreignKey, 'a to-one foreign key relationship'],
    inverse: [DECLARATION_KEYS.inverse, 'an inverse relationship'],
    through: [DECLARATION_KEYS.manyToMany, 'a many-to-many relationship'],
    none: [[...new Set([...DECLARATION_KEYS.foreignKey, ...DECLARATION_KEYS.inverse, ...DECLARATION_KEYS.manyToMany])], 'a relationship'],
  }[storageKeys[0] ?? 'none'] as [readonly string[], string]
  checkKeys(type, name, relationship, keys, of)
  const kinds = ['to-one', 'to-many']
  if (!kinds.includes(relationship.kind)) {
    throw new ResourceConfigError(type, name, `\`kind\` must be 'to-one' or 'to-many'${didYouMean(String(relationship.kind), kinds)}`)
  }
  const target = byType.get(relationship.type)
  if (target === undefined) {
    const closest = typeof relationship.type === 'string' ? closestName(relationship.type, byType.keys()) : undefined
    const known = `the declared types: ${[...byType.keys()].join(', ')}`
    throw new ResourceConfigError(type, name, `the related type '${String(relationship.type)}' is not declared (${closest === undefined ? known : `did you mean '${closest}'? ${known}`})`)
  }
  let storage: RelationshipStorage
  if ('foreignKey' in relationship) {
    if (relationship.kind !== 'to-one') throw new ResourceConfigError(type, name, 'a `foreignKey` relationship must be to-one')
    storage = {
      kind: 'foreign-key',
      column: checkIdentifier(type, name, relationship.foreignKey),
      nullable: relationship.nullable ?? !(relationship.required ?? false),
    }
  } else if ('inverse' in relationship) {
    const inverse = target.relationships?.[relationship.inverse]
    if (inverse === undefined) {
      const suggestion = didYouMean(String(relationship.inverse), Object.keys(target.relationships ?? {}))
      throw new ResourceConfigError(type, name, `the inverse relationship '${relationship.type}.${String(relationship.inverse)}' is not declared${suggestion}`)
    }
    if (!('foreignKey' in inverse) || inverse.type !== type) {
      throw new ResourceConfigError(type, name, `the inverse '${relationship.type}.${relationship.inverse}' must be a to-one foreignKey relationship to '${type}'`)
    }
    storage = {
      kind: 'inverse',
      column: checkIdentifier(relationship.type, relationship.inverse, inverse.foreignKey),
      nullable: inverse.nullable ?? !(inverse.required ?? false),
      inverseName: relationship.inverse,
    }
  } else if ('through' in relationship && relationship.through !== undefined) {
    if (relationship.kind !== 'to-many') throw new ResourceConfigError(type, name, 'a `through` relationship must be to-many')
    const through = relationship.through
    checkOptionalObject(type, name, through, DECLARATION_KEYS.through, "'through'")
    storage = {
      kind: 'join',
      table: checkIdentifier(type, name, through.table),
      sourceKey: checkIdentifier(type, name, through.sourceKey),
      targetKey: checkIdentifier(type, name, through.targetKey),
      values: Object.freeze({ ...(through.values ?? {}) }),
    }
    for (const column of Object.keys(storage.values)) checkIdentifier(type, name, column)
  } else {
    throw new ResourceConfigError(type, name, 'needs a `foreignKey`, an `inverse` or a `through` join table')
  }
  const readOnly = relationship.readOnly ?? false
  const createOnly = relationship.createOnly ?? false
  if (readOnly && createOnly) throw new ResourceConfigError(type, name, 'is either `readOnly` or `createOnly`, not both')
  if (readOnly && (relationship.required ?? false)) {
    throw new ResourceConfigError(type, name, 'a read-only relationship cannot be `required` in a create body (a `beforeCreate` hook sets it)')
  }
  return Object.freeze({
    name,
    ownerType: type,
    targetType: relationship.type,
    toMany: relationship.kind === 'to-many',
    required: relationship.required ?? false,
    readOnly,
    createOnly,
    storage: Object.freeze(storage),
    includeSize: includeSizeOf(type, name, relationship),
  })
}

/** A to-many relationship's `includeSize`: a positive integer; a to-one has none (it holds one resource). */
function includeSizeOf (type: string, name: string, relationship: RelationshipDeclaration): number | undefined {
  const size = 'includeSize' in relationship ? relationship.includeSize : undefined
  if (size === undefined) return undefined
  if (relationship.kind !== 'to-many') throw new ResourceConfigError(type, `${name}.includeSize`, 'applies to to-many relationships only')
  if (!Number.isInteger(size) || size < 1) throw new ResourceConfigError(type, `${name}.includeSize`, 'must be a positive integer')
  return size
}

/**
 * A constant `default` must be a value of the attribute's schema (checked as a create body would check it); a function
 * is called per create, so only its result can be checked, at that time.
 */
function checkDefault (type: string, name: string, attribute: AttributeDeclaration, unstored: boolean): void {
  if (unstored) throw new ResourceConfigError(type, name, 'a derived, computed or aggregate attribute is never stored: its `default` would never be written')
  const value = attribute.default
  if (typeof value === 'function') return
  // An undefined default writes null.
  const problems = compileInput(Type.Object({ value: attribute.schema })).check({ value: value === undefined ? null : value })
  if (problems.length === 0) return
  const why = problems.map((problem) => problem.path === '/value' ? problem.message : `at ${problem.path.slice('/value'.length)}: ${problem.message}`)
  throw new ResourceConfigError(type, name, `the \`default\` ${showValue(value)} does not match the attribute's schema: ${why.join('; ')}`)
}

/** A value in a message: JSON, shortened. */
function showValue (value: unknown): string {
  let shown: string
  try {
    shown = value === undefined ? 'undefined (written as null)' : typeof value === 'bigint' ? `${value}n` : JSON.stringify(value) ?? String(value)
  } catch {
    shown = String(value)
  }
  return shown.length > 60 ? `${shown.slice(0, 57)}...` : shown
}

function deriveInputSchema (attributes: ReadonlyMap<string, ResolvedAttribute>, mode: 'create' | 'update'): TObject {
  const properties: TProperties = {}
  for (const attribute of attributes.values()) {
    if (attribute.readOnly) continue
    if (mode === 'update' && attribute.createOnly) continue
    const required = mode === 'create' && attribute.required && !attribute.hasDefault
    properties[attribute.name] = required ? attribute.schema : Type.Optional(attribute.schema)
  }
  return Type.Object(properties, { additionalProperties: false })
}

function isNullable (schema: TSchema): boolean {
  if (schema.type === 'null') return true
  if (Array.isArray(schema.type) && schema.type.includes('null')) return true
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined
  return Array.isArray(members) && members.some(isNullable)
}

/** The schema without its `null` alternative. */
function coreSchema (schema: TSchema): TSchema {
  const members = ((schema.anyOf ?? schema.oneOf) as TSchema[] | undefined)?.filter((member) => member.type !== 'null')
  return members !== undefined && members.length === 1 ? members[0] : schema
}

/** The string formats of exact numbers: `int64` (a `bigint` column) and `decimal` (a `numeric` column). */
const DECIMAL_FORMATS: ReadonlySet<unknown> = new Set(['int64', 'decimal'])

function kindOf (core: TSchema): ValueKind {
  if (core.type === 'string') {
    if (DECIMAL_FORMATS.has(core.format)) return 'decimal'
    return core.format === 'date' ? 'date' : core.format === 'date-time' ? 'date-time' : 'string'
  }
  if (core.type === 'integer' || core.type === 'number' || core.type === 'boolean' || core.type === 'array' || core.type === 'object') return core.type
  return 'other'
}

/** A constraint-free schema of one value of the kind: filter values are checked for their type only. */
function bareSchema (core: TSchema, kind: ValueKind): TSchema {
  switch (kind) {
    case 'string': return core.format === 'uuid' ? Type.String({ format: 'uuid' }) : Type.String()
    case 'decimal': return Type.String({ format: core.format as string })
    case 'date': return Type.String({ format: 'date' })
    case 'date-time': return Type.String({ format: 'date-time' })
    case 'integer': return Type.Integer()
    case 'number': return Type.Number()
    case 'boolean': return Type.Boolean()
    default: return core
  }
}

function valueFormat (schema: TSchema, storage: AttributeDeclaration['storage']): ValueFormat {
  const core = coreSchema(schema)
  if (storage === 'json') return 'json'
  if (core.type === 'string' && core.format === 'date') return 'date'
  if (core.type === 'string' && core.format === 'date-time') return 'date-time'
  if (core.type === 'string' && DECIMAL_FORMATS.has(core.format)) return 'decimal'
  if (core.type === 'integer') return 'integer'
  if (core.type === 'number') return 'number'
  if (storage !== 'native' && core.type === 'object') return 'json'
  return 'plain'
}
