import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import fc from 'fast-check'
import * as cl100kReference from 'gpt-tokenizer/encoding/cl100k_base'
import * as o200kReference from 'gpt-tokenizer/encoding/o200k_base'
import { BpeRanks } from '../../src/workload/bpe-ranks.js'
import {
  loadOpenAiEncoding,
  type OpenAiEncodingName,
  ranksFile,
} from '../../src/workload/openai-encodings.js'

/**
 * The built-in o200k_base and cl100k_base (compact rank tables, tokenizers/*.tiktoken.gz) against
 * gpt-tokenizer 4.0.0, which counted every earlier run's tokens and stays a dev dependency as the
 * reference: the same ids for every text, so runs count exactly as before.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** A UTF-16 unit that is half of no pair: UTF-8 cannot hold it, so decode cannot give it back. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Special-token strings are ordinary text, as in loadTokenizer. */
const ORDINARY_TEXT = { disallowedSpecial: new Set<string>() }

const ENCODINGS: { name: OpenAiEncodingName; reference: typeof o200kReference; sha256: string }[] = [
  {
    name: 'o200k_base',
    reference: o200kReference,
    // OpenAI's published hash of o200k_base.tiktoken (tiktoken_ext/openai_public.py).
    sha256: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
  },
  {
    name: 'cl100k_base',
    reference: cl100kReference,
    sha256: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
  },
]

/** Text from the repository (prose, JSON, code, datasets) and hand-picked hard cases. */
function corpus(): string[] {
  const files = [
    'README.md',
    ...readdirSync(`${ROOT}docs`).map((name) => `docs/${name}`),
    'datasets/sharegpt-sample.json',
    'datasets/chat-sample.jsonl',
    'src/workload/exact-prompts.ts',
  ]
  const texts = files.map((file) => readFileSync(`${ROOT}${file}`, 'utf8'))
  texts.push(
    '',
    ' ',
    '\n\n\n',
    '   leading and trailing   ',
    "I'M sure they'll say it's fine, WE'VE done it",
    'numbers 1 12 123 1234 12345 3.14159 -42 1e-9',
    'mixed 中文字符 日本語のテキスト 한국어 Ελληνικά русский עברית العربية हिन्दी',
    'emoji 🙂 👍🏽 👨‍👩‍👧 🏳️‍🌈 and marks e\u0301 a\u0308',
    'specials <|endoftext|> <|im_start|>user<|im_sep|> <|fim_prefix|>',
    'lone surrogates \ud800 x \udc00 y',
    'path/to/file.txt\r\nwindows line\r\n',
    'x'.repeat(5000),
    ' '.repeat(300),
    '🙂'.repeat(200),
  )
  return texts
}

for (const { name, reference, sha256 } of ENCODINGS) {
  describe(name, () => {
    const encoding = loadOpenAiEncoding(name)

    test('the shipped rank file is OpenAI’s, byte for byte', () => {
      const file = gunzipSync(readFileSync(ranksFile(name)))
      assert.equal(createHash('sha256').update(file).digest('hex'), sha256)
    })

    test('the same ids and counts as gpt-tokenizer on prose, code, JSON and hard cases', () => {
      for (const text of corpus()) {
        const expected = reference.encode(text, ORDINARY_TEXT)
        assert.deepEqual(encoding.encode(text), expected, JSON.stringify(text.slice(0, 60)))
        assert.equal(encoding.count(text), expected.length)
      }
    })

    test('the same ids as gpt-tokenizer on arbitrary strings, and decode inverts encode', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ maxLength: 40 }), (a, b) => {
          const text = a + b
          const ids = encoding.encode(text)
          assert.deepEqual(ids, reference.encode(text, ORDINARY_TEXT))
          assert.equal(encoding.count(text), ids.length)
          // Text made of whole characters comes back as it was.
          if (!LONE_SURROGATE.test(text)) assert.equal(encoding.decode(ids), text)
        }),
        { numRuns: 2000, seed: 17 },
      )
    })

    test('the same ids as gpt-tokenizer on long unbroken strings (the heap merge of long pieces)', () => {
      const alphabet = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzé中'.split(''))
      fc.assert(
        fc.property(fc.string({ unit: alphabet, minLength: 65, maxLength: 1500 }), (text) => {
          const ids = encoding.encode(text)
          assert.deepEqual(ids, reference.encode(text, ORDINARY_TEXT))
          assert.equal(encoding.count(text), ids.length)
        }),
        { numRuns: 150, seed: 23 },
      )
    })

    // A broken model or a batching proxy can stream megabytes without a space: one piece. The
    // scanning merge took minutes on 256 KiB (quadratic); the file's timeout catches a relapse.
    test('a megabyte without a space is counted, and encodes to as many ids', { timeout: 120_000 }, () => {
      const text = 'qzxv'.repeat(1 << 18)
      const count = encoding.count(text)
      assert.ok(count > 1000, `count ${count}`)
      assert.equal(encoding.encode(text).length, count)
    })

    test('decode leaves special tokens out and refuses ids that are not in the encoding', () => {
      const special = reference.encode('<|endoftext|>', { allowedSpecial: new Set(['<|endoftext|>']) })
      assert.equal(special.length, 1)
      const hello = encoding.encode('hello')
      assert.equal(encoding.decode([...hello, ...special, ...hello]), 'hellohello')
      assert.throws(() => encoding.decode([10_000_000]), /token id 10000000 is not in the encoding/)
      assert.throws(() => encoding.decode([-1]), /not in the encoding/)
    })
  })
}

describe('BpeRanks.parse', () => {
  const parse = (text: string): BpeRanks => BpeRanks.parse(Buffer.from(text, 'latin1'), 'test.tiktoken')

  test('reads ranks in order and looks up bytes, not prefixes or extensions of them', () => {
    // "a", "b", "ab", "abc"
    const ranks = parse('YQ== 0\nYg== 1\nYWI= 2\nYWJj 3\n')
    assert.equal(ranks.size, 4)
    const key = new TextEncoder().encode('xabcx')
    assert.equal(ranks.rankOf(key, 1, 3), 2)
    assert.equal(ranks.rankOf(key, 1, 4), 3)
    assert.equal(ranks.rankOf(key, 2, 3), 1)
    assert.equal(ranks.rankOf(key, 0, 2), -1)
    assert.equal(ranks.rankOf(key, 2, 4), -1)
    assert.deepEqual([...(ranks.bytesOf(3) ?? [])], [...new TextEncoder().encode('abc')])
    assert.equal(ranks.bytesOf(4), undefined)
  })

  test('a malformed file is refused with the line that is wrong', () => {
    assert.throws(
      () => parse('YQ== 0\nYg== 2\n'),
      /test\.tiktoken: line 2: expected "<base64> 1", got "Yg== 2"/,
    )
    assert.throws(() => parse('YQ== 0\nY!== 1\n'), /line 2/)
    assert.throws(() => parse('YQ==\n'), /line 1/)
    assert.throws(() => parse('YQ== x\n'), /line 1/)
    assert.throws(() => parse(' 0\n'), /line 1/, 'a token of no bytes')
  })
})
