import type { CursorPosition, CursorWindow } from '../query/query-tree.js'
import type { KeysetBound, QueryLayer, Repository } from '../repository/repository.js'
import type { Row } from '../schema/declaration.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { CursorResult } from './result-set.js'

/** The bound of a position: rows after a gap just before a row include it, and so do rows before a gap just after it. */
function boundOf (position: CursorPosition, side: 'after' | 'before'): KeysetBound {
  return { values: position.values, inclusive: position.edge === (side === 'after' ? 'before' : 'after') }
}

/**
 * A page of a collection by cursor (the cursor pagination profile), in one statement of the repository: the `size`
 * rows right after `page[after]` (or from the start), or right before `page[before]` (read backwards from it), or
 * the first `size` rows between both (a range), with one row more to tell whether the page is the last in its
 * direction, and whether rows lie beyond the cursors the request gave. From that: the position of each row, and
 * those of the `prev` and `next` links, set only when rows lie in that direction.
 *
 * An empty page still links to what lies beyond its cursors: `prev` of an empty page after a row includes that row
 * (a position just after it), `next` of an empty page before a row includes it (a position just before it).
 */
export async function readCursorPage (repository: Repository, layer: QueryLayer, window: CursorWindow, size: number): Promise<{ rows: Row[]; result: CursorResult }> {
  if (repository.findKeyset === undefined) {
    throw jsonApiError('FJA_INVALID_QUERY_PARAMETER', {
      detail: 'cursor pagination needs a repository that reads keyset pages (findKeyset); paginate by number',
      source: { parameter: window.after !== undefined ? 'page[after]' : window.before !== undefined ? 'page[before]' : 'page[size]' },
    })
  }
  const { after, before } = window
  const fromEnd = before !== undefined && after === undefined
  const page = await repository.findKeyset(layer, {
    ...(after === undefined ? {} : { after: boundOf(after, 'after') }),
    ...(before === undefined ? {} : { before: boundOf(before, 'before') }),
    limit: size + 1,
    fromEnd,
  })
  let rows = page.rows
  let positions = page.positions
  const more = rows.length > size
  if (more) {
    // The extra row lies beyond the page in the direction of reading: at its start when read from the end.
    rows = fromEnd ? rows.slice(1) : rows.slice(0, size)
    positions = fromEnd ? positions.slice(1) : positions.slice(0, size)
  }
  const items: CursorPosition[] = positions.map((values) => Object.freeze({ values, edge: 'on' as const }))
  const first = items[0]
  const last = items[items.length - 1]
  const previous = fromEnd ? more : after !== undefined && page.earlier
  const following = fromEnd ? page.later : more || (before !== undefined && page.later)
  return {
    rows,
    result: {
      positions: items,
      prev: !previous ? undefined : first ?? { values: (after as CursorPosition).values, edge: (after as CursorPosition).edge === 'before' ? 'before' : 'after' },
      next: !following ? undefined : last ?? { values: (before as CursorPosition).values, edge: (before as CursorPosition).edge === 'after' ? 'after' : 'before' },
      rangeTruncated: after !== undefined && before !== undefined && more,
    },
  }
}
