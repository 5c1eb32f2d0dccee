/**
 * The getting-started guide works as written (getting-started.postgres.ts): its SQL creates the tables its
 * declarations need and the service it describes answers. The guide's SQL and server are PostgreSQL's (`serial` ids,
 * `createPostgresDatabase`): it runs on PostgreSQL and PGlite.
 */
import t from 'tap'
import { onlyOn } from '../helpers/engine.js'

const skip = onlyOn('postgres', "the guide's SQL (serial ids) and server (createPostgresDatabase) are PostgreSQL's")
if (skip === false) await import('./getting-started.postgres.js')
else t.plan(0, skip)
