/**
 * Extra request headers as users give them (`--header 'Name: value'`, settings.json `llm.headers`,
 * config.toml `[target.headers]`): what a valid one is, and which ones carry a secret.
 *
 * Names are kept in lower case: HTTP names are case-insensitive, and one spelling lets a later source
 * replace an earlier one's header instead of sending both.
 */

/** RFC 9110 token characters: what undici accepts as a header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * Headers undici manages itself or refuses outright (it throws on `connection`, `transfer-encoding`,
 * `keep-alive`, `upgrade` and `expect`); a request sent with them would fail at once, counted as the
 * server's failure.
 */
const MANAGED = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
])

/** Why a header name cannot be sent, or null when it can. */
export function headerNameProblem(name: string): string | null {
  if (!HEADER_NAME.test(name))
    return 'a header name of letters, digits and -_.!#$%&\'*+^`|~ (no spaces or ":")'
  if (MANAGED.has(name.toLowerCase()))
    return `a header name that is not reserved (${[...MANAGED].join(', ')} are reserved: the HTTP client sets them itself)`
  return null
}

/**
 * A value no header can carry: a control character other than tab, or one beyond Latin-1 (undici
 * would refuse the first request and leave its pool waiting out the timeout).
 */
export function headerValueSendable(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f || code > 0xff) return false
  }
  return true
}

/** "Name: value" → [name, value], or null when there is no colon or no name before it. */
export function splitHeaderLine(line: string): [string, string] | null {
  const colon = line.indexOf(':')
  if (colon <= 0) return null
  return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()]
}

/** A table with its names in lower case and its values trimmed (a later duplicate wins). */
export function normalizeHeaders(table: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(table)) out[name.trim().toLowerCase()] = value.trim()
  return out
}

/**
 * Names whose value is a credential: the standard ones, and any that says key, token, secret,
 * password or auth (`x-api-key`, `api-key`, `x-auth-token`, `ocp-apim-subscription-key`). Their
 * values are redacted wherever they could be printed or written.
 */
export function isSecretHeaderName(name: string): boolean {
  // Broad on purpose: redacting a harmless value costs a "[redacted]" in a printout; missing a secret leaks it.
  return /key|token|secret|auth|passw|cookie|signature|credential/i.test(name)
}

/** The table with every secret header's value replaced, for anything printed or digested. */
export function publicHeaders(table: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(table))
    out[name] = isSecretHeaderName(name) ? '[redacted]' : value
  return out
}
