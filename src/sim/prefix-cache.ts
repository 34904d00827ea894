import { createHash } from 'node:crypto'

/**
 * The simulator's prefix cache, as vLLM's automatic prefix caching and SGLang's radix cache work in
 * outline: a prompt is cut into blocks, each block keyed by a hash of itself and every block before
 * it, so a key names a whole prefix. A request's leading blocks found in the cache are not computed
 * again (its prefill costs only the rest) and are reported as usage.prompt_tokens_details.cached_tokens;
 * its blocks are then cached, the least recently used evicted beyond the capacity. A chat reply's
 * blocks are cached too, as the prompt's continuation (vLLM keeps the blocks a request generated), so a
 * session's next turn, which sends the reply back in its history, finds it.
 *
 * Blocks are cut from the prompt's text, BLOCK_TOKENS × 4 characters each, matching the simulator's
 * chars / 4 token estimate; the cached tokens are the prompt's tokens in proportion to the characters
 * matched. A whole-prompt hit still computes the last token, as vLLM does (the first output token needs it).
 */

/** vLLM's default block size, tokens. */
export const BLOCK_TOKENS = 16
const BLOCK_CHARS = BLOCK_TOKENS * 4

export class PrefixCache {
  /** Block keys in least- to most-recently-used order (a Map keeps insertion order). */
  private readonly blocks = new Map<string, true>()
  private readonly capacityBlocks: number
  hits = 0
  queries = 0

  /** `capacityTokens`: the KV cache's size in tokens; the cache holds that many tokens' blocks at most. */
  constructor(capacityTokens: number) {
    this.capacityBlocks = Math.max(1, Math.floor(capacityTokens / BLOCK_TOKENS))
  }

  /** Empties the cache (vLLM's POST /reset_prefix_cache): the next request of any prompt computes all of it. */
  clear(): void {
    this.blocks.clear()
  }

  /**
   * The prompt's tokens served from the cache; the prompt's blocks, and those of the chat reply
   * `reply` (the text to be generated) after it, are cached for later requests.
   */
  serve(input: unknown, promptTokens: number, reply: string | null = null): number {
    const text = promptKeyText(input)
    if (text.length === 0 || promptTokens <= 0) return 0
    // The reply as the next turn will send it back: an assistant message after the prompt's.
    const cachedText = reply === null ? text : `${text}assistant\u0000${reply}\u0001`
    let previous = ''
    let matchedChars = 0
    let missed = false
    for (let start = 0; start + BLOCK_CHARS <= cachedText.length; start += BLOCK_CHARS) {
      const key = createHash('sha1')
        .update(previous)
        .update(cachedText.slice(start, start + BLOCK_CHARS))
        .digest('base64')
      if (!missed && start + BLOCK_CHARS <= text.length && this.blocks.has(key)) matchedChars += BLOCK_CHARS
      else missed = true
      // Touched blocks become the most recently used; new ones join.
      this.blocks.delete(key)
      this.blocks.set(key, true)
      previous = key
    }
    while (this.blocks.size > this.capacityBlocks) {
      const oldest = this.blocks.keys().next().value as string
      this.blocks.delete(oldest)
    }
    const cached = Math.min(promptTokens - 1, Math.floor((promptTokens * matchedChars) / text.length))
    this.queries += promptTokens
    this.hits += Math.max(0, cached)
    return Math.max(0, cached)
  }
}

/**
 * The text a prompt is cached by: chat messages as role and content with separators (so the same
 * words under another role are another prefix), a completions prompt as itself, anything else as JSON.
 */
function promptKeyText(input: unknown): string {
  if (typeof input === 'string') return input
  if (!Array.isArray(input)) return ''
  let text = ''
  for (const message of input) {
    if (typeof message === 'object' && message !== null && 'content' in message) {
      const { role, content, tool_calls } = message as {
        role?: unknown
        content?: unknown
        tool_calls?: unknown
      }
      const said = typeof content === 'string' ? content : content === null ? '' : JSON.stringify(content)
      text += `${String(role)}\u0000${said}${toolCallsKeyText(tool_calls)}\u0001`
    } else text += `${JSON.stringify(message)}\u0001`
  }
  return text
}

/**
 * An assistant turn's tool calls as they extend its key (a turn that called tools has no text, so
 * its calls tell it apart), and as a reply that is a call is cached for the turn that sends it back.
 */
export function toolCallsKeyText(calls: unknown): string {
  if (!Array.isArray(calls)) return ''
  let text = ''
  for (const call of calls) {
    const fn = typeof call === 'object' && call !== null ? (call as { function?: unknown }).function : null
    const { name, arguments: args } = (typeof fn === 'object' && fn !== null ? fn : {}) as {
      name?: unknown
      arguments?: unknown
    }
    text += `\u0002${typeof name === 'string' ? name : ''}\u0003${typeof args === 'string' ? args : ''}`
  }
  return text
}
