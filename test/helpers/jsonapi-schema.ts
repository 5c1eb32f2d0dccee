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
