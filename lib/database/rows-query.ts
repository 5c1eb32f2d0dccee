import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { PoolClient, QueryResult } from 'pg'

/**
 * A statement sent on a `pg` connection as a custom query (pg's `Submittable`, the interface `pg-cursor` uses), that
 * answers its rows and nothing else, decoding them with a decoder kept per statement text.
 *
 * What `pg`'s own `Query` does for every statement and this does once per statement text: look up a type parser per
 * column (`Result.addFields`: about 3 µs of each `GET /users/1` of the benchmark, the largest single function of
 * `pg` in its profile), and build each row by storing its columns one by one under their names. Per statement it
 * also leaves out an `EventEmitter`, a `Result` and their events (`row`, `end`), which nothing here listens to.
 *
 * A decoder is reused only for a row description equal to the one it was made for (the same column names and types,
 * in order): a changed table or a changed type gets a new one. Results are asked for as text, as pg asks for them
 * unless its client is made with `binary: true` (such a client keeps pg's `Query`). The type parsers are the
 * connection's own (`client.getTypeParser`: the pool's `types`, else pg's global ones), read when a decoder is made: a
 * parser changed with `pg.types.setTypeParser` after a statement text has run is not seen by that text's decoder.
 */

/** The field of a row description, as `pg-protocol` parses it (its format is text: see the module's comment). */
interface FieldDescription {
  readonly name: string
  readonly dataTypeID: number
}

/** What a decoder needs of a `pg` client. */
export interface TypeParserSource {
  getTypeParser (oid: number, format: 'text'): (value: string) => unknown
}

/** Converts one parameter the way `pg` does (`pg/lib/utils`'s `prepareValue`). */
export type PrepareValue = (value: unknown) => unknown

/** What a query needs of pg's connection (its `Connection`, or PGlite's stand-in for it). */
interface Connection {
  readonly stream: { cork?: () => void, uncork?: () => void }
  parse (message: { text: string, name?: string, types?: unknown[] }): void
  bind (message: { portal?: string, statement?: string, values: unknown[] }): void
  describe (message: { type: 'P' | 'S', name?: string }): void
  execute (message: { portal?: string, rows?: number }): void
  sync (): void
  query (text: string): void
  sendCopyFail (message: string): void
}

/** Decodes the data rows of one row description into objects. */
class RowDecoder {
  readonly #names: readonly string[]
  readonly #types: readonly number[]
  readonly decode: RowBuilder

  constructor (fields: readonly FieldDescription[], types: TypeParserSource) {
    this.#names = fields.map((field) => field.name)
    this.#types = fields.map((field) => field.dataTypeID)
    this.decode = rowBuilder(this.#names, this.#types.map((type) => types.getTypeParser(type, 'text')))
  }

  /** Whether this decoder was made for this row description. */
  fits (fields: readonly FieldDescription[]): boolean {
    const names = this.#names
    if (fields.length !== names.length) return false
    const types = this.#types
    for (let i = 0; i < fields.length; i++) {
      if (fields[i].dataTypeID !== types[i] || fields[i].name !== names[i]) return false
    }
    return true
  }
}

type RowBuilder = (fields: ReadonlyArray<string | null>) => Record<string, unknown>

/**
 * A function that builds the row of one row description from its raw values: an object literal with the columns as
 * its properties, in order, so that every row of a statement has the same shape from its first store. Names are
 * written as JSON string literals. A duplicate name keeps its last column, as in `pg`. A column named `__proto__`
 * (which an object literal would take as the prototype), or a process that refuses to make code from text
 * (`--disallow-code-generation-from-strings`), builds the rows by copying an empty row, as `pg` does.
 */
function rowBuilder (names: readonly string[], parsers: ReadonlyArray<(value: string) => unknown>): RowBuilder {
  if (names.includes('__proto__')) return copyingBuilder(names, parsers)
  const members = names.map((name, i) => `${JSON.stringify(name)}: f[${i}] === null ? null : p[${i}](f[${i}])`)
  let build: (parsers: unknown) => RowBuilder
  try {
    build = new Function('p', `return function decodeRow (f) { return { ${members.join(', ')} } }`) as typeof build
  } catch {
    return copyingBuilder(names, parsers)
  }
  return build(parsers)
}

function copyingBuilder (names: readonly string[], parsers: ReadonlyArray<(value: string) => unknown>): RowBuilder {
  const empty: Record<string, unknown> = Object.create(null)
  for (const name of names) empty[name] = null
  const template = { ...empty }
  return (fields) => {
    const row = { ...template }
    for (let i = 0; i < fields.length; i++) {
      const value = fields[i]
      row[names[i]] = value === null ? null : parsers[i](value)
    }
    return row
  }
}

/** The decoders of the statement texts a pool has run, at most {@link LIMIT}, the oldest dropped first. */
export class RowDecoders {
  static readonly LIMIT = 1000
  readonly #decoders = new Map<string, RowDecoder>()

  /** The decoder of a statement text for its row description: the kept one when it fits, else a new one, kept. */
  of (text: string, fields: readonly FieldDescription[], types: TypeParserSource): RowDecoder {
    const kept = this.#decoders.get(text)
    if (kept !== undefined && kept.fits(fields)) return kept
    const made = new RowDecoder(fields, types)
    if (kept === undefined && this.#decoders.size >= RowDecoders.LIMIT) this.#decoders.delete(this.#decoders.keys().next().value as string)
    this.#decoders.set(text, made)
    return made
  }

  get size (): number {
    return this.#decoders.size
  }
}

/**
 * The answer of a {@link RowsQuery}: an error, or its rows and its command tag (`SELECT 3`, `UPDATE 1`,
 * `INSERT 0 1`; none for an empty query).
 */
export type RowsCallback = (error: Error | null, rows?: unknown[], tag?: string) => void

/**
 * One statement that answers its rows (see the module's comment). `pg`'s client calls `submit` when the connection is
 * free, then one handler per message of the server. `callback` answers once, but for a read timeout of the client
 * (`query_timeout`), which answers itself and leaves the statement to finish: the caller keeps the first answer.
 */
export class RowsQuery {
  /** Set by `pg`'s client when it wraps the answer (its `query_timeout`). */
  callback: RowsCallback
  readonly text: string
  readonly values: unknown[]
  readonly #decoders: RowDecoders
  readonly #types: TypeParserSource
  readonly #prepareValue: PrepareValue
  readonly #rows: unknown[] = []
  #decoder: RowDecoder | undefined
  #failure: Error | undefined
  #tag: string | undefined

  constructor (text: string, values: unknown[], decoders: RowDecoders, types: TypeParserSource, prepareValue: PrepareValue, callback: RowsCallback) {
    this.text = text
    this.values = values
    this.#decoders = decoders
    this.#types = types
    this.#prepareValue = prepareValue
    this.callback = callback
  }

  /**
   * Sends the statement: the extended protocol with its parameters (unnamed, as `pg` does), the simple one without.
   * The parameters are converted before anything is sent: one that cannot be (a cyclic object, a `toPostgres` that
   * throws) is this statement's error, and the connection is left as it was (`pg`'s client answers it, then serves
   * the next statement).
   */
  submit (connection: Connection): Error | null {
    if (this.values.length === 0) {
      connection.query(this.text)
      return null
    }
    const values = new Array<unknown>(this.values.length)
    try {
      for (let i = 0; i < values.length; i++) values[i] = this.#prepareValue(this.values[i])
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error))
    }
    const stream = connection.stream
    // One write for the messages of a statement, as pg's own Query corks its connection.
    stream.cork?.()
    try {
      connection.parse({ text: this.text })
      connection.bind({ values })
      connection.describe({ type: 'P' })
      connection.execute({})
      connection.sync()
    } finally {
      stream.uncork?.()
    }
    return null
  }

  handleRowDescription (message: { fields: readonly FieldDescription[] }): void {
    try {
      this.#decoder = this.#decoders.of(this.text, message.fields, this.#types)
    } catch (error) {
      // A type parser source that throws: the statement's answer once the server is done with it (this runs inside
      // pg's handler of the socket's data, where a throw would be the process's).
      this.#failure = error as Error
    }
  }

  handleDataRow (message: { fields: ReadonlyArray<string | null> }): void {
    if (this.#failure !== undefined) return
    try {
      this.#rows.push(this.#decoder!.decode(message.fields))
    } catch (error) {
      // A value a type parser refused: the statement's answer once the server is done with it.
      this.#failure = error as Error
    }
  }

  handleCommandComplete (message: { text?: string }): void {
    this.#tag = message.text
  }

  handleEmptyQuery (): void {}

  handlePortalSuspended (): void {}

  handleCopyInResponse (connection: Connection): void {
    connection.sendCopyFail('fastify-jsonapi: a statement of the repository cannot copy')
  }

  handleCopyData (): void {}

  handleError (error: Error): void {
    const failure = this.#failure ?? error
    this.#failure = undefined
    this.callback(failure)
  }

  handleReadyForQuery (): void {
    if (this.#failure !== undefined) {
      this.handleError(this.#failure)
      return
    }
    this.callback(null, this.#rows, this.#tag)
  }
}

/** A statement as the sender needs it: Kysely's `CompiledQuery` is one. */
export interface Statement {
  readonly sql: string
  readonly parameters: readonly unknown[]
}

/**
 * Sends one statement on a `pg` client and calls `answer` exactly once, with its error or its rows and command tag:
 * the first answer counts (pg may answer a query it could not send, its parameters did not serialize, with an error,
 * then again when the connection is ready; a client's `query_timeout` answers before the server), and a throw while
 * sending is an answer too.
 */
export type StatementSender = (client: PoolClient, statement: Statement, answer: RowsCallback) => void

/**
 * The sender of the library's fast path: a statement goes as a {@link RowsQuery} (rows decoded by a decoder kept per
 * statement text) on a `pg` client that takes it (one with its protocol connection, neither pipelining nor asking for
 * binary results), else, and without `prepareValue`, as text with a callback through pg's own `Query`.
 */
export function statementSender (prepareValue: PrepareValue | undefined): StatementSender {
  const decoders = new RowDecoders()
  return function send (client, statement, answer) {
    let answered = false
    const once: RowsCallback = (failure, rows, tag) => {
      if (answered) return
      answered = true
      answer(failure, rows, tag)
    }
    try {
      const loose = client as PoolClient & { connection?: unknown, pipeline?: boolean, binary?: boolean }
      if (prepareValue === undefined || loose.connection === undefined || loose.pipeline === true || loose.binary === true) {
        client.query(statement.sql, statement.parameters as unknown[], (failure: Error | undefined, result: QueryResult) => {
          if (failure) once(failure)
          else once(null, result.rows, tagOf(result))
        })
      } else {
        client.query(new RowsQuery(statement.sql, statement.parameters as unknown[], decoders, client, prepareValue, once) as never)
      }
    } catch (thrown) {
      once(thrown as Error)
    }
  }
}

/** The command tag of a result of pg's own `Query`, as the server wrote it (`INSERT 0 1`). */
function tagOf (result: QueryResult): string | undefined {
  if (typeof result.command !== 'string' || result.command === '') return undefined
  return `${result.command === 'INSERT' ? 'INSERT 0' : result.command} ${result.rowCount ?? 0}`
}

/**
 * `pg`'s own conversion of parameters (`prepareValue` of `pg/lib/utils`: dates, arrays, JSON, buffers, `toPostgres`),
 * which a {@link RowsQuery} hands to the connection as `pg`'s `Query` does; undefined when this `pg` has none (the
 * statements are then sent as text, through pg's `Query`). Required as `pg` itself is (CommonJS), resolved from here:
 * as `pg/lib/utils`, or, where the package's `exports` hide its `lib/` (pg 8.15 to 8.16.2), as the `utils.js` beside
 * the file `pg` resolves to.
 */
export function loadPrepareValue (require: NodeJS.Require = createRequire(import.meta.url)): PrepareValue | undefined {
  const loads = [
    () => require('pg/lib/utils') as unknown,
    () => require(join(dirname(require.resolve('pg')), 'utils.js')) as unknown,
  ]
  for (const load of loads) {
    try {
      const prepareValue = (load() as { prepareValue?: unknown } | undefined)?.prepareValue
      if (typeof prepareValue === 'function') return prepareValue as PrepareValue
    } catch {
      // the next way, or none
    }
  }
  return undefined
}

let warnedWithoutPrepareValue = false

/**
 * {@link loadPrepareValue}, with a process warning (`FJA_PG_FAST_PATH_UNAVAILABLE`, once per process) when this `pg`
 * has none: its statements then go through pg's own `Query`, which answers the same, more slowly.
 */
export function prepareValueOrWarn (load: () => PrepareValue | undefined = loadPrepareValue): PrepareValue | undefined {
  const prepareValue = load()
  if (prepareValue === undefined && !warnedWithoutPrepareValue) {
    warnedWithoutPrepareValue = true
    process.emitWarning('fastify-jsonapi: this `pg` has no `prepareValue` in `pg/lib/utils`: statements go through pg\'s own Query, which answers the same, more slowly (use pg 8.11 or later)', { code: 'FJA_PG_FAST_PATH_UNAVAILABLE' })
  }
  return prepareValue
}
