/**
 * A small demo data set for the example application (`SEED=1`).
 *
 * The seed runs in one transaction and only on an empty database (no users yet), so restarting with `SEED=1`
 * against a real PostgreSQL does not duplicate it.
 */
import type { CompiledQuery, Kysely } from 'kysely'
import { engineOf } from '../shared/engine.js'

/**
 * The rows of an `INSERT … RETURNING`, on every engine: Kysely's `execute()` keeps them only where its adapter says
 * the engine has RETURNING, and MariaDB has it for INSERT without Kysely's MySQL adapter saying so.
 */
async function returned<R> (db: Kysely<any>, query: { compile: () => CompiledQuery<R> }): Promise<R[]> {
  return (await db.executeQuery(query.compile())).rows
}

export async function seed (db: Kysely<any>): Promise<void> {
  // A list of words: a `text[]` on PostgreSQL, a JSON array on SQLite and MariaDB/MySQL.
  const words = (list: string[]): unknown => engineOf(db) === 'postgres' ? list : JSON.stringify(list)
  await db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string | number>().as('count'))
      .executeTakeFirstOrThrow()
    if (Number(existing.count) > 0) return

    const [engineers] = await returned(trx, trx
      .insertInto('groups')
      .values({ name: 'Engineers' })
      .returning('id'))
    if (engineers === undefined) throw new Error('seed: the group was not inserted')
    await trx.insertInto('groups').values({ name: 'Designers' }).execute()

    // Every row names the same columns: SQLite has no DEFAULT in a multi-row VALUES (Kysely writes NULL there).
    const [ada, grace, linus] = await returned(trx, trx
      .insertInto('users')
      .values([
        {
          name: 'ada',
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada@example.com',
          age: 36,
          birth_date: '1815-12-10',
          gender: 'female',
          status: 'active',
          words: words(['analytical', 'engine']),
          group_id: engineers.id,
        },
        {
          name: 'grace',
          first_name: 'Grace',
          last_name: null,
          email: 'grace@example.com',
          age: 85,
          birth_date: '1906-12-09',
          gender: 'female',
          status: 'active',
          words: words(['cobol', 'compiler']),
          group_id: engineers.id,
        },
        {
          name: 'linus',
          email: null,
          age: null,
          status: 'inactive',
          words: words([]),
        },
      ])
      .returning('id'))
    if (ada === undefined || grace === undefined || linus === undefined) throw new Error('seed: users were not inserted')

    await trx
      .insertInto('computers')
      .values([
        { serial: 'AE-1815', name: 'Difference Engine', owner_id: ada.id },
        { serial: 'UNIVAC-1', name: 'UNIVAC I', owner_id: grace.id },
        { serial: 'MARK-2', name: 'Harvard Mark II', owner_id: grace.id },
        { serial: null, name: 'Spare laptop', owner_id: null },
      ])
      .execute()

    await trx
      .insertInto('user_bios')
      .values({ birth_city: 'London', favourite_movies: 'Metropolis', user_id: ada.id })
      .execute()

    await trx
      .insertInto('posts')
      .values([
        { title: 'Notes on the Analytical Engine', body: 'The engine weaves algebraic patterns.', user_id: ada.id },
        { title: 'Hello', body: '', user_id: ada.id },
        { title: 'A bug in the relay', body: 'First actual case of bug being found.', user_id: grace.id },
      ])
      .execute()

    await trx.insertInto('workplaces').values({ name: 'Harvard Computation Lab', user_id: grace.id }).execute()

    const [alice, bob] = await returned(trx, trx
      .insertInto('parents')
      .values([{ name: 'Alice' }, { name: 'Bob' }])
      .returning('id'))
    const [carol, dave] = await returned(trx, trx
      .insertInto('children')
      .values([{ name: 'Carol' }, { name: 'Dave' }])
      .returning('id'))
    if (alice === undefined || bob === undefined || carol === undefined || dave === undefined) {
      throw new Error('seed: parents or children were not inserted')
    }

    await trx
      .insertInto('parent_to_child_associations')
      .values([
        { parent_id: alice.id, child_id: carol.id, extra_data: 'mother' },
        { parent_id: alice.id, child_id: dave.id, extra_data: null },
        { parent_id: bob.id, child_id: carol.id, extra_data: 'father' },
      ])
      .execute()

    await trx
      .insertInto('photos')
      // Serialized explicitly: `pg` would send a JavaScript array as a PostgreSQL array, not as JSON.
      .values({ name: 'Sunset', words: JSON.stringify({ sky: 'orange', tags: ['sea', 'evening'] }) })
      .execute()

    // Private notes: each is visible only with `X-User-Id` naming its owner.
    await trx
      .insertInto('notes')
      .values([
        { text: 'Bernoulli numbers: check the table again', owner_id: ada.id },
        { text: 'Find the moth', owner_id: grace.id },
      ])
      .execute()
  })
}
