import { sql, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SqlBool } from 'kysely'
import type { Row } from '../../schema/declaration.js'
import type { ResolvedRelationship, ResolvedResource } from '../../schema/resolved.js'
import type { ColumnValues, FindManyQuery, RelatedRow, Repository, RequiredRow } from '../repository.js'
import type { FilterNode } from '../../query/filter-nodes.js'
import { storageErrorFromPostgres } from './storage-error-from-postgres.js'
import { AliasCounter, compileFilter } from './compile-filter.js'
import { compileSort } from './compile-sort.js'

const OWNER = '__owner'
/** The alias of the resource's own table in reads. */
const ROOT = 'r0'

function ids (values: readonly string[]): RawBuilder<unknown> {
  return sql`any(${sql.val([...values])})`
}

/** Every required row exists. */
function exist (eb: ExpressionBuilder<any, any>, requires: readonly RequiredRow[]): Expression<SqlBool> {
  return eb.and(requires.map((required) => eb.exists(eb.selectFrom(`${required.resource.table} as q`)
    .select(sql.lit(1).as('one'))
    .where(`q.${required.resource.idColumn}`, '=', required.id))))
}

function stringId (value: unknown): string {
  return String(value)
}

/**
 * The default repository: PostgreSQL through the application's own Kysely instance. Identifiers come only from the
 * resource graph; every value is a bound parameter.
 */
export class KyselyRepository implements Repository {
  readonly #db: Kysely<any>

  constructor (db: Kysely<any>) {
    this.#db = db
  }

  async #run<T> (work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw storageErrorFromPostgres(error)
    }
  }

  #columns (resource: ResolvedResource, columns: readonly string[], alias?: string): string[] {
    const unique = [...new Set([resource.idColumn, ...columns])]
    return alias === undefined ? unique : unique.map((column) => `${alias}.${column}`)
  }

  #filtered (resource: ResolvedResource, filter: FilterNode | undefined) {
    const builder = this.#db.selectFrom(`${resource.table} as ${ROOT}`)
    return filter === undefined ? builder : builder.where((eb) => compileFilter(eb, filter, resource, ROOT, new AliasCounter()))
  }

  findMany (resource: ResolvedResource, query: FindManyQuery): Promise<Row[]> {
    return this.#run(async () => {
      let builder = this.#filtered(resource, query.filter).select(this.#columns(resource, query.columns, ROOT))
      for (const key of query.sort) builder = builder.orderBy(compileSort(key, resource, ROOT), key.descending ? 'desc' : 'asc')
      if (!query.sort.some((key) => key.path.length === 0 && key.attribute === resource.idAttribute)) {
        builder = builder.orderBy(`${ROOT}.${resource.idColumn}`, 'asc')
      }
      if (query.limit !== undefined) builder = builder.limit(query.limit)
      if (query.offset > 0) builder = builder.offset(query.offset)
      return await builder.execute()
    })
  }

  count (resource: ResolvedResource, filter: FilterNode | undefined): Promise<number> {
    return this.#run(async () => {
      const row = await this.#filtered(resource, filter)
        .select(sql<string>`count(*)`.as('count'))
        .executeTakeFirstOrThrow()
      return Number(row.count)
    })
  }

  findById (resource: ResolvedResource, id: string, columns: readonly string[]): Promise<Row | undefined> {
    return this.#run(() => this.#db.selectFrom(resource.table)
      .select(this.#columns(resource, columns))
      .where(resource.idColumn, '=', id)
      .executeTakeFirst())
  }

  existingIds (resource: ResolvedResource, values: readonly string[]): Promise<Set<string>> {
    if (values.length === 0) return Promise.resolve(new Set())
    return this.#run(async () => {
      const rows = await this.#db.selectFrom(resource.table)
        .select(resource.idColumn)
        .where(resource.idColumn, '=', ids(values))
        .execute()
      return new Set(rows.map((row) => stringId(row[resource.idColumn])))
    })
  }

  findRelated (
    owner: ResolvedResource,
    relationship: ResolvedRelationship,
    target: ResolvedResource,
    ownerIds: readonly string[],
    columns: readonly string[],
  ): Promise<RelatedRow[]> {
    if (ownerIds.length === 0) return Promise.resolve([])
    return this.#run(async () => {
      const storage = relationship.storage
      const selected = this.#columns(target, columns, 't')
      let rows: Row[]
      if (storage.kind === 'foreign-key') {
        rows = await this.#db.selectFrom(`${owner.table} as o`)
          .innerJoin(`${target.table} as t`, `t.${target.idColumn}`, `o.${storage.column}`)
          .select([...selected, `o.${owner.idColumn} as ${OWNER}`])
          .where(`o.${owner.idColumn}`, '=', ids(ownerIds))
          .orderBy(`t.${target.idColumn}`)
          .execute()
      } else if (storage.kind === 'inverse') {
        rows = await this.#db.selectFrom(`${target.table} as t`)
          .select([...selected, `t.${storage.column} as ${OWNER}`])
          .where(`t.${storage.column}`, '=', ids(ownerIds))
          .orderBy(`t.${target.idColumn}`)
          .execute()
      } else {
        rows = await this.#db.selectFrom(`${storage.table} as j`)
          .innerJoin(`${target.table} as t`, `t.${target.idColumn}`, `j.${storage.targetKey}`)
          .select([...selected, `j.${storage.sourceKey} as ${OWNER}`])
          .where(`j.${storage.sourceKey}`, '=', ids(ownerIds))
          .orderBy(`t.${target.idColumn}`)
          .execute()
      }
      // The owner column stays in the row: nothing reads it but this.
      return rows.map((row) => ({ ownerId: stringId(row[OWNER]), row }))
    })
  }

  insert (resource: ResolvedResource, values: ColumnValues, id: string | undefined, columns: readonly string[], requires: readonly RequiredRow[] = []): Promise<Row | undefined> {
    return this.#run(async () => {
      const row = id === undefined ? values : { ...values, [resource.idColumn]: id }
      const names = Object.keys(row)
      const returning = this.#columns(resource, columns)
      if (requires.length > 0 && names.length > 0) {
        // INSERT … SELECT <values> WHERE EXISTS …: PostgreSQL types the parameters from the target columns.
        return await this.#db.insertInto(resource.table)
          .columns(names)
          .expression(this.#db.selectNoFrom(names.map((name) => sql.val(row[name]).as(name))).where((eb) => exist(eb, requires)))
          .returning(returning)
          .executeTakeFirst()
      }
      const builder = names.length === 0
        ? this.#db.insertInto(resource.table).defaultValues()
        : this.#db.insertInto(resource.table).values(row)
      return await builder.returning(returning).executeTakeFirstOrThrow()
    })
  }

  update (resource: ResolvedResource, id: string, values: ColumnValues, columns: readonly string[], requires: readonly RequiredRow[] = []): Promise<Row | undefined> {
    if (Object.keys(values).length === 0) return this.findById(resource, id, columns)
    return this.#run(async () => {
      let builder = this.#db.updateTable(resource.table)
        .set(values)
        .where(resource.idColumn, '=', id)
      if (requires.length > 0) builder = builder.where((eb) => exist(eb, requires))
      return await builder.returning(this.#columns(resource, columns)).executeTakeFirst()
    })
  }

  delete (resource: ResolvedResource, id: string): Promise<boolean> {
    return this.#run(async () => {
      const result = await this.#db.deleteFrom(resource.table)
        .where(resource.idColumn, '=', id)
        .executeTakeFirst()
      return result.numDeletedRows > 0n
    })
  }

  replaceLinks (owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource, ownerId: string, targetIds: readonly string[]): Promise<void> {
    return this.#run(async () => {
      const storage = relationship.storage
      if (storage.kind === 'foreign-key') {
        await this.#db.updateTable(owner.table)
          .set({ [storage.column]: targetIds[0] ?? null })
          .where(owner.idColumn, '=', ownerId)
          .execute()
        return
      }
      if (storage.kind === 'inverse') {
        let unlink = this.#db.updateTable(target.table)
          .set({ [storage.column]: null })
          .where(storage.column, '=', ownerId)
        if (targetIds.length > 0) unlink = unlink.where(target.idColumn, '<>', sql`all(${sql.val([...targetIds])})`)
        await unlink.execute()
      } else {
        let unlink = this.#db.deleteFrom(storage.table).where(storage.sourceKey, '=', ownerId)
        if (targetIds.length > 0) unlink = unlink.where(storage.targetKey, '<>', sql`all(${sql.val([...targetIds])})`)
        await unlink.execute()
      }
      await this.addLinks(owner, relationship, target, ownerId, targetIds)
    })
  }

  addLinks (owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource, ownerId: string, targetIds: readonly string[]): Promise<void> {
    if (targetIds.length === 0) return Promise.resolve()
    return this.#run(async () => {
      const storage = relationship.storage
      if (storage.kind === 'foreign-key') {
        await this.replaceLinks(owner, relationship, target, ownerId, targetIds)
      } else if (storage.kind === 'inverse') {
        await this.#db.updateTable(target.table)
          .set({ [storage.column]: ownerId })
          .where(target.idColumn, '=', ids(targetIds))
          .execute()
      } else {
        const present = await this.#db.selectFrom(storage.table)
          .select(storage.targetKey)
          .where(storage.sourceKey, '=', ownerId)
          .where(storage.targetKey, '=', ids(targetIds))
          .execute()
        const linked = new Set(present.map((row) => stringId(row[storage.targetKey])))
        const missing = [...new Set(targetIds)].filter((targetId) => !linked.has(targetId))
        if (missing.length === 0) return
        await this.#db.insertInto(storage.table)
          .values(missing.map((targetId) => ({ ...storage.values, [storage.sourceKey]: ownerId, [storage.targetKey]: targetId })))
          .execute()
      }
    })
  }

  removeLinks (owner: ResolvedResource, relationship: ResolvedRelationship, target: ResolvedResource, ownerId: string, targetIds: readonly string[]): Promise<void> {
    if (targetIds.length === 0) return Promise.resolve()
    return this.#run(async () => {
      const storage = relationship.storage
      if (storage.kind === 'foreign-key') {
        await this.#db.updateTable(owner.table)
          .set({ [storage.column]: null })
          .where(owner.idColumn, '=', ownerId)
          .where(storage.column, '=', ids(targetIds))
          .execute()
      } else if (storage.kind === 'inverse') {
        await this.#db.updateTable(target.table)
          .set({ [storage.column]: null })
          .where(storage.column, '=', ownerId)
          .where(target.idColumn, '=', ids(targetIds))
          .execute()
      } else {
        await this.#db.deleteFrom(storage.table)
          .where(storage.sourceKey, '=', ownerId)
          .where(storage.targetKey, '=', ids(targetIds))
          .execute()
      }
    })
  }

  transaction<T> (work: (repository: Repository) => Promise<T>): Promise<T> {
    if (this.#db.isTransaction) return work(this)
    return this.#db.transaction().execute((trx) => work(new KyselyRepository(trx)))
  }
}
