/**
 * `npm run prepare`, which npm runs after `npm install` and `npm ci` in this repository: prepares the embedded
 * database of each example (`prepared-database.ts`), so that the first `npm start` is as quick as the ones after it.
 * An example whose file is there already is left alone.
 *
 * It never fails: whatever goes wrong is one line of warning (`npm start` then prepares the database itself), and
 * the exit code is 0. Under `npm pack` and `npm publish`, which run `prepare` too, it does nothing: the package ships
 * no example.
 */
import { relative } from 'node:path'

function warn (message: string): void {
  console.warn(`fastify-jsonapi: warning: ${message.split('\n')[0]}`)
}

function reason (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

process.on('uncaughtException', (error) => {
  warn(`cannot prepare the embedded databases of the examples (${reason(error)}); npm start prepares them`)
  process.exit(0)
})

const command = process.env.npm_command
if (command !== 'pack' && command !== 'publish') {
  try {
    const [{ exampleSchemas }, { prepareDatabaseFile }] = await Promise.all([
      import('./example-schemas.js'),
      import('./prepared-database.js'),
    ])
    for (const schema of exampleSchemas) {
      try {
        const started = performance.now()
        const { file, written } = await prepareDatabaseFile(schema, { warn })
        if (written) {
          const seconds = ((performance.now() - started) / 1000).toFixed(1)
          const where = relative(process.cwd(), file)
          console.log(`fastify-jsonapi: prepared the embedded database of the ${schema.name} example in ${seconds} s (${where})`)
        }
      } catch (error) {
        warn(`cannot prepare the embedded database of the ${schema.name} example (${reason(error)}); npm start prepares it`)
      }
    }
  } catch (error) {
    warn(`cannot prepare the embedded databases of the examples (${reason(error)}); npm start prepares them`)
  }
}
process.exitCode = 0
