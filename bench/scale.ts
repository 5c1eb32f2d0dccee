/**
 * The scale scenario of `npm run bench` (alone: `npm run bench:scale`): how the cost of two common reads grows with
 * the table, under each count strategy of the `user` resource (`exact`, `estimated`, `none`), on 1,000 and on
 * 100,000 users (3 computers each, so 3,000 and 300,000 computers):
 *
 * - a filtered, sorted page with its count: `GET /users?filter=[{"name":"age","op":"ge","val":30}]&sort=name&page[size]=20`,
 *   with the indexes an application adds for it (`users (name, id)` for the order, `users (age)` for the filter);
 * - an include over 100 primary rows: `GET /users?include=computers&page[size]=100` (`computers.owner_id` is indexed
 *   by the example's migrations).
 *
 * Each size has its own database; each strategy its own server process (`scale-server.ts`: the example app's
 * resources with `user.count` from `BENCH_COUNT`), loaded with autocannon as in `deep-page.ts`, the strategies in
 * alternating order from round to round. Then each request's statements are captured as the library writes them (an
 * in-process app on a logging Kysely) and timed on the server (median of 15): the page, the count (`count(*)` under
 * `exact`: planning and execution from `EXPLAIN (ANALYZE)`; the `EXPLAIN` under `estimated`: its planning time, which
 * is all it costs) and the include.
 *
 * Environment: `DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/postgres; fresh databases
 * `fjsonapi_scale_<epoch>_<rows>` are created there and dropped at the end), `BENCH_DURATION` (measured seconds per
 * run, default 10), `BENCH_WARMUP` (default 2), `BENCH_CONNECTIONS` (default 10), `BENCH_ROUNDS` (runs per server and
 * request, default 2), `BENCH_SCALE_ROWS` (the table sizes, default `1000,100000`).
 */
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { migrateToLatest } from '../examples/app/migrations.js'
import { createDatabase, databaseUrl, dropDatabase, redact, skipWithoutPostgres } from './database.js'
import { measureGet, numberSetting, startChildServer, type ChildServer as Server, type MeasuredRun as Run } from './harness.js'
import { serverTime, statementsOf, type Statement, type Timing } from './statements.js'
import { STRATEGIES, type StrategyName } from './scale-server.js'

skipWithoutPostgres('the scale scenario (bench/scale.ts)')

const MEDIA_TYPE = 'application/vnd.api+json'

const DURATION = numberSetting('BENCH_DURATION', 10, 1)
const WARMUP = numberSetting('BENCH_WARMUP', 2)
const CONNECTIONS = numberSetting('BENCH_CONNECTIONS', 10, 1)
const ROUNDS = numberSetting('BENCH_ROUNDS', 2, 1)
const SIZES = (process.env.BENCH_SCALE_ROWS ?? '1000,100000').split(',').map((item) => {
  const rows = Number(item)
  if (!Number.isInteger(rows) || rows < 200) throw new Error(`BENCH_SCALE_ROWS: each size must be an integer ≥ 200, got "${item}"`)
  return rows
})
const COMPUTERS_PER_USER = 3
const STRATEGY_NAMES = Object.keys(STRATEGIES) as StrategyName[]

interface Request {
  readonly id: 'filtered' | 'include'
  /** As the table shows it. */
  readonly label: string
  /** As it is sent (the filter percent-encoded). */
  readonly path: string
}

const FILTER = JSON.stringify([{ name: 'age', op: 'ge', val: 30 }])
const REQUESTS: readonly Request[] = [
  { id: 'filtered', label: `GET /users?filter=${FILTER}&sort=name&page[size]=20`, path: `/users?filter=${encodeURIComponent(FILTER)}&sort=name&page[size]=20` },
  { id: 'include', label: 'GET /users?include=computers&page[size]=100', path: '/users?include=computers&page[size]=100' },
]

// --- the database ----------------------------------------------------------------------------------------------

/**
 * Migrates and fills a database: `rows` users (names with duplicates — every 7th repeats — ages 0–89, so that
 * `age >= 30` matches two thirds), 3 computers each, the indexes of the filtered request, fresh statistics.
 */
async function seed (url: string, rows: number): Promise<void> {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
  try {
    await migrateToLatest(db)
    await sql`insert into users (name, first_name, last_name, email, age, status, words)
      select 'user ' || lpad(((i * 7919) % ${Math.floor(rows * 6 / 7)})::text, 6, '0'), 'First' || i, 'Last' || i, 'user' || i || '@example.com', i % 90, 'active', array['alpha']
      from generate_series(1, ${rows}) i`.execute(db)
    await sql`insert into computers (serial, name, owner_id)
      select 'SN-' || lpad(i::text, 7, '0'), 'computer ' || i, 1 + (i - 1) / ${COMPUTERS_PER_USER}
      from generate_series(1, ${rows * COMPUTERS_PER_USER}) i`.execute(db)
    await sql`create index users_name_id_index on users (name, id)`.execute(db)
    await sql`create index users_age_index on users (age)`.execute(db)
    await sql`analyze`.execute(db)
  } finally {
    await db.destroy()
  }
}

// --- the server ------------------------------------------------------------------------------------------------

/** GET from a server process: the parsed document of a 200. */
async function fetchDocument (port: number, target: string): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${port}${target}`, { headers: { accept: MEDIA_TYPE } })
  const body = await response.json()
  if (response.status !== 200) throw new Error(`${target} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`)
  return body
}

// --- measuring -------------------------------------------------------------------------------------------------

/** The statements of a request by role: the page, its count (a `count(*)` or an `EXPLAIN`) and its includes. */
function roles (statements: readonly Statement[]): { page: Statement; count: Statement | undefined; include: Statement | undefined } {
  const count = statements.find((statement) => statement.sql.startsWith('select count(*)') || statement.sql.startsWith('explain '))
  const include = statements.find((statement) => statement.sql.includes('"__owner"'))
  const page = statements.find((statement) => statement !== count && statement !== include)
  if (page === undefined) throw new Error(`no page statement among ${statements.length}`)
  return { page, count, include }
}



// --- main ------------------------------------------------------------------------------------------------------

interface Result {
  readonly rows: number
  readonly request: Request
  readonly strategy: StrategyName
  readonly runs: Run[]
  /** `meta.count` and `countEstimated` of the document. */
  count?: { value: number | undefined; estimated: boolean }
  /** The ids of its `data`, to check that every strategy answers the same rows. */
  ids?: string
  timings?: { page: Timing; count: Timing | undefined; include: Timing | undefined }
}

const epoch = Math.floor(Date.now() / 1000)
const names = SIZES.map((rows) => `fjsonapi_scale_${epoch}_${rows}`)
console.log(`scale scenario: ${SIZES.map((rows) => rows.toLocaleString('en-US')).join(' and ')} users × ${COMPUTERS_PER_USER} computers; ` +
  `strategies ${STRATEGY_NAMES.join(', ')}; databases on ${redact(databaseUrl(names[0]))}`)
let version = ''
const results: Result[] = []
let server: Server | undefined
const created: string[] = []
try {
  for (const [index, rows] of SIZES.entries()) {
    const url = databaseUrl(names[index])
    version = await createDatabase(names[index])
    created.push(names[index])
    await seed(url, rows)
    const here = STRATEGY_NAMES.flatMap((strategy) => REQUESTS.map((request): Result => ({ rows, request, strategy, runs: [] })))
    results.push(...here)
    const find = (strategy: StrategyName, request: Request): Result => here.find((item) => item.strategy === strategy && item.request === request)!

    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? STRATEGY_NAMES : [...STRATEGY_NAMES].reverse()
      for (const strategy of order) {
        server = await startChildServer('scale-server.ts', { BENCH_DATABASE_URL: url, BENCH_COUNT: strategy })
        if (round === 0) {
          // What each strategy answers: the same rows; the count exact, estimated or absent.
          for (const request of REQUESTS) {
            const body = await fetchDocument(server.port, request.path)
            const result = find(strategy, request)
            result.count = { value: body.meta?.count, estimated: body.meta?.countEstimated === true }
            result.ids = body.data.map((item: { id: string }) => item.id).join(',')
          }
        }
        for (const request of REQUESTS) {
          const run = await measureGet(server, { label: request.label, path: request.path, headers: { accept: MEDIA_TYPE }, connections: CONNECTIONS, warmup: WARMUP, duration: DURATION })
          find(strategy, request).runs.push(run)
          console.log(`${rows} rows, ${strategy}, ${request.label}: ${Math.round(run.requestsPerSecond)} req/s`)
        }
        await server.stop()
        server = undefined
      }
    }

    for (const request of REQUESTS) {
      const pages = new Set(STRATEGY_NAMES.map((strategy) => find(strategy, request).ids))
      if (pages.size !== 1) throw new Error(`${rows} rows, ${request.label}: the strategies answered different rows`)
    }

    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      for (const result of here) {
        const { page, count, include } = roles(await statementsOf(url, result.strategy, result.request.path))
        result.timings = {
          page: await serverTime(client, page),
          count: count === undefined ? undefined : await serverTime(client, count),
          include: include === undefined ? undefined : await serverTime(client, include),
        }
      }
    } finally {
      await client.end()
    }
  }

  const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length
  const ms = (timing: Timing | undefined): string => timing === undefined ? '—' : timing.ms.toFixed(2)
  console.log(`\nPostgreSQL: ${version.split(',')[0]}; autocannon ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s per server and request ` +
    `(after ${WARMUP} s warm-up), the strategies alternating\n`)
  console.log('| users | request | `count` | req/s | p99 (ms) | server CPU ms/req | `meta.count` | page (ms) | count (ms) | include (ms) |')
  console.log('| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const result of results) {
    const requests = result.runs.reduce((sum, run) => sum + run.requests, 0)
    const count = result.count?.value === undefined ? '—' : `${result.count.value.toLocaleString('en-US')}${result.count.estimated ? ' (est.)' : ''}`
    const counting = result.timings?.count === undefined ? '—' : `${ms(result.timings.count)}${result.strategy === 'estimated' ? ' (plan)' : ''}`
    console.log(`| ${result.rows.toLocaleString('en-US')} | \`${result.request.label}\` | ${result.strategy} | ` +
      `${Math.round(mean(result.runs.map((run) => run.requestsPerSecond))).toLocaleString('en-US')} | ${Math.max(...result.runs.map((run) => run.p99))} | ` +
      `${(result.runs.reduce((sum, run) => sum + run.cpu, 0) / 1000 / requests).toFixed(3)} | ${count} | ${ms(result.timings?.page)} | ${counting} | ${ms(result.timings?.include)} |`)
  }
  console.log('\nPlans (under `exact`):\n')
  console.log('| users | request | page: its scans | count(*): its scans | include: its scans |')
  console.log('| ---: | --- | --- | --- | --- |')
  for (const result of results.filter((item) => item.strategy === 'exact')) {
    const timings = result.timings!
    console.log(`| ${result.rows.toLocaleString('en-US')} | \`${result.request.label}\` | ${timings.page.plan} | ${timings.count?.plan ?? '—'} | ${timings.include?.plan ?? '—'} |`)
  }
  // How each cost grows from the smallest table to the largest.
  if (SIZES.length > 1) {
    const [small, large] = [Math.min(...SIZES), Math.max(...SIZES)]
    console.log(`\nGrowth from ${small.toLocaleString('en-US')} to ${large.toLocaleString('en-US')} users (${(large / small).toLocaleString('en-US')}× the rows):\n`)
    for (const request of REQUESTS) {
      for (const strategy of STRATEGY_NAMES) {
        const at = (rows: number): Result => results.find((item) => item.rows === rows && item.request === request && item.strategy === strategy)!
        const [a, b] = [at(small), at(large)]
        const ratio = (x: number | undefined, y: number | undefined): string => x === undefined || y === undefined || x === 0 ? '—' : `${(y / x).toFixed(1)}×`
        console.log(`- ${request.id}, ${strategy}: req/s ${ratio(mean(a.runs.map((run) => run.requestsPerSecond)), mean(b.runs.map((run) => run.requestsPerSecond)))}, ` +
          `page statement ${ratio(a.timings?.page.ms, b.timings?.page.ms)}, count statement ${ratio(a.timings?.count?.ms, b.timings?.count?.ms)}`)
      }
    }
  }
} finally {
  await server?.stop().catch(() => {})
  for (const name of created) await dropDatabase(name).catch((error: unknown) => console.error(`could not drop ${name}:`, error))
}
