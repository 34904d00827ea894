import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { BpeRanks } from './bpe-ranks.js'
import { TiktokenEncoding } from './tiktoken-encoding.js'

/**
 * OpenAI's o200k_base and cl100k_base encodings, offline: their rank files ship with llmbench
 * (tokenizers/*.tiktoken.gz, byte for byte OpenAI's files, gzipped; provenance and checksums in
 * tokenizers/README.md) and are read on first use. The split patterns are tiktoken's, in the
 * JavaScript spelling gpt-tokenizer 4.0.0 uses (MIT), whose counts these reproduce exactly.
 */
export type OpenAiEncodingName = 'o200k_base' | 'cl100k_base'

/** The folder of the rank files: the package root's tokenizers/, from src/workload or dist/workload. */
const RANKS_DIR = new URL('../../tokenizers/', import.meta.url)

/** An English contraction's suffix ('s, 'll, 're, ...), in either case. */
const CONTRACTION = "'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])"

const SPLIT_PATTERNS: Record<OpenAiEncodingName, string> = {
  o200k_base:
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:${CONTRACTION})?` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:${CONTRACTION})?` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  cl100k_base: String.raw`${CONTRACTION}|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`,
}

/** The special tokens' ranks (<|endoftext|>, FIM, chat markers): above the rank files' tables. */
const SPECIAL_RANKS: Record<OpenAiEncodingName, readonly number[]> = {
  o200k_base: [199999, 200000, 200001, 200002, 200003, 200004, 200005, 200006],
  cl100k_base: [100257, 100258, 100259, 100260, 100264, 100265, 100266, 100276],
}

/** The path of an encoding's rank file. */
export function ranksFile(name: OpenAiEncodingName): string {
  return fileURLToPath(new URL(`${name}.tiktoken.gz`, RANKS_DIR))
}

export function loadOpenAiEncoding(name: OpenAiEncodingName): TiktokenEncoding {
  const file = ranksFile(name)
  const packed = readFileSync(file)
  // gzip's trailer ends with the unpacked size (mod 2^32): one output chunk of that size, so the
  // 3.6 MB of o200k are not gathered in pieces and then copied whole.
  const unpacked = packed.length >= 4 ? packed.readUInt32LE(packed.length - 4) : 0
  const ranks = BpeRanks.parse(gunzipSync(packed, { chunkSize: Math.max(64 * 1024, unpacked + 1) }), file)
  return new TiktokenEncoding(ranks, new RegExp(SPLIT_PATTERNS[name], 'gu'), new Set(SPECIAL_RANKS[name]))
}
