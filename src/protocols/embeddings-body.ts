/**
 * An embeddings response (`POST /v1/embeddings`) read as ChunkInfo. It is one JSON body, never a
 * stream: what it tells a benchmark is that the vectors came back and usage.prompt_tokens (the
 * tokens embedded). It generates no tokens: completion_tokens is 0, and nothing is token-bearing.
 */

import type { ChunkInfo } from './chunk.js'
import { errorChunk, isObject, type Json, quietChunk, setUsage, tokenCount } from './event-chunk.js'

export function interpretEmbeddingsBody(obj: Json): ChunkInfo {
  if (obj.error !== undefined && obj.error !== null) return errorChunk(obj.error, 'error body')
  if (!Array.isArray(obj.data) || !obj.data.every((item) => isObject(item) && item.embedding !== undefined))
    return errorChunk(null, 'an embeddings response without data[].embedding')
  const usage = isObject(obj.usage) ? obj.usage : {}
  const info = setUsage(
    quietChunk(),
    { prompt_tokens: tokenCount(usage.prompt_tokens), completion_tokens: 0 },
    null,
    null,
  )
  info.finishReason = 'stop'
  return info
}
