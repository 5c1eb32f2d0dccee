import type { TestApp } from './test-app.js'

/**
 * Resets the database and inserts rows linked through every kind of relationship of the example app: users with
 * computers, bios, posts and a workplace, groups, and parents and children with their associations.
 */
export async function seedLinkedRows (api: TestApp): Promise<void> {
  await api.reset()
  await api.db.insertInto('groups').values([{ name: 'engineers' }, { name: 'artists' }]).execute()
  // One row at a time: each takes the defaults of the columns it leaves out (in a multi-row insert SQLite has no
  // DEFAULT, and Kysely writes NULL there).
  for (const user of [
    { name: 'ada', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org', age: 36, birth_date: '1815-12-10', gender: 'f', words: ['a', 'b'], group_id: 1, date_create: '2020-01-02' },
    { name: 'grace', first_name: 'Grace', group_id: 1, date_create: '2020-01-03' },
    { name: 'linus', date_create: '2020-01-04' },
  ]) await api.db.insertInto('users').values(user).execute()
  await api.db.insertInto('computers').values([
    { serial: 'A1', name: 'analytical', owner_id: 1 },
    { serial: 'B2', name: 'difference', owner_id: 1 },
    { serial: 'C3', name: 'harvard', owner_id: 2 },
    { serial: 'D4', name: 'spare', owner_id: null },
  ]).execute()
  await api.db.insertInto('user_bios').values([
    { birth_city: 'London', favourite_movies: 'none', user_id: 1 },
    { birth_city: 'New York', favourite_movies: null, user_id: 2 },
  ]).execute()
  await api.db.insertInto('posts').values([
    { title: 'hello', body: 'first', user_id: 1 },
    { title: 'again', body: 'second', user_id: 1 },
    { title: 'bugs', body: 'a moth', user_id: 2 },
  ]).execute()
  await api.db.insertInto('workplaces').values([{ name: 'lab', user_id: 1 }, { name: 'office', user_id: null }]).execute()
  await api.db.insertInto('parents').values([{ name: 'p1' }, { name: 'p2' }]).execute()
  await api.db.insertInto('children').values([{ name: 'c1' }, { name: 'c2' }, { name: 'c3' }]).execute()
  await api.db.insertInto('parent_to_child_associations').values([
    { parent_id: 1, child_id: 1, extra_data: 'one-one' },
    { parent_id: 1, child_id: 2, extra_data: 'one-two' },
    { parent_id: 2, child_id: 1, extra_data: null },
  ]).execute()
}
