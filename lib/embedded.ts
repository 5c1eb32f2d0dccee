/**
 * `fastify-jsonapi/embedded`: an embedded PostgreSQL (PGlite) behind Kysely, for examples, tests and small apps.
 * It needs the optional peer `@electric-sql/pglite` (`npm install @electric-sql/pglite`); applications on a real
 * PostgreSQL server never import this entry, and never need PGlite installed.
 */
export { createEmbeddedDatabase } from './database/embedded-database.js'
export type { DumpDataDirOptions, EmbeddedDatabase, EmbeddedDatabaseOptions } from './database/embedded-database.js'
