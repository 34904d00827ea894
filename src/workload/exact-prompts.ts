import { seededRandom } from '../random.js'
import { type Tokenizer, TokenizerError } from './tokenizers.js'

/**
 * Seeded synthetic prompts of exactly a requested number of tokens under a given tokenizer.
 *
 * A prompt is a run of common words. Each word's token cost is measured once, which predicts how
 * many words a length needs; the whole text is then counted, because a tokenizer need not be
 * additive across words, and the word count is corrected (or a one-token filler appended) until
 * the count is exact. For the tokenizers we meet (GPT, Llama, Mistral, BERT-style) the first
 * prediction is nearly always exact, so a prompt costs about one count of its own text.
 */

/** Common English words, one token each (with their leading space) in the GPT encodings. The
 * hand-made test tokenizer.json has every one of them in its vocabulary. */
export const PROMPT_WORDS: readonly string[] = (
  'time person year way day thing man world life hand part child eye woman place work week case ' +
  'point government company number group problem fact system program question night water room ' +
  'mother area money story month lot right study book job word business issue side kind head house ' +
  'service friend father power hour game line end member law car city community name president team ' +
  'minute idea kid body information back parent face others level office door health art war history ' +
  'party result change morning reason research girl guy moment air teacher force education measure'
).split(' ')

/** Appended to close a last gap of a token or two when whole words overshoot; words first, so the
 * text stays ordinary. Only those that cost one token in context are used (see fillersOf). */
const FILLER_CANDIDATES = [
  ...PROMPT_WORDS.map((word) => ` ${word}`),
  ',',
  '.',
  ' a',
  ' I',
  '!',
  '?',
  ';',
  ':',
]
const MAX_FILLERS = 8

/** Text the costs of words and fillers are measured after, as they occur: mid-sentence. */
const CONTEXT = 'time person year'

/** Joins the shared prefix to the rest. A space keeps word-level tokenizers from merging across
 * the join; the others are tried only if some tokenizer's tokens do cross it. */
const PREFIX_SEPARATORS = [' ', '\n', '\n\n']

const MAX_WORD_STEPS = 16
/** A gap left after the word steps wider than this means the tokenizer is not word-like at all. */
const MAX_FILL_TOKENS = 32

/** Streams: each prompt id's own words, and the shared prefix's. */
const PROMPT_SALT = 0
const PREFIX_SALT = 1
/** The seed's shift of the id-spelling words (WordStream.forPrompt). */
const SHIFT_SALT = 2

interface Head {
  text: string
  ids: number[]
}

export class ExactPromptSource {
  private readonly seed: number
  private readonly sharedPrefixTokens: number
  /** Token cost of each PROMPT_WORDS entry at the start of a text, and after a space. */
  private readonly firstCost: number[]
  private readonly nextCost: number[]
  private readonly fillers: string[]
  private prefix: Head | undefined

  constructor(
    private readonly tokenizer: Tokenizer,
    options: { seed?: number; sharedPrefixTokens?: number } = {},
  ) {
    this.seed = options.seed ?? 1
    this.sharedPrefixTokens = options.sharedPrefixTokens ?? 0
    if (!Number.isSafeInteger(this.sharedPrefixTokens) || this.sharedPrefixTokens < 0) {
      throw new RangeError(`sharedPrefixTokens must be a whole number >= 0, got ${this.sharedPrefixTokens}`)
    }
    const base = tokenizer.count(CONTEXT)
    // At least 1, so that adding a word always moves the estimate forward.
    this.firstCost = PROMPT_WORDS.map((word) => Math.max(1, tokenizer.count(word)))
    this.nextCost = PROMPT_WORDS.map((word) => Math.max(1, tokenizer.count(`${CONTEXT} ${word}`) - base))
    this.fillers = fillersOf(tokenizer, base)
  }

  /** Text whose tokenizer.count(text) === tokens exactly; distinct ids give prompts with different
   * starts (no shared prefix beyond sharedPrefixTokens). Deterministic for (seed, id, tokens). */
  prompt(id: number, tokens: number): string {
    if (!Number.isSafeInteger(id)) throw new RangeError(`prompt id must be an integer, got ${id}`)
    if (!Number.isSafeInteger(tokens) || tokens < 0) {
      throw new RangeError(`prompt length must be a whole number of tokens >= 0, got ${tokens}`)
    }
    if (tokens === 0) return ''
    const shared = this.sharedPrefixTokens
    // A prompt no longer than the shared prefix is the prefix's own beginning, the same for every id.
    if (shared > 0 && tokens <= shared)
      return this.build(null, new WordStream(this.seed, PREFIX_SALT), tokens)
    const head = shared > 0 ? this.sharedPrefix() : null
    return this.build(head, WordStream.forPrompt(this.seed, id), tokens)
  }

  private sharedPrefix(): Head {
    if (this.prefix === undefined) {
      const text = this.build(null, new WordStream(this.seed, PREFIX_SALT), this.sharedPrefixTokens)
      this.prefix = { text, ids: this.tokenizer.encode(text) }
    }
    return this.prefix
  }

  private build(head: Head | null, stream: WordStream, tokens: number): string {
    for (const separator of head === null ? [''] : PREFIX_SEPARATORS) {
      const text = this.fit(head, separator, stream, tokens)
      if (text !== undefined) return text
    }
    throw new TokenizerError(
      `tokenizer: ${this.tokenizer.name}: cannot build a prompt of exactly ${tokens} tokens from whole words and one-token fillers`,
    )
  }

  /** The text of exactly `tokens` tokens starting with `head`, or undefined if this separator
   * cannot give one (tokens merge across it, or no word/filler combination lands exactly). */
  private fit(head: Head | null, separator: string, stream: WordStream, tokens: number): string | undefined {
    const cost = (index: number): number => {
      const word = stream.word(index)
      return head === null && index === 0 ? (this.firstCost[word] as number) : (this.nextCost[word] as number)
    }
    const render = (words: number): string => {
      if (head === null) return stream.text(words)
      return words === 0 ? head.text : head.text + separator + stream.text(words)
    }
    // Token count of text, or null if it no longer begins with the head's tokens.
    const measure = (text: string): number | null => {
      if (head === null) return this.tokenizer.count(text)
      const ids = this.tokenizer.encode(text)
      for (let i = 0; i < head.ids.length; i++) if (ids[i] !== head.ids[i]) return null
      return ids.length
    }

    // Word steps: predict the word count from the measured costs, count, correct by the difference.
    let words = 0
    for (let estimate = head?.ids.length ?? 0; estimate < tokens; words++) estimate += cost(words)
    // The longest text found below the target; the bare head (or '') is one, of known length.
    let under = { text: render(0), count: head?.ids.length ?? 0 }
    const tried = new Set<number>()
    for (let step = 0; step < MAX_WORD_STEPS && !tried.has(words); step++) {
      tried.add(words)
      const text = render(words)
      const count = measure(text)
      if (count === null) return undefined
      if (count === tokens) return text
      if (count < tokens) {
        if (count > under.count) under = { text, count }
        for (let gained = 0; gained < tokens - count; words++) gained += cost(words)
      } else {
        for (let dropped = 0; dropped < count - tokens && words > 0; ) dropped += cost(--words)
      }
    }

    // Whole words overshoot by a token or so: close the gap from below, one filler at a time.
    let { text, count } = under
    if (tokens - count > MAX_FILL_TOKENS) return undefined
    while (count < tokens) {
      let advanced = false
      for (const filler of this.fillers) {
        const candidate = text === '' ? filler.trimStart() : text + filler
        const next = measure(candidate)
        if (next !== null && next > count && next <= tokens) {
          text = candidate
          count = next
          advanced = true
          break
        }
      }
      if (!advanced) return undefined
    }
    return text
  }
}

/** Filler suffixes that add exactly one token mid-sentence; if none do, the first few candidates,
 * which the final count still checks. */
function fillersOf(tokenizer: Tokenizer, base: number): string[] {
  const oneToken = FILLER_CANDIDATES.filter((filler) => tokenizer.count(CONTEXT + filler) - base === 1)
  return (oneToken.length > 0 ? oneToken : FILLER_CANDIDATES).slice(0, MAX_FILLERS)
}

/** A prompt's words (indices into PROMPT_WORDS), drawn on demand from a seeded stream. */
class WordStream {
  private readonly words: number[] = []
  private readonly random: () => number

  constructor(seed: number, salt: number, id = 0) {
    this.random = seededRandom(streamSeed(seed, salt, id))
  }

  /**
   * A prompt's stream opens with two words spelling its id in base PROMPT_WORDS.length (shifted by
   * the seed): ids below 94² = 8,836 then never share even their first two words, which random
   * words alone would (about 15 pairs among 512 prompts), and a server's prefix cache gets nothing.
   */
  static forPrompt(seed: number, id: number): WordStream {
    const stream = new WordStream(seed, PROMPT_SALT, id)
    const n = PROMPT_WORDS.length
    const shift = streamSeed(seed, SHIFT_SALT, 0)
    const digits = [id % n, Math.floor(id / n) % n]
    for (const [i, digit] of digits.entries())
      stream.words.push((((digit + (shift >>> (8 * i))) % n) + n) % n)
    return stream
  }

  word(index: number): number {
    while (this.words.length <= index) this.words.push(Math.floor(this.random() * PROMPT_WORDS.length))
    return this.words[index] as number
  }

  /** The first `count` words joined by spaces. */
  text(count: number): string {
    if (count > 0) this.word(count - 1)
    let text = ''
    for (let i = 0; i < count; i++)
      text += i === 0 ? PROMPT_WORDS[this.words[i] as number] : ` ${PROMPT_WORDS[this.words[i] as number]}`
    return text
  }
}

/** A stream's PRNG seed from (seed, salt, id): murmur3's finalizer, so nearby ids get unrelated streams. */
function streamSeed(seed: number, salt: number, id: number): number {
  const low = id >>> 0
  const high = Math.floor(id / 4294967296) | 0
  return fmix32(fmix32(fmix32((seed >>> 0) ^ Math.imul(salt + 1, 0x9e3779b9)) ^ low) ^ high)
}

function fmix32(value: number): number {
  let h = value >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}
