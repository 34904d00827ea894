import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers'
import { seededRandom } from '../../src/random.js'
import { ExactPromptSource, PROMPT_WORDS } from '../../src/workload/exact-prompts.js'
import { loadTokenizer, type Tokenizer, TokenizerError } from '../../src/workload/tokenizers.js'

const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/tokenizer/', import.meta.url))
const FIXTURE_JSON = join(FIXTURE_DIR, 'tokenizer.json')

const scratch = mkdtempSync(join(tmpdir(), 'llmbench-tokenizers-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

/** Writes `files` into a fresh directory under the scratch dir and returns its path. */
function scratchDir(name: string, files: Record<string, string>): string {
  const dir = join(scratch, name)
  mkdirSync(dir, { recursive: true })
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text)
  return dir
}

/** Fibonacci lengths up to 4096, plus a seeded random set. */
const LENGTHS = (() => {
  const lengths = [1, 2, 3, 4, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4096]
  const random = seededRandom(42)
  for (let i = 0; i < 30; i++) lengths.push(1 + Math.floor(random() * 3000))
  return lengths
})()

const SPECS = ['o200k', 'cl100k', FIXTURE_DIR]

describe('loadTokenizer', () => {
  test('o200k and cl100k: names, aliases, caching, round trips', () => {
    const o200k = loadTokenizer('o200k')
    assert.equal(o200k.name, 'o200k_base (built-in)')
    assert.equal(loadTokenizer('o200k'), o200k, 'cached')
    assert.equal(loadTokenizer(' O200K_base'), o200k, 'one table however the name is spelled')
    const cl100k = loadTokenizer('cl100k_base')
    assert.equal(cl100k.name, 'cl100k_base (built-in)')
    assert.equal(loadTokenizer('cl100k').name, 'cl100k_base (built-in)')
    assert.deepEqual(loadTokenizer('o200k_base').encode('hello world'), o200k.encode('hello world'))
    const text = 'The quick brown fox jumps over the lazy dog, twice.'
    for (const tokenizer of [o200k, cl100k]) {
      const ids = tokenizer.encode(text)
      assert.equal(tokenizer.count(text), ids.length)
      assert.equal(tokenizer.decode(ids), text)
      assert.equal(tokenizer.decode([]), '')
    }
    // Really two encodings: the same words get different ids.
    assert.notDeepEqual(cl100k.encode(text), o200k.encode(text))
  })

  test('special-token strings in a text are counted as ordinary text, not rejected', () => {
    for (const spec of ['o200k', 'cl100k']) {
      const tokenizer = loadTokenizer(spec)
      const text = 'before <|endoftext|> after'
      const ids = tokenizer.encode(text)
      assert.ok(ids.length > 3, `${spec}: ${ids.length}`)
      assert.equal(tokenizer.count(text), ids.length)
      assert.equal(tokenizer.decode(ids), text)
    }
  })

  test('a Hugging Face tokenizer.json, by directory or by file', () => {
    const byDir = loadTokenizer(FIXTURE_DIR)
    const byFile = loadTokenizer(FIXTURE_JSON)
    assert.equal(byDir.name, `tokenizer.json: ${FIXTURE_JSON}`)
    assert.equal(byFile.name, byDir.name)
    assert.equal(loadTokenizer(FIXTURE_DIR), byDir, 'cached by spec')
    const ids = byFile.encode('time person year')
    assert.equal(ids.length, 3)
    assert.deepEqual(byDir.encode('time person year'), ids)
    assert.equal(byFile.decode(ids), 'time person year')
    // A word outside the vocabulary is spelt in word pieces, and decodes back whole.
    assert.equal(byFile.count('zebra'), 5)
    assert.equal(byFile.decode(byFile.encode('zebra time')), 'zebra time')
    assert.equal(byFile.decode([]), '')
  })

  test('counts leave out the BOS the fixture template would add, and decode skips special tokens', () => {
    const json = JSON.parse(readFileSync(FIXTURE_JSON, 'utf8')) as {
      model: { vocab: Record<string, number> }
    }
    const bos = json.model.vocab['<s>'] as number
    // The library itself, with its defaults, adds <s>: the fixture would inflate every count by one.
    const raw = new HfTokenizer(json, {}).encode('time person') as { ids: number[] }
    assert.deepEqual(raw.ids.length, 3)
    assert.equal(raw.ids[0], bos)

    const tokenizer = loadTokenizer(FIXTURE_DIR)
    assert.equal(tokenizer.count('time person'), 2)
    assert.deepEqual(tokenizer.encode('time person'), raw.ids.slice(1))
    assert.ok(!tokenizer.encode('time person').includes(bos))
    assert.equal(tokenizer.decode([bos, ...tokenizer.encode('time person')]), 'time person')
  })

  test('a missing file names the path and what was expected', () => {
    const missing = join(scratch, 'nope', 'tokenizer.json')
    assert.throws(
      () => loadTokenizer(missing),
      (error: unknown) =>
        error instanceof TokenizerError &&
        error.message ===
          `tokenizer: ${missing}: not found (expected o200k, cl100k or a path to a Hugging Face tokenizer.json)`,
    )
    // A mistyped encoding name is reported the same way, as typed.
    assert.throws(() => loadTokenizer('o200'), /^TokenizerError: tokenizer: o200: not found \(expected o200k/)
  })

  test('a directory without tokenizer.json is refused', () => {
    const dir = scratchDir('empty', { 'tokenizer_config.json': '{}' })
    assert.throws(
      () => loadTokenizer(dir),
      (error: unknown) =>
        error instanceof TokenizerError &&
        error.message.includes(dir) &&
        error.message.includes('no tokenizer.json'),
    )
  })

  test('malformed JSON names the file', () => {
    const dir = scratchDir('malformed', { 'tokenizer.json': '{"model": {"type": "BPE", ' })
    const file = join(dir, 'tokenizer.json')
    assert.throws(
      () => loadTokenizer(file),
      (error: unknown) =>
        error instanceof TokenizerError &&
        error.message.startsWith(`tokenizer: ${file}: not valid JSON`) &&
        error.message.includes('expected a Hugging Face tokenizer.json'),
    )
  })

  test('a malformed tokenizer_config.json beside it names that file', () => {
    const dir = scratchDir('bad-config', {
      'tokenizer.json': readFileSync(FIXTURE_JSON, 'utf8'),
      'tokenizer_config.json': '[1, 2',
    })
    assert.throws(
      () => loadTokenizer(dir),
      (error: unknown) => {
        return error instanceof TokenizerError && error.message.includes(join(dir, 'tokenizer_config.json'))
      },
    )
  })

  test('JSON that is not a tokenizer, or an unsupported model type, is refused by name', () => {
    const fixture = JSON.parse(readFileSync(FIXTURE_JSON, 'utf8')) as { model: Record<string, unknown> }
    const dir = scratchDir('unsupported', {
      'array.json': '[1, 2, 3]',
      'no-model.json': '{"version": "1.0"}',
      // The library would quietly read WordLevel as its "Legacy" model; we say no instead.
      'wordlevel.json': JSON.stringify({ ...fixture, model: { ...fixture.model, type: 'WordLevel' } }),
      'not-json.txt': 'hello',
    })
    const cases: [string, RegExp][] = [
      ['array.json', /: not a JSON object \(expected a Hugging Face tokenizer.json\)$/],
      ['no-model.json', /: no "model" object/],
      ['wordlevel.json', /: unsupported model type "WordLevel" \(expected one of BPE, WordPiece, Unigram\)$/],
      ['not-json.txt', /: not a \.json file/],
    ]
    for (const [name, pattern] of cases) {
      const file = join(dir, name)
      assert.throws(
        () => loadTokenizer(file),
        (error: unknown) =>
          error instanceof TokenizerError &&
          error.message.startsWith(`tokenizer: ${file}:`) &&
          pattern.test(error.message),
        name,
      )
    }
  })
})

describe('ExactPromptSource', () => {
  for (const spec of SPECS) {
    test(`${spec}: every requested length is exact`, () => {
      const tokenizer = loadTokenizer(spec)
      const source = new ExactPromptSource(tokenizer, { seed: 5 })
      assert.equal(source.prompt(0, 0), '')
      for (const [i, tokens] of LENGTHS.entries()) {
        for (const id of [i, 1000 + i * 37]) {
          const text = source.prompt(id, tokens)
          assert.equal(tokenizer.count(text), tokens, `id ${id}, ${tokens} tokens`)
          assert.equal(tokenizer.encode(text).length, tokens)
          assert.equal(text, text.trim(), 'no stray whitespace at the ends')
        }
      }
    })

    test(`${spec}: a shared prefix is the same tokens in every prompt, and totals stay exact`, () => {
      const tokenizer = loadTokenizer(spec)
      for (const shared of [1, 17, 256]) {
        const source = new ExactPromptSource(tokenizer, { seed: 9, sharedPrefixTokens: shared })
        const prefix = tokenizer.encode(source.prompt(0, shared))
        assert.equal(prefix.length, shared)
        const starts = new Set<string>()
        for (let id = 0; id < 40; id++) {
          const tokens = shared + 1 + ((id * 97) % 900)
          const ids = tokenizer.encode(source.prompt(id, tokens))
          assert.equal(ids.length, tokens, `shared ${shared}, id ${id}`)
          assert.deepEqual(ids.slice(0, shared), prefix, `shared ${shared}, id ${id}`)
          starts.add(ids.slice(shared, shared + 4).join())
          // As long as, or shorter than, the prefix: the prefix itself, whatever the id.
          assert.equal(source.prompt(id, shared), source.prompt(0, shared))
          assert.equal(tokenizer.count(source.prompt(id, Math.ceil(shared / 2))), Math.ceil(shared / 2))
        }
        assert.equal(starts.size, 40, 'what follows the prefix differs between ids')
      }
    })
  }

  test('deterministic for (seed, id, tokens); another seed gives other prompts', () => {
    const tokenizer = loadTokenizer('o200k')
    const a = new ExactPromptSource(tokenizer, { seed: 11 })
    const b = new ExactPromptSource(tokenizer, { seed: 11 })
    const c = new ExactPromptSource(tokenizer, { seed: 12 })
    for (const [id, tokens] of [
      [0, 1],
      [3, 50],
      [77, 777],
      [9999, 2000],
    ] as const) {
      assert.equal(a.prompt(id, tokens), b.prompt(id, tokens))
      assert.equal(a.prompt(id, tokens), a.prompt(id, tokens))
      assert.notEqual(a.prompt(id, tokens), c.prompt(id, tokens))
    }
    assert.equal(
      new ExactPromptSource(tokenizer).prompt(1, 40),
      new ExactPromptSource(tokenizer, { seed: 1 }).prompt(1, 40),
    )
  })

  test('distinct ids start differently: 512 prompts share no 4-token start', () => {
    for (const spec of ['o200k', FIXTURE_DIR]) {
      const tokenizer = loadTokenizer(spec)
      const source = new ExactPromptSource(tokenizer, { seed: 2 })
      const starts = new Set<string>()
      const firstTokens = new Set<number>()
      for (let id = 0; id < 512; id++) {
        const ids = tokenizer.encode(source.prompt(id, 64))
        starts.add(ids.slice(0, 4).join())
        firstTokens.add(ids[0] as number)
      }
      assert.equal(starts.size, 512, spec)
      // The first word alone already takes every value of the word list.
      assert.ok(firstTokens.size >= PROMPT_WORDS.length, `${spec}: ${firstTokens.size}`)
    }
  })

  test('the first two words spell the id: no two of the first 94² prompts share them', () => {
    const source = new ExactPromptSource(loadTokenizer('o200k'), { seed: 3 })
    const starts = new Set<string>()
    const ids = PROMPT_WORDS.length ** 2
    for (let id = 0; id < ids; id++) starts.add(source.prompt(id, 6).split(' ').slice(0, 2).join(' '))
    assert.equal(starts.size, ids)
  })

  test('rejects impossible arguments', () => {
    const tokenizer = loadTokenizer('o200k')
    const source = new ExactPromptSource(tokenizer)
    assert.throws(() => source.prompt(0, -1), RangeError)
    assert.throws(() => source.prompt(0, 2.5), RangeError)
    assert.throws(() => source.prompt(Number.NaN, 5), RangeError)
    assert.throws(() => new ExactPromptSource(tokenizer, { sharedPrefixTokens: -3 }), RangeError)
  })

  test('exact even for a tokenizer whose counts do not add up word by word', () => {
    const tokenizer = mergingTokenizer()
    // The premise: here the cost of a word depends on its neighbour.
    assert.equal(tokenizer.count('time'), 1)
    assert.equal(tokenizer.count('year'), 1)
    assert.equal(tokenizer.count('time year'), 1)
    assert.equal(tokenizer.count('time man'), 2)
    const plain = new ExactPromptSource(tokenizer, { seed: 4 })
    for (const [id, tokens] of LENGTHS.entries()) {
      assert.equal(tokenizer.count(plain.prompt(id, tokens)), tokens, `plain, ${tokens}`)
    }
    const separators = new Set<string>()
    for (const sharedTokens of [30, 31, 32, 33, 34, 35]) {
      const shared = new ExactPromptSource(tokenizer, { seed: 4, sharedPrefixTokens: sharedTokens })
      const prefixText = shared.prompt(0, sharedTokens)
      const prefix = tokenizer.encode(prefixText)
      for (const [id, tokens] of LENGTHS.entries()) {
        if (tokens <= sharedTokens) continue
        const text = shared.prompt(id, tokens)
        const ids = tokenizer.encode(text)
        assert.equal(ids.length, tokens, `shared ${sharedTokens}, ${tokens}`)
        assert.deepEqual(ids.slice(0, sharedTokens), prefix, `shared ${sharedTokens}, ${tokens}`)
        separators.add(text.slice(prefixText.length, prefixText.length + 1))
      }
    }
    // Both cases came up: joins where a space kept the prefix intact, and joins where the prefix's
    // last word would have merged with the next, so a newline had to separate them.
    assert.deepEqual([...separators].sort(), ['\n', ' '])
  })

  test('exact for a character-level tokenizer, where no word is one token', () => {
    const tokenizer: Tokenizer = {
      name: 'characters',
      encode: (text) => [...text].map((char) => char.codePointAt(0) as number),
      decode: (ids) => String.fromCodePoint(...ids),
      count: (text) => [...text].length,
    }
    const source = new ExactPromptSource(tokenizer, { seed: 8, sharedPrefixTokens: 10 })
    for (const tokens of [1, 2, 9, 10, 11, 12, 13, 50, 333, 1000]) {
      assert.equal(source.prompt(tokens, tokens).length, tokens)
    }
  })

  test('512 prompts of 4,000 o200k tokens take well under the time budget', () => {
    const tokenizer = loadTokenizer('o200k')
    const source = new ExactPromptSource(tokenizer, { seed: 1 })
    const started = performance.now()
    for (let id = 0; id < 512; id++) source.prompt(id, 4000)
    const elapsed = performance.now() - started
    // ~0.5 s on a 2-core machine; the margin is for loaded CI runners, the bound for a regression
    // to several counts per prompt.
    assert.ok(elapsed < 6000, `${Math.round(elapsed)} ms`)
  })
})

/**
 * A tokenizer that does not add up word by word: adjacent words separated by one space merge into
 * one token when both have an even number of letters (so joins can merge too); a newline is a
 * token of its own and never merges. Ids are stable per token text.
 */
function mergingTokenizer(): Tokenizer {
  const ids = new Map<string, number>()
  const names: string[] = []
  const idOf = (token: string): number => {
    let id = ids.get(token)
    if (id === undefined) {
      id = names.length
      ids.set(token, id)
      names.push(token)
    }
    return id
  }
  const tokenize = (text: string): string[] => {
    const tokens: string[] = []
    const parts = text.split(/(\s+)/)
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string
      if (part === '') continue
      if (/^\s+$/.test(part)) {
        if (part.includes('\n')) tokens.push('\n')
        continue
      }
      const next = parts[i + 2]
      if (parts[i + 1] === ' ' && next !== undefined && part.length % 2 === 0 && next.length % 2 === 0) {
        tokens.push(`${part} ${next}`)
        i += 2
      } else {
        tokens.push(part)
      }
    }
    return tokens
  }
  return {
    name: 'merging (test)',
    encode: (text) => tokenize(text).map(idOf),
    decode: (list) => list.map((id) => names[id] as string).join(' '),
    count: (text) => tokenize(text).length,
  }
}
