import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type Dataset, DatasetError, loadDataset } from '../../src/workload/dataset.js'
import { loadTokenizer } from '../../src/workload/tokenizers.js'

const countTextTokens = (text: string): number => loadTokenizer('o200k').count(text)

const FIXTURES = fileURLToPath(new URL('../fixtures/datasets/', import.meta.url))
const SHIPPED = fileURLToPath(new URL('../../datasets/', import.meta.url))
const fixture = (name: string) => join(FIXTURES, name)

const tmp = mkdtempSync(join(tmpdir(), 'llmbench-dataset-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

function tempFile(name: string, text: string): string {
  const path = join(tmp, name)
  writeFileSync(path, text)
  return path
}

/** Word count: a stand-in tokenizer whose counts are obvious from the fixture text. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length

/** For JSONL, which never needs to measure a reply. */
const noCount = (): number => assert.fail('count must not be called for JSONL')

/** The DatasetError that loading must throw. */
function errorOf(path: string, options?: { maxEntries?: number }): DatasetError {
  try {
    loadDataset(path, words, options)
  } catch (err) {
    assert.ok(err instanceof DatasetError, `expected a DatasetError, got ${String(err)}`)
    return err
  }
  assert.fail(`expected loading ${path} to throw a DatasetError`)
}

/** The whole request of an entry as one string, as it would be measured for input length. */
const promptText = (entry: Dataset['entries'][number]) => entry.messages.map((m) => m.content).join('\n')

// ---- JSONL ----

test('JSONL: both shapes, output_tokens/max_tokens, blank lines, CRLF and a BOM', () => {
  const path = tempFile(
    'mixed.jsonl',
    '\uFEFF{"prompt": "Hello there", "output_tokens": 30}\r\n' +
      '\r\n' +
      '{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}, ' +
      '{"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}], "max_tokens": 12}\n' +
      '   \n' +
      '{"prompt": "No length given", "id": "extra keys are ignored", "max_tokens": null}\n',
  )
  const dataset = loadDataset(path, noCount)
  assert.deepEqual(dataset, {
    path,
    format: 'jsonl',
    skipped: 0,
    entries: [
      { source_line: 1, messages: [{ role: 'user', content: 'Hello there' }], output_tokens: 30 },
      {
        source_line: 3,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: 'Bye' },
        ],
        output_tokens: 12,
      },
      { source_line: 5, messages: [{ role: 'user', content: 'No length given' }], output_tokens: null },
    ],
  })
})

test('JSONL: every malformed line is reported with its line number, in one error', () => {
  const path = fixture('malformed.jsonl')
  const err = errorOf(path)
  assert.deepEqual(err.lines, [3, 5, 7, 9])
  const lines = err.message.split('\n')
  assert.equal(lines[0], `dataset ${path}: 4 bad lines:`)
  for (const [i, line] of [3, 5, 7, 9].entries())
    assert.match(
      lines[i + 1] ?? '',
      new RegExp(`^dataset ${literal(path)}:${line}: not valid JSON \\(.+\\)$`),
    )
  assert.equal(lines.length, 5)
})

test('a line or file nested deeper than 128 levels is refused by line before it is parsed; binary data is not a dataset', () => {
  const deep = (levels: number) => `{"prompt": "p", "x": ${'['.repeat(levels)}${']'.repeat(levels)}}`
  const jsonl = tempFile('deep.jsonl', `${deep(127)}\n${deep(128)}\n`)
  assert.equal(
    errorOf(jsonl).message,
    `dataset ${jsonl}:2: nested deeper than 128 levels of { or [ (real files nest a few levels)`,
  )
  const sharegpt = tempFile(
    'deep.json',
    `[\n{"conversations": []},\n${'['.repeat(200_000)}${']'.repeat(200_000)}]`,
  )
  assert.equal(
    errorOf(sharegpt).message,
    `dataset ${sharegpt}:3: nested deeper than 128 levels of { or [ (real files nest a few levels)`,
  )
  const binary = join(tmp, 'binary.jsonl')
  writeFileSync(binary, Buffer.from('{"prompt": "a"}\n\0\0\0'))
  assert.equal(
    errorOf(binary).message,
    `dataset ${binary}: not a text file (a NUL byte at byte 17); expected JSONL or a ShareGPT JSON array`,
  )
})

test('JSONL: wrong shapes name the line and what was expected', () => {
  const path = fixture('wrong-shapes.jsonl')
  const err = errorOf(path)
  assert.deepEqual(err.lines, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16])
  const at = (line: number) => {
    const found = err.message.split('\n').find((l) => l.startsWith(`dataset ${path}:${line}: `))
    assert.ok(found, `line ${line} in:\n${err.message}`)
    return found.slice(`dataset ${path}:${line}: `.length)
  }
  assert.equal(
    at(2),
    'expected "prompt" (string) or "messages" (array of {role, content}); found keys: text, id',
  )
  assert.match(at(3), /^expected a JSON object .*got \["an","array"\]$/)
  assert.equal(at(4), '"prompt": expected a string, got 42')
  assert.equal(at(5), 'the last message must be from the user, got role "assistant"')
  assert.equal(at(6), 'messages[0].role: expected "system", "user" or "assistant", got "tool"')
  assert.equal(at(7), '"max_tokens": expected a positive integer, got 0')
  assert.equal(at(8), '"output_tokens": expected a positive integer, got 12.5')
  assert.equal(at(9), 'has both "prompt" and "messages"; give one')
  assert.match(at(10), /^"messages": expected a non-empty array/)
  assert.equal(at(11), 'messages[0].content: expected a string, got ["part"]')
  assert.equal(at(12), '"prompt" is empty')
  assert.equal(at(13), '"output_tokens" (10) and "max_tokens" (20) disagree; give one')
  assert.match(at(15), /found keys: conversations \(a ShareGPT conversation belongs in one JSON array\)$/)
  assert.match(at(16), /got null$/)
})

test('JSONL: problems on one line are all named on that line', () => {
  const err = errorOf(tempFile('two-problems.jsonl', '{"prompt": 7, "max_tokens": -1}\n'))
  assert.match(
    err.message,
    /:1: "prompt": expected a string, got 7; "max_tokens": expected a positive integer/,
  )
})

test('JSONL: more than 20 bad lines are listed up to 20, then counted', () => {
  const text = Array.from({ length: 25 }, (_, i) => `{"bad": ${i}}`).join('\n')
  const path = tempFile('many-bad.jsonl', `{"prompt": "ok"}\n${text}\n`)
  const err = errorOf(path)
  assert.deepEqual(
    err.lines,
    Array.from({ length: 25 }, (_, i) => i + 2),
  )
  const lines = err.message.split('\n')
  assert.equal(lines[0], `dataset ${path}: 25 bad lines:`)
  assert.equal(lines.filter((l) => l.startsWith(`dataset ${path}:`) && /:\d+: /.test(l)).length, 20)
  assert.ok(lines[20]?.startsWith(`dataset ${path}:21: `))
  assert.equal(lines.at(-1), 'and 5 more bad lines')
})

test('a single bad line is the whole message, in the path:LINE form', () => {
  const path = tempFile('one-bad.jsonl', '{"prompt": "ok"}\n{"text": "hi"}\n')
  assert.equal(
    errorOf(path).message,
    `dataset ${path}:2: expected "prompt" (string) or "messages" (array of {role, content}); found keys: text`,
  )
})

test('missing, empty and blank files are DatasetErrors', () => {
  const missing = join(tmp, 'nope.jsonl')
  assert.equal(errorOf(missing).message, `dataset ${missing}: file not found`)
  assert.match(errorOf(fixture('empty.jsonl')).message, /empty\.jsonl: the file is empty/)
  assert.match(errorOf(tempFile('blank.jsonl', '\n  \n\t\n')).message, /blank\.jsonl: the file is empty/)
  assert.match(errorOf(tmp).message, /is a directory/)
  assert.match(errorOf(tempFile('empty-array.json', ' [ ] ')).message, /no conversations/)
})

// ---- ShareGPT ----

test('ShareGPT: first human turn (after system turns) is the prompt, the next gpt turn sets output_tokens', () => {
  const path = fixture('sharegpt-skips.json')
  const dataset = loadDataset(path, words)
  assert.equal(dataset.format, 'sharegpt')
  assert.deepEqual(dataset.entries, [
    { source_line: 1, messages: [{ role: 'user', content: 'one two three' }], output_tokens: 5 },
    {
      source_line: 5,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first question here' },
      ],
      output_tokens: 2,
    },
    // A greeting from the model before the human turn is dropped.
    { source_line: 7, messages: [{ role: 'user', content: 'tell me a joke' }], output_tokens: 1 },
    // The "messages" (role/content) export shape.
    { source_line: 12, messages: [{ role: 'user', content: 'messages shaped export' }], output_tokens: 7 },
    // Other speaker names some dumps use: "user", "chatgpt".
    { source_line: 13, messages: [{ role: 'user', content: 'other names' }], output_tokens: 2 },
  ])
  // No reply, no human turn, empty conversation, reply not from gpt, empty human turn, empty reply,
  // unknown speaker, malformed turn.
  assert.equal(dataset.skipped, 8)
})

test('ShareGPT: all conversations skipped is an error that says why', () => {
  const path = fixture('sharegpt-all-skipped.json')
  assert.equal(
    errorOf(path).message,
    `dataset ${path}: no usable conversations; all 3 skipped (1 with no reply, 2 with no human turn)`,
  )
})

test('ShareGPT: invalid JSON names the line of the syntax error', () => {
  const path = fixture('sharegpt-broken.json')
  assert.match(errorOf(path).message, new RegExp(`^dataset ${literal(path)}:5: not valid JSON \\(`))
})

test('ShareGPT: items that are not conversations are errors, all listed by number', () => {
  const path = fixture('sharegpt-wrong-items.json')
  const err = errorOf(path)
  assert.deepEqual(err.lines, [2, 3, 4])
  assert.match(err.message, /conversation 2: expected an object with "conversations".*; got "just a string"/)
  assert.match(err.message, /conversation 3: expected "conversations".*; found keys: dialogue/)
  assert.match(err.message, /conversation 4: "conversations": expected an array of turns, got "not an array"/)
})

// ---- Format detection and limits ----

test('the format comes from the content, not the extension', () => {
  const shareGpt = tempFile(
    'really-sharegpt.jsonl',
    '\n  [{"conversations": [{"from": "human", "value": "a b"}, {"from": "gpt", "value": "c"}]}]',
  )
  assert.equal(loadDataset(shareGpt, words).format, 'sharegpt')
  const jsonl = tempFile('really-jsonl.json', '{"prompt": "a"}\n{"prompt": "b"}\n')
  assert.equal(loadDataset(jsonl, noCount).format, 'jsonl')
  // A pretty-printed object in a .json file is read as JSONL; the error says why.
  const pretty = tempFile('pretty.json', '{\n  "prompt": "a"\n}\n')
  const err = errorOf(pretty)
  assert.match(err.message, /pretty\.json:1: not valid JSON .*does not start with '\['/)
  assert.deepEqual(err.lines, [1, 2, 3])
})

test('maxEntries stops reading: later lines are not looked at', () => {
  const path = tempFile('limit.jsonl', '{"prompt": "a"}\n{"prompt": "b"}\n{"prompt": "c"}\nnot json\n')
  assert.deepEqual(
    loadDataset(path, noCount, { maxEntries: 2 }).entries.map((e) => e.source_line),
    [1, 2],
  )
  const shareGpt = loadDataset(fixture('sharegpt-skips.json'), words, { maxEntries: 2 })
  assert.deepEqual(
    shareGpt.entries.map((e) => e.source_line),
    [1, 5],
  )
  assert.equal(shareGpt.skipped, 3)
  assert.throws(() => loadDataset(path, noCount, { maxEntries: 0 }), RangeError)
})

// ---- The shipped samples ----

test('shipped chat-sample.jsonl: at least 28 entries, both shapes, some with output_tokens', () => {
  const dataset = loadDataset(join(SHIPPED, 'chat-sample.jsonl'), noCount)
  assert.equal(dataset.format, 'jsonl')
  assert.ok(dataset.entries.length >= 28, `${dataset.entries.length} entries`)
  assert.ok(dataset.entries.some((e) => e.messages.length > 1 && e.messages[0]?.role === 'system'))
  assert.ok(dataset.entries.some((e) => e.messages.some((m) => m.role === 'assistant')))
  const lengths = dataset.entries.map((e) => e.output_tokens).filter((n) => n !== null)
  assert.ok(lengths.length >= 10 && lengths.length < dataset.entries.length, `${lengths.length} with lengths`)
  for (const entry of dataset.entries) assert.equal(entry.messages.at(-1)?.role, 'user')
})

test('shipped sharegpt-sample.json: at least 35 entries, 2 skipped, every entry has a reply length', () => {
  const dataset = loadDataset(join(SHIPPED, 'sharegpt-sample.json'), words)
  assert.equal(dataset.format, 'sharegpt')
  assert.ok(dataset.entries.length >= 35, `${dataset.entries.length} entries`)
  assert.equal(dataset.skipped, 2)
  for (const entry of dataset.entries) {
    assert.ok((entry.output_tokens ?? 0) > 0, `entry ${entry.source_line} has a reply length`)
    assert.equal(entry.messages.at(-1)?.role, 'user')
  }
})

test('shipped samples, real tokenizer: prompt lengths spread at least 10x, reply lengths 5x', () => {
  for (const name of ['sharegpt-sample.json', 'chat-sample.jsonl']) {
    const dataset = loadDataset(join(SHIPPED, name), countTextTokens)
    const prompts = dataset.entries.map((e) => countTextTokens(promptText(e)))
    const shortest = Math.min(...prompts)
    const longest = Math.max(...prompts)
    assert.ok(shortest > 0 && longest >= 10 * shortest, `${name}: prompts ${shortest}..${longest} tokens`)
    const replies = dataset.entries.map((e) => e.output_tokens).filter((n) => n !== null)
    assert.ok(Math.max(...replies) >= 5 * Math.min(...replies), `${name}: replies ${replies.join(',')}`)
  }
})

/** A path as a literal inside a RegExp. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
