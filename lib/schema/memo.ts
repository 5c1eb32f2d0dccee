/**
 * Values that later stages derive from one resolved resource (its filter builder, its selections, the templates of
 * its resource objects, the keys of its statements, …), computed once and kept with the resource, so with the
 * registration that resolved it: two registrations never share or evict each other's entries, and nothing is kept
 * in module scope.
 *
 * Entries are kept by a namespace (one per kind of value, a constant of the stage that derives it) and a key that is
 * a value, a string that says everything the derived value depends on besides the resource — never an object's
 * identity. So a derived value is the same whatever object it was asked for with, and a namespace whose keys come
 * from requests (fieldsets, query strings) is bounded: at most `limit` entries, the oldest going first.
 */
export class Memo {
  readonly #namespaces = new Map<string, Map<string, unknown>>()
  readonly #limit: number

  constructor (limit = 256) {
    this.#limit = limit
  }

  /** The value kept for `key` in `namespace`, made by `make` (and kept) the first time. */
  get<T> (namespace: string, key: string, make: () => T): T {
    let entries = this.#namespaces.get(namespace)
    if (entries === undefined) {
      entries = new Map()
      this.#namespaces.set(namespace, entries)
    }
    const known = entries.get(key)
    if (known !== undefined) return known as T
    const value = make()
    if (entries.size >= this.#limit) entries.delete(entries.keys().next().value as string)
    entries.set(key, value)
    return value
  }

  /** How many entries `namespace` keeps (for tests of the bound). */
  size (namespace: string): number {
    return this.#namespaces.get(namespace)?.size ?? 0
  }
}
