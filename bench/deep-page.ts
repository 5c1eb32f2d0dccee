/**
 * The deep-page scenario of `npm run bench` (alone: `npm run bench:deep-page`): page 500 of 20 (rows 9,981–10,000)
 * of a 100,000-row table, read by number (`page[number]=500`, `OFFSET 9980`) and by cursor (`page[after]=<the cursor
 * of row 9,980>`, keyset), in the id order (the primary key) and in `sort=name` (an index on `(name, id)`, which the
 * bench creates: the index an application adds for the order it pages). The library is the example app, one server
 * process (`servers/library.ts`), loaded with autocannon as in `run.ts`.
 *
 * Besides requests per second, the page statement itself: each page's statements are captured as the library writes
 * them (an in-process app with a logging Kysely), then run under `EXPLAIN ANALYZE` (median of 15 runs): the page
 * (offset or keyset) and the `count(*)` both pages have.
 *
 * Environment: `DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/postgres; a fresh database
 * `fjsonapi_deep_<epoch>` is created there and dropped at the end), `BENCH_DURATION` (measured seconds per run,
 * default 10), `BENCH_WARMUP` (default 2), `BENCH_CONNECTIONS` (default 10), `BENCH_ROUNDS` (runs per scenario,
 * alternating, default 2), `BENCH_DEEP_ROWS` (default 100000).
 */
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely'
import pg from 'pg'
import { buildApp } from '../examples/app/app.js'
import { migrateToLatest } from '../examples/app/migrations.js'
import { createDatabase, databaseUrl, dropDatabase, redact, skipWithoutPostgres } from './database.js'
import { describePlan, measureGet, numberSetting, startChildServer, type ChildServer as Server, type MeasuredRun as Run } from './harness.js'

skipWithoutPostgres('the deep-page scenario (bench/deep-page.ts)')

const PROFILE = 'https://jsonapi.org/profiles/ethanresnick/cursor-pagination'
const MEDIA_TYPE = 'application/vnd.api+json'

const DURATION = numberSetting('BENCH_DURATION', 10, 1)
const WARMUP = numberSetting('BENCH_WARMUP', 2)
const CONNECTIONS = numberSetting('BENCH_CONNECTIONS', 10, 1)
const ROUNDS = numberSetting('BENCH_ROUNDS', 2, 1)
const ROWS = numberSetting('BENCH_DEEP_ROWS', 100_000, 10_000)
const PAGE = 500
const SIZE = 20
/** The last row before the page: its cursor starts the page by cursor. */
const BEFORE = (PAGE - 1) * SIZE

interface Scenario {
  readonly id: string
  readonly label: string
  readonly path: string
  readonly headers: Record<string, string>
  /** The order's query (`sort=name&`), and whether the page is read by cursor. */
  readonly query: string
  readonly cursor: boolean
}

// --- the server ------------------------------------------------------------------------------------------------

type Get = (target: string, headers: Record<string, string>) => Promise<any>

/** GET from a server process. */
function fetcher (port: number): Get {
  return async (target, headers) => {
    const response = await fetch(`http://127.0.0.1:${port}${target}`, { headers })
    const body = await response.json()
    if (response.status !== 200) throw new Error(`${target} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`)
    return body
  }
}

/**
 * The cursor of row `index` (0-based) of an order: pages of 1,000 by cursor up to it. (A cursor is signed with the
 * key of the server that issued it: each server finds its own.)
 */
async function cursorOfRow (get: Get, query: string, index: number): Promise<string> {
  let target: string | undefined = `/users?${query}page[size]=1000`
  let seen = 0
  while (target !== undefined) {
    const body = await get(target, { accept: `${MEDIA_TYPE}; profile="${PROFILE}"` })
    if (index < seen + body.data.length) return body.data[index - seen].meta.page.cursor as string
    seen += body.data.length
    target = body.links.next === undefined ? undefined : decodeURIComponent(body.links.next)
  }
  throw new Error(`no row ${index} in /users?${query}`)
}

// --- measuring -------------------------------------------------------------------------------------------------

/** The statements a request runs, as the library writes them (an in-process app on a logging Kysely). */
async function statementsOf (url: string, scenario: Scenario): Promise<Array<{ sql: string; parameters: readonly unknown[] }>> {
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = []
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
    log: (event: LogEvent) => { if (event.level === 'query') captured.push({ sql: event.query.sql, parameters: event.query.parameters }) },
  })
  const app = await buildApp({ db, logger: false })
  await app.ready()
  try {
    const get: Get = async (target, headers) => {
      const response = await app.inject({ method: 'GET', url: target, headers })
      if (response.statusCode !== 200) throw new Error(`${target}: ${response.statusCode} ${response.body.slice(0, 300)}`)
      return response.json()
    }
    const target = scenario.cursor
      ? `/users?${scenario.query}page[size]=${SIZE}&page[after]=${await cursorOfRow(get, scenario.query, BEFORE - 1)}`
      : scenario.path
    captured.length = 0
    await get(target, scenario.headers)
  } finally {
    await app.close()
    await db.destroy()
  }
  return captured
}

/** The median execution time (ms) of a statement under `EXPLAIN ANALYZE`, over 15 runs, and its plan's top node. */
async function executionTime (client: pg.Client, statement: { sql: string; parameters: readonly unknown[] }): Promise<{ ms: number; plan: string }> {
  const times: number[] = []
  let plan = ''
  for (let run = 0; run < 15; run++) {
    const { rows } = await client.query(`explain (analyze, format json) ${statement.sql}`, [...statement.parameters])
    const explained = (rows[0] as { 'QUERY PLAN': Array<{ 'Execution Time': number; Plan: Record<string, unknown> }> })['QUERY PLAN'][0]
    times.push(explained['Execution Time'])
    plan = describePlan(explained.Plan)
  }
  times.sort((a, b) => a - b)
  return { ms: times[Math.floor(times.length / 2)], plan }
}


// --- main ------------------------------------------------------------------------------------------------------

const name = `fjsonapi_deep_${Math.floor(Date.now() / 1000)}`
const url = databaseUrl(name)
console.log(`deep-page scenario: page ${PAGE} of ${SIZE} over ${ROWS.toLocaleString('en-US')} users, by number and by cursor; database ${redact(url)}`)
const version = await createDatabase(name)
let server: Server | undefined
try {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
  await migrateToLatest(db)
  // Names with duplicates (every 7th repeats), so that `sort=name` needs its id tie-break.
  await sql`insert into users (name, first_name, last_name, email, age, status, words)
    select 'user ' || lpad(((i * 7919) % ${Math.floor(ROWS * 6 / 7)})::text, 6, '0'), 'First' || i, 'Last' || i, 'user' || i || '@example.com', i % 90, 'active', array['alpha']
    from generate_series(1, ${ROWS}) i`.execute(db)
  await sql`create index users_name_id_index on users (name, id)`.execute(db)
  await sql`analyze`.execute(db)
  await db.destroy()

  server = await startChildServer('servers/library.ts', { BENCH_DATABASE_URL: url })
  const get = fetcher(server.port)
  const scenarios: Scenario[] = []
  for (const [order, query] of [['id order', ''], ['sort=name', 'sort=name&']] as const) {
    const cursor = await cursorOfRow(get, query, BEFORE - 1)
    const headers = { accept: MEDIA_TYPE }
    scenarios.push(
      { id: `number ${order}`, label: `GET /users?${query}page[size]=${SIZE}&page[number]=${PAGE}`, path: `/users?${query}page[size]=${SIZE}&page[number]=${PAGE}`, headers, query, cursor: false },
      { id: `cursor ${order}`, label: `GET /users?${query}page[size]=${SIZE}&page[after]=<row ${BEFORE}>`, path: `/users?${query}page[size]=${SIZE}&page[after]=${cursor}`, headers, query, cursor: true },
    )
  }
  // Both reads of an order answer the same rows.
  for (let index = 0; index < scenarios.length; index += 2) {
    const [byNumber, byCursor] = await Promise.all([scenarios[index], scenarios[index + 1]].map((scenario) => get(scenario.path, scenario.headers)))
    const ids = (body: any): string => body.data.map((item: { id: string }) => item.id).join(',')
    if (ids(byNumber) !== ids(byCursor) || byNumber.data.length !== SIZE) throw new Error(`${scenarios[index].id}: the pages by number and by cursor differ`)
  }

  const runs = new Map<string, Run[]>(scenarios.map((scenario) => [scenario.id, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (let index = 0; index < scenarios.length; index += 2) {
      const pair = round % 2 === 0 ? [scenarios[index], scenarios[index + 1]] : [scenarios[index + 1], scenarios[index]]
      for (const scenario of pair) {
        const run = await measureGet(server, { label: scenario.label, path: scenario.path, headers: scenario.headers, connections: CONNECTIONS, warmup: WARMUP, duration: DURATION })
        runs.get(scenario.id)!.push(run)
        console.log(`${scenario.label}: ${Math.round(run.requestsPerSecond)} req/s`)
      }
    }
  }
  await server.stop()
  server = undefined

  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const timings = new Map<string, { page: { ms: number; plan: string }; count: { ms: number; plan: string } }>()
  try {
    for (const scenario of scenarios) {
      const statements = await statementsOf(url, scenario)
      const count = statements.find((statement) => statement.sql.startsWith('select count(*)'))
      const page = statements.find((statement) => statement !== count)
      if (page === undefined || count === undefined) throw new Error(`${scenario.id}: expected a page and a count, got ${statements.length} statements`)
      timings.set(scenario.id, { page: await executionTime(client, page), count: await executionTime(client, count) })
    }
  } finally {
    await client.end()
  }

  console.log(`\nPostgreSQL: ${version.split(',')[0]}; autocannon ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s per scenario (after ${WARMUP} s warm-up)\n`)
  console.log('| request | req/s | p99 (ms) | server CPU ms/req | page statement (ms) | its scans | count(*) (ms) |')
  console.log('| --- | ---: | ---: | ---: | ---: | --- | ---: |')
  for (const scenario of scenarios) {
    const measured = runs.get(scenario.id)!
    const requests = measured.reduce((sum, run) => sum + run.requests, 0)
    const timing = timings.get(scenario.id)!
    console.log(`| \`${scenario.label}\` | ${Math.round(measured.reduce((sum, run) => sum + run.requestsPerSecond, 0) / measured.length).toLocaleString('en-US')} | ` +
      `${Math.max(...measured.map((run) => run.p99))} | ${(measured.reduce((sum, run) => sum + run.cpu, 0) / 1000 / requests).toFixed(3)} | ` +
      `${timing.page.ms.toFixed(2)} | ${timing.page.plan} | ${timing.count.ms.toFixed(2)} |`)
  }
} finally {
  await server?.stop().catch(() => {})
  await dropDatabase(name)
}
