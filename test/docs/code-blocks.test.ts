/**
 * The code in the documentation works as written. Every ```ts / ```typescript block of README.md, docs/*.md and
 * examples/README.md is type-checked against the library's own sources (`fastify-jsonapi` is lib/index.ts,
 * `fastify-jsonapi/embedded` lib/embedded.ts), in one TypeScript program with the compiler options of tsconfig.json.
 * Every ```sh block's `curl` with `[` or `]` in its URL passes `-g` (else curl globs the brackets), and every
 * `npm run <script>`, `npm start` and `npm test` names a script of package.json.
 *
 * The convention, for the blocks of a page:
 *
 * - A block is a module of its own (each one a virtual file, beside the others of its page): it imports what it uses.
 *   Its first line may name the file, `// resources.ts`; the page's other blocks can then import it
 *   (`import { author } from './resources.js'`). The blocks are checked together, in one program; but a block with a
 *   module augmentation (`declare module 'fastify-jsonapi'`) gets a program of its own, since the augmentation
 *   would change the library's types for every other block (they are not all one application).
 * - A block that is not a whole module says what it is in an HTML comment, the last thing before its fence (GitHub
 *   does not render it):
 *   - `<!-- ts-check: fragment <wrapper> -->` puts the block into one of the WRAPPERS below: `app` (statements that
 *     use `app`, `db`, `resources`, `jsonApi` and `JsonApiError`), `resource` (members of a resource declaration:
 *     `attributes: { … }`) or `module` (a module but for what the comment's lines declare).
 *     Further lines of the comment are put into the wrapper directly before the block: declarations of what the
 *     prose says exists, or, in a `resource`, the members the block relies on (`relationships: { … },`):
 *
 *         <!-- ts-check: fragment app
 *         declare function isAdmin (request: import('fastify').FastifyRequest): boolean
 *         -->
 *         ```ts
 *         app.addHook('preHandler', async (request) => { if (!isAdmin(request)) throw new JsonApiError({ status: 403 }) })
 *         ```
 *   - `<!-- ts-check: continues -->`: the block goes on from the page's previous TypeScript block, and is checked
 *     appended to it.
 *   - `<!-- ts-check: skip (the reason) -->` leaves the block out; the reason is required, and the skips are counted
 *     and printed. Use it only for code that cannot compile here (a package the project does not install, a file a
 *     tool generates).
 *
 * Each block is one assertion named `<file>:<line of its fence>`; a failure lists the compiler's diagnostics with
 * their lines in the Markdown file.
 */
import t from 'tap'
import { fencedBlocks } from '../helpers/markdown.js'
import ts from 'typescript'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The pages whose blocks are checked: the README, every page of docs/ (new ones included), the examples' README. */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`),
  'examples/README.md',
]

/** Where the blocks live while they are checked: virtual files, never written, inside the repository (so that its
 * node_modules and its `"type": "module"` apply). */
const BLOCKS_DIR = join(ROOT, '.doc-blocks')

const LIBRARY = {
  'fastify-jsonapi': 'lib/index.ts',
  'fastify-jsonapi/embedded': 'lib/embedded.ts',
} as const

interface Wrapper {
  /** What a block in it may take for granted. */
  readonly about: string
  readonly head: readonly string[]
  readonly tail: readonly string[]
}

/** The wrappers of `<!-- ts-check: fragment <wrapper> -->`. */
const WRAPPERS: Readonly<Record<string, Wrapper>> = {
  app: {
    about: 'statements of a module in which `app` (a Fastify instance), `db` (a Kysely instance) and `resources` (declarations) exist, '
      + 'and `jsonApi` and `JsonApiError` are imported',
    head: [
      "import { jsonApi, JsonApiError } from 'fastify-jsonapi'",
      "declare const app: import('fastify').FastifyInstance",
      "declare const db: import('kysely').Kysely<any>",
      "declare const resources: import('fastify-jsonapi').AnyResourceDeclaration[]",
    ],
    tail: [],
  },
  resource: {
    about: 'members of the object a resource declaration takes (`attributes: { … }`, `hooks: { … }`), with `Type`, `sql` and `JsonApiError` '
      + 'imported; its hooks receive the context `{ user: { id: string } | undefined }`',
    head: [
      "import { Type } from '@sinclair/typebox'",
      "import { sql } from 'kysely'",
      "import { defineResourceFor, JsonApiError } from 'fastify-jsonapi'",
      'void sql',
      'export const resource = defineResourceFor<{ readonly user: { readonly id: string } | undefined }>()({',
      "  type: 'example',",
    ],
    tail: ['})'],
  },
  module: {
    about: 'a module that imports what it uses, and takes what the lines of the comment declare as given',
    head: [],
    tail: [],
  },
}

type Directive =
  | { readonly kind: 'fragment', readonly wrapper: string, readonly lines: readonly Line[] }
  | { readonly kind: 'continues' }
  | { readonly kind: 'skip', readonly reason: string }

/** A line of a virtual file, and the line of the Markdown file it comes from (none: a wrapper's). */
interface Line {
  readonly text: string
  readonly line?: number
}

interface Block {
  readonly page: string
  /** The line of its opening fence (1-based). */
  readonly line: number
  readonly lang: string
  readonly lines: readonly Line[]
  /** A `ts-check` comment before the fence, or its mistake. */
  readonly directive?: Directive | { readonly kind: 'invalid', readonly message: string }
}

/** The fenced blocks of a Markdown page, with the `ts-check` comments before them; and the comments that precede no
 * TypeScript block (a mistake). */
function readBlocks (page: string): { blocks: Block[], strayDirectives: number[] } {
  const source = readFileSync(join(ROOT, page), 'utf8').split(/\r?\n/)
  const attached = new Set<number>()
  const blocks: Block[] = fencedBlocks(source).map(({ start, lang, lines }) => ({ page, line: start + 1, lang, lines, directive: readDirective(source, start, attached) }))
  const strayDirectives = source.flatMap((text, index) => /^\s*<!--\s*ts-check/.test(text) && !attached.has(index) ? [index + 1] : [])
  return { blocks, strayDirectives }
}

/** The `<!-- ts-check: … -->` comment that ends on the last non-blank line before the fence at `fence`, if any. */
function readDirective (source: readonly string[], fence: number, attached: Set<number>): Block['directive'] {
  let end = fence - 1
  while (end >= 0 && source[end].trim() === '') end--
  if (end < 0 || !source[end].trim().endsWith('-->')) return undefined
  let start = end
  while (start >= 0 && !source[start].includes('<!--')) start--
  if (start < 0 || !/^\s*<!--\s*ts-check:/.test(source[start])) return undefined
  attached.add(start)
  const first = source[start].replace(/^\s*<!--\s*ts-check:\s*/, '').replace(/\s*-->\s*$/, '').trim()
  const more: Line[] = []
  for (let k = start + 1; k <= end; k++) {
    const text = k === end ? source[k].replace(/\s*-->\s*$/, '') : source[k]
    if (text.trim() !== '') more.push({ text, line: k + 1 })
  }
  const skip = /^skip\s*\((.*\S.*)\)$/.exec(first)
  if (skip !== null && more.length === 0) return { kind: 'skip', reason: skip[1].trim() }
  if (first === 'continues' && more.length === 0) return { kind: 'continues' }
  const fragment = /^fragment\s+(\S+)$/.exec(first)
  if (fragment !== null) {
    if (!Object.hasOwn(WRAPPERS, fragment[1])) {
      return { kind: 'invalid', message: `unknown wrapper '${fragment[1]}' (known: ${Object.keys(WRAPPERS).join(', ')})` }
    }
    return { kind: 'fragment', wrapper: fragment[1], lines: more }
  }
  return {
    kind: 'invalid',
    message: `line ${start + 1}: '${first}' is not a ts-check directive: write 'fragment <wrapper>', 'continues' or 'skip (<reason>)'`,
  }
}

const isTypeScript = (block: Block) => block.lang === 'ts' || block.lang === 'typescript'
const isShell = (block: Block) => ['sh', 'bash', 'shell', 'console'].includes(block.lang)

const pages = PAGES.map((page) => ({ page, ...readBlocks(page) }))

// ---------------------------------------------------------------------------------------------------------------
// TypeScript blocks

interface Checked {
  readonly block: Block
  /** The virtual file. */
  readonly fileName: string
  readonly lines: readonly Line[]
  readonly problems: readonly string[]
}

const checked: Checked[] = []
const skipped: Array<{ readonly block: Block, readonly reason: string }> = []
for (const { page, blocks } of pages) {
  const names = new Set<string>()
  let previous: Checked | undefined
  for (const block of blocks.filter(isTypeScript)) {
    const directive = block.directive
    if (directive?.kind === 'skip') {
      skipped.push({ block, reason: directive.reason })
      continue
    }
    const problems: string[] = []
    let lines: readonly Line[] = block.lines
    if (directive?.kind === 'invalid') problems.push(directive.message)
    if (directive?.kind === 'fragment') {
      const wrapper = WRAPPERS[directive.wrapper]
      lines = [...wrapper.head.map((text) => ({ text })), ...directive.lines, ...block.lines, ...wrapper.tail.map((text) => ({ text }))]
    }
    if (directive?.kind === 'continues') {
      if (previous === undefined) problems.push('`ts-check: continues`, but no TypeScript block of the page comes before it')
      else lines = [...previous.lines, ...block.lines]
    }
    const named = /^\/\/\s*([\w.-]+\.(?:ts|mts))\s*$/.exec(block.lines[0]?.text ?? '')?.[1]
    const name = named ?? `line-${block.line}.ts`
    if (names.has(name)) problems.push(`a block of ${page} is named ${name} already`)
    names.add(name)
    previous = { block, fileName: join(BLOCKS_DIR, page, name), lines, problems }
    checked.push(previous)
  }
}

/** The compiler options of tsconfig.json, the library's entry points mapped to its sources, and nothing emitted. */
function compilerOptions (): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path))
  if (config.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'))
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT)
  return {
    ...options,
    noEmit: true,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    // Each block is a module, whatever it holds: its names never meet another block's.
    moduleDetection: ts.ModuleDetectionKind.Force,
    baseUrl: ROOT,
    paths: Object.fromEntries(Object.entries(LIBRARY).map(([specifier, file]) => [specifier, [file]])),
  }
}

const options = compilerOptions()
const virtual = new Map(checked.map(({ fileName, lines }) => [fileName, lines.map(({ text }) => text).join('\n') + '\n']))
const virtualDirs = new Set([...virtual.keys()].flatMap((fileName) => {
  const dirs: string[] = []
  for (let dir = dirname(fileName); dir.startsWith(BLOCKS_DIR); dir = dirname(dir)) dirs.push(dir)
  return dirs
}))
const host = ts.createCompilerHost(options, true)
const realHost = { ...host }
Object.assign(host, {
  fileExists: (fileName: string) => virtual.has(fileName) || realHost.fileExists(fileName),
  readFile: (fileName: string) => virtual.get(fileName) ?? realHost.readFile(fileName),
  directoryExists: (dir: string) => virtualDirs.has(dir) || (realHost.directoryExists?.(dir) ?? ts.sys.directoryExists(dir)),
  realpath: (path: string) => virtual.has(path) || virtualDirs.has(path) ? path : (realHost.realpath?.(path) ?? path),
  getSourceFile: (fileName: string, languageVersion: ts.ScriptTarget | ts.CreateSourceFileOptions, onError?: (message: string) => void) => {
    const text = virtual.get(fileName)
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true)
    // Parsed once for every program (the library, node_modules' declarations).
    let file = parsed.get(fileName)
    if (file === undefined) parsed.set(fileName, file = realHost.getSourceFile(fileName, languageVersion, onError))
    return file
  },
} satisfies Partial<ts.CompilerHost>)
const parsed = new Map<string, ts.SourceFile | undefined>()

/** A block that augments a module (`declare module 'fastify-jsonapi' { interface JsonApiContext … }`) would change
 * the library's types for every other block: it gets a program of its own, with the library (which an application
 * imports somewhere else: an augmentation alone does not bring its module into a program). */
const augments = ({ fileName }: Checked) => /^\s*declare\s+module\s+['"]/m.test(virtual.get(fileName) ?? '')
const program = ts.createProgram({ rootNames: checked.filter((block) => !augments(block)).map(({ fileName }) => fileName), options, host })
const programOf = new Map(checked.map((block) => [
  block.fileName,
  augments(block) ? ts.createProgram({ rootNames: [join(ROOT, LIBRARY['fastify-jsonapi']), block.fileName], options, host }) : program,
]))

function describe (diagnostic: ts.Diagnostic, lines: readonly Line[], page: string): string {
  const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
  if (diagnostic.file === undefined || diagnostic.start === undefined) return message
  if (!virtual.has(diagnostic.file.fileName)) {
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return `${diagnostic.file.fileName.slice(ROOT.length)}:${line + 1}: ${message}`
  }
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
  const from = lines[line]?.line
  return from === undefined ? `(in the wrapper) ${message}` : `${page}:${from}:${character + 1}: ${message}`
}

t.test('the library is checked from its sources', async (t) => {
  t.same(program.getOptionsDiagnostics().map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'the compiler options are valid')
  t.same(program.getGlobalDiagnostics().map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'no global diagnostics')
  const from = join(BLOCKS_DIR, 'README.md', 'line-1.ts')
  for (const [specifier, file] of Object.entries(LIBRARY)) {
    const resolved = ts.resolveModuleName(specifier, from, options, host).resolvedModule?.resolvedFileName
    t.equal(resolved, join(ROOT, file), `${specifier} is ${file}`)
    t.ok(program.getSourceFile(join(ROOT, file)) !== undefined || specifier !== 'fastify-jsonapi', `${file} is part of the program`)
  }
  t.notOk(program.getSourceFiles().some((file) => file.fileName.startsWith(join(ROOT, 'dist'))), 'nothing of dist/ is read')
})

t.test('every TypeScript block of the documentation compiles', async (t) => {
  t.ok(checked.length > 0, 'there are blocks to check')
  for (const { block, fileName, lines, problems } of checked) {
    const own = programOf.get(fileName) ?? program
    const file = own.getSourceFile(fileName)
    const diagnostics = file === undefined ? [] : [...own.getSyntacticDiagnostics(file), ...own.getSemanticDiagnostics(file)]
    const messages = [...problems, ...diagnostics.map((diagnostic) => describe(diagnostic, lines, block.page))]
    const directive = block.directive
    if (messages.length > 0 && directive?.kind === 'fragment') messages.push(`(a fragment of '${directive.wrapper}': ${WRAPPERS[directive.wrapper].about})`)
    t.same(messages, [], `${block.page}:${block.line}`)
  }
  const alone = checked.filter(augments).length
  t.comment(`${checked.length} TypeScript blocks checked (${alone} of them, module augmentations, in programs of their own), ${skipped.length} skipped`)
  for (const { block, reason } of skipped) t.comment(`skipped ${block.page}:${block.line}: ${reason}`)
})

t.test('every ts-check comment precedes a TypeScript block', async (t) => {
  for (const { page, blocks, strayDirectives } of pages) {
    const misplaced = blocks.filter((block) => block.directive !== undefined && !isTypeScript(block)).map((block) => block.line)
    t.same([...strayDirectives, ...misplaced].sort((a, b) => a - b), [], `${page}: no ts-check comment before anything but a TypeScript block`)
  }
})

// ---------------------------------------------------------------------------------------------------------------
// Shell blocks

const SCRIPTS = new Set(Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {}))

/** The words of a shell command line, quotes removed (no expansions: enough for documentation). */
function words (command: string): string[] {
  const result: string[] = []
  const word = /'([^']*)'|"((?:[^"\\]|\\.)*)"|((?:[^\s'"\\]|\\.)+)/y
  let current: string | undefined
  let index = 0
  while (index < command.length) {
    if (/\s/.test(command[index])) {
      if (current !== undefined) result.push(current)
      current = undefined
      index++
      continue
    }
    word.lastIndex = index
    const match = word.exec(command)
    if (match === null) break
    current = (current ?? '') + (match[1] ?? match[2] ?? match[3])
    index = word.lastIndex
  }
  if (current !== undefined) result.push(current)
  return result
}

/** The commands of a shell block: continuation lines joined, comments dropped, split at `&&`, `||`, `;` and `|`. */
function commands (block: Block): string[] {
  const joined = block.lines.map(({ text }) => text).join('\n').replace(/\\\n/g, ' ')
  return joined.split('\n')
    .map((line) => line.replace(/^\s*\$\s+/, '').replace(/(^|\s)#.*$/, ''))
    .flatMap((line) => line.split(/&&|\|\||;|\|/))
    .map((command) => command.trim())
    .filter((command) => command !== '')
}

/** What is wrong with one command. */
function shellProblems (command: string): string[] {
  const all = words(command)
  const first = all.findIndex((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word))
  const [program, ...args] = first === -1 ? [] : all.slice(first)
  if (program === 'curl') {
    const globOff = args.some((arg) => arg === '--globoff' || /^-[A-Za-z]*g[A-Za-z]*$/.test(arg))
    const urls = args.filter((arg) => /^https?:\/\//.test(arg) && /[[\]]/.test(arg))
    if (urls.length > 0 && !globOff) return [`\`${command}\`: a URL with [ or ] needs -g (--globoff), or curl reads them as a glob`]
  }
  if (program === 'npm') {
    const [verb, script] = args
    const named = verb === 'run' || verb === 'run-script' ? script : ['start', 'test', 't', 'stop', 'restart'].includes(verb) ? (verb === 't' ? 'test' : verb) : undefined
    if ((verb === 'run' || verb === 'run-script') && script === undefined) return [`\`${command}\`: names no script`]
    if (named !== undefined && !SCRIPTS.has(named)) return [`\`${command}\`: package.json has no script '${named}'`]
  }
  return []
}

t.test('every shell block runs as written', async (t) => {
  t.same(shellProblems("curl 'http://h/u?fields[user]=name'").length, 1, 'the check sees a curl without -g')
  t.same(shellProblems("curl -sg 'http://h/u?fields[user]=name'"), [], 'and accepts -g among other flags')
  t.same(shellProblems('SEED=1 npm run nothing-of-the-kind').length, 1, 'the check sees an unknown npm script')
  let count = 0
  for (const { blocks } of pages) {
    for (const block of blocks.filter(isShell)) {
      count++
      t.same(commands(block).flatMap(shellProblems), [], `${block.page}:${block.line}`)
    }
  }
  t.comment(`${count} shell blocks checked`)
})
