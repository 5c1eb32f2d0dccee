import type { QueryTree } from '../query/query-tree.js'
import type { ResultSet } from '../contracts/result-set.js'
import { ResourceWriter } from './resource-object.js'
import { ATOMIC_EXTENSION } from '../contracts/media-types.js'


/**
 * The document of a successful atomic request: one result per operation, in order — `{data: <resource>, meta: null}`
 * for an add or update, `{data: null, meta: null}` for a remove or a relationship operation. No `included`.
 */
export function operationsDocument (results: ReadonlyArray<ResultSet | null>, query: QueryTree, baseUrl: string): Record<string, unknown> {
  return {
    'atomic:results': results.map((result) => {
      const primary = result?.primary[0]
      return { data: result === null || primary === undefined ? null : new ResourceWriter(baseUrl, query, result).json(primary), meta: null }
    }),
    jsonapi: { version: '1.1', ext: [ATOMIC_EXTENSION] },
  }
}
