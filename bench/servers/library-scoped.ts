/**
 * The benchmarked library with scopes: the example application's resources with a scope on both benchmarked types,
 * to measure what a scope costs. No seeded row is outside the scopes, so the documents are the same as the unscoped
 * library's and the hand-written server's. `BENCH_SCOPE` picks the scopes' shape:
 *
 * - `column` (default): what most scopes are, a column compared with a value of the context (an owner, a tenant):
 *   `user` → `"r0"."status" <> $1`, `computer` → `"r0"."serial" <> $1`.
 * - `exists`: `computer` is visible through its owner (`where.has('owner')`, an `EXISTS` over a visible user), so
 *   every statement that reads computers runs a semi-join per row.
 *
 * Either way `user.email` has a read rule that is a condition on the row (`"status" <> $1`, true on every seeded row):
 * what a field rule costs, one `CASE` in the select list of every statement that renders users.
 *
 * Started by `bench/run.ts` as a child process; see `serve.ts`.
 */
import Fastify from 'fastify'
import { jsonApi, type AnyResourceDeclaration } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { openLibraryDatabase } from './library-database.js'
import { serveBuilt } from './serve.js'
import { BENCH_CURSOR_SECRET } from './documents.js'

interface BenchContext { readonly hidden: string }
type Scope = NonNullable<AnyResourceDeclaration['hooks']>['scope']

const shape = process.env.BENCH_SCOPE ?? 'column'
if (shape !== 'column' && shape !== 'exists') throw new Error(`BENCH_SCOPE must be 'column' or 'exists', got "${shape}"`)

const scopes: Record<string, Scope> = {
  user: (context: BenchContext, where) => where.ne('status', context.hidden),
  computer: shape === 'column'
    ? (context: BenchContext, where) => where.ne('serial', context.hidden)
    : (_context: BenchContext, where) => where.has('owner'),
}

/** A row rule of one attribute per type: read where the row is within the scope's condition. */
const rules: Record<string, NonNullable<AnyResourceDeclaration['rules']>> = {
  user: { email: { read: (context: BenchContext, where) => where.ne('status', context.hidden) } },
}

const scoped = resources.map((resource: AnyResourceDeclaration) => {
  const scope = scopes[resource.type]
  const rule = rules[resource.type]
  return scope === undefined
    ? resource
    : { ...resource, hooks: { ...(resource.hooks ?? {}), scope }, ...(rule === undefined ? {} : { rules: { ...(resource.rules ?? {}), ...rule } }) }
})

const { db, close } = await openLibraryDatabase()
await serveBuilt(async () => {
  const app = Fastify({ logger: false })
  await app.register(jsonApi, { db, resources: scoped, context: () => ({ hidden: 'hidden' }), pagination: { cursorSecret: BENCH_CURSOR_SECRET } })
  return app
}, close)
