import type { ExactPromptSource } from './exact-prompts.js'
import type { Tokenizer } from './tokenizers.js'
import { MOONCAKE_BLOCK_TOKENS, type TraceRow } from './trace-file.js'

/**
 * The prompt of each trace row, of exactly its input length. A row with Mooncake hash ids is built
 * block by block: block j is the text of its hash id (MOONCAKE_BLOCK_TOKENS tokens, the last block
 * cut to what is left), so two rows share exactly the leading blocks whose ids they share, and a
 * server's prefix cache sees the reuse the trace recorded. Different ids open with their own two-word
 * spelling (ExactPromptSource), so two different blocks can share their first word (one token) by
 * chance, never their first two (ids below 8,836). A row without ids gets a prompt of its
 * own, unlike every other row's from its first words.
 */

/** Between two blocks: word prompts start without a space, and a space keeps the blocks' tokens apart. */
export const BLOCK_SEPARATOR = ' '

/** Longer texts tried for a block that a leading separator shortens (a first word that costs less after a space). */
const MAX_BLOCK_TRIES = 8

export class TracePrompts {
  /**
   * Block texts by "hash id:tokens:first": every row with that id at that length and place (first
   * block or not) reuses the same text. A later block is counted after the separator, as it is sent.
   */
  private readonly blocks = new Map<string, string>()

  constructor(
    private readonly source: ExactPromptSource,
    private readonly tokenizer: Tokenizer,
  ) {}

  /** Row `index`'s prompt text. */
  prompt(row: TraceRow, index: number): string {
    const ids = row.hash_ids
    if (ids === undefined || ids.length === 0) return this.source.prompt(index, row.input_tokens)
    return this.blockTexts(row, index).join(BLOCK_SEPARATOR)
  }

  /** The row's prompt cut into its blocks (the last may be short, and a tail past the ids its own). */
  blockTexts(row: TraceRow, index: number): string[] {
    const texts: string[] = []
    let left = row.input_tokens
    for (const id of row.hash_ids ?? []) {
      if (left <= 0) break
      const tokens = Math.min(MOONCAKE_BLOCK_TOKENS, left)
      texts.push(this.block(id, tokens, texts.length === 0))
      left -= tokens
    }
    // More input than the ids cover: the rest is this row's alone (ids below 0 are no hash id).
    if (left > 0) texts.push(this.block(-(index + 1), left, texts.length === 0))
    return texts
  }

  private block(id: number, tokens: number, first: boolean): string {
    const key = `${id}:${tokens}:${first ? 1 : 0}`
    let text = this.blocks.get(key)
    if (text === undefined) {
      text = first ? this.source.prompt(id, tokens) : this.afterSeparator(id, tokens)
      this.blocks.set(key, text)
    }
    return text
  }

  /**
   * The block's text that counts `tokens` after the separator. A word can cost more at the start of
   * a text than after a space (its spaced form is one token): the text is then lengthened until the
   * spaced count is right. Its start, and so the prefix it shares, stays the id's own words.
   */
  private afterSeparator(id: number, tokens: number): string {
    let asked = tokens
    for (let attempt = 0; attempt < MAX_BLOCK_TRIES; attempt++) {
      const text = this.source.prompt(id, asked)
      const counted = this.tokenizer.count(BLOCK_SEPARATOR + text)
      if (counted === tokens) return text
      asked += tokens - counted
      if (asked < 1) break
    }
    // No exact text found: the closest try stands; the plan counts every prompt and says so.
    return this.source.prompt(id, tokens)
  }
}
