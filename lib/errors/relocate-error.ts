import { JsonApiError, type ErrorObject, type ErrorSource } from './json-api-error.js'

/**
 * A copy of a {@link JsonApiError} whose error objects have a new `source` and extra `meta` (what the function
 * returns for each). Anything else is returned unchanged. Used to point an error raised deeper down (a hook, an
 * operation) at where it belongs in the request.
 */
export function relocateError (
  error: unknown,
  relocate: (item: ErrorObject) => { readonly source: ErrorSource | undefined; readonly meta?: Readonly<Record<string, unknown>> },
): unknown {
  if (!(error instanceof JsonApiError)) return error
  return new JsonApiError(error.errors.map((item) => {
    const { source, meta } = relocate(item)
    const merged = meta === undefined ? item.meta : { ...(item.meta ?? {}), ...meta }
    return {
      ...(item.links === undefined ? {} : { links: item.links }),
      status: Number(item.status),
      code: item.code,
      title: item.title,
      ...(item.detail === undefined ? {} : { detail: item.detail }),
      ...(source === undefined ? {} : { source }),
      ...(merged === undefined ? {} : { meta: merged }),
      headers: error.headers,
    }
  }))
}
