/**
 * Documents are written as JSON text (lib/document/json-text.ts, ResourceWriter.json): the text must be exactly what
 * `JSON.stringify` writes for the same document, whatever the values. Checked here against `JSON.stringify` itself,
 * on generated values and on resource objects of every example type with generated rows, fieldsets, linkage and base
 * URLs.
 */
import t from 'tap'
import fc from 'fast-check'
import { JsonText, documentJson, quote, valueJson } from '../../../lib/document/json-text.js'
import { ResourceWriter } from '../../../lib/document/resource-object.js'
import { resolveResources } from '../../../lib/schema/resolve-resources.js'
import { ruleSelectedAs } from '../../../lib/schema/resolved.js'
import { pageNode, queryTree } from '../../../lib/query/query-tree.js'
import { resourceKey, type IncludedPage, type ResultSet } from '../../../lib/contracts/result-set.js'
import { CursorCodec } from '../../../lib/query/cursors.js'
import { singleDocumentText } from '../../../lib/document/write-document.js'
import { resources } from '../../../examples/app/resources.js'
import { resourceObjectOf } from '../../helpers/resource-object-oracle.js'

/** Signs the cursors of the `next` links of included pages, for the writer and the oracle alike. */
const CODEC = new CursorCodec()

const RUNS = Number(process.env.FC_RUNS ?? 300)
const seed = process.env.FC_SEED === undefined ? Date.now() : Number(process.env.FC_SEED)
t.comment(`seed ${seed}`)
const settings = { numRuns: RUNS, seed }

/** Strings with what JSON escapes: quotes, backslashes, controls, lone and paired surrogates, non-ASCII. */
const oddString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('"', '\\', '\u0000', '\u001f', '\u007f', '\ud800', '\udfff', '😀', 'a\ud83dz', '</script>', '\u2028'),
)

t.test('quote and valueJson write what JSON.stringify writes', async (t) => {
  fc.assert(fc.property(oddString, (text) => quote(text) === JSON.stringify(text)), settings)
  fc.assert(fc.property(fc.oneof(fc.jsonValue(), oddString, fc.date({ noInvalidDate: true }), fc.constant(undefined), fc.double()), (value) => valueJson(value) === JSON.stringify(value)), settings)
  t.equal(quote('plain text'), '"plain text"')
  t.equal(quote('a"b'), '"a\\"b"')
  t.equal(quote('\ud800'), '"\\ud800"', 'a lone surrogate is escaped')
  t.equal(valueJson(undefined), undefined, 'undefined has no JSON: the member is left out')
})

t.test('documentJson writes what JSON.stringify writes, and JsonText parts as they are', async (t) => {
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' },
      fc.jsonValue({ maxDepth: 1 }), oddString, fc.constant(undefined), fc.date({ noInvalidDate: true }),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(oddString, tie('node'), { maxKeys: 4 })),
  })).node
  fc.assert(fc.property(value, (document) => documentJson(document) === (JSON.stringify(document) ?? 'null')), settings)
  fc.assert(fc.property(value, (inner) => {
    const json = JSON.stringify(inner)
    if (json === undefined) return true
    const document = { data: new JsonText(json), list: [new JsonText(json), 1], deep: { x: new JsonText(json) } }
    return documentJson(document) === JSON.stringify({ data: inner, list: [inner, 1], deep: { x: inner } })
  }), settings)
  t.equal(JSON.stringify({ data: new JsonText('{"a":[1,2]}') }), '{"data":{"a":[1,2]}}', 'JSON.stringify of a document with a JsonText part writes the same JSON')
  t.equal(documentJson({ a: undefined, b: () => 1, c: [undefined, () => 1], d: null }), '{"c":[null,null],"d":null}')
  t.equal(documentJson(Object.assign(Object.create(null), { a: 1 })), '{"a":1}', 'a null-prototype object is a plain object')
  t.equal(documentJson({ toJSON: () => 'x' }), '"x"', 'an object with toJSON is left to JSON.stringify')
})

t.test('a resource object written as text is JSON.stringify of the object, for every example type', async (t) => {
  const graph = resolveResources(resources)
  const columnValue = fc.oneof(
    fc.constant(null), fc.constant(undefined), oddString, fc.integer(), fc.double({ noNaN: true }), fc.boolean(),
    fc.array(oddString, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }),
  )
  for (const resource of graph.resources) {
    const columns = [...new Set(resource.allColumns)]
    const fieldNames = [...resource.visibleAttributes.map((attribute) => attribute.name), ...resource.relationships.keys()]
    const relationships = [...resource.relationships.values()]
    const arbitrary = fc.record({
      id: fc.oneof(fc.integer({ min: 0, max: 2147483647 }).map(String), oddString),
      row: fc.tuple(...columns.map(() => columnValue)),
      // Each read rule's decision for the row: 1, 0, or none (a row read without it).
      decisions: fc.tuple(...resource.readRuled.map(() => fc.constantFrom(1, 0, '1', undefined))),
      fields: fc.option(fc.subarray(fieldNames), { nil: undefined }),
      linkage: fc.tuple(...relationships.map(() => fc.option(fc.array(oddString, { maxLength: 3 }), { nil: undefined }))),
      // An included page of a to-many: how many related resources lie beyond it (none: it holds them all).
      beyond: fc.tuple(...relationships.map(() => fc.option(fc.nat(3), { nil: undefined }))),
      baseUrl: fc.constantFrom('', 'https://api.example.com/v1', 'http://h/"quoted"\\path', 'https://ünï.example/😀'),
      meta: fc.option(fc.record({ page: fc.record({ cursor: oddString }) }), { nil: undefined }),
    })
    fc.assert(fc.property(arbitrary, ({ id, row: values, decisions, fields, linkage, beyond, baseUrl, meta }) => {
      // Values that fit no declared format are skipped: only a date column gets a Date, say; derived attributes
      // compute from what they find.
      const row: Record<string, unknown> = {}
      columns.forEach((column, index) => { row[column] = values[index] })
      resource.readRuled.forEach((attribute, index) => { row[ruleSelectedAs(attribute)] = decisions[index] })
      const links = new Map<string, readonly string[]>()
      const pages = new Map<string, IncludedPage>()
      relationships.forEach((relationship, index) => {
        const ids = linkage[index]
        if (ids !== undefined) links.set(relationship.name, relationship.toMany ? ids : ids.slice(0, 1))
        const more = beyond[index]
        if (ids !== undefined && relationship.toMany && more !== undefined) {
          pages.set(relationship.name, { related: graph.getResource(relationship.targetType), count: ids.length + more, size: Math.max(1, ids.length) })
        }
      })
      const key = resourceKey(resource.type, id)
      const result: ResultSet = { primary: [], included: [], linkage: new Map([[key, links]]), ...(pages.size === 0 ? {} : { pages: new Map([[key, pages]]) }) }
      const query = queryTree({ page: pageNode(1, 10), fields: fields === undefined ? new Map() : new Map([[resource.type, new Set(fields)]]) })
      const item = { resource, id, row }
      let expected: string
      try {
        const object = resourceObjectOf(baseUrl, query, result, item, CODEC)
        expected = JSON.stringify(meta === undefined ? object : { ...object, meta })
      } catch (error) {
        // A value the attribute's reader refuses (an integer beyond 2^53, say): the text writer refuses it too.
        t.throws(() => new ResourceWriter(baseUrl, query, result, undefined, CODEC).json(item, meta), { message: (error as Error).message })
        return true
      }
      const written = new ResourceWriter(baseUrl, query, result, undefined, CODEC).json(item, meta).json
      if (written !== expected) throw new Error(`${resource.type}: ${written}\n≠ ${expected}`)
      return true
    }), { ...settings, numRuns: Math.ceil(RUNS / 3) })
    t.pass(`${resource.type}: the text is JSON.stringify of the object`)
  }
  const user = graph.getResource('user')
  const writer = new ResourceWriter('', queryTree({ page: pageNode(1, 10) }), { primary: [], included: [], linkage: new Map() })
  t.equal(writer.array([]).json, '[]')
  const rows = [{ resource: user, id: '1', row: { id: 1, name: 'a' } }, { resource: user, id: '2', row: { id: 2, name: 'b' } }]
  t.equal(writer.array(rows).json, JSON.stringify(rows.map((item) => resourceObjectOf('', queryTree({ page: pageNode(1, 10) }), { primary: [], included: [], linkage: new Map() }, item))), 'an array of resource objects')
})

t.test('a single-resource document written as text is JSON.stringify of the document object', async (t) => {
  const graph = resolveResources(resources)
  const user = graph.getResource('user')
  const computer = graph.getResource('computer')
  const query = queryTree({ page: pageNode(1, 10) })
  fc.assert(fc.property(
    fc.record({
      // Ids a URL can hold (encodeURIComponent refuses lone surrogates).
      id: fc.oneof(fc.integer({ min: 0, max: 2147483647 }).map(String), fc.string(), fc.constantFrom('"', '\\', '\u0000', '😀', '</script>', '\u2028')),
      name: fc.option(oddString, { nil: null }),
      included: fc.array(fc.record({ id: fc.string(), serial: oddString }), { maxLength: 3 }),
      baseUrl: fc.constantFrom('', 'https://api.example.com/v1', 'http://h/"quoted"\\path', 'https://ünï.example/😀'),
      path: fc.constantFrom('/users/1', '/computers/7/owner', '/a"b\\c'),
      related: fc.boolean(),
      empty: fc.boolean(),
    }),
    ({ id, name, included, baseUrl, path, related, empty }) => {
      const primary = empty ? [] : [{ resource: user, id, row: { id, name } }]
      const result: ResultSet = {
        primary,
        included: included.map((item) => ({ resource: computer, id: item.id, row: item })),
        linkage: new Map(),
      }
      const location = { baseUrl, path, query: {} }
      const writer = new ResourceWriter(baseUrl, query, result)
      const self = related || empty ? `${baseUrl}${path}` : writer.selfLink(user, id)
      const object: Record<string, unknown> = {
        data: empty ? null : resourceObjectOf(baseUrl, query, result, primary[0]),
        links: { self },
        jsonapi: { version: '1.0' },
      }
      if (included.length > 0) object.included = result.included.map((item) => resourceObjectOf(baseUrl, query, result, item))
      const written = singleDocumentText(result, query, location, related)
      if (written.text !== JSON.stringify(object)) throw new Error(`${written.text}\n≠ ${JSON.stringify(object)}`)
      if (written.self !== self) throw new Error(`self ${written.self} ≠ ${self}`)
      return true
    },
  ), settings)
  t.pass('the text and the self link are those of the document object')
})
