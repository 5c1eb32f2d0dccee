/**
 * The request context of the example app: the acting user.
 *
 * The example stands in for authentication with a header: `X-User-Id: <id of a user>` names the acting user of the
 * request; a request without it is anonymous. A real application derives the user from a session or a token here,
 * the same way, and hands it to the plugin through its `context` option.
 */
import type { FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import { JsonApiError } from '../../lib/index.js'
import type { ExampleContext } from './resources.js'

const USER_ID = /^[1-9]\d{0,9}$/

function unknownUser (value: string): JsonApiError {
  return new JsonApiError({
    status: 401,
    code: 'unknown_user',
    title: 'Unknown user',
    detail: `X-User-Id '${value.slice(0, 40)}' is not the id of a user`,
    source: { header: 'X-User-Id' },
  })
}

/**
 * The plugin's `context` option of the example app: one query when the request names a user, none otherwise. An
 * anonymous request's context is answered at once, not as a promise: the plugin then goes on without a turn of the
 * microtask queue (a context function may answer either way).
 */
export function exampleContext (db: Kysely<any>): (request: FastifyRequest) => ExampleContext | Promise<ExampleContext> {
  async function lookUp (value: string): Promise<ExampleContext> {
    const row = await db.selectFrom('users').select('id').where('id', '=', Number(value)).executeTakeFirst()
    if (row === undefined) throw unknownUser(value)
    return { user: { id: String(row.id) } }
  }
  return function actingUser (request) {
    const header = request.headers['x-user-id']
    if (header === undefined) return { user: undefined }
    const value = Array.isArray(header) ? header.join(',') : header
    if (!USER_ID.test(value) || Number(value) > 2147483647) throw unknownUser(value)
    return lookUp(value)
  }
}
