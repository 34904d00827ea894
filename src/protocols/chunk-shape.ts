/**
 * Reads the token chunks of one chat stream without JSON.parse when they differ from an earlier
 * chunk of the same stream only in their content string.
 *
 * Why: JSON.parse of each ~150-byte chunk was the largest single cost of our own per-event work
 * (about 0.75 µs of ~1 µs for SSE + interpretation). A server's token chunks are nearly always one
 * shape: `{"id":"chatcmpl-X",...,"choices":[{"index":0,"delta":{"content":"TEXT"},...}]}` with the
 * same id, created and model in every chunk; only TEXT changes.
 *
 * How, and why it is exact: the first answer-only chunk (one choice, `delta.content` its only
 * text, no usage, finish reason, error or in-band figures) is parsed in full, and its text is found
 * in the payload as the literal JSON string right after `"content":`. What comes before that
 * literal's opening quote is the prefix; what comes from its closing quote on is the suffix. A later
 * payload that starts with the prefix, ends with the suffix, and whose middle holds no quote,
 * backslash or control character is that same JSON with a different content string, whose value
 * is the middle as written (no escapes to decode): JSON.parse would give the same object with that
 * text, so its ChunkInfo is the learned one's with that text. Anything else (an escape, a usage
 * chunk, a finish reason, a server that varies another field per chunk, such as OpenAI's
 * `obfuscation`) takes the full parse, so nothing is ever read differently; only cheaper.
 */

import { blankChunk, type ChunkInfo, interpretChunk } from './chunk.js'

/** A middle that is not a plain JSON string body: a quote, a backslash or a control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON strings may not hold raw
const NOT_PLAIN = /["\\\u0000-\u001f]/
/** Learning is tried on this many plain token chunks at most: a stream that never fits stops paying for it. */
const LEARN_ATTEMPTS = 4

export class ChatChunkReader {
  private prefix: string | null = null
  private suffix = ''
  private attempts = 0
  /** The answer of every fast read: one object per stream, valid until the next read (the client takes it at once). */
  private readonly fast = answerChunk()

  /** Whether the stream's shape is known (token chunks are then read without a parse). */
  get shapeKnown(): boolean {
    return this.prefix !== null
  }

  /** Same answer as interpretChunk(data); a fast answer is valid until the next read. */
  read(data: string): ChunkInfo {
    const prefix = this.prefix
    if (prefix !== null) {
      const end = data.length - this.suffix.length
      if (end > prefix.length && data.startsWith(prefix) && data.endsWith(this.suffix)) {
        const text = data.slice(prefix.length, end)
        if (!NOT_PLAIN.test(text)) {
          this.fast.text = text
          return this.fast
        }
      }
    }
    const info = interpretChunk(data)
    // Learned from the first plain answer, and again on a miss: a stream's first content chunk may
    // carry a one-off field (`"role":"assistant"`) that the chunks after it do not.
    if (this.attempts < LEARN_ATTEMPTS && isPlainAnswer(info) && !NOT_PLAIN.test(info.text)) {
      this.attempts++
      this.learn(data, info.text)
    }
    return info
  }

  /** Finds the content literal of `text` in `data`; the shape is kept only when it is unambiguous. */
  private learn(data: string, text: string): void {
    const literal = `"${text}"`
    const at = data.indexOf(literal)
    if (at === -1 || data.indexOf(literal, at + 1) !== -1) return
    // The literal must be the value of a `content` key: `"content"`, optional spaces, `:`, spaces.
    const before = data.slice(0, at).trimEnd()
    if (!before.endsWith(':') || !before.slice(0, -1).trimEnd().endsWith('"content"')) return
    const suffix = data.slice(at + literal.length - 1)
    // A later duplicate key would win in JSON.parse: such a payload is left to it.
    if (suffix.includes('"content"')) return
    this.prefix = data.slice(0, at + 1)
    this.suffix = suffix
  }
}

/** A chunk whose only output is `delta.content` of its one choice: what the shape may stand for. */
function isPlainAnswer(info: ChunkInfo): boolean {
  return (
    info.answerBearing &&
    !info.reasoningBearing &&
    !info.done &&
    !info.malformed &&
    info.usage === null &&
    info.inBand === null &&
    info.finishReason === null &&
    info.error === null &&
    info.text !== ''
  )
}

function answerChunk(): ChunkInfo {
  const info = blankChunk()
  info.tokenBearing = true
  info.answerBearing = true
  return info
}
