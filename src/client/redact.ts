/** Longest server or client message kept in a record: enough to diagnose, too short to flood. */
export const MAX_MESSAGE_CHARS = 300

const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi
/** Common key shapes (OpenAI sk-..., generic long tokens after key=) echoed back by some servers. */
const KEY_LIKE = /\b(sk-[A-Za-z0-9_-]{8,}|(?:api[_-]?key|token|secret)=[^\s&"']+)/gi

/**
 * Removes secrets from a message before it is stored or printed: the configured key itself
 * (servers sometimes echo it: "Incorrect API key provided: sk-..."), bearer tokens and key-like
 * strings; then folds whitespace and truncates.
 */
export function redact(message: string, secrets: readonly string[] = []): string {
  let text = message
  for (const secret of secrets) {
    if (secret.length >= 4) text = text.split(secret).join('[redacted]')
  }
  text = text.replace(BEARER, '$1 [redacted]').replace(KEY_LIKE, '[redacted]')
  text = text.replace(/\s+/g, ' ').trim()
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text
}

/** A URL safe to show: user info and query string (which may hold a key) removed. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.username = ''
    parsed.password = ''
    parsed.search = ''
    return parsed.toString().replace(/\/$/, '')
  } catch {
    return '[invalid url]'
  }
}
