import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { jsonApi, KyselyRepository } from '../../lib/index.js'
import { resources } from '../../examples/app/resources.js'
import { exampleContext } from '../../examples/app/context.js'
import { openTestDatabase, type StatementCounter } from './database.js'
import { documentedFastify } from './documented-fastify.js'

/** The example app twice on one test database: with the statement cache (the default) and without. */
export interface CacheApps {
  readonly db: Kysely<any>
  readonly counter: StatementCounter
  readonly cached: FastifyInstance
  readonly uncached: FastifyInstance
}

/** Opens the two apps; `teardown` closes them and the database. */
export async function openCacheApps (teardown: (fn: () => Promise<void>) => void): Promise<CacheApps> {
  const database = await openTestDatabase()
  const { db, counter } = database
  const app = async (cacheStatements: boolean): Promise<FastifyInstance> => {
    const fastify = await documentedFastify()
    await fastify.register(jsonApi, { db, repository: new KyselyRepository(db, { cacheStatements }), resources, context: exampleContext(db) })
    await fastify.ready()
    return fastify
  }
  const cached = await app(true)
  const uncached = await app(false)
  teardown(async () => {
    await cached.close()
    await uncached.close()
    await database.close()
  })
  return { db, counter, cached, uncached }
}
