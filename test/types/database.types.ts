// Type tests of the database helpers: checked by `npm run typecheck` (part of `npm test`). Every `@ts-expect-error`
// line must be a compile error.
import { expectTypeOf } from 'expect-type'
import pg from 'pg'
import { withCallbackQueries, type PgClientClass } from '../../lib/index.js'

// The class it returns is the class it was given, usable wherever pg takes a client class.
expectTypeOf(withCallbackQueries(pg.Client)).toEqualTypeOf<typeof pg.Client>()
const pool = new pg.Pool({ Client: withCallbackQueries(pg.Client) })
expectTypeOf(pool).toEqualTypeOf<pg.Pool>()
class AuditedClient extends pg.Client {}
expectTypeOf(withCallbackQueries(AuditedClient)).toEqualTypeOf<typeof AuditedClient>()
expectTypeOf<typeof pg.Client>().toMatchTypeOf<PgClientClass>()

// @ts-expect-error: a pool is not a client class
withCallbackQueries(pool)
// @ts-expect-error: nor is a client
withCallbackQueries(new pg.Client())
// @ts-expect-error: nor a class that is not a pg client
withCallbackQueries(class Other {})
