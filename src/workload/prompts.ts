import { decodeTokens, encodeText } from './tokenizer.js'

/**
 * Seeded synthetic prompts of (close to) a target token length. Each prompt starts at a different
 * offset in one long seeded token stream, so no two prompts share a prefix and a server's prefix
 * cache cannot make later requests look faster than the first.
 */

const WORDS = (
  'time person year way day thing man world life hand part child eye woman place work week case ' +
  'point government company number group problem fact system program question night water room ' +
  'mother area money story month lot right study book job word business issue side kind head house ' +
  'service friend father power hour game line end member law car city community name president team ' +
  'minute idea kid body information back parent face others level office door health art war history ' +
  'party result change morning reason research girl guy moment air teacher force education measure'
).split(' ')

/** mulberry32: a tiny, fast, seedable PRNG; Math.random cannot be seeded. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export class PromptSource {
  private readonly stream: number[]

  constructor(
    private readonly inputTokens: number,
    seed = 1,
    /** Distinct prompts before offsets wrap around; more prompts than this reuse earlier ones. */
    private readonly distinct = 512,
  ) {
    const random = seededRandom(seed)
    const wanted = inputTokens + distinct * 7 + 16
    const words: string[] = []
    let tokens: number[] = []
    // Words are ~1 token each; encode in rounds until the stream is long enough.
    while (tokens.length < wanted) {
      for (let i = 0; i < wanted - tokens.length + 16; i++) {
        words.push(WORDS[Math.floor(random() * WORDS.length)] as string)
      }
      tokens = encodeText(words.join(' '))
    }
    this.stream = tokens
  }

  /** The text of prompt `id`: a window of `inputTokens` tokens at an offset unique to the id. */
  prompt(id: number): string {
    if (this.inputTokens <= 0) return ''
    const offset = (id % this.distinct) * 7
    return decodeTokens(this.stream.slice(offset, offset + this.inputTokens)).trim()
  }
}
