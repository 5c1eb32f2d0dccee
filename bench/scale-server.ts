/**
 * The server of `bench/scale.ts`: the example application's resources, with the `user` resource's `count` strategy
 * taken from `BENCH_COUNT` (`exact`, `estimated` or `none`), registered as the example app registers them (its
 * context, its schema check; without its OpenAPI routes), logger off. Started by `scale.ts` as a child process; the
 * protocol (port, CPU time, stop) is `servers/serve.ts`'s.
 *
 * `scaleApp` builds the same app on any Kysely instance: `scale.ts` uses it in-process to capture the statements a
 * request runs.
 */
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { jsonApi, type AnyResourceDeclaration } from '../lib/index.js'
import { resources } from '../examples/app/resources.js'
import { exampleContext } from '../examples/app/context.js'
import { openLibraryDatabase } from './servers/library-database.js'
import { serve } from './servers/serve.js'

/** The count strategies the scale scenarios compare, by the name `BENCH_COUNT` gives them. */
export const STRATEGIES = { exact: 'exact', estimated: 'estimated', none: false } as const

export type StrategyName = keyof typeof STRATEGIES

/** Reads a strategy's name (`BENCH_COUNT`). */
export function strategyNamed (name: string | undefined): StrategyName {
  if (name === undefined || !Object.hasOwn(STRATEGIES, name)) {
    throw new Error(`BENCH_COUNT must be one of ${Object.keys(STRATEGIES).join(', ')}, got "${String(name)}"`)
  }
  return name as StrategyName
}

/** The example app's resources and context on `db`, its `user` resource counted by `strategy`. */
export async function scaleApp (db: Kysely<any>, strategy: StrategyName): Promise<FastifyInstance> {
  const declarations = resources.map((resource: AnyResourceDeclaration) =>
    resource.type === 'user' ? { ...resource, count: STRATEGIES[strategy] } : resource)
  const app = Fastify({ logger: false })
  await app.register(jsonApi, { db, resources: declarations, context: exampleContext(db), checkDatabaseSchema: true })
  return app
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { db, close } = await openLibraryDatabase()
  try {
    const app = await scaleApp(db, strategyNamed(process.env.BENCH_COUNT))
    await serve(app, close)
  } catch (error) {
    console.error(error)
    await close().catch(() => {})
    process.exit(1)
  }
}
