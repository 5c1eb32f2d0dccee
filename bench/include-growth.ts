/**
 * The include-growth scenario of `npm run bench` (alone: `npm run bench:include-growth`): how the cost of
 * `GET /users?include=computers&page[size]=20` grows with the number of computers each user owns — 3, 50 and 1,000
 * (`BENCH_INCLUDE_COMPUTERS`) — now that each user's computers are paged (10 by default, `meta.count` and a `next`
 * link), and what it cost when every related row was read (`page[computers][size]=1000`, the old behaviour for one
 * request).
 *
 * One database: 20 users per size (users 1–20 own 3 computers each, 21–40 own 50, 41–60 own 1,000, …), the example's
 * migrations (`computers.owner_id` is indexed) and the index an application adds for large relationships,
 * `computers (owner_id, id)` (without it, `BENCH_INCLUDE_INDEX=0`: the pages are ranked by window functions), fresh
 * statistics; the requests read the page of 20 users of each size
 * (`page[number]`). The example app's resources on a server process (`scale-server.ts`, `count: exact`), loaded with
 * autocannon; then each request's include statement is captured as the library writes it and timed on the server
 * (median of 15, `EXPLAIN (ANALYZE)`).
 *
 * Environment: `DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/postgres; a fresh database
 * `fjsonapi_include_<epoch>` is created there and dropped at the end), `BENCH_DURATION` (measured seconds per run,
 * default 10), `BENCH_WARMUP` (default 2), `BENCH_CONNECTIONS` (default 10), `BENCH_ROUNDS` (runs per request,
 * default 2), `BENCH_INCLUDE_COMPUTERS` (the sizes, default `3,50,1000`).
 */
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { migrateToLatest } from '../examples/app/migrations.js'
import { createDatabase, databaseUrl, dropDatabase, redact, skipWithoutPostgres } from './database.js'
import { measureGet, numberSetting, startChildServer, type MeasuredRun } from './harness.js'
import { serverTime, statementsOf, type Statement } from './statements.js'

skipWithoutPostgres('the include-growth scenario (bench/include-growth.ts)')

const MEDIA_TYPE = 'application/vnd.api+json'
const DURATION = numberSetting('BENCH_DURATION', 10, 1)
const WARMUP = numberSetting('BENCH_WARMUP', 2)
const CONNECTIONS = numberSetting('BENCH_CONNECTIONS', 10, 1)
const ROUNDS = numberSetting('BENCH_ROUNDS', 2, 1)
const SIZES = (process.env.BENCH_INCLUDE_COMPUTERS ?? '3,50,1000').split(',').map((item) => {
  const size = Number(item)
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new Error(`BENCH_INCLUDE_COMPUTERS: each size must be an integer from 1 to 1000, got "${item}"`)
  return size
})
/** Whether the seed adds the index `computers (owner_id, id)` (`BENCH_INCLUDE_INDEX`, default 1). */
const WITH_INDEX = process.env.BENCH_INCLUDE_INDEX !== '0'
/** Users per size: one page of them. */
const PAGE = 20

interface Case {
  /** Computers of each user. */
  readonly computers: number
  /** `paged` (the default page of 10 per user) or `whole` (`page[computers][size]=1000`: every computer). */
  readonly kind: 'paged' | 'whole'
  readonly path: string
  runs: MeasuredRun[]
  bytes?: number
  include?: { readonly ms: number; readonly plan: string }
}

const cases: Case[] = SIZES.flatMap((computers, index) => (['paged', 'whole'] as const).map((kind): Case => ({
  computers,
  kind,
  path: `/users?include=computers&page[size]=${PAGE}&page[number]=${index + 1}${kind === 'whole' ? '&page[computers][size]=1000' : ''}`,
  runs: [],
})))

/** Users 1–20 own `SIZES[0]` computers each, 21–40 `SIZES[1]`, …; the example's indexes; fresh statistics. */
async function seed (url: string): Promise<void> {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
  try {
    await migrateToLatest(db)
    await sql`insert into users (name, status, words) select 'user ' || i, 'active', array['alpha'] from generate_series(1, ${PAGE * SIZES.length}::int) i`.execute(db)
    for (const [index, computers] of SIZES.entries()) {
      await sql`insert into computers (serial, name, owner_id)
        select 'SN-' || u || '-' || c, 'computer ' || c, u
        from generate_series(${index * PAGE + 1}::int, ${(index + 1) * PAGE}::int) u, generate_series(1, ${computers}::int) c`.execute(db)
    }
    // The index an application adds for relationships with many rows per owner (docs/databases.md): each page is then
    // read by LATERAL … LIMIT, its count from this index. BENCH_INCLUDE_INDEX=0 leaves it out (window functions).
    if (WITH_INDEX) await sql`create index computers_owner_id_id_index on computers (owner_id, id)`.execute(db)
    await sql`vacuum analyze`.execute(db)
  } finally {
    await db.destroy()
  }
}

/** The include statement of a request, as the library writes it. */
async function includeStatement (url: string, path: string): Promise<Statement> {
  const statements = await statementsOf(url, 'exact', path)
  const include = statements.find((statement) => statement.sql.includes('"__owner"'))
  if (include === undefined) throw new Error(`${path}: no include statement among ${statements.length}`)
  return include
}

const name = `fjsonapi_include_${Math.floor(Date.now() / 1000)}`
const url = databaseUrl(name)
console.log(`include-growth scenario: ${PAGE} users per size owning ${SIZES.join(', ')} computers each, ${WITH_INDEX ? 'with' : 'without'} computers (owner_id, id); database ${redact(url)}`)
const version = await createDatabase(name)
try {
  await seed(url)
  for (let round = 0; round < ROUNDS; round++) {
    const server = await startChildServer('scale-server.ts', { BENCH_DATABASE_URL: url, BENCH_COUNT: 'exact' })
    try {
      for (const item of round % 2 === 0 ? cases : [...cases].reverse()) {
        if (item.bytes === undefined) {
          const response = await fetch(`http://127.0.0.1:${server.port}${item.path}`, { headers: { accept: MEDIA_TYPE } })
          const text = await response.text()
          if (response.status !== 200) throw new Error(`${item.path}: ${response.status} ${text.slice(0, 300)}`)
          const body = JSON.parse(text)
          const first = body.data[0].relationships.computers
          const shown = item.kind === 'paged' ? Math.min(10, item.computers) : item.computers
          if (first.data.length !== shown || first.meta.count !== item.computers) throw new Error(`${item.path}: ${first.data.length} computers shown of ${first.meta.count}`)
          item.bytes = text.length
        }
        const run = await measureGet(server, { label: item.path, path: item.path, headers: { accept: MEDIA_TYPE }, connections: CONNECTIONS, warmup: WARMUP, duration: DURATION })
        item.runs.push(run)
        console.log(`${item.computers} computers each, ${item.kind}: ${Math.round(run.requestsPerSecond)} req/s`)
      }
    } finally {
      await server.stop()
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (const item of cases) item.include = await serverTime(client, await includeStatement(url, item.path))
  } finally {
    await client.end()
  }

  const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length
  console.log(`\nPostgreSQL: ${version.split(',')[0]}; autocannon ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s per request (after ${WARMUP} s warm-up)\n`)
  console.log('| computers per user | include | req/s | p99 (ms) | server CPU ms/req | document (bytes) | include statement (ms) | its scans |')
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |')
  for (const item of cases) {
    const requests = item.runs.reduce((sum, run) => sum + run.requests, 0)
    console.log(`| ${item.computers.toLocaleString('en-US')} | ${item.kind === 'paged' ? '10 per user (default)' : 'every one (`page[computers][size]=1000`)'} | ` +
      `${Math.round(mean(item.runs.map((run) => run.requestsPerSecond))).toLocaleString('en-US')} | ${Math.max(...item.runs.map((run) => run.p99))} | ` +
      `${(item.runs.reduce((sum, run) => sum + run.cpu, 0) / 1000 / requests).toFixed(3)} | ${(item.bytes ?? 0).toLocaleString('en-US')} | ` +
      `${item.include?.ms.toFixed(2) ?? '—'} | ${item.include?.plan ?? '—'} |`)
  }
  const paged = cases.filter((item) => item.kind === 'paged')
  if (paged.length > 1) {
    const [small, large] = [paged[0], paged[paged.length - 1]]
    const rate = (item: Case): number => mean(item.runs.map((run) => run.requestsPerSecond))
    console.log(`\nPaged, from ${small.computers} to ${large.computers} computers per user: req/s ×${(rate(large) / rate(small)).toFixed(2)}, ` +
      `document ×${((large.bytes ?? 0) / (small.bytes ?? 1)).toFixed(2)}, include statement ×${((large.include?.ms ?? 0) / (small.include?.ms ?? 1)).toFixed(1)}`)
  }
} finally {
  await dropDatabase(name).catch((error: unknown) => console.error(`could not drop ${name}:`, error))
}
