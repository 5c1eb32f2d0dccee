import t from 'tap'
import Kitsu from 'kitsu'
import { buildApp } from '../../examples/app/app.js'
import { openTestDatabase } from '../helpers/database.js'

const database = await openTestDatabase()
const app = await buildApp({ db: database.db })
const address = await app.listen({ port: 0, host: '127.0.0.1' })
t.teardown(async () => {
  await app.close()
  await database.close()
})
const db = database.db

// Types are singular (`user`) and paths plural (`/users`): no pluralizing, no case conversion, paths given as is.
const api = new Kitsu({ baseURL: address, pluralize: false, camelCaseTypes: false, resourceCase: 'none' })

/** What kitsu sent: method, URL, Content-Type and body of every request. */
const sent: Array<{ method: string; url: string; contentType: unknown; body: unknown }> = []
api.interceptors.request.use((config) => {
  sent.push({ method: String(config.method).toUpperCase(), url: String(config.url), contentType: config.headers['Content-Type'], body: config.data })
  return config
})

t.test('kitsu: create, link, include, update and delete', async (t) => {
  // Create a user. kitsu's `post` uses the model as both path and type, so `request` names each one.
  const created = await api.request({ method: 'POST', url: 'users', type: 'user', body: { name: 'ada', first_name: 'Ada', age: 36 } })
  t.equal(created.status, 201)
  t.match(created.headers['content-type'], /^application\/vnd\.api\+json/)
  t.equal(created.headers.location, '/users/1')
  t.match(created.data, { id: '1', type: 'user', name: 'ada', first_name: 'Ada', display_name: 'Ada', age: 36, status: 'active', words: [] })
  t.same(await db.selectFrom('users').select(['id', 'name', 'first_name', 'age']).execute(), [{ id: 1, name: 'ada', first_name: 'Ada', age: 36 }])

  // Create a computer linked to it: kitsu serializes `{ data: { type, id } }` members as relationships.
  const computer = await api.request({
    method: 'POST',
    url: 'computers',
    type: 'computer',
    body: { serial: 'AE-1815', name: 'analytical', owner: { data: { type: 'user', id: created.data.id } } },
  })
  t.equal(computer.status, 201)
  t.match(computer.data, { id: '1', type: 'computer', serial: 'AE-1815', name: 'analytical' })
  t.same(await db.selectFrom('computers').select(['id', 'serial', 'owner_id']).execute(), [{ id: 1, serial: 'AE-1815', owner_id: 1 }])

  // Fetch the user with its computers: kitsu deserializes the compound document into plain objects.
  const fetched = await api.get('users/1', { params: { include: 'computers' } })
  t.equal(fetched.status, 200)
  t.same(fetched.links, { self: '/users/1' })
  t.same(fetched.jsonapi, { version: '1.0' })
  t.match(fetched.data, { id: '1', type: 'user', name: 'ada', display_name: 'Ada' })
  t.equal(fetched.data.attributes, undefined, 'attributes are hoisted')
  t.same(fetched.data.computers.links, { self: '/users/1/relationships/computers', related: '/users/1/computers' })
  t.equal(fetched.data.computers.data.length, 1)
  t.match(fetched.data.computers.data[0], { id: '1', type: 'computer', serial: 'AE-1815', name: 'analytical' }, 'the included computer, linked')
  t.same(fetched.data.group, { links: { self: '/users/1/relationships/group', related: '/users/1/group' } }, 'relationships not included keep their links')

  const collection = await api.get('users', { params: { include: 'computers', fields: { user: 'name,computers', computer: 'serial' } } })
  t.same(collection.meta, { count: 1 })
  t.equal(collection.data.length, 1)
  t.same(collection.data[0].name, 'ada')
  t.equal(collection.data[0].age, undefined, 'sparse fieldset')
  t.same(collection.data[0].computers.data.map((item: { serial: string }) => item.serial), ['AE-1815'])

  // Update the user's name.
  const updated = await api.request({ method: 'PATCH', url: 'users/1', type: 'user', body: { id: '1', name: 'lovelace' } })
  t.equal(updated.status, 200)
  t.match(updated.data, { id: '1', type: 'user', name: 'lovelace', first_name: 'Ada', age: 36 })
  t.same(await db.selectFrom('users').select(['name', 'first_name']).execute(), [{ name: 'lovelace', first_name: 'Ada' }])

  // Delete the computer and the user: kitsu sends `Content-Type: application/vnd.api+json` and a body on DELETE.
  sent.length = 0
  const removedComputer = await api.delete('computers', 1)
  t.same(sent, [{ method: 'DELETE', url: 'computers/1', contentType: 'application/vnd.api+json', body: { data: { type: 'computers', id: '1' } } }], 'a JSON:API body on DELETE')
  t.equal(removedComputer.status, 200)
  t.same(removedComputer.meta, { message: 'Object successfully deleted' })
  t.same(await db.selectFrom('computers').selectAll().execute(), [])
  const removedUser = await api.delete('users', '1')
  t.equal(removedUser.status, 200)
  t.same(await db.selectFrom('users').selectAll().execute(), [])

  const gone = await api.get('users').then((response) => response.data)
  t.same(gone, [])
})

t.test('kitsu: errors come back as JSON:API error objects', async (t) => {
  const missing = await api.get('users/42').then(() => undefined, (error: { response?: { status: number }; errors?: unknown[] }) => error)
  t.equal(missing?.response?.status, 404)
  t.match(missing?.errors, [{ status: '404', code: 'FJA_RESOURCE_NOT_FOUND', title: 'Resource not found' }])
  const invalid = await api.request({ method: 'POST', url: 'users', type: 'user', body: { age: 'old' } })
    .then(() => undefined, (error: { response?: { status: number }; errors?: Array<{ code: string; source: unknown }> }) => error)
  t.equal(invalid?.response?.status, 422)
  t.same(invalid?.errors?.map((error) => [error.code, error.source]).sort(), [
    ['FJA_MISSING_FIELD', { pointer: '/data/attributes' }],
    ['FJA_VALIDATION', { pointer: '/data/attributes/age' }],
  ])
  t.same(await db.selectFrom('users').selectAll().execute(), [], 'nothing was written')
})
