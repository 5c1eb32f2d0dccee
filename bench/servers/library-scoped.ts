/**
 * The benchmarked library with scopes: the example application's resources, with a scope on both benchmarked types,
 * to measure what a scope costs. `user`: rows whose `status` is not the context's hidden status; `computer`: rows
 * whose owner is a visible user (`where.has('owner')`, which carries the user's scope, an `EXISTS`). No seeded row is
 * outside them, so the documents are the same as the unscoped library's and the hand-written server's. Started by
 * `bench/run.ts` as a child process; see `serve.ts`.
 */
import Fastify from 'fastify'
import { jsonApi, type AnyResourceDeclaration } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { openDatabase, serve } from './serve.js'

interface BenchContext { readonly hiddenStatus: string }

const scopes: Record<string, NonNullable<AnyResourceDeclaration['hooks']>['scope']> = {
  user: (context: BenchContext, where) => where.ne('status', context.hiddenStatus),
  computer: (_context: BenchContext, where) => where.has('owner'),
}

const scoped = resources.map((resource: AnyResourceDeclaration) => {
  const scope = scopes[resource.type]
  return scope === undefined ? resource : { ...resource, hooks: { ...(resource.hooks ?? {}), scope } }
})

const db = openDatabase()
try {
  const app = Fastify({ logger: false })
  await app.register(jsonApi, { db, resources: scoped, context: () => ({ hiddenStatus: 'banned' }) })
  await serve(app, db)
} catch (error) {
  console.error(error)
  await db.destroy().catch(() => {})
  process.exit(1)
}
