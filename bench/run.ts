/**
 * `npm run bench`: fastify-jsonapi (the example application) against the same documents served by hand-written
 * Fastify 5 routes on plain `pg` (the reference: literal SQL, `JSON.stringify`) and on Kysely, on PostgreSQL, with
 * autocannon; with `BENCH_ENGINES`, also on MariaDB and SQLite, each against the Kysely hand-written server on the
 * same engine. See bench/README.md.
 *
 * Environment:
 * - `BENCH_ENGINES`     comma-separated engines: postgres, mysql (MariaDB), sqlite (default postgres)
 * - `DATABASE_URL`      PostgreSQL server to use (default postgres://postgres@127.0.0.1:5432/postgres); a fresh
 *                       database `fjsonapi_bench_<epoch>` is created on it and dropped at the end
 * - `BENCH_MYSQL_URL`   MariaDB server to use (default mysql://root@127.0.0.1:3306/); the same, in utf8mb4
 *                       (SQLite: a fresh file in a temporary directory, removed at the end)
 * - `BENCH_DURATION`    measured seconds per server, scenario and round (default 10)
 * - `BENCH_WARMUP`      warm-up seconds of each server process before it is measured (default 2)
 * - `BENCH_CONNECTIONS` autocannon connections (default 10)
 * - `BENCH_ROUNDS`      rounds per scenario, each on fresh processes of every server (default 4); req/s, p50, p99
 *                       and CPU are the means of the rounds' runs
 * - `BENCH_SLICE`       seconds of one slice (default 2): a round's measured time of each server is cut in slices
 *                       that alternate between the servers (the order of BENCH_SERVERS, then the reverse, …; the
 *                       rounds start in alternating order)
 * - `BENCH_SERVERS`     comma-separated servers on PostgreSQL (default library,library-own-kysely,plain-pg,hand-written;
 *                       library and plain-pg always run; library-scoped is added when BENCH_SCOPE is set); on MariaDB
 *                       and SQLite the servers are library and hand-written
 * - `BENCH_POOL_SIZE`   pool size of every server (`pg`, `mysql2`; default 10)
 * - `BENCH_IDLE_TIMEOUT` ms an idle pool connection stays open, in every server (default 60000; see servers/serve.ts)
 * - `BENCH_SCENARIOS`   comma-separated scenario ids to run (default all: read,list,read-include,list-include,include-paged,create)
 * - `BENCH_PROFILE`     a directory: run the servers under `node --cpu-prof`, profiles in `<dir>/<server>-<scenario>/`
 *                       (summarize one with `node --import tsx bench/profile-summary.ts <dir>/<server>-<scenario>`)
 * - `BENCH_SCOPE`       run the scoped library too, with these scopes: `column` (a column compared with a context
 *                       value) or `exists` (computers visible through a visible owner: an EXISTS per row)
 * - `BENCH_BUILD=0`     run the servers as last compiled (dist/bench-build) instead of compiling them first
 * - `BENCH_NODE_FLAGS`  more `node` flags for the servers, e.g. `--heap-prof --heap-prof-dir=/tmp/heap`
 * - `BENCH_STRICT=1`    exit 1 when a scenario misses a target
 */
import { deepStrictEqual } from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdirSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import {
  ADMIN_URL, COMPUTERS_PER_USER, DatabaseUnavailableError, MANY_COMPUTERS, MANY_COMPUTERS_USERS, ENGINE_LABELS, MYSQL_ADMIN_URL, USERS, benchEngines, createDatabase,
  createMysqlBenchDatabase, createSqliteBenchDatabase, databaseUrl, dropDatabase, dropMysqlBenchDatabase, migrateAndSeed,
  mysqlDatabaseUrl, redact, removeSqliteBenchDatabase, type BenchEngine,
} from './database.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const MEDIA_TYPE = 'application/vnd.api+json'

// --- settings --------------------------------------------------------------------------------------------------

function numberSetting (name: string, fallback: number, { integer = false, minimum = 0 } = {}): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < minimum || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${minimum}, got "${raw}"`)
  }
  return value
}

const DURATION = numberSetting('BENCH_DURATION', 10, { minimum: 1 })
const WARMUP = numberSetting('BENCH_WARMUP', 2)
const CONNECTIONS = numberSetting('BENCH_CONNECTIONS', 10, { integer: true, minimum: 1 })
const ROUNDS = numberSetting('BENCH_ROUNDS', 4, { integer: true, minimum: 1 })
const SLICE = numberSetting('BENCH_SLICE', 2, { minimum: 0.5 })
const POOL_SIZE = numberSetting('BENCH_POOL_SIZE', 10, { integer: true, minimum: 1 })
const PROFILE_DIR = process.env.BENCH_PROFILE !== undefined && process.env.BENCH_PROFILE !== '' ? path.resolve(process.env.BENCH_PROFILE) : undefined
const STRICT = process.env.BENCH_STRICT === '1'

// --- scenarios -------------------------------------------------------------------------------------------------

interface Scenario {
  readonly id: string
  readonly label: string
  readonly method: 'GET' | 'POST'
  readonly path: string
}

/** What a library server is held to against its engine's reference, on every scenario. */
interface Targets {
  /** The least library req/s ÷ reference req/s. */
  readonly throughput: number
  /** The most library p99 ÷ reference p99. */
  readonly p99: number
  /** The most library CPU time per request ÷ the reference's (no target when undefined). */
  readonly cpu?: number
  /** Whether each request must run as many statements as the reference's (counted in the checks). */
  readonly statements: boolean
}

/** The targets against the plain `pg` reference on PostgreSQL, the same on every scenario (issue 13). */
const TARGETS: Targets = { throughput: 0.95, p99: 1.25, cpu: 1.1, statements: false }

/** The targets on MariaDB and SQLite, against the Kysely hand-written server on the same engine (issue 32). */
const ENGINE_TARGETS: Targets = { throughput: 1.0, p99: 1.1, statements: true }

const ALL_SCENARIOS: readonly Scenario[] = [
  { id: 'read', label: 'GET /users/1', method: 'GET', path: '/users/1' },
  { id: 'list', label: 'GET /users?page[size]=20', method: 'GET', path: '/users?page[size]=20' },
  { id: 'read-include', label: 'GET /users/1?include=computers', method: 'GET', path: '/users/1?include=computers' },
  { id: 'list-include', label: 'GET /users?include=computers&page[size]=20', method: 'GET', path: '/users?include=computers&page[size]=20' },
  // Users 21–40 own 50 computers each: 10 of each included (by id), with the count and a link to the rest.
  { id: 'include-paged', label: 'GET /users?include=computers&page[size]=20&page[number]=2 (50 computers each)', method: 'GET', path: '/users?include=computers&page[size]=20&page[number]=2' },
  // Last: the computers it creates belong to users 101–1000, outside every read above, but keep reads first anyway.
  { id: 'create', label: 'POST /computers', method: 'POST', path: '/computers' },
]

function selectedScenarios (): readonly Scenario[] {
  const raw = process.env.BENCH_SCENARIOS
  if (raw === undefined || raw.trim() === '') return ALL_SCENARIOS
  const ids = raw.split(',').map((id) => id.trim()).filter((id) => id !== '')
  for (const id of ids) {
    if (!ALL_SCENARIOS.some((scenario) => scenario.id === id)) {
      throw new Error(`BENCH_SCENARIOS: unknown scenario "${id}" (known: ${ALL_SCENARIOS.map((scenario) => scenario.id).join(', ')})`)
    }
  }
  return ALL_SCENARIOS.filter((scenario) => ids.includes(scenario.id))
}

/** The body of a `POST /computers`: an owner among users 101–1000 (never one the read scenarios render). */
function createBody (serial: string, n: number): string {
  const owner = String(101 + (n % (USERS - 100)))
  return JSON.stringify({
    data: {
      type: 'computer',
      attributes: { serial, name: 'Benchmark Book Pro' },
      relationships: { owner: { data: { type: 'user', id: owner } } },
    },
  })
}

/** The autocannon requests of a scenario; `tag` keeps the serials of each load run apart. */
function requestsOf (scenario: Scenario, tag: string): autocannon.Request[] {
  if (scenario.method === 'GET') return [{ method: 'GET', path: scenario.path, headers: { accept: MEDIA_TYPE } }]
  let n = 0
  return [{
    method: 'POST',
    path: scenario.path,
    headers: { accept: MEDIA_TYPE, 'content-type': MEDIA_TYPE },
    setupRequest: (request: autocannon.RawRequest) => {
      n++
      return { ...request, body: createBody(`BENCH-${tag}-${n}`, n) }
    },
  }]
}

// --- servers ---------------------------------------------------------------------------------------------------

type ServerName = 'library' | 'library-own-kysely' | 'library-scoped' | 'plain-pg' | 'hand-written'

/**
 * The servers, each a file in `servers/`: the library (the example app), the library with a scope on every
 * benchmarked type, the reference (hand-written routes on plain `pg`) and the same routes on Kysely.
 */
const SERVER_LABELS: Record<ServerName, string> = {
  library: 'library',
  'library-own-kysely': 'library on own Kysely',
  'library-scoped': 'scoped library',
  'plain-pg': 'plain pg',
  'hand-written': 'Kysely hand-written',
}
const KNOWN_SERVERS = Object.keys(SERVER_LABELS) as ServerName[]

function selectedServers (): readonly ServerName[] {
  const raw = process.env.BENCH_SERVERS
  const names = raw === undefined || raw.trim() === ''
    ? ['library', 'library-own-kysely', 'plain-pg', 'hand-written']
    : raw.split(',').map((name) => name.trim()).filter((name) => name !== '')
  for (const name of names) {
    if (!KNOWN_SERVERS.includes(name as ServerName)) throw new Error(`BENCH_SERVERS: unknown server "${name}" (known: ${KNOWN_SERVERS.join(', ')})`)
  }
  const wanted = new Set<string>(['library', 'plain-pg', ...names])
  if (process.env.BENCH_SCOPE !== undefined && process.env.BENCH_SCOPE !== '') wanted.add('library-scoped')
  return KNOWN_SERVERS.filter((name) => wanted.has(name))
}

const SERVER_NAMES = selectedServers()

/** What one engine's part of the run compares: its servers, the reference the library is held to, and the targets. */
interface EnginePlan {
  readonly engine: BenchEngine
  /** `PostgreSQL`, `MariaDB`, `SQLite`. */
  readonly label: string
  /** The servers, in the order of the first round. */
  readonly servers: readonly ServerName[]
  readonly reference: ServerName
  /** The reference in the tables' headers: `plain pg`, `Kysely`. */
  readonly referenceHeader: string
  readonly targets: Targets
  /** The library servers held to the targets. */
  readonly targetServers: readonly ServerName[]
}

/**
 * PostgreSQL: the servers of BENCH_SERVERS against plain `pg`. MariaDB and SQLite: the library (the example app on
 * `createMysqlDatabase` / `createSqliteDatabase`) against the Kysely hand-written server on the same engine, their
 * statements counted in the checks.
 */
function planOf (engine: BenchEngine): EnginePlan {
  if (engine === 'postgres') {
    return {
      engine,
      label: ENGINE_LABELS[engine],
      servers: SERVER_NAMES,
      reference: 'plain-pg',
      referenceHeader: 'plain pg',
      targets: TARGETS,
      targetServers: SERVER_NAMES.filter((name) => name === 'library' || name === 'library-own-kysely'),
    }
  }
  return {
    engine,
    label: ENGINE_LABELS[engine],
    servers: ['library', 'hand-written'],
    reference: 'hand-written',
    referenceHeader: 'Kysely',
    targets: ENGINE_TARGETS,
    targetServers: ['library'],
  }
}

const PLANS: readonly EnginePlan[] = benchEngines().map(planOf)

/** `MariaDB: ` before what is printed of MariaDB and SQLite (nothing before PostgreSQL's, printed as it always was). */
function prefixOf (plan: EnginePlan): string {
  return plan.engine === 'postgres' ? '' : `${plan.label}: `
}
/** The least acceptable ratio scoped req/s ÷ unscoped req/s: a scope may cost at most 5 %. */
const SCOPE_TARGET = 0.95

interface RunningServer {
  readonly name: ServerName
  readonly port: number
  /** The CPU time (µs) the server process has used so far. */
  cpu (): Promise<number>
  /** The statements the server has run so far (started with `countStatements` only). */
  statements (): Promise<number>
  stop (): Promise<void>
}

/** Where `tsconfig.bench.json` compiles the servers (and the library and the example app they import). */
const BUILD = path.join(ROOT, 'dist', 'bench-build')

/**
 * Compiles the servers with tsc, as a user's build compiles the library: the servers run plain JavaScript, without
 * a TypeScript loader in the process (its thread and the helpers it adds to every function would be measured too).
 */
function buildServers (): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.bench.json')], { cwd: ROOT, stdio: 'inherit' })
  if (result.status !== 0) throw new Error(`tsc -p tsconfig.bench.json failed (${result.signal ?? `exit ${result.status}`})`)
}

/** Child processes still running, for the cleanup on failure or Ctrl-C. */
const children = new Set<ChildProcess>()

function waitForExit (child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

async function stopChild (child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM')
    if (!await waitForExit(child, 10_000)) {
      child.kill('SIGKILL')
      await waitForExit(child, 5_000)
    }
  }
  children.delete(child)
}

/** Reads the JSON messages a server prints on stdout, one per line, in order. */
function messagesOf (child: ChildProcess, name: ServerName): (what: string) => Promise<Record<string, unknown>> {
  const queue: string[] = []
  const waiters: Array<(line: string | Error) => void> = []
  let ended: Error | undefined
  const lines = createInterface({ input: child.stdout! })
  lines.on('line', (line) => {
    const waiter = waiters.shift()
    if (waiter === undefined) queue.push(line)
    else waiter(line)
  })
  const end = (error: Error): void => {
    ended ??= error
    for (const waiter of waiters.splice(0)) waiter(ended)
  }
  child.once('exit', (code, signal) => end(new Error(`the ${name} server exited (${signal ?? `code ${code}`})`)))
  child.once('error', end)
  return async (what) => {
    const line = queue.length > 0
      ? queue.shift()!
      : ended ?? await new Promise<string | Error>((resolve) => {
        const waiter = (value: string | Error): void => {
          clearTimeout(timer)
          resolve(value)
        }
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          resolve(new Error(`the ${name} server did not print ${what} within 30 s`))
        }, 30_000)
        waiters.push(waiter)
      })
    if (line instanceof Error) throw line
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      message = undefined
    }
    if (typeof message === 'object' && message !== null) return message as Record<string, unknown>
    throw new Error(`the ${name} server printed "${line}" instead of ${what}`)
  }
}

/**
 * Starts one server as a child process on the database of `url` (its engine is the URL's) and waits for the port it
 * announces. `countStatements`: the server counts its statements (Kysely's `log`), for the checks only.
 */
async function startServer (name: ServerName, url: string, { profileName, countStatements = false }: { profileName?: string; countStatements?: boolean } = {}): Promise<RunningServer> {
  const flags = PROFILE_DIR !== undefined && profileName !== undefined
    // One directory per run, so that each run's profile is found by its name.
    ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, profileName)}`]
    : []
  const extra = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '')
  const child = spawn(process.execPath, [...flags, ...extra, path.join(BUILD, 'bench', 'servers', `${name}.js`)], {
    cwd: ROOT,
    env: { ...process.env, BENCH_DATABASE_URL: url, BENCH_POOL_SIZE: String(POOL_SIZE), BENCH_COUNT_STATEMENTS: countStatements ? '1' : '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.add(child)
  const next = messagesOf(child, name)
  try {
    const { port } = await next('{"port":<n>}')
    if (typeof port !== 'number') throw new Error(`the ${name} server announced no port`)
    return {
      name,
      port,
      async cpu () {
        child.kill('SIGUSR2')
        const { cpu } = await next('{"cpu":<µs>}')
        if (typeof cpu !== 'number') throw new Error(`the ${name} server reported no CPU time`)
        return cpu
      },
      async statements () {
        child.kill('SIGUSR2')
        const { statements } = await next('{"cpu":<µs>,"statements":<n>}')
        if (typeof statements !== 'number') throw new Error(`the ${name} server reported no statement count`)
        return statements
      },
      stop: () => stopChild(child),
    }
  } catch (error) {
    await stopChild(child)
    throw error
  }
}

// --- checks ----------------------------------------------------------------------------------------------------

interface Answer {
  readonly status: number
  readonly contentType: string
  readonly location: string | null
  readonly text: string
  readonly body: any
}

async function ask (server: RunningServer, method: 'GET' | 'POST', target: string, body?: string): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${server.port}${target}`, {
    method,
    headers: body === undefined ? { accept: MEDIA_TYPE } : { accept: MEDIA_TYPE, 'content-type': MEDIA_TYPE },
    body,
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new Error(`${server.name}: ${method} ${target} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`)
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    location: response.headers.get('location'),
    text,
    body: parsed,
  }
}

/** The JSON pointer of the first place where two values differ, with both values, or undefined when equal. */
function firstDifference (a: unknown, b: unknown, at = ''): string | undefined {
  if (Object.is(a, b)) return undefined
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return `${at === '' ? '/' : at}: ${JSON.stringify(a)} ≠ the reference's ${JSON.stringify(b)}`
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const key of keys) {
    const difference = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}/${key}`)
    if (difference !== undefined) return difference
  }
  return undefined
}

function expect (condition: boolean, message: string): void {
  if (!condition) throw new Error(message)
}

/** A created document with its id replaced, to compare two creations. */
function withoutId (answer: Answer): unknown {
  const id = String(answer.body?.data?.id)
  return JSON.parse(answer.text.split(`"${id}"`).join('"<id>"').split(`/computers/${id}`).join('/computers/<id>'))
}

/** What the checks found: lines for the report, and the statements of each request per scenario and server. */
interface Verified {
  readonly notes: string[]
  /** Scenario id → server → statements of one request (when the engine's targets count them). */
  readonly statements: ReadonlyMap<string, ReadonlyMap<ServerName, number>>
}

/**
 * Before anything is measured: every read answers the same document on every server of the engine as on its
 * reference (deep-equal, dates and all: plain `pg` on PostgreSQL, the Kysely hand-written server on MariaDB and
 * SQLite), and a create answers 201 with a Location and the same document up to the new id. Throws on any
 * difference. Where the engine's targets count statements, each server counts its own (Kysely's `log`) and every
 * request is sent twice: the second's count is the one compared (the first's is noted when it differs, e.g. a cache
 * filled on first use).
 */
async function verify (plan: EnginePlan, url: string, scenarios: readonly Scenario[]): Promise<Verified> {
  const counting = plan.targets.statements
  const answers = new Map<ServerName, Map<string, Answer>>()
  const counts = new Map<string, Map<ServerName, number>>(scenarios.map((scenario) => [scenario.id, new Map()]))
  const firstCounts = new Map<string, Map<ServerName, number>>(scenarios.map((scenario) => [scenario.id, new Map()]))
  for (const name of plan.servers) {
    const server = await startServer(name, url, { countStatements: counting })
    try {
      const byScenario = new Map<string, Answer>()
      for (const scenario of scenarios) {
        const send = (n: number): Promise<Answer> => scenario.method === 'GET'
          ? ask(server, 'GET', scenario.path)
          : ask(server, 'POST', scenario.path, createBody(`VERIFY-${n}`, 0))
        if (!counting) {
          byScenario.set(scenario.id, await send(1))
          continue
        }
        const before = await server.statements()
        byScenario.set(scenario.id, await send(1))
        const between = await server.statements()
        const again = await send(2)
        const after = await server.statements()
        expect(again.status === byScenario.get(scenario.id)!.status, `${prefixOf(plan)}${scenario.label}: the ${name} server answered ${again.status} the second time`)
        firstCounts.get(scenario.id)!.set(name, between - before)
        counts.get(scenario.id)!.set(name, after - between)
      }
      answers.set(name, byScenario)
    } finally {
      await server.stop()
    }
  }
  const prefix = prefixOf(plan)
  const referenceLabel = SERVER_LABELS[plan.reference]
  const notes: string[] = []
  for (const scenario of scenarios) {
    const reference = answers.get(plan.reference)!.get(scenario.id)!
    const expected = scenario.method === 'GET' ? 200 : 201
    for (const name of plan.servers) {
      const answer = answers.get(name)!.get(scenario.id)!
      expect(answer.status === expected, `${prefix}${scenario.label}: the ${name} server answered ${answer.status}, not ${expected}: ${answer.text.slice(0, 300)}`)
      expect(answer.contentType.startsWith(MEDIA_TYPE), `${prefix}${scenario.label}: the ${name} server answered Content-Type "${answer.contentType}"`)
      if (scenario.method === 'POST') {
        expect(answer.location !== null && answer.location === answer.body?.data?.links?.self,
          `${prefix}${scenario.label}: the ${name} server's Location (${answer.location}) is not the new resource's self link`)
      }
    }
    for (const name of plan.servers.filter((other) => other !== plan.reference)) {
      const answer = answers.get(name)!.get(scenario.id)!
      const [a, b] = scenario.method === 'GET' ? [answer.body, reference.body] : [withoutId(answer), withoutId(reference)]
      const difference = firstDifference(a, b)
      if (difference !== undefined) throw new Error(`${prefix}${scenario.label}: the ${name} server's document differs from the ${referenceLabel} reference's at ${difference}`)
      deepStrictEqual(a, b, `${prefix}${scenario.label}: the ${name} server's document differs from the ${referenceLabel} reference's`)
      const same = scenario.method === 'GET' ? answer.text === reference.text : JSON.stringify(a) === JSON.stringify(b)
      notes.push(`${prefix}${scenario.label}: ${name} and ${plan.reference} answer the same document${same ? ', byte for byte' : ' (member order differs)'} (${answer.text.length} bytes)`)
    }
    if (counting) {
      const first = firstCounts.get(scenario.id)!
      const byServer = plan.servers.map((name) => {
        const count = counts.get(scenario.id)!.get(name)!
        return `${name} ${count}${first.get(name) === count ? '' : ` (its first request: ${first.get(name)})`}`
      })
      notes.push(`${prefix}${scenario.label}: statements per request: ${byServer.join(', ')}`)
    }
  }
  return { notes, statements: counts }
}

// --- measuring -------------------------------------------------------------------------------------------------

/** One measured run of one server. */
interface Run {
  readonly requestsPerSecond: number
  /** Latency percentiles of the run's responses, ms (exact, from every response's own latency). */
  readonly p50: number
  readonly p99: number
  readonly requests: number
  /** Server CPU time during the measured run, µs. */
  readonly cpu: number
}

/** The runs of one server in one scenario, combined. */
interface Measurement {
  readonly runs: readonly Run[]
  /** Mean of the runs' req/s. */
  readonly requestsPerSecond: number
  /** Mean of the runs' p50 and p99, ms. */
  readonly p50: number
  readonly p99: number
  /** Server CPU time per request over all the runs, ms. */
  readonly cpuPerRequest: number
}

function mean (values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length
}

function combine (runs: readonly Run[]): Measurement {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  return {
    runs,
    requestsPerSecond: mean(runs.map((run) => run.requestsPerSecond)),
    p50: mean(runs.map((run) => run.p50)),
    p99: mean(runs.map((run) => run.p99)),
    cpuPerRequest: runs.reduce((sum, run) => sum + run.cpu, 0) / 1000 / requests,
  }
}

/** The value below which a fraction `q` of the sorted values lie (nearest rank). */
function percentile (sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

interface Load {
  readonly result: autocannon.Result
  /** Every response's latency, ms, sorted. */
  readonly latencies: Float64Array
}

async function load (server: RunningServer, scenario: Scenario, seconds: number, tag: string): Promise<Load> {
  // autocannon's own percentiles are whole milliseconds; at 1–5 ms that cannot tell 1.25× apart, so keep each
  // response's latency (a fraction of a millisecond) and sort them.
  let latencies = new Float64Array(1 << 16)
  let count = 0
  const instance = autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: requestsOf(scenario, tag),
  })
  instance.on('response', (_client, _status, _bytes, milliseconds) => {
    if (count === latencies.length) {
      const larger = new Float64Array(latencies.length * 2)
      larger.set(latencies)
      latencies = larger
    }
    latencies[count++] = milliseconds
  })
  const result = await instance
  const problems = [
    result.errors > 0 ? `${result.errors} errors` : '',
    result.timeouts > 0 ? `${result.timeouts} timeouts` : '',
    result.non2xx > 0 ? `${result.non2xx} non-2xx answers (${JSON.stringify(result.statusCodeStats)})` : '',
  ].filter((problem) => problem !== '')
  if (problems.length > 0) throw new Error(`${scenario.label} on the ${server.name} server: ${problems.join(', ')}`)
  if (result.requests.total === 0) throw new Error(`${scenario.label} on the ${server.name} server: no request completed`)
  return { result, latencies: latencies.subarray(0, count).sort() }
}

/** How many slices a round's {@link DURATION} is cut in: equal slices of about {@link SLICE} seconds. */
function sliceCount (): number {
  return Math.max(1, Math.round(DURATION / SLICE))
}

/** The length of one slice, for the report. */
function sliceSeconds (): string {
  return String(Math.round((DURATION / sliceCount()) * 100) / 100)
}

/** What one server answered in the slices of a round, summed. */
interface Slices {
  requests: number
  seconds: number
  cpu: number
  readonly latencies: Float64Array[]
}

/**
 * One round of a scenario: a fresh process of every server, all started before any is measured (a server without
 * load does nothing), each warmed up, then the measured time of each server cut in slices of {@link SLICE} seconds
 * that alternate between the servers (the round's order, then the reverse, …). Only one server is loaded at a time;
 * a slow phase of the machine, which lasts seconds, falls on the slices of every server alike instead of on one
 * server's whole run. Answers one run per server.
 */
async function measureRound (plan: EnginePlan, order: readonly ServerName[], url: string, scenario: Scenario, round: number): Promise<Map<ServerName, Run>> {
  const servers: RunningServer[] = []
  const profilePrefix = plan.engine === 'postgres' ? '' : `${plan.engine}-`
  try {
    for (const name of order) servers.push(await startServer(name, url, { profileName: `${profilePrefix}${name}-${scenario.id}-${round + 1}` }))
    if (WARMUP > 0) for (const server of servers) await load(server, scenario, WARMUP, `${server.name}-${round}-warmup`)
    const slices = new Map<ServerName, Slices>(order.map((name) => [name, { requests: 0, seconds: 0, cpu: 0, latencies: [] }]))
    const count = sliceCount()
    for (let slice = 0; slice < count; slice++) {
      for (const server of slice % 2 === 0 ? servers : [...servers].reverse()) {
        const before = await server.cpu()
        const { result, latencies } = await load(server, scenario, DURATION / count, `${server.name}-${round}-${slice}`)
        const cpu = await server.cpu() - before
        const sum = slices.get(server.name)!
        sum.requests += result.requests.total
        sum.seconds += result.duration
        sum.cpu += cpu
        sum.latencies.push(latencies)
      }
    }
    return new Map([...slices].map(([name, sum]) => {
      const latencies = new Float64Array(sum.latencies.reduce((length, part) => length + part.length, 0))
      let at = 0
      for (const part of sum.latencies) {
        latencies.set(part, at)
        at += part.length
      }
      latencies.sort()
      return [name, {
        requestsPerSecond: sum.requests / sum.seconds,
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        requests: sum.requests,
        cpu: sum.cpu,
      }]
    }))
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

// --- report ----------------------------------------------------------------------------------------------------

interface Row {
  readonly scenario: Scenario
  readonly measurements: ReadonlyMap<ServerName, Measurement>
  /** The statements of one request per server, when the engine's targets count them. */
  readonly statements?: ReadonlyMap<ServerName, number>
}

function measurementOf (row: Row, name: ServerName): Measurement {
  return row.measurements.get(name)!
}

interface Ratios {
  readonly throughput: number
  readonly p99: number
  readonly cpu: number
}

/** The library against another server: req/s, p99 and CPU per request, library ÷ other. */
function ratiosOf (library: Measurement, other: Measurement): Ratios {
  return {
    throughput: library.requestsPerSecond / other.requestsPerSecond,
    p99: library.p99 / other.p99,
    cpu: library.cpuPerRequest / other.cpuPerRequest,
  }
}

/** The targets a row misses against the engine's reference (empty: every target met), for one library server. */
function missedTargets (row: Row, plan: EnginePlan, name: ServerName = 'library'): string[] {
  const ratios = ratiosOf(measurementOf(row, name), measurementOf(row, plan.reference))
  const { targets } = plan
  return [
    ratios.throughput < targets.throughput ? 'req/s' : '',
    ratios.p99 > targets.p99 ? 'p99' : '',
    targets.cpu !== undefined && ratios.cpu > targets.cpu ? 'CPU' : '',
    targets.statements && row.statements?.get(name) !== row.statements?.get(plan.reference) ? 'statements' : '',
  ].filter((missed) => missed !== '')
}

/** The columns of an engine's main table: the library against the reference (and the statements, where counted). */
function headersOf (plan: EnginePlan): string[] {
  const reference = plan.referenceHeader
  return [
    'scenario', 'library req/s', `${reference} req/s`, 'ratio', 'library p50 / p99 (ms)', `${reference} p50 / p99 (ms)`, 'p99 ratio',
    'library CPU ms/req', `${reference} CPU ms/req`, 'CPU ratio', ...(plan.targets.statements ? [`statements (library / ${reference})`] : []), 'result',
  ]
}

function integer (value: number): string {
  return Math.round(value).toLocaleString('en-US')
}

function milliseconds (value: number): string {
  return value.toFixed(2)
}

function times (ratio: number): string {
  return `${ratio.toFixed(2)}×`
}

function cells (row: Row, plan: EnginePlan, name: ServerName = 'library'): string[] {
  const library = measurementOf(row, name)
  const reference = measurementOf(row, plan.reference)
  const ratios = ratiosOf(library, reference)
  const missed = missedTargets(row, plan, name)
  return [
    row.scenario.label,
    integer(library.requestsPerSecond),
    integer(reference.requestsPerSecond),
    times(ratios.throughput),
    `${milliseconds(library.p50)} / ${milliseconds(library.p99)}`,
    `${milliseconds(reference.p50)} / ${milliseconds(reference.p99)}`,
    times(ratios.p99),
    library.cpuPerRequest.toFixed(3),
    reference.cpuPerRequest.toFixed(3),
    times(ratios.cpu),
    ...(plan.targets.statements ? [`${row.statements?.get(name) ?? '?'} / ${row.statements?.get(plan.reference) ?? '?'}`] : []),
    missed.length === 0 ? 'ok' : `missed: ${missed.join(', ')}`,
  ]
}

const KYSELY_HEADERS = ['scenario', 'Kysely hand-written req/s', 'library ÷ Kysely req/s', 'Kysely p99 (ms)', 'Kysely CPU ms/req', 'library ÷ Kysely CPU', 'Kysely ÷ plain pg req/s']

/** The second column: the same routes written by hand on Kysely, against the library and against plain `pg`. */
function kyselyCells (row: Row): string[] {
  const library = measurementOf(row, 'library')
  const kysely = measurementOf(row, 'hand-written')
  const ratios = ratiosOf(library, kysely)
  return [
    row.scenario.label,
    integer(kysely.requestsPerSecond),
    times(ratios.throughput),
    milliseconds(kysely.p99),
    kysely.cpuPerRequest.toFixed(3),
    times(ratios.cpu),
    times(kysely.requestsPerSecond / measurementOf(row, 'plain-pg').requestsPerSecond),
  ]
}

function diagnosticHeaders (plan: EnginePlan): string[] {
  return ['scenario', ...plan.servers.map((name) => `${SERVER_LABELS[name]} req/s per run`)]
}

/** Each run's req/s, in the order run, to judge the noise. */
function diagnosticCells (row: Row, plan: EnginePlan): string[] {
  return [row.scenario.label, ...plan.servers.map((name) => measurementOf(row, name).runs.map((run) => integer(run.requestsPerSecond)).join(' / '))]
}

const SCOPE_HEADERS = ['scenario', 'unscoped req/s', 'scoped req/s', 'scoped ÷ unscoped', 'unscoped p99 (ms)', 'scoped p99 (ms)', 'CPU ratio', 'target', 'result']

function scopeRatioOf (row: Row): number {
  return measurementOf(row, 'library-scoped').requestsPerSecond / measurementOf(row, 'library').requestsPerSecond
}

/** What a scope on the benchmarked types costs: the scoped library against the unscoped one, in the same rounds. */
function scopeCells (row: Row): string[] {
  const library = measurementOf(row, 'library')
  const scoped = measurementOf(row, 'library-scoped')
  const ratio = scopeRatioOf(row)
  return [
    row.scenario.label,
    integer(library.requestsPerSecond),
    integer(scoped.requestsPerSecond),
    times(ratio),
    milliseconds(library.p99),
    milliseconds(scoped.p99),
    times(scoped.cpuPerRequest / library.cpuPerRequest),
    `≥ ${SCOPE_TARGET.toFixed(2)}×`,
    ratio >= SCOPE_TARGET ? 'ok' : 'below',
  ]
}

function textTable (headers: readonly string[], lines: readonly string[][]): string {
  const table = [headers as string[], ...lines]
  const widths = headers.map((_, column) => Math.max(...table.map((line) => line[column].length)))
  const render = (line: string[]): string => line.map((cell, column) => column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])).join('  ')
  return [render(table[0]), widths.map((width) => '-'.repeat(width)).join('  '), ...table.slice(1).map(render)].join('\n')
}

function markdownTable (headers: readonly string[], lines: readonly string[][]): string {
  const escape = (cell: string): string => cell.replace(/\|/g, '\\|')
  return [
    `| ${headers.join(' | ')} |`,
    `|${headers.map((_, column) => column === 0 ? ' --- ' : ' ---: ').join('|')}|`,
    ...lines.map((line) => `| ${line.map((cell, column) => column === 0 ? `\`${cell}\`` : escape(cell)).join(' | ')} |`),
  ].join('\n')
}

function packageVersion (name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

function autocannonVersion (): string {
  return packageVersion('autocannon')
}

/** One engine's part of the run: its plan, the server's version and the measured rows. */
interface EngineResult {
  readonly plan: EnginePlan
  readonly version: string
  readonly rows: readonly Row[]
}

/** The engine and its driver, for the report's list of the machine. */
function versionLine (result: EngineResult): string {
  const { plan, version } = result
  if (plan.engine === 'mysql') return `- ${plan.label}: ${version} (mysql2 ${packageVersion('mysql2')})`
  if (plan.engine === 'sqlite') return `- ${plan.label}: ${version} (better-sqlite3 ${packageVersion('better-sqlite3')})`
  return `- ${plan.label}: ${version}`
}

/** Each server's connections on an engine. */
function poolOf (engine: BenchEngine): string {
  if (engine === 'mysql') return `a \`mysql2\` pool of ${POOL_SIZE} connections in each`
  if (engine === 'sqlite') return 'one `better-sqlite3` connection in each'
  return 'a `pg` pool of ' + `${POOL_SIZE} connections in each`
}

/** PostgreSQL's tables, as they always were. */
function postgresSection (plan: EnginePlan, rows: readonly Row[]): string[] {
  const has = (name: ServerName): boolean => SERVER_NAMES.includes(name)
  return [
    markdownTable(headersOf(plan), rows.map((row) => cells(row, plan))),
    '',
    ...(has('library-own-kysely')
      ? [
          'The library on an application\'s own Kysely instance (`servers/library-own-kysely.ts`: a plain `pg.Pool` ' +
            'under `JsonApiPostgresDialect`, as docs/getting-started.md says), against the same reference and targets:',
          '',
          markdownTable(headersOf(plan), rows.map((row) => cells(row, plan, 'library-own-kysely'))),
          '',
        ]
      : []),
    ...(has('hand-written')
      ? ['The same routes by hand on Kysely (`servers/hand-written.ts`), the reference before plain `pg`:', '', markdownTable(KYSELY_HEADERS, rows.map(kyselyCells)), '']
      : []),
    'Each run\'s req/s, in the order run:',
    '',
    markdownTable(diagnosticHeaders(plan), rows.map((row) => diagnosticCells(row, plan))),
    '',
    ...(has('library-scoped')
      ? [
          `The cost of a scope (BENCH_SCOPE=${process.env.BENCH_SCOPE}): the library with a scope on \`user\` and on ` +
            '`computer` (see bench/servers/library-scoped.ts) against the library without, in the same rounds ' +
            '(CPU ratio: scoped ÷ unscoped CPU time per request).',
          '',
          markdownTable(SCOPE_HEADERS, rows.map(scopeCells)),
          '',
        ]
      : []),
  ]
}

/** What the targets of MariaDB and SQLite say, for the report. */
function targetsText (targets: Targets): string {
  return `req/s ≥ ${targets.throughput.toFixed(2)}×, p99 ≤ ${targets.p99.toFixed(2)}×` +
    `${targets.cpu === undefined ? '' : `, CPU ≤ ${targets.cpu.toFixed(2)}×`}` +
    `${targets.statements ? ', the same statements per request' : ''}`
}

/** The tables of MariaDB or SQLite: the library against the Kysely hand-written server on the same engine. */
function engineSection (plan: EnginePlan, rows: readonly Row[]): string[] {
  const library = plan.engine === 'mysql' ? '`createMysqlDatabase`' : '`createSqliteDatabase`'
  const kysely = plan.engine === 'mysql'
    ? 'Kysely\'s `MysqlDialect` on a `mysql2` pool with `createMysqlDatabase`\'s value options'
    : 'Kysely\'s `SqliteDialect` on `better-sqlite3` with `createSqliteDatabase`\'s pragmas'
  return [
    `## ${plan.label}`,
    '',
    `The library (the example app on ${library}) against the same routes by hand on Kysely (\`servers/hand-written.ts\`: ` +
      `${kysely}), the reference on ${plan.label}. Ratios: library ÷ Kysely hand-written. Targets: ${targetsText(plan.targets)} ` +
      '(statements counted in the checks, through each server\'s Kysely `log`; CPU has no target here):',
    '',
    markdownTable(headersOf(plan), rows.map((row) => cells(row, plan))),
    '',
    'Each run\'s req/s, in the order run:',
    '',
    markdownTable(diagnosticHeaders(plan), rows.map((row) => diagnosticCells(row, plan))),
    '',
  ]
}

function writeResults (results: readonly EngineResult[], started: Date, checks: readonly string[], loads: readonly number[]): string {
  const cpus = os.cpus()
  const file = path.join(ROOT, 'bench', 'results.md')
  const postgres = results.find((result) => result.plan.engine === 'postgres')
  const others = results.filter((result) => result.plan.engine !== 'postgres')
  // One engine: its pool and servers as they always were written; several: each engine's, named.
  const single = results.length === 1
  const pools = single ? poolOf(results[0].plan.engine) : results.map(({ plan }) => `${plan.label}: ${poolOf(plan.engine)}`).join('; ')
  const servers = single ? results[0].plan.servers.join(', ') : results.map(({ plan }) => `${plan.label}: ${plan.servers.join(', ')}`).join('; ')
  const body = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${started.toISOString()}.`,
    '',
    `- Node.js ${process.version}, autocannon ${autocannonVersion()}`,
    `- CPU: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores (${os.platform()} ${os.release()})`,
    ...results.map(versionLine),
    `- Data: the example app's schema, ${USERS.toLocaleString('en-US')} users × ${COMPUTERS_PER_USER} computers (users ${MANY_COMPUTERS_USERS.first}–${MANY_COMPUTERS_USERS.last}: ${MANY_COMPUTERS} each), in a fresh database`,
    `- Load: autocannon, ${CONNECTIONS} connections; per scenario ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, each on a ` +
      `fresh process of every server (127.0.0.1, ${pools}): ${WARMUP} s of ` +
      `warm-up per server, then ${DURATION} s measured per server in slices of ${sliceSeconds()} s that alternate between ` +
      `the servers (${servers}, then the reverse, …; even rounds start reversed), one server loaded at a time`,
    `- Load average (1 min) at the start and at the end: ${loads.map((value) => value.toFixed(2)).join(' → ')} ` +
      '(other processes on the machine slow every server down)',
    '- req/s, p50, p99: means over the runs (p50 and p99 from every response\'s latency); CPU: the server process\'s ' +
      (postgres === undefined
        ? 'CPU time per request over the runs; ratios and targets: in each engine\'s section'
        : 'CPU time per request over the runs; ratios: library ÷ plain pg. Targets: req/s ≥ ' +
          `${TARGETS.throughput}×, p99 ≤ ${TARGETS.p99}×, CPU ≤ ${TARGETS.cpu}×` +
          `${others.length === 0 ? '' : ' (on PostgreSQL; MariaDB and SQLite: in their sections)'}`),
    '',
    ...(postgres === undefined ? [] : [...(others.length === 0 ? [] : ['## PostgreSQL', '']), ...postgresSection(postgres.plan, postgres.rows)]),
    ...others.flatMap(({ plan, rows }) => engineSection(plan, rows)),
    'Checked before measuring:',
    '',
    ...checks.map((check) => `- ${check}`),
    '',
  ].join('\n')
  writeFileSync(file, body)
  return file
}

/** An engine's tables on the console, after its measurements. */
function printTables (plan: EnginePlan, rows: readonly Row[]): void {
  console.log('')
  if (plan.engine !== 'postgres') console.log(`${plan.label}: the library against the Kysely hand-written server (targets: ${targetsText(plan.targets)})`)
  console.log(textTable(headersOf(plan), rows.map((row) => cells(row, plan))))
  if (plan.servers.includes('library-own-kysely')) {
    console.log('\nThe library on its own Kysely instance:')
    console.log(textTable(headersOf(plan), rows.map((row) => cells(row, plan, 'library-own-kysely'))))
  }
  if (plan.engine === 'postgres' && plan.servers.includes('hand-written')) {
    console.log('')
    console.log(textTable(KYSELY_HEADERS, rows.map(kyselyCells)))
  }
  console.log('')
  console.log(textTable(diagnosticHeaders(plan), rows.map((row) => diagnosticCells(row, plan))))
  if (plan.servers.includes('library-scoped')) {
    console.log('')
    console.log(textTable(SCOPE_HEADERS, rows.map(scopeCells)))
  }
}

// --- main ------------------------------------------------------------------------------------------------------

/** What to undo at the end, also on a failure or Ctrl-C: each engine's database (dropped, or its file removed). */
const teardowns = new Map<BenchEngine, () => Promise<void>>()
let cleaning: Promise<void> | undefined

async function teardown (engine: BenchEngine): Promise<void> {
  const undo = teardowns.get(engine)
  if (undo === undefined) return
  teardowns.delete(engine)
  await undo()
}

function cleanup (): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map(stopChild))
    for (const engine of [...teardowns.keys()]) await teardown(engine)
  })()
  return cleaning
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and dropping the benchmark database…`)
    void cleanup().finally(() => process.exit(130))
  })
}

function couldNotDrop (what: string): (error: unknown) => void {
  return (error) => {
    console.error(`could not drop the database ${what}: ${(error as Error).message}`)
  }
}

/**
 * A fresh benchmark database on an engine, to be torn down at the end of its part (or by {@link cleanup}): answers
 * its URL for the servers and the server's version.
 */
async function prepareDatabase (engine: BenchEngine, epoch: number): Promise<{ url: string; version: string }> {
  const name = `fjsonapi_bench_${epoch}`
  if (engine === 'mysql') {
    const version = await createMysqlBenchDatabase(name)
    teardowns.set(engine, () => dropMysqlBenchDatabase(name).catch(couldNotDrop(name)))
    console.log(`MariaDB: database ${name} on ${redact(MYSQL_ADMIN_URL)} (${version})`)
    return { url: mysqlDatabaseUrl(name), version }
  }
  if (engine === 'sqlite') {
    const { url, directory, version } = createSqliteBenchDatabase()
    teardowns.set(engine, async () => {
      try {
        removeSqliteBenchDatabase(directory)
      } catch (error) {
        couldNotDrop(directory)(error)
      }
    })
    console.log(`SQLite: database ${url.slice('sqlite:'.length)} (SQLite ${version}, WAL)`)
    return { url, version }
  }
  const version = await createDatabase(name)
  teardowns.set(engine, () => dropDatabase(name).catch(couldNotDrop(name)))
  console.log(`database ${name} on ${redact(ADMIN_URL)} (${version.split(',')[0]})`)
  return { url: databaseUrl(name), version }
}

/** Every scenario of an engine, in rounds (see {@link measureRound}), printing each run's req/s as it goes. */
async function measure (plan: EnginePlan, url: string, scenarios: readonly Scenario[], verified: Verified): Promise<Row[]> {
  const rows: Row[] = []
  for (const scenario of scenarios) {
    const runs = new Map<ServerName, Run[]>(plan.servers.map((name) => [name, []]))
    process.stdout.write(`${prefixOf(plan)}${scenario.label}:`)
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order (as listed, then the reverse, …) so that drift hits every server alike.
      const order = round % 2 === 0 ? plan.servers : [...plan.servers].reverse()
      const measured = await measureRound(plan, order, url, scenario, round)
      for (const name of order) {
        const run = measured.get(name)!
        runs.get(name)!.push(run)
        process.stdout.write(` ${name} ${Math.round(run.requestsPerSecond)};`)
      }
    }
    process.stdout.write('\n')
    rows.push({
      scenario,
      measurements: new Map([...runs].map(([name, list]) => [name, combine(list)])),
      ...(plan.targets.statements ? { statements: verified.statements.get(scenario.id) } : {}),
    })
  }
  return rows
}

async function main (): Promise<number> {
  const scenarios = selectedScenarios()
  if (process.env.BENCH_BUILD !== '0') buildServers()
  const started = new Date()
  const epoch = Math.floor(started.getTime() / 1000)
  const checks: string[] = []
  const loads: number[] = []
  const results: EngineResult[] = []
  for (const plan of PLANS) {
    const { url, version } = await prepareDatabase(plan.engine, epoch)
    await migrateAndSeed(url, plan.engine)
    console.log(`${prefixOf(plan)}seeded ${USERS} users × ${COMPUTERS_PER_USER} computers (users ${MANY_COMPUTERS_USERS.first}–${MANY_COMPUTERS_USERS.last}: ${MANY_COMPUTERS} each)`)

    const verified = await verify(plan, url, scenarios)
    for (const check of verified.notes) console.log(`check: ${check}`)
    checks.push(...verified.notes)

    if (loads.length === 0) loads.push(os.loadavg()[0])
    const rows = await measure(plan, url, scenarios, verified)
    await teardown(plan.engine)
    printTables(plan, rows)
    results.push({ plan, version, rows })
  }
  loads.push(os.loadavg()[0])
  const file = writeResults(results, started, checks, loads)
  console.log(`\nwritten to ${path.relative(process.cwd(), file)}`)
  let missing = 0
  for (const { plan, rows } of results) {
    for (const name of plan.targetServers) {
      for (const row of rows) {
        const missed = missedTargets(row, plan, name)
        if (missed.length === 0) continue
        missing++
        console.log(`target missed by ${SERVER_LABELS[name]} on ${prefixOf(plan)}${row.scenario.label}: ${missed.join(', ')}`)
      }
    }
  }
  const postgresRows = results.find((result) => result.plan.engine === 'postgres')?.rows ?? []
  const costly = SERVER_NAMES.includes('library-scoped') ? postgresRows.filter((row) => scopeRatioOf(row) < SCOPE_TARGET) : []
  if (costly.length > 0) console.log(`a scope costs more than 5 % on: ${costly.map((row) => row.scenario.label).join(', ')}`)
  return STRICT && (missing > 0 || costly.length > 0) ? 1 : 0
}

let exitCode = 1
try {
  if (PROFILE_DIR !== undefined) mkdirSync(PROFILE_DIR, { recursive: true })
  exitCode = await main()
} catch (error) {
  if (error instanceof DatabaseUnavailableError && error.engine === 'mysql') {
    console.error(`\nnpm run bench with BENCH_ENGINES=…mysql needs MariaDB: ${error.message}.`)
    console.error('Start a server there, or point BENCH_MYSQL_URL at one (e.g. BENCH_MYSQL_URL=mysql://user:pass@host:3306/).')
  } else if (error instanceof DatabaseUnavailableError) {
    console.error(`\nnpm run bench needs PostgreSQL: ${error.message}.`)
    console.error('Start a server there, or point DATABASE_URL at one (e.g. DATABASE_URL=postgres://user:pass@host:5432/postgres).')
  } else {
    console.error('\nbenchmark failed:', error instanceof Error ? error.message : error)
    if (error instanceof Error && error.stack !== undefined && process.env.BENCH_DEBUG === '1') console.error(error.stack)
  }
} finally {
  await cleanup()
}
process.exit(exitCode)
