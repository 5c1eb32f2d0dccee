import { ruleSelectedAs, selectedAs, type ResolvedAttribute, type ResolvedRelationship, type ResolvedResource } from '../schema/resolved.js'
import { readValue } from '../schema/value-codec.js'
import { keysetKeys, type QueryTree } from '../query/query-tree.js'
import { cursorContext, type CursorCodec } from '../query/cursors.js'
import { resourceKey, type IncludedPage, type ResourceRow, type ResultSet } from '../contracts/result-set.js'
import { selectionOf, type Selection } from '../contracts/selection.js'
import { JsonText, escaped, needsEscape, quote, valueJson } from './json-text.js'

/**
 * Where the writing of a resource object stands, for the text that comes next: right after the id, after a string
 * value whose closing quote is still to be written, or after any other value. Each fragment of a template exists
 * once per state, beginning with what that state still owes, so that every attribute costs two parts (its fragment
 * and its value): copying a concatenated document into the bytes sent costs per part.
 */
const AFTER_ID = 0
const AFTER_STRING = 1
const AFTER_VALUE = 2
type State = typeof AFTER_ID | typeof AFTER_STRING | typeof AFTER_VALUE
/** What each state still owes: the opening of the attributes, a closing quote, nothing. */
const OWED = ['","attributes":{', '"', ''] as const

/** A value per state (see {@link State}). */
type ByState<T = string> = readonly [T, T, T]

interface RelationshipEntry {
  readonly relationship: ResolvedRelationship
  /** `"computers":{"links":{"self":` */
  readonly member: string
  /** `/relationships/computers` and `/computers`, escaped for a JSON string. */
  readonly self: string
  readonly related: string
  /** `{"type":"computer","id":` */
  readonly identifier: string
  /** `{"type":"computer","id":"`: the identifier up to the id, which follows without its quotes */
  readonly identifierOpen: string
  /** `"},{"type":"computer","id":"`: between two ids of a to-many linkage written by one join */
  readonly between: string
}

/**
 * What is the same in every resource object of a type and fieldset, written once: the opening with the type, each
 * attribute's member name, each relationship's name and the ends of its links.
 */
interface Template {
  /** `{"type":"user","id":"` */
  readonly head: string
  /**
   * Each attribute with the fragment that comes before its value, per state: `plain` before a JSON value
   * (`,"age":`), `open` before a string written without its quotes (`,"name":"`).
   */
  readonly attributes: ReadonlyArray<{
    readonly plain: ByState
    readonly open: ByState
    readonly attribute: ResolvedAttribute
    /** For an attribute with a read rule: the name of the row's decision (see `QueryLayer.rules`). */
    readonly rule: string | undefined
  }>
  /** The resource path inside a JSON string: `/users/`. */
  readonly path: string
  /**
   * The rest of a resource object without linkage, per state, cut where its self link goes: joined by the self link,
   * it is `},"links":{"self":"…"},"relationships":{"computers":{"links":{"self":"…/relationships/computers",…}},…}}`.
   * One join writes it as one flat string, where concatenation would leave a dozen parts (the self link appears twice
   * per relationship).
   */
  readonly tails: ByState<readonly string[]>
  readonly relationships: readonly RelationshipEntry[]
}

/** The tail of a template (see {@link Template.tails}), its parts cut at the self link. */
function tailParts (relationships: readonly RelationshipEntry[], owed: string): string[] {
  const parts = [`${owed}},"links":{"self":"`]
  let part = '"}'
  if (relationships.length > 0) {
    part += ',"relationships":{'
    relationships.forEach((entry, index) => {
      parts.push(`${part}${index === 0 ? '' : ','}${entry.member}"`)
      parts.push(`${entry.self}","related":"`)
      part = `${entry.related}"}}`
    })
    part += '}'
  }
  parts.push(`${part}}`)
  return parts
}

function byState<T> (value: (state: State) => T): ByState<T> {
  return [value(AFTER_ID), value(AFTER_STRING), value(AFTER_VALUE)]
}

/** The template of a selection's resource objects, kept with its resource by the selection's key. */
function templateOf (resource: ResolvedResource, selection: Selection): Template {
  return resource.memo.get('resource-object-template', selection.key, () => {
    const relationships = selection.relationships.map((relationship): RelationshipEntry => ({
      relationship,
      member: `${quote(relationship.name)}:{"links":{"self":`,
      self: escaped(`/relationships/${relationship.name}`),
      related: escaped(`/${relationship.name}`),
      identifier: `{"type":${quote(relationship.targetType)},"id":`,
      identifierOpen: `{"type":${quote(relationship.targetType)},"id":"`,
      between: `"},{"type":${quote(relationship.targetType)},"id":"`,
    }))
    return {
      head: `{"type":${quote(resource.type)},"id":"`,
      attributes: selection.attributes.flatMap((name) => {
        const attribute = resource.attributes.get(name)
        if (attribute === undefined) return []
        const member = (state: State): string => `${OWED[state]}${state === AFTER_ID ? '' : ','}${quote(name)}:`
        const rule = resource.readRuled.includes(attribute) ? ruleSelectedAs(attribute) : undefined
        return [{ plain: byState(member), open: byState((state) => `${member(state)}"`), attribute, rule }]
      }),
      path: escaped(`${resource.path}/`),
      tails: byState((state) => tailParts(relationships, OWED[state])),
      relationships,
    }
  })
}

/** `,"data":…` of a relationship: the identifiers of `ids`, one join when no id needs escaping. */
function linkageJson (entry: RelationshipEntry, ids: readonly string[]): string {
  if (!entry.relationship.toMany) return ids.length === 0 ? ',"data":null' : `,"data":${entry.identifier}${quote(ids[0])}}`
  if (ids.length === 0) return ',"data":[]'
  if (!ids.some(needsEscape)) return `,"data":[${entry.identifierOpen}${ids.join(entry.between)}"}]`
  return `,"data":[${ids.map((id) => `${entry.identifier}${quote(id)}}`).join(',')}]`
}

/**
 * How much text a document may hold (the `maxDocumentLength` option): a writer counts the characters of the resource
 * objects it writes, and past `maxLength` throws what `tooLarge` makes, so that no document grows past the bound.
 */
export interface DocumentBudget {
  readonly maxLength: number
  readonly tooLarge: () => Error
}

/**
 * Renders resource objects for one request, reusing each type's selection. Resource objects are written straight to
 * JSON text ({@link ResourceWriter.json}), through a template per type and fieldset: the same text as
 * `JSON.stringify` of the resource object built as an object, member for member (the property tests compare it with
 * such an object, built by their oracle in `test/helpers/`).
 */
export class ResourceWriter {
  readonly #baseUrl: string
  /** The base URL inside a JSON string. */
  readonly #baseJson: string
  readonly #query: QueryTree
  readonly #result: ResultSet
  /** The primary type's selection, kept apart: most documents have one type, and then no map is made. */
  #firstResource: ResolvedResource | undefined
  #firstSelection: Selection | undefined
  #selections: Map<ResolvedResource, Selection> | undefined
  readonly #budget: DocumentBudget | undefined
  /** Signs the cursors of the `next` links of included to-many pages. */
  readonly #codec: CursorCodec | undefined
  /** The characters of the resource objects written so far (counted only with a budget). */
  #written = 0

  /** @param codec signs the cursor of each `links.next` of an included to-many page (needed when the result has pages) */
  constructor (baseUrl: string, query: QueryTree, result: ResultSet, budget?: DocumentBudget, codec?: CursorCodec) {
    this.#baseUrl = baseUrl
    this.#baseJson = escaped(baseUrl)
    this.#query = query
    this.#result = result
    this.#budget = budget
    this.#codec = codec
  }

  /** Counts `length` more characters written; past the budget, its error. */
  #spend (length: number): void {
    const budget = this.#budget
    if (budget !== undefined && (this.#written += length) > budget.maxLength) throw budget.tooLarge()
  }

  /** The URL of a resource. */
  selfLink (resource: ResolvedResource, id: string): string {
    return `${this.#baseUrl}${resource.path}/${encodeURIComponent(id)}`
  }

  #selection (resource: ResolvedResource): Selection {
    if (resource === this.#firstResource) return this.#firstSelection as Selection
    let selection = this.#selections?.get(resource)
    if (selection === undefined) {
      selection = selectionOf(resource, this.#query.fields.get(resource.type))
      if (this.#firstResource === undefined) {
        this.#firstResource = resource
        this.#firstSelection = selection
      } else {
        (this.#selections ??= new Map()).set(resource, selection)
      }
    }
    return selection
  }

  /**
   * The attributes of the fieldset: stored ones read from their column, derived ones computed from the row, computed
   * ones and aggregates from the value the database computed (selected as `selectedAs`).
   */
  #value (attribute: ResolvedAttribute, row: ResourceRow['row']): unknown {
    if (attribute.derived !== undefined) return attribute.derived.compute(row)
    return readValue(attribute, row[attribute.column ?? selectedAs(attribute)])
  }

  /**
   * The JSON text of a row's resource object, with `meta` last when given.
   */
  json (item: ResourceRow, meta?: unknown): JsonText {
    const json = this.#append('', item, meta)
    this.#spend(json.length)
    return new JsonText(json)
  }

  /**
   * The query of the `next` link of an owner's included page (inside a JSON string): the relationship route's first
   * page after the page's last resource, of the same size, with a cursor of the cursor pagination profile bound to
   * that route's collection and default order (by id), as the route reads it.
   */
  #nextPage (owner: ResolvedResource, id: string, relationship: string, page: IncludedPage, last: string): string {
    const codec = this.#codec
    if (codec === undefined) throw new Error('fastify-jsonapi: an included page needs the cursor codec to write its next link')
    const context = cursorContext(`${owner.type}/${id}/relationships/${relationship}`, keysetKeys([], page.related), undefined)
    return `?page%5Bsize%5D=${page.size}&page%5Bafter%5D=${codec.encode({ values: [last], edge: 'on' }, context)}`
  }

  /** The JSON text of an array of rows' resource objects. */
  array (items: readonly ResourceRow[]): JsonText {
    let json = '['
    for (let index = 0; index < items.length; index++) {
      const before = json.length
      json = this.#append(index === 0 ? json : `${json},`, items[index])
      this.#spend(json.length - before)
    }
    return new JsonText(`${json}]`)
  }

  /** `json` followed by the JSON text of a row's resource object. */
  #append (json: string, { resource, id, row }: ResourceRow, meta?: unknown): string {
    const template = templateOf(resource, this.#selection(resource))
    json += template.head
    json += escaped(id)
    let state: State = AFTER_ID
    for (const { plain, open, attribute, rule } of template.attributes) {
      // An attribute with a read rule is written only where the row says the request may read it: a row read
      // without the decision (1) never shows it.
      if (rule !== undefined && Number(row[rule]) !== 1) continue
      const value = this.#value(attribute, row)
      if (typeof value === 'string' && !needsEscape(value)) {
        json += open[state]
        json += value
        state = AFTER_STRING
      } else {
        const text = valueJson(value)
        if (text === undefined) continue
        json += plain[state]
        json += text
        state = AFTER_VALUE
      }
    }
    // The self link inside a JSON string: encodeURIComponent leaves nothing that needs escaping.
    const self = `${this.#baseJson}${template.path}${encodeURIComponent(id)}`
    const linkage = template.relationships.length === 0 ? undefined : this.#result.linkage.get(resourceKey(resource.type, id))
    if (linkage === undefined) {
      const tail = template.tails[state].join(self)
      // With `meta` (an item of a cursor page), the object's closing brace comes after it.
      return meta === undefined ? json + tail : `${json}${tail.slice(0, -1)},"meta":${JSON.stringify(meta)}}`
    }
    json += OWED[state]
    json += `},"links":{"self":"${self}"},"relationships":{`
    const pages = this.#result.pages?.get(resourceKey(resource.type, id))
    for (let index = 0; index < template.relationships.length; index++) {
      const entry = template.relationships[index]
      json += `${index === 0 ? '' : ','}${entry.member}"${self}${entry.self}","related":"${self}${entry.related}"`
      const name = entry.relationship.name
      const ids = linkage.get(name)
      const page = pages?.get(name)
      if (page === undefined || ids === undefined) {
        json += '}'
        if (ids !== undefined) json += linkageJson(entry, ids)
      } else {
        // An owner's page of an included to-many relationship: `next` (when more exist) walks the rest on the
        // relationship route, by cursor, from the page's last resource; `meta.count` tells how many there are.
        if (page.count > ids.length && ids.length > 0) json += `,"next":"${self}${entry.self}${this.#nextPage(resource, id, name, page, ids[ids.length - 1])}"`
        json += `}${linkageJson(entry, ids)},"meta":{"count":${page.count}}`
      }
      json += '}'
    }
    json += '}'
    if (meta !== undefined) json += `,"meta":${JSON.stringify(meta)}`
    return `${json}}`
  }
}
