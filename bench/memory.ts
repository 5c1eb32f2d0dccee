/**
 * The memory scenario of `npm run bench` (alone: `npm run bench:memory`): `GET /users?page[size]=0` over 1,000 and
 * over 100,000 rows, each on a fresh example-app server process (PostgreSQL through `pg`), recording the server's
 * peak resident set (`VmHWM` of /proc/<pid>/status) before and after the request. A streamed collection must not grow
 * with the row count.
 *
 * The servers run with a capped V8 heap (`--max-old-space-size`, `BENCH_MEMORY_HEAP` MiB, default 64): a response
 * that is built in memory (100,000 rows are about 90 MiB of JSON) could not be served within it, and without a cap
 * V8 defers collecting garbage, so the peak would mostly measure its slack. `BENCH_MEMORY_HEAP=0` lifts the cap.
 *
 * Environment: `DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/postgres; a fresh database
 * `fjsonapi_memory_<epoch>` is created there and dropped at the end); `BENCH_MEMORY_ROWS` (default `1000,100000`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { createDatabase, databaseUrl, dropDatabase, redact, skipWithoutPostgres } from './database.js'
import { migrateToLatest } from '../examples/app/migrations.js'

skipWithoutPostgres('the memory scenario (bench/memory.ts)')

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SIZES = (process.env.BENCH_MEMORY_ROWS ?? '1000,100000').split(',').map((value) => {
  const rows = Number(value)
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`BENCH_MEMORY_ROWS must list positive integers, got "${value}"`)
  return rows
})
const LARGEST = Math.max(...SIZES)
const HEAP = Number(process.env.BENCH_MEMORY_HEAP ?? '64')
if (!Number.isInteger(HEAP) || HEAP < 0) throw new Error('BENCH_MEMORY_HEAP must be a number of MiB (0: no cap)')

/** Peak and current resident set of a process, in MiB. */
function memoryOf (pid: number): { peak: number; current: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { peak: kib('VmHWM') / 1024, current: kib('VmRSS') / 1024 }
}

async function startServer (url: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [...(HEAP > 0 ? [`--max-old-space-size=${HEAP}`] : []), '--import', 'tsx', 'examples/app/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, PORT: '0', HOST: '127.0.0.1', SEED: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const base = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => { reject(new Error(`the server exited (${String(code)}) before listening`)) })
    lines.on('line', (line) => {
      const match = /listening at (http:\/\/[^"\s]+)/i.exec(line) ?? /"address":"(http:\/\/[^"]+)"/.exec(line)
      if (match !== null) resolve(match[1])
    })
  })
  return { child, base }
}

async function stopServer (child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** Reads a response to its end without keeping it; returns its size in bytes. */
async function drain (response: Response): Promise<number> {
  let bytes = 0
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return bytes
    bytes += value.length
  }
}

const name = `fjsonapi_memory_${Date.now()}`
const url = databaseUrl(name)
console.log(`memory scenario: page[size]=0 over ${SIZES.join(' and ')} rows; server heap cap ${HEAP > 0 ? `${HEAP} MiB` : 'none'}; database ${redact(url)}`)
await createDatabase(name)
try {
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
  await migrateToLatest(db)
  await sql`insert into users (name, first_name, last_name, email, age, status, words)
    select 'user ' || i, 'First' || i, 'Last' || i, 'user' || i || '@example.com', i % 90, 'active', array['alpha', 'beta']
    from generate_series(1, ${LARGEST}) i`.execute(db)
  await sql`analyze`.execute(db)
  await db.destroy()

  const results: Array<{ rows: number; bytes: number; before: number; after: number; seconds: number }> = []
  for (const rows of SIZES) {
    const { child, base } = await startServer(url)
    try {
      // Warm up: the routes, the pool, the JIT — then the peak so far is the baseline.
      for (let index = 0; index < 20; index++) await drain(await fetch(`${base}/users?page[size]=50`))
      const before = memoryOf(child.pid as number).peak
      const filter = encodeURIComponent(JSON.stringify([{ name: 'id', op: 'le', val: rows }]))
      const started = performance.now()
      const response = await fetch(`${base}/users?page[size]=0&filter=${filter}`)
      if (response.status !== 200) throw new Error(`page[size]=0 answered ${response.status}`)
      const bytes = await drain(response)
      const seconds = (performance.now() - started) / 1000
      results.push({ rows, bytes, before, after: memoryOf(child.pid as number).peak, seconds })
    } finally {
      await stopServer(child)
    }
  }
  console.log('\n| rows | response | server peak RSS before | server peak RSS after | growth | time |')
  console.log('|---:|---:|---:|---:|---:|---:|')
  for (const { rows, bytes, before, after, seconds } of results) {
    console.log(`| ${rows.toLocaleString('en')} | ${(bytes / 1048576).toFixed(1)} MiB | ${before.toFixed(0)} MiB | ${after.toFixed(0)} MiB | ${(after - before).toFixed(0)} MiB | ${seconds.toFixed(2)} s |`)
  }
} finally {
  await dropDatabase(name)
}
