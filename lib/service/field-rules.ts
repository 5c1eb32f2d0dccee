import type { ResolvedResource } from '../schema/resolved.js'
import type { FilterNode } from '../schema/filter-nodes.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { JsonApiError } from '../errors/json-api-error.js'
import type { ServiceScope } from './service-scope.js'

// The write side of field rules (`rules.<attribute>.write`): which attributes of a body the request may not write,
// and the conditions that must hold on the row. The read side is the composer's (`QueryComposer.rule`, the guards
// and the selected decisions) and the document writer's.

/** The write rules of the attributes a body sets: the first it may not write at all, and the conditions on the row. */
export interface WriteRules {
  readonly refused: JsonApiError | undefined
  readonly conditions: ReadonlyArray<{ readonly name: string, readonly condition: FilterNode }>
}

const NO_WRITE_RULES: WriteRules = Object.freeze({ refused: undefined, conditions: Object.freeze([]) })

function fieldForbidden (resource: ResolvedResource, name: string, base: string): JsonApiError {
  return jsonApiError('FJA_FIELD_FORBIDDEN', {
    detail: `this request may not write '${name}' of this '${resource.type}'`,
    source: { pointer: `${base}/attributes/${name}` },
  })
}

/** The write rules of the attributes the client sent (what hooks add is the application's own: not judged). */
export function writeRules (scope: ServiceScope, resource: ResolvedResource, attributes: Readonly<Record<string, unknown>>, base: string): WriteRules {
  if (resource.rules.size === 0) return NO_WRITE_RULES
  let refused: JsonApiError | undefined
  const conditions: Array<{ name: string, condition: FilterNode }> = []
  for (const name of Object.keys(attributes)) {
    const attribute = resource.attributes.get(name)
    if (attribute === undefined) continue
    const condition = scope.composer.rule(resource, attribute, 'write')
    if (condition === undefined) continue
    if (condition.kind === 'constant' && !condition.value) refused ??= fieldForbidden(resource, name, base)
    else conditions.push({ name, condition })
  }
  return refused === undefined && conditions.length === 0 ? NO_WRITE_RULES : { refused, conditions }
}

/**
 * Each write rule's condition holds on the row `id` (an update's target, locked, as it is before the write; a
 * create's row as created): else the 403 at the first attribute whose condition does not. One read per condition.
 */
export async function checkWriteRules (scope: ServiceScope, resource: ResolvedResource, id: string, rules: WriteRules, base: string): Promise<void> {
  for (const { name, condition } of rules.conditions) {
    const rows = await scope.repository.findMany(scope.composer.existing(resource, [id], condition))
    if (rows.length === 0) throw fieldForbidden(resource, name, base)
  }
}
