import { createRequire } from 'node:module'
import { Ajv, type ErrorObject } from 'ajv'
import addFormatsModule from 'ajv-formats'

const require = createRequire(import.meta.url)
const schema = require('jsonapi-validator/lib/schema.json') as Record<string, unknown>
const draft06 = require('ajv/dist/refs/json-schema-draft-06.json') as Record<string, unknown>
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

const ajv = new Ajv({ allErrors: true, strict: false })
ajv.addMetaSchema(draft06)
addFormats(ajv)
const validate = ajv.compile(schema)

/** The problems of a document against the official JSON:API 1.0 schema; empty when it is valid. */
export function jsonApiSchemaErrors (document: unknown): ErrorObject[] {
  return validate(document) ? [] : [...(validate.errors ?? [])]
}

/**
 * The problems of an atomic extension document (`atomic:results`), which the 1.0 schema does not know: its members,
 * and each result's resource object checked by the 1.0 schema as the `data` of a document.
 */
export function atomicResultsErrors (document: Record<string, unknown>): unknown[] {
  const problems: unknown[] = []
  for (const member of Object.keys(document)) {
    if (!['atomic:results', 'jsonapi', 'meta', 'links'].includes(member)) problems.push(`unknown member ${member}`)
  }
  const results = document['atomic:results']
  if (!Array.isArray(results)) return [...problems, 'atomic:results is not an array']
  results.forEach((result, index) => {
    if (typeof result !== 'object' || result === null) {
      problems.push(`result ${index} is not an object`)
      return
    }
    const { data, meta } = result as { data?: unknown; meta?: unknown }
    if (meta !== null && meta !== undefined && typeof meta !== 'object') problems.push(`result ${index}: meta`)
    if (data !== null && data !== undefined) problems.push(...jsonApiSchemaErrors({ data }).map((problem) => ({ result: index, problem })))
  })
  return problems
}
