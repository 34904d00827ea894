/** Longest server or client message kept in a record: enough to diagnose, too short to flood. */
export const MAX_MESSAGE_CHARS = 300

const BEARER = /\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]+)/gi

/**
 * A word after "Bearer"/"Basic" that is a credential, not prose ("basic authentication required"):
 * tokens and base64 carry digits, punctuation or capitals inside the word, or are long.
 */
function looksLikeCredential(token: string): boolean {
  return /[0-9._~+/=-]/.test(token) || /[A-Z]/.test(token.slice(1)) || token.length >= 24
}
/**
 * A challenge's parameter (`WWW-Authenticate: Bearer realm="api"`: RFC 6750 and 7617 name these),
 * not a credential: one of these names and "=" right before a quoted value. A base64 credential
 * spelling one of them would decode to a few bytes of noise.
 */
const CHALLENGE_PARAMETER = /^(realm|scope|error|error_description|error_uri|charset)=$/i
function isChallengeParameter(token: string, next: string | undefined): boolean {
  return next === '"' && CHALLENGE_PARAMETER.test(token)
}
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
  text = text
    .replace(BEARER, (match, scheme: string, token: string, at: number, whole: string) =>
      looksLikeCredential(token) && !isChallengeParameter(token, whole[at + match.length])
        ? `${scheme} [redacted]`
        : match,
    )
    .replace(KEY_LIKE, '[redacted]')
  text = text.replace(/\s+/g, ' ').trim()
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text
}

/**
 * Redacts the configured secrets from text printed as it streams in (`llmbench check`), also when a
 * secret is split across two pieces: the last (longest secret - 1) characters are held back until
 * the next piece, or `end()`, shows they are not the start of one.
 */
export class LiveRedactor {
  private pending = ''
  private readonly holdBack: number

  constructor(
    private readonly secrets: readonly string[],
    private readonly write: (text: string) => void,
  ) {
    this.holdBack = Math.max(0, ...secrets.filter((s) => s.length >= 4).map((s) => s.length - 1))
  }

  push(text: string): void {
    let buffer = this.pending + text
    for (const secret of this.secrets)
      if (secret.length >= 4) buffer = buffer.split(secret).join('[redacted]')
    const cut = Math.max(0, buffer.length - this.holdBack)
    this.pending = buffer.slice(cut)
    if (cut > 0) this.write(buffer.slice(0, cut))
  }

  end(): void {
    if (this.pending !== '') this.write(this.pending)
    this.pending = ''
  }
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
