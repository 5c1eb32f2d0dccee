// A bad day of PostgreSQL: faults are 503s with Retry-After, serialization failures and deadlocks are retried, a
// statement timeout and a full server are 503s, terminated backends leave no partial write (database-faults.postgres.ts).
// Its fixture is PostgreSQL's own (plpgsql triggers raising SQLSTATEs, a sequence counting attempts, roles,
// pg_terminate_backend): it runs on PostgreSQL and PGlite. MariaDB's faults are in mariadb-faults.test.ts.
import t from 'tap'
import { onlyOn } from '../helpers/engine.js'

const skip = onlyOn('postgres', "PostgreSQL's fault tests (plpgsql triggers raising SQLSTATEs, roles, pg_terminate_backend); MariaDB's are in mariadb-faults.test.ts")
if (skip === false) await import('./database-faults.postgres.js')
else t.plan(0, skip)
