import { RowsQuery } from '../../lib/database/rows-query.js'

/** How many statements were sent as the library's query object (RowsQuery) since `countRowsQueries`. */
export interface RowsQueryCount {
  readonly count: number
}

/** Counts the statements sent as RowsQuery, to tell the library's fast path from pg's own Query; `teardown` stops. */
export function countRowsQueries (teardown: (fn: () => void) => void): RowsQueryCount {
  const counted = { count: 0 }
  const submit = RowsQuery.prototype.submit
  RowsQuery.prototype.submit = function countedSubmit (this: RowsQuery, ...args: Parameters<typeof submit>) {
    counted.count++
    return submit.apply(this, args)
  }
  teardown(() => { RowsQuery.prototype.submit = submit })
  return counted
}
