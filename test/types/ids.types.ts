// Type tests of id declarations: checked by `npm run typecheck`. Every `@ts-expect-error` line must be a compile error.
import { defineResource, type IdDeclaration } from '../../lib/index.js'

export const declared: IdDeclaration[] = [
  {},
  { kind: 'integer' },
  { column: 'key', kind: 'bigint' },
  { kind: 'uuid' },
  { kind: 'text', pattern: /[a-z]+/ },
  { column: 'slug', kind: 'text', pattern: '[a-z0-9-]+', maxLength: 64 },
]

// @ts-expect-error: a text id needs a pattern
export const noPattern: IdDeclaration = { kind: 'text' }

// @ts-expect-error: a pattern is for text ids only
export const patternOnUuid: IdDeclaration = { kind: 'uuid', pattern: /x/ }

// @ts-expect-error: not an id kind
export const serial: IdDeclaration = { kind: 'serial' }

export const tag = defineResource({ type: 'tag', id: { column: 'slug', kind: 'text', pattern: /[a-z]+/ } })
