import { CompiledQuery, type Kysely } from 'kysely'
import type { Row } from '../../schema/fields.js'

/**
 * What the engines without PostgreSQL's own means (SQLite, MariaDB/MySQL) do in their place: `match` as "contains
 * every word", unpaged reads window by window, exact counts where PostgreSQL estimates.
 */

/** The words of a `match` query, lowercased, as one JSON array: what `match` binds where the engine emulates it. */
export function matchWords (query: string): string {
  return JSON.stringify(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
}

/**
 * The rows of a SELECT, `size` at a time, each window its own statement (`LIMIT`/`OFFSET`) within the transaction:
 * the scan's transaction (a snapshot) keeps the windows of one read consistent.
 */
export async function * windowBatches (db: Kysely<any>, select: (window?: { limit: number, offset: number }) => CompiledQuery, size: number): AsyncIterable<Row[]> {
  for (let offset = 0; ; offset += size) {
    const { rows } = await db.executeQuery<Row>(select({ limit: size, offset }))
    if (rows.length > 0) yield rows
    if (rows.length < size) return
  }
}

/** The exact count of a SELECT's rows, in place of an estimate: `select count(*) as fja_count from (…) as fja_rows`. */
export function countEstimate (select: CompiledQuery): CompiledQuery<Record<string, unknown>> {
  return CompiledQuery.raw(`select count(*) as fja_count from (${select.sql}) as fja_rows`, [...select.parameters]) as CompiledQuery<Record<string, unknown>>
}

/** The rows a {@link countEstimate} counted. */
export function countedRows (rows: ReadonlyArray<Record<string, unknown>>): number {
  return Number(rows[0]?.fja_count ?? 0)
}
