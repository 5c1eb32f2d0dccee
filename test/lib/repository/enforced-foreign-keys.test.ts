// Which relationships the database's foreign keys enforce, as PostgreSQL's catalog says (pg_constraint, pg_trigger,
// row-level security): PostgreSQL only. MariaDB's catalog (information_schema) is read in mysql-engine.test.ts.
import t from 'tap'
import { onlyOn } from '../../helpers/engine.js'

const skip = onlyOn('postgres', 'reads PostgreSQL\'s catalog (pg_constraint, pg_trigger, row-level security)')
if (skip === false) await import('./enforced-foreign-keys.postgres.js')
else t.plan(0, skip)
