/**
 * The keys an options or declaration object may have, and the messages for the ones it may not: an unknown key is a
 * mistake (a typo, an option of another object) that fails at registration, with the closest known key suggested.
 */

/** Every key of any member of a union (`keyof` of a union gives only the keys common to all members). */
export type KeysOfUnion<T> = T extends unknown ? keyof T : never

/**
 * A list of exactly the keys of `T`: `keyList<T>()(['a', 'b'])` does not compile when a key of `T` is missing (the
 * error names it) or when a listed key is not one of `T`. Keeps the runtime lists and the interfaces in step.
 */
export function keyList<T> () {
  return function list<const K extends readonly (KeysOfUnion<T> & string)[]> (
    keys: K & ([Exclude<KeysOfUnion<T>, K[number]>] extends [never] ? unknown : { readonly missingKeys: Exclude<KeysOfUnion<T>, K[number]> }),
  ): K {
    return keys
  }
}

/** The edit distance of two strings (optimal string alignment: a swap of two neighbours counts as one edit). */
function distance (a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}

/**
 * The candidate a mistyped name most likely meant, or undefined when none is close: case is ignored, up to one
 * edit in three characters (at least one, at most three) is a typo, and so is a prefix of three characters or more.
 */
export function closestName (name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase()
  const limit = Math.min(3, Math.max(1, Math.floor(lower.length / 3)))
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    if (candidate === name) continue
    const other = candidate.toLowerCase()
    // A name cut short or run on (`allow` for `allowed`) is a typo too.
    const prefix = Math.min(lower.length, other.length) >= 3 && (other.startsWith(lower) || lower.startsWith(other))
    const d = prefix ? Math.min(1, distance(lower, other)) : distance(lower, other)
    if (d <= limit && d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/** ` (did you mean 'x'?)`, or nothing when no candidate is close. */
export function didYouMean (name: string, candidates: Iterable<string>): string {
  const closest = closestName(name, candidates)
  return closest === undefined ? '' : ` (did you mean '${closest}'?)`
}

/** The first own key of `object` that is not in `known`, if any. */
export function unknownKey (object: object, known: readonly string[]): string | undefined {
  return Object.keys(object).find((key) => !known.includes(key))
}

/**
 * `'maxSzie' is not an option of 'pagination' (did you mean 'maxSize'?)`; without a close key, the message lists
 * the known ones.
 */
export function unknownKeyMessage (key: string, known: readonly string[], of: string): string {
  const suggestion = didYouMean(key, known)
  return `'${key}' is not an option of ${of}${suggestion === '' ? ` (its options: ${known.join(', ')})` : suggestion}`
}
