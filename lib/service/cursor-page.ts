import type { CursorPosition, CursorWindow } from '../query/query-tree.js'
import { andNode, compareNode } from '../schema/filter-nodes.js'
import { CURSOR_ERROR_TYPES, cursorValueDigest } from '../query/cursors.js'
import type { KeysetBound, QueryLayer, Repository } from '../contracts/repository.js'
import type { Row } from '../schema/fields.js'
import { jsonApiError } from '../errors/error-codes.js'
import type { CursorResult } from '../contracts/result-set.js'

/** A position whose values are all there (none elided). */
interface WholePosition extends CursorPosition {
  readonly values: readonly (string | null)[]
}

type FindKeyset = NonNullable<Repository['findKeyset']>

/** The bound of a position: rows after a gap just before a row include it, and so do rows before a gap just after it. */
function boundOf (position: WholePosition, side: 'after' | 'before'): KeysetBound {
  return { values: position.values, inclusive: position.edge === (side === 'after' ? 'before' : 'after') }
}

/**
 * A position with its elided values given back by its row (the id, its last value): the row's keys as they are now,
 * read as the page is (the layer's condition: the filter and every scope), one statement. When the row is no longer
 * in the collection, or a value it gives back is not the elided one (the row changed), the position is lost: a 400
 * that says to start again (a position by value is kept whatever happens to its row, but its values did not fit).
 */
async function wholePosition (findKeyset: FindKeyset, layer: QueryLayer, position: CursorPosition, parameter: string): Promise<WholePosition> {
  const { values } = position
  if (values.every((value) => value === null || typeof value === 'string')) return position as WholePosition
  const id = values[values.length - 1] as string
  const { resource } = layer
  const byId = compareNode(resource.idAttribute, 'eq', id)
  const found = await findKeyset({ ...layer, where: layer.where === undefined ? byId : andNode([layer.where, byId]), columns: [], include: [] }, { limit: 1, fromEnd: false })
  const now = found.positions[0]
  const same = now !== undefined && now.length === values.length && values.every((value, index) =>
    value === null || typeof value === 'string' ? value === now[index] : now[index] !== null && cursorValueDigest(now[index] as string) === value.digest)
  if (!same) {
    throw jsonApiError('FJA_INVALID_CURSOR', {
      detail: `${parameter} is no longer valid: the row it points at changed or left the collection, and its sort values were too long to keep in the cursor; start again from the first page`,
      source: { parameter },
      links: { type: CURSOR_ERROR_TYPES.invalidParameterValue },
    })
  }
  return Object.freeze({ values: now, edge: position.edge })
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
  const findKeyset: FindKeyset = repository.findKeyset.bind(repository)
  const [after, before] = await Promise.all([
    window.after === undefined ? undefined : wholePosition(findKeyset, layer, window.after, 'page[after]'),
    window.before === undefined ? undefined : wholePosition(findKeyset, layer, window.before, 'page[before]'),
  ])
  const fromEnd = before !== undefined && after === undefined
  const page = await findKeyset(layer, {
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
      prev: !previous ? undefined : first ?? { values: (after as WholePosition).values, edge: (after as WholePosition).edge === 'before' ? 'before' : 'after' },
      next: !following ? undefined : last ?? { values: (before as WholePosition).values, edge: (before as WholePosition).edge === 'after' ? 'after' : 'before' },
      rangeTruncated: after !== undefined && before !== undefined && more,
    },
  }
}
