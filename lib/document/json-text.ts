/**
 * Documents are written as JSON text where it pays: every resource object is written straight to text by a writer
 * compiled for its type and fieldset (see `ResourceWriter`), never built as objects for `JSON.stringify` to walk.
 * A document is a small object whose big parts are {@link JsonText}; {@link documentJson} writes it.
 */

/** A part of a document already written as JSON text. */
export class JsonText {
  readonly json: string

  constructor (json: string) {
    this.json = json
  }

  /** What `JSON.stringify` of a document that holds this part writes: the same JSON (parsed back; the slow path). */
  toJSON (): unknown {
    return JSON.parse(this.json)
  }
}

/** Characters a JSON string cannot hold as they are: quotes, backslashes, controls and (lone) surrogates. */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/** Whether a string holds a character that JSON writes escaped (then `JSON.stringify` writes it). */
export function needsEscape (text: string): boolean {
  return NEEDS_ESCAPE.test(text)
}

/** `JSON.stringify` of a string (a test for what needs escaping is faster than the general path for most texts). */
export function quote (text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`
}

/** The text of a string inside a JSON string: escaped where it must be, without the quotes. */
export function escaped (text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text).slice(1, -1) : text
}

/** `JSON.stringify` of a value (an attribute's wire value); undefined for `undefined` (a member left out). */
export function valueJson (value: unknown): string | undefined {
  return typeof value === 'string' ? quote(value) : JSON.stringify(value)
}

function isPlainObject (value: object): boolean {
  const prototype = Object.getPrototypeOf(value)
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function'
}

/**
 * `JSON.stringify(document)`, the same text, with every {@link JsonText} written as it is. Plain objects and arrays
 * are walked; any other value is left to `JSON.stringify`.
 */
export function documentJson (value: unknown): string {
  return write(value) ?? 'null'
}

function write (value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  if (value instanceof JsonText) return value.json
  if (Array.isArray(value)) {
    let json = '['
    for (let index = 0; index < value.length; index++) json += `${index === 0 ? '' : ','}${write(value[index]) ?? 'null'}`
    return `${json}]`
  }
  if (!isPlainObject(value)) return JSON.stringify(value)
  let json = '{'
  let first = true
  for (const key of Object.keys(value)) {
    const member = write((value as Record<string, unknown>)[key])
    if (member === undefined) continue
    json += `${first ? '' : ','}${quote(key)}:${member}`
    first = false
  }
  return `${json}}`
}
