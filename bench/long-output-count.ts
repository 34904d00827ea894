/**
 * Counting one long unbroken output (issue 26 case 1: a broken model or a batching proxy streams
 * megabytes without a space), measured side by side in one run (the machine is shared and noisy:
 * compare the ratios). Contestants, on the same texts, in alternating rounds:
 *   - whole:   the o200k tokenizer over the whole text (what completeTokenCounts did before);
 *   - bounded: boundedCount, as the run counts now (exact up to 256 Ki characters, the rest at the
 *              head's rate), with how far its count is from the whole one.
 * And, for scale, ordinary prose of the same length, where pieces are short words.
 *
 * Run: npm run bench:long-count
 */
import { performance } from 'node:perf_hooks'
import { boundedCount } from '../src/workload/bounded-count.js'
import { loadTokenizer } from '../src/workload/tokenizers.js'

const tokenizer = loadTokenizer('o200k')
const count = (text: string): number => tokenizer.count(text)
const ROUNDS = 3

/** Letters and digits without a space, seeded: one pre-tokenizer piece of the whole length. */
function unbroken(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
  let seed = 7
  let text = ''
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    text += alphabet[seed % alphabet.length]
  }
  return text
}

function prose(length: number): string {
  const words = ['the', 'server', 'answered', 'with', 'a', 'long', 'stream', 'of', 'tokens', 'quickly']
  let text = ''
  for (let i = 0; text.length < length; i++) text += `${words[i % words.length]} `
  return text.slice(0, length)
}

function time(run: () => number): { ms: number; tokens: number } {
  const start = performance.now()
  const tokens = run()
  return { ms: performance.now() - start, tokens }
}

for (const [name, text] of [
  ['unbroken 1 MiB', unbroken(1024 * 1024)],
  ['unbroken 4 MiB', unbroken(4 * 1024 * 1024)],
  ['prose 4 MiB', prose(4 * 1024 * 1024)],
] as const) {
  const whole: number[] = []
  const bounded: number[] = []
  let wholeTokens = 0
  let boundedTokens = 0
  for (let round = 0; round < ROUNDS; round++) {
    const a = time(() => count(text))
    const b = time(() => boundedCount(text, count).tokens)
    whole.push(a.ms)
    bounded.push(b.ms)
    wholeTokens = a.tokens
    boundedTokens = b.tokens
  }
  const median = (values: number[]): number =>
    [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0
  const off = (100 * (boundedTokens - wholeTokens)) / wholeTokens
  console.log(
    `${name}: whole ${median(whole).toFixed(0)} ms (${wholeTokens} tokens), bounded ${median(bounded).toFixed(0)} ms ` +
      `(${boundedTokens} tokens, ${off >= 0 ? '+' : ''}${off.toFixed(2)}%): ${(median(whole) / median(bounded)).toFixed(1)}x less main-thread time`,
  )
}
