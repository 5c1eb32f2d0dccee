/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. from `BENCH_PROFILE=<dir> npm run bench`): the functions
 * with the most self time, and self time per area (this repository's files, each package, Node.js internals,
 * garbage collection, idle).
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile | directory> [top]
 *
 * Given a directory, it reads the busiest profile in it (the main thread's; tsx's loader thread writes its own).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: readonly number[]
}

interface Profile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
  readonly startTime: number
  readonly endTime: number
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

function fileOf (url: string): string {
  if (url === '') return ''
  const file = url.startsWith('file://') ? fileURLToPath(url) : url
  return file.startsWith(ROOT) ? path.relative(ROOT, file) : file
}

/** Where a function lives: a file of this repository, a package, Node.js itself, or a V8 pseudo-frame. */
function areaOf (frame: CallFrame): string {
  const file = fileOf(frame.url)
  if (file === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)'
  const packages = file.split('node_modules/')
  if (packages.length > 1) {
    const rest = packages[packages.length - 1].split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  if (file.startsWith('node:')) return 'node internals'
  return file
}

function percent (part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1).padStart(5)} %`
}

const [, , file, topArgument] = process.argv
if (file === undefined) {
  console.error('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile | directory> [top]')
  process.exit(2)
}
const top = Number(topArgument ?? 30)

/** The busiest profile of a directory (the main thread's, not the module loader thread's), or the file itself. */
function chooseProfile (target: string): string {
  if (!statSync(target).isDirectory()) return target
  const candidates = readdirSync(target).filter((name) => name.endsWith('.cpuprofile')).map((name) => path.join(target, name))
  if (candidates.length === 0) throw new Error(`no .cpuprofile in ${target}`)
  const busy = (candidate: string): number => {
    const { nodes, samples } = JSON.parse(readFileSync(candidate, 'utf8')) as Profile
    const idle = new Set(nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id))
    return samples.filter((sample) => !idle.has(sample)).length
  }
  return candidates.map((candidate) => ({ candidate, samples: busy(candidate) })).sort((a, b) => b.samples - a.samples)[0].candidate
}

const chosen = chooseProfile(file)
const profile = JSON.parse(readFileSync(chosen, 'utf8')) as Profile
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const parents = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)

function keyOf (frame: CallFrame): string {
  const where = fileOf(frame.url)
  return `${frame.functionName === '' ? '(anonymous)' : frame.functionName}  ${where === '' ? '' : `${where}:${frame.lineNumber + 1}`}`
}

/** Inclusive time of the functions in this repository's own files (lib/, examples/): self time plus callees'. */
const inclusive = new Map<string, number>()

const byFunction = new Map<string, number>()
const byArea = new Map<string, number>()
let total = 0
for (let index = 0; index < profile.samples.length; index++) {
  const node = nodes.get(profile.samples[index])
  const delta = profile.timeDeltas[index] ?? 0
  if (node === undefined) continue
  total += delta
  const frame = node.callFrame
  const key = keyOf(frame)
  const seen = new Set<string>()
  for (let id: number | undefined = node.id; id !== undefined; id = parents.get(id)) {
    const ancestor = nodes.get(id)!.callFrame
    const file = fileOf(ancestor.url)
    if (file.startsWith('node_modules') || file.startsWith('node:') || file.startsWith('/') || file === '') continue
    const ancestorKey = keyOf(ancestor)
    if (seen.has(ancestorKey)) continue
    seen.add(ancestorKey)
    inclusive.set(ancestorKey, (inclusive.get(ancestorKey) ?? 0) + delta)
  }
  byFunction.set(key, (byFunction.get(key) ?? 0) + delta)
  const area = areaOf(frame)
  byArea.set(area, (byArea.get(area) ?? 0) + delta)
}

const idle = byArea.get('(idle)') ?? 0
const busy = total - idle
console.log(`${path.relative(process.cwd(), chosen)}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)\n`)
console.log(`top ${top} functions by self time`)
for (const [key, time] of [...byFunction].filter(([key]) => !key.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${percent(time, busy)}  ${(time / 1000).toFixed(0).padStart(6)} ms  ${key}`)
}
console.log('\nself time by area')
for (const [area, time] of [...byArea].filter(([area]) => area !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${percent(time, busy)}  ${(time / 1000).toFixed(0).padStart(6)} ms  ${area}`)
}
console.log(`\ntop ${top} functions of this repository by inclusive time (self + callees)`)
for (const [key, time] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${percent(time, busy)}  ${(time / 1000).toFixed(0).padStart(6)} ms  ${key}`)
}
