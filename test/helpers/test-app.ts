import type { FastifyInstance, InjectOptions } from 'fastify'
import { sql, type Kysely } from 'kysely'
import { buildApp } from '../../examples/app/app.js'
import { engineOf } from '../../examples/shared/engine.js'
import { emptyTables } from './engine.js'
import { openTestDatabase, type StatementCounter } from './database.js'
import { atomicResultsErrors, jsonApiSchemaErrors } from './jsonapi-schema.js'
import { openApiProblems } from './openapi-conformance.js'

/** A response of the test app: status, headers, the body as sent and parsed (undefined when empty). */
export interface TestResponse {
  readonly status: number
  readonly headers: Record<string, string | string[] | number | undefined>
  readonly text: string
  readonly body: any
}

/** What a request sends besides method and URL. */
export interface TestRequest {
  /** A JSON body (serialized) or a raw string body (sent as is). */
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** The example app on a fresh database, for one test file. */
export interface TestApp {
  readonly app: FastifyInstance
  readonly db: Kysely<any>
  readonly counter: StatementCounter
  /** Sends a request; every non-empty body must be a valid JSON:API 1.0 document, or this throws. */
  readonly request: (method: InjectOptions['method'], url: string, options?: TestRequest) => Promise<TestResponse>
  /** Empties every table and restarts the id sequences. */
  readonly reset: () => Promise<void>
  /** Every row of every table (as JSON, dates as text), to prove what a request changed — or that it changed nothing. */
  readonly snapshot: () => Promise<Record<string, unknown[]>>
}

/**
 * Sends a request to an app (a JSON body is serialized and sent as `application/vnd.api+json` unless a content type
 * is given). Every non-empty body must be a valid JSON:API 1.0 document (or atomic results), and every response must
 * be one the app's OpenAPI document declares for its path, method and status, with a body of the declared schema;
 * otherwise this throws. The app must have `@fastify/swagger` registered (see `documentedFastify`).
 */
export async function injectJsonApi (app: FastifyInstance, method: InjectOptions['method'], url: string, options: TestRequest = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) }
  let payload: string | undefined
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/vnd.api+json'
  }
  const response = await app.inject({ method, url, headers, payload })
  const body = response.body === '' ? undefined : JSON.parse(response.body)
  if (body !== undefined) {
    const problems = 'atomic:results' in body ? atomicResultsErrors(body) : jsonApiSchemaErrors(body)
    if (problems.length > 0) {
      throw new Error(`${method} ${url} answered a document that is not valid JSON:API: ${JSON.stringify(problems.slice(0, 3))}\n${response.body}`)
    }
  }
  const contentType = response.headers['content-type']
  const undocumented = openApiProblems(app, String(method), url, response.statusCode, typeof contentType === 'string' ? contentType : undefined, body)
  if (undocumented.length > 0) {
    throw new Error(`${method} ${url} answered what the OpenAPI document does not declare:\n${undocumented.join('\n')}\n${response.body.slice(0, 2000)}`)
  }
  return { status: response.statusCode, headers: response.headers, text: response.body, body }
}

const TABLES = ['notes', 'parent_to_child_associations', 'parents', 'children', 'posts', 'user_bios', 'workplaces', 'computers', 'users', 'groups', 'photos']

/** Starts the example app on its own database; `teardown` closes both. */
export async function startTestApp (teardown: (fn: () => Promise<void>) => void): Promise<TestApp> {
  const database = await openTestDatabase()
  const app = await buildApp({ db: database.db })
  await app.ready()
  teardown(async () => {
    await app.close()
    await database.close()
  })
  return {
    app,
    db: database.db,
    counter: database.counter,
    request: (method, url, options = {}) => injectJsonApi(app, method, url, options),
    async reset () {
      await emptyTables(database.db, TABLES)
    },
    async snapshot () {
      const tables: Record<string, unknown[]> = {}
      if (engineOf(database.db) !== 'postgres') {
        for (const table of TABLES) tables[table] = await database.db.selectFrom(table).selectAll().orderBy('id').execute()
        return tables
      }
      for (const table of TABLES) {
        const result = await sql<{ row: unknown }>`select to_jsonb(t) as row from ${sql.table(table)} t order by t.id`.execute(database.db)
        tables[table] = result.rows.map((row) => row.row)
      }
      return tables
    },
  }
}
