/**
 * `npm run bench`: fastify-jsonapi (the example application) against a hand-written Fastify 5 + Kysely app that
 * serves the same documents, on PostgreSQL through `pg`, with autocannon. See bench/README.md.
 *
 * Environment:
 * - `DATABASE_URL`      PostgreSQL server to use (default postgres://postgres@127.0.0.1:5432/postgres); a fresh
 *                       database `fjsonapi_bench_<epoch>` is created on it and dropped at the end
 * - `BENCH_DURATION`    measured seconds per server and scenario (default 10)
 * - `BENCH_WARMUP`      warm-up seconds before each measurement (default 2)
 * - `BENCH_CONNECTIONS` autocannon connections (default 10)
 * - `BENCH_ROUNDS`      measured runs per server and scenario, in alternating order (default 2: library,
 *                       hand-written, hand-written, library); req/s is their mean, p99 their worst
 * - `BENCH_POOL_SIZE`   `pg` pool size of both servers (default 10)
 * - `BENCH_SCENARIOS`   comma-separated scenario ids to run (default all: read,list,read-include,list-include,create)
 * - `BENCH_PROFILE`     a directory: run the servers under `node --cpu-prof`, profiles in `<dir>/<server>-<scenario>/`
 *                       (summarize one with `node --import tsx bench/profile-summary.ts <dir>/<server>-<scenario>`)
 * - `BENCH_SCOPE`       the scoped library's scopes: `column` (default; a column compared with a context value) or
 *                       `exists` (computers visible through a visible owner: an EXISTS per row)
 * - `BENCH_STRICT=1`    exit 1 when a scenario is below its target
 */
import { deepStrictEqual } from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdirSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import {
  ADMIN_URL, COMPUTERS_PER_USER, DatabaseUnavailableError, USERS, createDatabase, databaseUrl, dropDatabase,
  migrateAndSeed, redact,
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
const ROUNDS = numberSetting('BENCH_ROUNDS', 2, { integer: true, minimum: 1 })
const POOL_SIZE = numberSetting('BENCH_POOL_SIZE', 10, { integer: true, minimum: 1 })
const PROFILE_DIR = process.env.BENCH_PROFILE !== undefined && process.env.BENCH_PROFILE !== '' ? path.resolve(process.env.BENCH_PROFILE) : undefined
const STRICT = process.env.BENCH_STRICT === '1'

// --- scenarios -------------------------------------------------------------------------------------------------

interface Scenario {
  readonly id: string
  readonly label: string
  readonly method: 'GET' | 'POST'
  readonly path: string
  /** The least acceptable ratio library req/s ÷ hand-written req/s. */
  readonly target: number
}

const ALL_SCENARIOS: readonly Scenario[] = [
  { id: 'read', label: 'GET /users/1', method: 'GET', path: '/users/1', target: 0.85 },
  { id: 'list', label: 'GET /users?page[size]=20', method: 'GET', path: '/users?page[size]=20', target: 0.85 },
  { id: 'read-include', label: 'GET /users/1?include=computers', method: 'GET', path: '/users/1?include=computers', target: 0.85 },
  { id: 'list-include', label: 'GET /users?include=computers&page[size]=20', method: 'GET', path: '/users?include=computers&page[size]=20', target: 0.85 },
  // Last: the computers it creates belong to users 101–1000, outside every read above, but keep reads first anyway.
  { id: 'create', label: 'POST /computers', method: 'POST', path: '/computers', target: 0.8 },
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

type ServerName = 'library' | 'library-scoped' | 'hand-written'
/** The library, the library with a scope on every benchmarked type (`servers/library-scoped.ts`), the reference. */
const SERVER_NAMES: readonly ServerName[] = ['library', 'library-scoped', 'hand-written']
/** The least acceptable ratio scoped req/s ÷ unscoped req/s: a scope may cost at most 5 %. */
const SCOPE_TARGET = 0.95

interface RunningServer {
  readonly name: ServerName
  readonly port: number
  /** The CPU time (µs) the server process has used so far. */
  cpu (): Promise<number>
  stop (): Promise<void>
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

/** Starts one server as a child process and waits for the port it announces. */
async function startServer (name: ServerName, url: string, profileName?: string): Promise<RunningServer> {
  const flags = PROFILE_DIR !== undefined && profileName !== undefined
    // One directory per run: tsx's loader thread writes a profile of its own beside the main thread's.
    ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, profileName)}`]
    : []
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', path.join(ROOT, 'bench', 'servers', `${name}.ts`)], {
    cwd: ROOT,
    env: { ...process.env, BENCH_DATABASE_URL: url, BENCH_POOL_SIZE: String(POOL_SIZE) },
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
    return `${at === '' ? '/' : at}: library ${JSON.stringify(a)} ≠ hand-written ${JSON.stringify(b)}`
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

/**
 * Before anything is measured: every read answers the same document on both servers (deep-equal, dates and all),
 * and a create answers 201 with a Location and the same document up to the new id. Throws on any difference.
 */
async function verify (url: string, scenarios: readonly Scenario[]): Promise<string[]> {
  const answers = new Map<ServerName, Map<string, Answer>>()
  for (const name of SERVER_NAMES) {
    const server = await startServer(name, url)
    try {
      const byScenario = new Map<string, Answer>()
      for (const scenario of scenarios) {
        const answer = scenario.method === 'GET'
          ? await ask(server, 'GET', scenario.path)
          : await ask(server, 'POST', scenario.path, createBody('VERIFY-1', 0))
        byScenario.set(scenario.id, answer)
      }
      answers.set(name, byScenario)
    } finally {
      await server.stop()
    }
  }
  const notes: string[] = []
  for (const scenario of scenarios) {
    const hand = answers.get('hand-written')!.get(scenario.id)!
    const expected = scenario.method === 'GET' ? 200 : 201
    for (const name of SERVER_NAMES) {
      const answer = answers.get(name)!.get(scenario.id)!
      expect(answer.status === expected, `${scenario.label}: the ${name} server answered ${answer.status}, not ${expected}: ${answer.text.slice(0, 300)}`)
      expect(answer.contentType.startsWith(MEDIA_TYPE), `${scenario.label}: the ${name} server answered Content-Type "${answer.contentType}"`)
      if (scenario.method === 'POST') {
        expect(answer.location !== null && answer.location === answer.body?.data?.links?.self,
          `${scenario.label}: the ${name} server's Location (${answer.location}) is not the new resource's self link`)
      }
    }
    for (const name of ['library', 'library-scoped'] as const) {
      const library = answers.get(name)!.get(scenario.id)!
      const [a, b] = scenario.method === 'GET' ? [library.body, hand.body] : [withoutId(library), withoutId(hand)]
      const difference = firstDifference(a, b)
      if (difference !== undefined) throw new Error(`${scenario.label}: the hand-written document differs from the ${name} server's at ${difference}`)
      deepStrictEqual(b, a, `${scenario.label}: the hand-written document differs from the ${name} server's`)
      const same = scenario.method === 'GET' ? library.text === hand.text : JSON.stringify(a) === JSON.stringify(b)
      notes.push(`${scenario.label}: ${name} and hand-written answer the same document${same ? ', byte for byte' : ' (member order differs)'} (${library.text.length} bytes)`)
    }
  }
  return notes
}

// --- measuring -------------------------------------------------------------------------------------------------

/** One measured run of one server. */
interface Run {
  readonly requestsPerSecond: number
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
  /** The worst of the runs' p99, ms. */
  readonly p99: number
  /** Server CPU time per request, ms. */
  readonly cpuPerRequest: number
}

function combine (runs: readonly Run[]): Measurement {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  return {
    runs,
    requestsPerSecond: runs.reduce((sum, run) => sum + run.requestsPerSecond, 0) / runs.length,
    p99: Math.max(...runs.map((run) => run.p99)),
    cpuPerRequest: runs.reduce((sum, run) => sum + run.cpu, 0) / 1000 / requests,
  }
}

async function load (server: RunningServer, scenario: Scenario, seconds: number, tag: string): Promise<autocannon.Result> {
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: requestsOf(scenario, tag),
  })
  const problems = [
    result.errors > 0 ? `${result.errors} errors` : '',
    result.timeouts > 0 ? `${result.timeouts} timeouts` : '',
    result.non2xx > 0 ? `${result.non2xx} non-2xx answers (${JSON.stringify(result.statusCodeStats)})` : '',
  ].filter((problem) => problem !== '')
  if (problems.length > 0) throw new Error(`${scenario.label} on the ${server.name} server: ${problems.join(', ')}`)
  if (result.requests.total === 0) throw new Error(`${scenario.label} on the ${server.name} server: no request completed`)
  return result
}

/** Warm-up, then the measured run, on a server started for this run alone. */
async function measure (name: ServerName, url: string, scenario: Scenario, round: number): Promise<Run> {
  const server = await startServer(name, url, `${name}-${scenario.id}-${round + 1}`)
  try {
    if (WARMUP > 0) await load(server, scenario, WARMUP, `${name}-${round}-warmup`)
    const before = await server.cpu()
    const result = await load(server, scenario, DURATION, `${name}-${round}`)
    const cpu = await server.cpu() - before
    return { requestsPerSecond: result.requests.average, p99: result.latency.p99, requests: result.requests.total, cpu }
  } finally {
    await server.stop()
  }
}

// --- report ----------------------------------------------------------------------------------------------------

interface Row {
  readonly scenario: Scenario
  readonly library: Measurement
  readonly scoped: Measurement
  readonly hand: Measurement
}

const HEADERS = ['scenario', 'library req/s', 'library p99 (ms)', 'hand-written req/s', 'hand-written p99 (ms)', 'ratio', 'target', 'result']
const DIAGNOSTIC_HEADERS = ['scenario', 'library req/s per run', 'hand-written req/s per run', 'library CPU ms/req', 'hand-written CPU ms/req', 'CPU ratio']

function ratioOf (row: Row): number {
  return row.library.requestsPerSecond / row.hand.requestsPerSecond
}

const SCOPE_HEADERS = ['scenario', 'unscoped req/s', 'scoped req/s', 'scoped ÷ unscoped', 'unscoped p99 (ms)', 'scoped p99 (ms)', 'CPU ratio', 'target', 'result']

function scopeRatioOf (row: Row): number {
  return row.scoped.requestsPerSecond / row.library.requestsPerSecond
}

/** What a scope on the benchmarked types costs: the scoped library against the unscoped one, in the same rounds. */
function scopeCells (row: Row): string[] {
  const ratio = scopeRatioOf(row)
  return [
    row.scenario.label,
    integer(row.library.requestsPerSecond),
    integer(row.scoped.requestsPerSecond),
    `${ratio.toFixed(2)}×`,
    milliseconds(row.library.p99),
    milliseconds(row.scoped.p99),
    `${(row.scoped.cpuPerRequest / row.library.cpuPerRequest).toFixed(2)}×`,
    `≥ ${SCOPE_TARGET.toFixed(2)}×`,
    ratio >= SCOPE_TARGET ? 'ok' : 'below',
  ]
}

function integer (value: number): string {
  return Math.round(value).toLocaleString('en-US')
}

function milliseconds (value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1)
}

function cells (row: Row): string[] {
  const ratio = ratioOf(row)
  return [
    row.scenario.label,
    integer(row.library.requestsPerSecond),
    milliseconds(row.library.p99),
    integer(row.hand.requestsPerSecond),
    milliseconds(row.hand.p99),
    `${ratio.toFixed(2)}×`,
    `≥ ${row.scenario.target.toFixed(2)}×`,
    ratio >= row.scenario.target ? 'ok' : 'below',
  ]
}

/** Per-run req/s (to judge the noise) and server CPU per request (library ÷ hand-written: > 1 costs more CPU). */
function diagnosticCells (row: Row): string[] {
  return [
    row.scenario.label,
    row.library.runs.map((run) => integer(run.requestsPerSecond)).join(' / '),
    row.hand.runs.map((run) => integer(run.requestsPerSecond)).join(' / '),
    row.library.cpuPerRequest.toFixed(3),
    row.hand.cpuPerRequest.toFixed(3),
    `${(row.library.cpuPerRequest / row.hand.cpuPerRequest).toFixed(2)}×`,
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

function autocannonVersion (): string {
  try {
    return (createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version
  } catch {
    return 'unknown'
  }
}

function writeResults (rows: readonly Row[], postgresVersion: string, started: Date, checks: readonly string[], loads: readonly number[]): string {
  const cpus = os.cpus()
  const file = path.join(ROOT, 'bench', 'results.md')
  const body = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${started.toISOString()}.`,
    '',
    `- Node.js ${process.version}, autocannon ${autocannonVersion()}`,
    `- CPU: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores (${os.platform()} ${os.release()})`,
    `- PostgreSQL: ${postgresVersion}`,
    `- Data: the example app's schema, ${USERS.toLocaleString('en-US')} users × ${COMPUTERS_PER_USER} computers, in a fresh database`,
    `- Load: autocannon, ${CONNECTIONS} connections; per server and scenario ${ROUNDS} run${ROUNDS === 1 ? '' : 's'} ` +
      `(${WARMUP} s warm-up, then ${DURATION} s measured), the servers alternating (library, scoped library, ` +
      'hand-written in odd rounds, the reverse in even ones); each run a fresh server process on 127.0.0.1, alone; a `pg` pool of ' +
      `${POOL_SIZE} connections in each`,
    `- Load average (1 min) at the start and at the end: ${loads.map((load) => load.toFixed(2)).join(' → ')} ` +
      '(other processes on the machine slow both servers down)',
    '- req/s: mean of the runs\' mean req/s; p99: the worst run\'s 99th percentile latency; ' +
      'ratio: library req/s ÷ hand-written req/s',
    '',
    markdownTable(HEADERS, rows.map(cells)),
    '',
    'Diagnostics: each run\'s req/s, and the server process\'s CPU time per request over the measured runs ' +
      '(CPU ratio: library ÷ hand-written, above 1× the library spends more CPU per request).',
    '',
    markdownTable(DIAGNOSTIC_HEADERS, rows.map(diagnosticCells)),
    '',
    `The cost of a scope (BENCH_SCOPE=${process.env.BENCH_SCOPE ?? 'column'}): the library with a scope on \`user\` and on ` +
      '`computer` (see bench/servers/library-scoped.ts) against the library without, in the same rounds ' +
      '(CPU ratio: scoped ÷ unscoped CPU time per request).',
    '',
    markdownTable(SCOPE_HEADERS, rows.map(scopeCells)),
    '',
    'Checked before measuring:',
    '',
    ...checks.map((check) => `- ${check}`),
    '',
  ].join('\n')
  writeFileSync(file, body)
  return file
}

// --- main ------------------------------------------------------------------------------------------------------

let databaseName: string | undefined
let cleaning: Promise<void> | undefined

function cleanup (): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map(stopChild))
    if (databaseName !== undefined) {
      const name = databaseName
      databaseName = undefined
      await dropDatabase(name).catch((error: unknown) => {
        console.error(`could not drop the database ${name}: ${(error as Error).message}`)
      })
    }
  })()
  return cleaning
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and dropping the benchmark database…`)
    void cleanup().finally(() => process.exit(130))
  })
}

async function main (): Promise<number> {
  const scenarios = selectedScenarios()
  const started = new Date()
  const name = `fjsonapi_bench_${Math.floor(started.getTime() / 1000)}`
  const url = databaseUrl(name)
  const postgresVersion = await createDatabase(name)
  databaseName = name
  console.log(`database ${name} on ${redact(ADMIN_URL)} (${postgresVersion.split(',')[0]})`)
  await migrateAndSeed(url)
  console.log(`seeded ${USERS} users × ${COMPUTERS_PER_USER} computers`)

  const checks = await verify(url, scenarios)
  for (const check of checks) console.log(`check: ${check}`)

  const loads = [os.loadavg()[0]]
  const rows: Row[] = []
  for (const scenario of scenarios) {
    const runs: Record<ServerName, Run[]> = { library: [], 'library-scoped': [], 'hand-written': [] }
    process.stdout.write(`${scenario.label}:`)
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order (library, scoped, hand-written, then the reverse, …) so drift hits every server alike.
      const order = round % 2 === 0 ? SERVER_NAMES : [...SERVER_NAMES].reverse()
      for (const name of order) {
        const run = await measure(name, url, scenario, round)
        runs[name].push(run)
        process.stdout.write(` ${name} ${Math.round(run.requestsPerSecond)} req/s;`)
      }
    }
    process.stdout.write('\n')
    rows.push({ scenario, library: combine(runs.library), scoped: combine(runs['library-scoped']), hand: combine(runs['hand-written']) })
  }

  console.log('')
  console.log(textTable(HEADERS, rows.map(cells)))
  console.log('')
  console.log(textTable(DIAGNOSTIC_HEADERS, rows.map(diagnosticCells)))
  console.log('')
  console.log(textTable(SCOPE_HEADERS, rows.map(scopeCells)))
  loads.push(os.loadavg()[0])
  const file = writeResults(rows, postgresVersion, started, checks, loads)
  console.log(`\nwritten to ${path.relative(process.cwd(), file)}`)
  const below = rows.filter((row) => ratioOf(row) < row.scenario.target)
  if (below.length > 0) console.log(`below target: ${below.map((row) => row.scenario.label).join(', ')}`)
  const costly = rows.filter((row) => scopeRatioOf(row) < SCOPE_TARGET)
  if (costly.length > 0) console.log(`a scope costs more than 5 % on: ${costly.map((row) => row.scenario.label).join(', ')}`)
  return STRICT && (below.length > 0 || costly.length > 0) ? 1 : 0
}

let exitCode = 1
try {
  if (PROFILE_DIR !== undefined) mkdirSync(PROFILE_DIR, { recursive: true })
  exitCode = await main()
} catch (error) {
  if (error instanceof DatabaseUnavailableError) {
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
