import { CompiledQuery, type DatabaseConnection, type TransactionSettings } from 'kysely'

/** How an engine writes what {@link TransactionStatements} sends: its identifier quote, its release command. */
export interface SavepointSyntax {
  /** `"` (PostgreSQL, SQLite) or `` ` `` (MariaDB/MySQL). */
  readonly quote: '"' | '`'
  /** `release` (PostgreSQL, SQLite) or `release savepoint` (MariaDB/MySQL). */
  readonly release: 'release' | 'release savepoint'
}

/**
 * The part of Kysely's `Driver` contract the library's drivers share: ending a transaction and its savepoints, as
 * statements on the transaction's connection (a savepoint's name quoted as the engine quotes an identifier). Each
 * driver begins its transactions itself (the engines differ there), with the {@link characteristics} asked for.
 */
export abstract class TransactionStatements {
  readonly #syntax: SavepointSyntax

  constructor (syntax: SavepointSyntax) {
    this.#syntax = syntax
  }

  /** The characteristics a transaction asks for (`isolation level …`, `read only`), in the order SQL writes them. */
  protected characteristics (settings: TransactionSettings): string[] {
    return [
      ...(settings.isolationLevel === undefined ? [] : [`isolation level ${settings.isolationLevel}`]),
      ...(settings.accessMode === undefined ? [] : [settings.accessMode]),
    ]
  }

  async commitTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction (connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async savepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(this.#named('savepoint', name))
  }

  async rollbackToSavepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(this.#named('rollback to', name))
  }

  async releaseSavepoint (connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(this.#named(this.#syntax.release, name))
  }

  #named (command: string, name: string): CompiledQuery {
    const quote = this.#syntax.quote
    return CompiledQuery.raw(`${command} ${quote}${name.replaceAll(quote, quote + quote)}${quote}`)
  }
}
