import { countTokens, decode, encode } from 'gpt-tokenizer'

/**
 * The offline tokenizer: gpt-tokenizer's o200k_base (GPT-4o family), whose vocabulary ships inside
 * the npm package, so nothing is downloaded at run time. For other model families it is an
 * estimate; records say when a count came from here rather than the server's usage.
 */
export const TOKENIZER_NAME = 'o200k_base (gpt-tokenizer)'

export function countTextTokens(text: string): number {
  return countTokens(text)
}

export function encodeText(text: string): number[] {
  return encode(text)
}

export function decodeTokens(tokens: number[]): string {
  return decode(tokens)
}
