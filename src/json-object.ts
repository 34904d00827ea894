/** A parsed JSON object whose keys are not yet checked. */
export type Json = Record<string, unknown>

/**
 * Whether a parsed JSON value is an object, the only shape whose keys can be read: not null (typeof
 * says 'object' for it) and not an array.
 */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
