import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { swaggerOptions } from '../../lib/index.js'

/**
 * A Fastify instance with `@fastify/swagger` registered, as an application that documents its API has it: every
 * response the tests receive from it is checked against its OpenAPI document (see `injectJsonApi`).
 */
export async function documentedFastify (options: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(options)
  await app.register(swagger, swaggerOptions({ info: { title: 'test app', version: '0.0.0' } }))
  return app
}
