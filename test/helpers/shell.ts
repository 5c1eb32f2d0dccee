import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * Where native addons (better-sqlite3) find the headers of the Node.js that runs the test: its own installation's,
 * when it has them. A machine's npm configuration may name another's (`nodedir`), and an addon built against another
 * Node.js fails to load ("compiled against a different Node.js version") when CI runs the package test on Node.js 22.
 */
const installation = dirname(dirname(process.execPath))
const ownHeaders = existsSync(join(installation, 'include', 'node', 'node.h')) ? { npm_config_nodedir: installation } : {}

// Children run as a user's would: without tap's loaders (NODE_OPTIONS) and settings.
const cleanEnvironment = Object.fromEntries(Object.entries({ ...process.env, npm_config_loglevel: 'error', ...ownHeaders })
  .filter(([name]) => name !== 'NODE_OPTIONS' && !name.startsWith('TAP') && !name.startsWith('_TAP')))

export interface ShellResult { readonly code: number, readonly output: string }

/** Runs a bash command in `cwd`, outside tap's environment; answers its exit code and its output (stdout, stderr). */
export async function sh (command: string, cwd: string): Promise<ShellResult> {
  try {
    // tap's process-info hook adds its loaders to the NODE_OPTIONS of every child process: drop them in the shell
    const { stdout, stderr } = await run('bash', ['-c', `unset NODE_OPTIONS; ${command}`], { cwd, maxBuffer: 64 * 1024 * 1024, env: cleanEnvironment })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const failure = error as { code?: number, stdout?: string, stderr?: string }
    return { code: typeof failure.code === 'number' ? failure.code : 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` }
  }
}
