/**
 * Building blocks of the interpreters of protocols other than chat completions (Responses API,
 * Anthropic Messages, embeddings): each reads its own event or body shape and says it as the same
 * ChunkInfo the chat parser produces, so the stream client times and counts every protocol alike.
 */

import { isObject, type Json } from '../json-object.js'
import type { ChunkInfo, Usage } from './chunk.js'
import { blankChunk, withCode } from './chunk.js'
import { type InBand, tokenCount } from './in-band.js'

/** An event that carries nothing a benchmark needs (created, in_progress, ping, block start/stop). */
export const quietChunk = blankChunk

/** The payload as a JSON object, or null when it is not one (a malformed event). */
export function parseEventObject(data: string): Json | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(data)
  } catch {
    return null
  }
  return isObject(parsed) ? parsed : null
}

export function malformedChunk(): ChunkInfo {
  const info = quietChunk()
  info.malformed = true
  return info
}

/** A text delta: token-bearing when it carries text, as reasoning or as the answer. */
export function deltaChunk(text: unknown, reasoning: boolean): ChunkInfo {
  const info = quietChunk()
  if (typeof text !== 'string' || text === '') return info
  info.text = text
  info.tokenBearing = true
  if (reasoning) {
    info.reasoningBearing = true
    // The reasoning's own text, for its token count when usage gives none (reasoning-phase.ts).
    info.reasoningText = text
  } else info.answerBearing = true
  return info
}

/** An error the server reported in the stream or the body: "code type: message" as chat's are. */
export function errorChunk(error: unknown, fallback: string): ChunkInfo {
  const info = quietChunk()
  if (isObject(error)) {
    const message = typeof error.message === 'string' ? error.message : JSON.stringify(error)
    info.error = withCode(message, error.code, error.type)
  } else {
    info.error = typeof error === 'string' && error !== '' ? error : fallback
  }
  return info
}

/** Usage and its in-band details, set on `info` when the server said any of them. */
export function setUsage(
  info: ChunkInfo,
  usage: Usage,
  cached: number | null,
  reasoning: number | null,
): ChunkInfo {
  if (usage.prompt_tokens !== null || usage.completion_tokens !== null) info.usage = usage
  if (cached !== null || reasoning !== null) {
    const inBand: InBand = { timings: null, cached_tokens: cached, reasoning_tokens: reasoning }
    info.inBand = inBand
  }
  return info
}

export { isObject, type Json, tokenCount }
