/**
 * What the PostgreSQL-only bench scripts (`scale.ts`, `include-growth.ts`) share: the statements a request runs, as
 * the library writes them, and what each costs the server.
 */
import { Kysely, PostgresDialect, type LogEvent } from 'kysely'
import pg from 'pg'
import { describePlan } from './harness.js'
import { scaleApp, type StrategyName } from './scale-server.js'

const MEDIA_TYPE = 'application/vnd.api+json'

/** A statement and its parameters. */
export interface Statement { readonly sql: string; readonly parameters: readonly unknown[] }

/** What a statement costs the server (ms) and the scans of its plan. */
export interface Timing { readonly ms: number; readonly plan: string }

/**
 * The statements of `GET <path>`, as the library writes them: the scale app (the example app's resources, `user`
 * counted by `strategy`) in-process, on a logging Kysely; the request must answer 200.
 */
export async function statementsOf (url: string, strategy: StrategyName, path: string): Promise<Statement[]> {
  const captured: Statement[] = []
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
    log: (event: LogEvent) => { if (event.level === 'query') captured.push({ sql: event.query.sql, parameters: event.query.parameters }) },
  })
  const app = await scaleApp(db, strategy)
  try {
    await app.ready()
    captured.length = 0
    const response = await app.inject({ method: 'GET', url: path, headers: { accept: MEDIA_TYPE } })
    if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode} ${response.body.slice(0, 300)}`)
  } finally {
    await app.close()
    await db.destroy()
  }
  return captured
}

/**
 * What a statement costs the server, median of 15: planning and execution time from `EXPLAIN (ANALYZE, SUMMARY)`;
 * for the estimate (itself an `EXPLAIN`), the planning time of the statement it explains, which is all it costs.
 */
export async function serverTime (client: pg.Client, statement: Statement): Promise<Timing> {
  const estimate = statement.sql.startsWith('explain (format json) ')
  const explained = estimate
    ? `explain (summary, format json) ${statement.sql.slice('explain (format json) '.length)}`
    : `explain (analyze, summary, format json) ${statement.sql}`
  const times: number[] = []
  let plan = ''
  for (let run = 0; run < 15; run++) {
    const { rows } = await client.query(explained, [...statement.parameters])
    const result = (rows[0] as { 'QUERY PLAN': Array<{ 'Planning Time': number; 'Execution Time'?: number; Plan: Record<string, unknown> }> })['QUERY PLAN'][0]
    times.push(result['Planning Time'] + (estimate ? 0 : result['Execution Time'] ?? 0))
    plan = describePlan(result.Plan)
  }
  times.sort((a, b) => a - b)
  return { ms: times[Math.floor(times.length / 2)], plan }
}
