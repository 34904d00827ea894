import { statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join, resolve } from 'node:path'
import { DATASET_MAX_NESTING, nestingMessage, tooDeep } from '../json-nesting.js'
import { printable } from '../printable.js'
import { readTextFile } from '../text-file.js'
import { loadOpenAiEncoding, type OpenAiEncodingName } from './openai-encodings.js'

/**
 * Pluggable offline tokenizers: the two OpenAI encodings whose rank files ship with llmbench, or any
 * Hugging Face `tokenizer.json` on disk (Llama, Qwen, Mistral, ...). Nothing is downloaded: a
 * model's tokenizer is only as available as the file the user points at.
 */
export interface Tokenizer {
  readonly name: string
  /** Token ids of `text` as a prompt body: no BOS/EOS or other template tokens are added. */
  encode(text: string): number[]
  /** Text of `ids`, leaving out special tokens. */
  decode(ids: readonly number[]): string
  /** Same as encode(text).length, sometimes without building the array. */
  count(text: string): number
}

export class TokenizerError extends Error {
  override name = 'TokenizerError'
}

const EXPECTED = 'expected o200k, cl100k or a path to a Hugging Face tokenizer.json'

/** Model types @huggingface/tokenizers implements; anything else it would silently misread. */
const HF_MODEL_TYPES = ['BPE', 'WordPiece', 'Unigram']

/**
 * The part of @huggingface/tokenizers we use, typed here because its published .d.ts files import
 * each other without file extensions: under NodeNext resolution they do not resolve, and (with
 * skipLibCheck) the class silently comes through as `any`.
 */
interface HfTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] }
  decode(ids: number[], options: { skip_special_tokens: boolean }): string
}
type HfTokenizerClass = new (
  tokenizerJson: Record<string, unknown>,
  tokenizerConfig: Record<string, unknown>,
) => HfTokenizer

/**
 * Required when a tokenizer.json is named, not with this module: the default o200k runs never use it
 * (its modules are ~3 MB of RSS). Required, not imported, because loadTokenizer is synchronous.
 */
function hfTokenizerClass(): HfTokenizerClass {
  const module = createRequire(import.meta.url)('@huggingface/tokenizers') as { Tokenizer: unknown }
  return module.Tokenizer as HfTokenizerClass
}

const cache = new Map<string, Tokenizer>()

/** Cached by what it is, not how it was spelled: `o200k`, `O200K` and `o200k_base` share one table. */
export function loadTokenizer(spec: string): Tokenizer {
  const key = openAiEncodingOf(spec) ?? spec
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  const tokenizer = key === 'o200k_base' || key === 'cl100k_base' ? openAiTokenizer(key) : hfTokenizer(spec)
  cache.set(key, tokenizer)
  return tokenizer
}

function openAiEncodingOf(spec: string): 'o200k_base' | 'cl100k_base' | null {
  switch (spec.trim().toLowerCase()) {
    case 'o200k':
    case 'o200k_base':
      return 'o200k_base'
    case 'cl100k':
    case 'cl100k_base':
      return 'cl100k_base'
    default:
      return null
  }
}

/**
 * Read on first use (about 4 MB for o200k, in typed arrays): a command that never counts tokens
 * never pays for them. Special-token strings such as `<|endoftext|>` in a prompt are counted as
 * ordinary text, as the server's tokenizer sees a prompt.
 */
function openAiTokenizer(encoding: OpenAiEncodingName): Tokenizer {
  const api = loadOpenAiEncoding(encoding)
  return {
    name: `${encoding} (built-in)`,
    encode: (text) => api.encode(text),
    decode: (ids) => api.decode(ids),
    count: (text) => api.count(text),
  }
}

function hfTokenizer(spec: string): Tokenizer {
  const { file, configFile } = locateTokenizerJson(spec)
  const json = readJsonObject(file, 'a Hugging Face tokenizer.json')
  const model = json.model
  if (typeof model !== 'object' || model === null || Array.isArray(model)) {
    throw new TokenizerError(`tokenizer: ${file}: no "model" object (expected a Hugging Face tokenizer.json)`)
  }
  const type = (model as Record<string, unknown>).type
  if (typeof type !== 'string' || !HF_MODEL_TYPES.includes(type)) {
    throw new TokenizerError(
      `tokenizer: ${file}: unsupported model type ${JSON.stringify(type ?? null)} (expected one of ${HF_MODEL_TYPES.join(', ')})`,
    )
  }
  const config = configFile === undefined ? {} : readJsonObject(configFile, 'a tokenizer_config.json object')
  const HfTokenizer = hfTokenizerClass()
  let hf: HfTokenizer
  try {
    // The library requires these keys to be present (null is fine) and iterates added_tokens
    // unconditionally; hand-written or trimmed files often leave them out.
    hf = new HfTokenizer(
      {
        normalizer: null,
        pre_tokenizer: null,
        post_processor: null,
        decoder: null,
        added_tokens: [],
        ...json,
      },
      config,
    )
  } catch (error) {
    throw new TokenizerError(
      `tokenizer: ${file}: cannot be loaded: ${(error as Error).message} (expected a Hugging Face tokenizer.json)`,
    )
  }
  // add_special_tokens defaults to true in encode: a post-processor template would then add BOS
  // (and maybe EOS) to every count. We measure the text itself; the server's template is its own.
  const encode = (text: string): number[] => hf.encode(text, { add_special_tokens: false }).ids
  return {
    name: `tokenizer.json: ${file}`,
    encode,
    // The library throws on an empty id list instead of returning ''.
    decode: (ids) => (ids.length === 0 ? '' : hf.decode([...ids], { skip_special_tokens: true })),
    count: (text) => encode(text).length,
  }
}

/** The tokenizer.json a spec names, and the tokenizer_config.json that belongs with it, if any. */
function locateTokenizerJson(spec: string): { file: string; configFile: string | undefined } {
  const path = resolve(spec)
  const stats = statSync(path, { throwIfNoEntry: false })
  // The spec as typed: for a mistyped name such as `o200` an absolute path would only confuse.
  if (stats === undefined) throw new TokenizerError(`tokenizer: ${spec}: not found (${EXPECTED})`)
  if (stats.isDirectory()) {
    const file = join(path, 'tokenizer.json')
    if (!isFile(file)) {
      throw new TokenizerError(`tokenizer: ${path}: directory has no tokenizer.json (${EXPECTED})`)
    }
    return { file, configFile: siblingConfig(path) }
  }
  if (!path.endsWith('.json')) throw new TokenizerError(`tokenizer: ${path}: not a .json file (${EXPECTED})`)
  // Only a file named tokenizer.json is paired with the tokenizer_config.json beside it: a renamed
  // copy (llama.json next to mistral.json) may sit beside a config that belongs to another model.
  return {
    file: path,
    configFile: basename(path) === 'tokenizer.json' ? siblingConfig(dirname(path)) : undefined,
  }
}

function siblingConfig(dir: string): string | undefined {
  const file = join(dir, 'tokenizer_config.json')
  return isFile(file) ? file : undefined
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false
}

function readJsonObject(file: string, expected: string): Record<string, unknown> {
  let text: string
  try {
    text = readTextFile(file)
  } catch (error) {
    throw new TokenizerError(
      `tokenizer: ${file}: cannot be read: ${(error as Error).message} (expected ${expected})`,
    )
  }
  const deep = tooDeep(text, DATASET_MAX_NESTING)
  if (deep !== null)
    throw new TokenizerError(`tokenizer: ${file}:${deep.line}: ${nestingMessage(DATASET_MAX_NESTING)}`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new TokenizerError(
      `tokenizer: ${file}: not valid JSON: ${printable((error as Error).message)} (expected ${expected})`,
    )
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenizerError(`tokenizer: ${file}: not a JSON object (expected ${expected})`)
  }
  return value as Record<string, unknown>
}
