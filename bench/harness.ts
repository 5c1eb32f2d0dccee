/**
 * What the benchmark scripts share: numeric settings from the environment, and a server started as a child process
 * with the protocol of `servers/serve.ts` (it prints `{"port":<n>}`, answers SIGUSR2 with `{"cpu":<µs>}`, stops on
 * SIGTERM).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import * as path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

/** The repository's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** A numeric setting from the environment (`fallback` when unset), at least `minimum`. */
export function numberSetting (name: string, fallback: number, minimum = 0): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < minimum) throw new Error(`${name} must be a number ≥ ${minimum}, got "${raw}"`)
  return value
}

/** A server process of the benchmark. */
export interface ChildServer {
  readonly child: ChildProcess
  readonly port: number
  /** The CPU time (µs) the process has used so far. */
  cpu (): Promise<number>
  stop (): Promise<void>
}

/** Starts `script` (a TypeScript file under `bench/`, run through tsx) with `env` and waits for its port. */
export async function startChildServer (script: string, env: Record<string, string>): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const waiting: Array<(line: string) => void> = []
  lines.on('line', (line) => waiting.shift()?.(line))
  const next = (): Promise<Record<string, number>> => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not answer within 30 s`)), 30_000)
    waiting.push((line) => {
      clearTimeout(timer)
      resolve(JSON.parse(line) as Record<string, number>)
    })
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let port: number
  try {
    ({ port } = await next())
  } catch (error) {
    child.kill('SIGTERM')
    throw error
  }
  return {
    child,
    port,
    async cpu () {
      const answer = next()
      child.kill('SIGUSR2')
      return (await answer).cpu
    },
    async stop () {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/** One measured run: autocannon's mean req/s and p99 (ms), the requests, and the server's CPU time (µs). */
export interface MeasuredRun {
  readonly requestsPerSecond: number
  readonly p99: number
  readonly requests: number
  readonly cpu: number
}

/** What a load sends and for how long. */
export interface LoadSettings {
  readonly label: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly connections: number
  readonly warmup: number
  readonly duration: number
}

async function load (server: ChildServer, settings: LoadSettings, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: settings.connections,
    duration: seconds,
    requests: [{ method: 'GET', path: settings.path, headers: settings.headers }],
  })
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${settings.label}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`)
  }
  return result
}

/** A warm-up, then a measured GET load on a running server, with the server's CPU time over the measured part. */
export async function measureGet (server: ChildServer, settings: LoadSettings): Promise<MeasuredRun> {
  if (settings.warmup > 0) await load(server, settings, settings.warmup)
  const before = await server.cpu()
  const result = await load(server, settings, settings.duration)
  const cpu = await server.cpu() - before
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99, requests: result.requests.total, cpu }
}

/** The scans of a plan, in order (`Index Scan using users_name_id_index`, `Seq Scan`…). */
export function describePlan (node: Record<string, unknown>): string {
  const scans: string[] = []
  const walk = (item: Record<string, unknown>): void => {
    const type = String(item['Node Type'])
    if (type.includes('Scan') && item['Relation Name'] !== undefined) {
      scans.push(`${type}${item['Index Name'] === undefined ? ` on ${String(item['Relation Name'])}` : ` using ${String(item['Index Name'])}`}`)
    }
    for (const child of (item.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child)
  }
  walk(node)
  return [...new Set(scans)].join(', ')
}
