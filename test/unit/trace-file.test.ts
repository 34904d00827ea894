import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ExactPromptSource } from '../../src/workload/exact-prompts.js'
import { loadTokenizer } from '../../src/workload/tokenizers.js'
import {
  loadTraceFile,
  MOONCAKE_BLOCK_TOKENS,
  parseDateTimeMs,
  parseTrace,
  TraceError,
} from '../../src/workload/trace-file.js'
import { TracePrompts } from '../../src/workload/trace-prompts.js'
import { replayOf } from '../../src/workload/trace-replay.js'

/** Copies of ../shared/fixtures/traces (see the README beside them) and one hand-written BurstGPT file. */
const DIR = fileURLToPath(new URL('../fixtures/trace-replay/', import.meta.url))
const MOONCAKE = `${DIR}mooncake-fast25-conversation.head30.jsonl`
const AZURE = `${DIR}azure-llm-inference-conv-2023.head30.csv`
const BURSTGPT = `${DIR}burstgpt-handwritten.csv`

const WHOLE = { start_s: 0, duration_s: null, max_requests: null }

test('Mooncake JSONL: every line a row, in ms, with its hash ids, as the file says', () => {
  const trace = loadTraceFile(MOONCAKE)
  const lines = readFileSync(MOONCAKE, 'utf8').trim().split('\n')
  assert.equal(trace.format, 'mooncake')
  assert.equal(trace.rows.length, lines.length)
  assert.equal(trace.skipped, null)
  lines.forEach((line, i) => {
    const raw = JSON.parse(line)
    assert.deepEqual(trace.rows[i], {
      at_ms: raw.timestamp,
      input_tokens: raw.input_length,
      output_tokens: raw.output_length,
      hash_ids: raw.hash_ids,
      line: i + 1,
    })
    // The trace's own block size: one hash id per started 512-token block.
    assert.equal(raw.hash_ids.length, Math.ceil(raw.input_length / MOONCAKE_BLOCK_TOKENS), `line ${i + 1}`)
  })
})

test('Azure CSV: date-times with 7 sub-second digits keep them; the header names the format', () => {
  const trace = loadTraceFile(AZURE)
  const lines = readFileSync(AZURE, 'utf8').trim().split('\n')
  assert.equal(trace.format, 'azure')
  assert.equal(trace.rows.length, lines.length - 1)
  // Rows 1 and 2: 2023-11-16 18:15:46.6805900 and 18:15:50.9951690, 374/44 and 396/109 tokens.
  assert.deepEqual(
    trace.rows.slice(0, 2).map((row) => [row.input_tokens, row.output_tokens, row.line]),
    [
      [374, 44, 2],
      [396, 109, 3],
    ],
  )
  const gap = (trace.rows[1]?.at_ms as number) - (trace.rows[0]?.at_ms as number)
  // Epoch ms are doubles near 1.7e12: a quarter of a microsecond is what they can hold.
  assert.ok(Math.abs(gap - 4314.579) < 1e-3, `gap ${gap}`)
  assert.equal(parseDateTimeMs('2023-11-16 00:00:00'), Date.UTC(2023, 10, 16))
  assert.equal(parseDateTimeMs('16/11/2023 18:15'), null)
})

test('BurstGPT CSV (hand-written): seconds to ms, a quoted model, the failed row skipped and counted', () => {
  const trace = loadTraceFile(BURSTGPT)
  assert.equal(trace.format, 'burstgpt')
  assert.deepEqual(
    trace.rows.map((row) => [row.at_ms, row.input_tokens, row.output_tokens, row.line]),
    [
      [5000, 472, 18, 2],
      [6000, 631, 267, 4],
      [8000, 96, 411, 5],
      [11000, 1530, 82, 6],
    ],
  )
  assert.equal(trace.skipped?.count, 1)
  assert.match(trace.skipped?.reason ?? '', /0 output tokens/)
})

test('bad rows: the error names the file and the line, and what was expected', () => {
  const cases: [string, string, RegExp][] = [
    [
      'bad.jsonl',
      '{"timestamp": 0, "input_length": 5, "output_length": 2}\n\n{"timestamp": 1, "input_length": 5',
      /^trace bad\.jsonl:3: not a JSON object$/,
    ],
    [
      'bad.jsonl',
      '{"timestamp": 0, "input_length": 0, "output_length": 2}',
      /^trace bad\.jsonl:1: expected "input_length" as a positive whole number$/,
    ],
    [
      'bad.jsonl',
      '{"timestamp": "soon", "input_length": 3, "output_length": 2}',
      /^trace bad\.jsonl:1: expected "timestamp"/,
    ],
    [
      'bad.jsonl',
      '{"timestamp": 0, "input_length": 3, "output_length": 2, "hash_ids": ["a"]}',
      /^trace bad\.jsonl:1: expected "hash_ids"/,
    ],
    [
      'az.csv',
      'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\nyesterday,1,2\n',
      /^trace az\.csv:3: expected TIMESTAMP as a date-time .* got "yesterday"$/,
    ],
    [
      'az.csv',
      'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,many,44\n',
      /^trace az\.csv:2: expected ContextTokens as a positive whole number, got "many"$/,
    ],
    [
      'b.csv',
      'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,ChatGPT,10,x,10,API log\n',
      /^trace b\.csv:2: expected Response tokens as a whole number, got "x"$/,
    ],
    ['other.csv', 'time,prompt,answer\n1,2,3\n', /^trace other\.csv:1: expected a CSV header with TIMESTAMP/],
    ['other.jsonl', 'hello\n', /^trace other\.jsonl:1: expected Mooncake JSONL lines/],
    ['empty.jsonl', '\n\n', /^trace empty\.jsonl: the file is empty$/],
    // What the file holds is echoed with its control bytes escaped, so it cannot drive the terminal.
    [
      'esc.csv',
      '\x1b[2Jtime\rx\n',
      /^trace esc\.csv:1: expected a CSV header .*, got "\\x1b\[2Jtime\\x0dx"$/,
    ],
  ]
  for (const [path, text, message] of cases)
    assert.throws(
      () => parseTrace(path, text),
      (error: Error) => error instanceof TraceError && message.test(error.message),
      `${path}: ${text}`,
    )
  assert.throws(() => loadTraceFile(`${DIR}missing.jsonl`), /missing\.jsonl: cannot read it \(ENOENT\)/)
})

test('window and cap: trace seconds from the first row, offsets from the first row kept', () => {
  const trace = loadTraceFile(MOONCAKE)
  const whole = replayOf(trace, WHOLE, [1])
  assert.equal(whole.rows.length, 30)
  assert.deepEqual(
    Array.from(whole.offsets_ms),
    trace.rows.map((row) => row.at_ms - (trace.rows[0]?.at_ms ?? 0)),
  )
  assert.equal(whole.meta.span_s, 9)
  // Rows at 3000 and 5999 ms lie in [3, 6) s; offsets count from the rows at 3000.
  const window = replayOf(trace, { start_s: 3, duration_s: 3, max_requests: null }, [2])
  const inWindow = trace.rows.filter((row) => row.at_ms >= 3000 && row.at_ms < 6000)
  assert.equal(window.rows.length, inWindow.length)
  assert.deepEqual(new Set(window.offsets_ms), new Set([0, 2999]))
  assert.deepEqual(window.meta.window, { start_s: 3, duration_s: 3, max_requests: null })
  assert.equal(window.meta.rows_used, inWindow.length)
  assert.equal(window.meta.rows_in_file, 30)
  const capped = replayOf(trace, { start_s: 3, duration_s: null, max_requests: 17 }, [1])
  assert.deepEqual(
    capped.rows.map((row) => row.line),
    trace.rows
      .filter((row) => row.at_ms >= 3000)
      .slice(0, 17)
      .map((row) => row.line),
  )
  assert.equal(capped.meta.span_s, 2.999)
  assert.throws(
    () => replayOf(trace, { start_s: 60, duration_s: null, max_requests: null }, [1]),
    /no row in the window/,
  )
})

test('Mooncake prompts: exactly input_length tokens, and two prompts share exactly their common hash blocks', () => {
  const tokenizer = loadTokenizer('o200k')
  const replay = replayOf(loadTraceFile(MOONCAKE), WHOLE, [1])
  const prompts = new TracePrompts(new ExactPromptSource(tokenizer, { seed: 1 }), tokenizer)
  const ids = replay.rows.map((row, i) => tokenizer.encode(prompts.prompt(row, i)))
  for (const [i, row] of replay.rows.entries()) assert.equal(ids[i]?.length, row.input_tokens, `row ${i}`)
  let pairs = 0
  let exact = 0
  for (let a = 0; a < ids.length; a++) {
    for (let b = a + 1; b < ids.length; b++) {
      const [x, y] = [ids[a] as number[], ids[b] as number[]]
      const [hx, hy] = [replay.rows[a]?.hash_ids ?? [], replay.rows[b]?.hash_ids ?? []]
      let blocks = 0
      while (blocks < hx.length && blocks < hy.length && hx[blocks] === hy[blocks]) blocks++
      let common = 0
      while (common < x.length && common < y.length && x[common] === y[common]) common++
      // Shared blocks are shared token for token. Two different blocks open with their ids spelled in
      // two words of 94 (ids below 8,836): the first word alone can match, by chance, never both.
      const expected = Math.min(blocks * MOONCAKE_BLOCK_TOKENS, x.length, y.length)
      assert.ok(
        common === expected || common === expected + 1,
        `rows ${a} and ${b}: ${blocks} blocks, ${common} tokens`,
      )
      if (common === expected) exact++
      pairs++
    }
  }
  assert.equal(pairs, (30 * 29) / 2)
  assert.ok(exact > pairs * 0.9, `${exact} of ${pairs} pairs share exactly their blocks`)
  // Same id at the same place, same text: block 0 (id 0 in every row) is one text.
  const firsts = new Set(replay.rows.map((row, i) => prompts.blockTexts(row, i)[0]))
  assert.equal(firsts.size, 1)
})

test('a row with more input than its hash ids cover gets a tail of its own; rows without ids a prompt each', () => {
  const tokenizer = loadTokenizer('o200k')
  const prompts = new TracePrompts(new ExactPromptSource(tokenizer, { seed: 1 }), tokenizer)
  const long = { at_ms: 0, input_tokens: 700, output_tokens: 1, hash_ids: [5], line: 1 }
  const blocks = prompts.blockTexts(long, 0)
  assert.equal(blocks.length, 2)
  assert.equal(tokenizer.count(prompts.prompt(long, 0)), 700)
  const plain = (i: number) =>
    prompts.prompt({ at_ms: 0, input_tokens: 40, output_tokens: 1, line: i + 1 }, i)
  assert.equal(tokenizer.count(plain(0)), 40)
  assert.notEqual(plain(0).split(' ')[0], plain(1).split(' ')[0])
})

test('a timestamp past a month of trace time, negative or overflowing is refused with its line', () => {
  const mooncake = (stamps: number[]): string =>
    stamps.map((t) => JSON.stringify({ timestamp: t, input_length: 10, output_length: 5 })).join('\n')
  // 1e308 ms: the run would have waited 1e305 s for the second row.
  assert.throws(
    () => parseTrace('t.jsonl', mooncake([0, 1e308, 5])),
    (error: Error) =>
      error instanceof TraceError &&
      /^trace t\.jsonl:2: timestamp 1e\+305 s after the trace's earliest row; expected a trace spanning at most 31 days$/.test(
        error.message,
      ),
  )
  // A month is the limit, counted from the earliest row wherever it sits in the file.
  const month = 31 * 24 * 3600 * 1000
  assert.equal(parseTrace('t.jsonl', mooncake([month, 0])).rows.length, 2)
  assert.throws(() => parseTrace('t.jsonl', mooncake([month + 1, 0])), /: trace t\.jsonl:1: timestamp/)
  assert.throws(
    () => parseTrace('t.jsonl', mooncake([0, -1])),
    /: trace t\.jsonl:2: expected "timestamp" as a number of ms, 0 or more$/,
  )
  // BurstGPT seconds: 1e308 s is Infinity in ms, refused as a timestamp even alone.
  const burst = (stamp: string): string =>
    `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n${stamp},ChatGPT,10,5,15,Conversation log\n`
  assert.throws(
    () => parseTrace('b.csv', burst('1e308')),
    /: trace b\.csv:2: expected Timestamp as a number of seconds, 0 or more, got "1e308"$/,
  )
  assert.throws(() => parseTrace('b.csv', burst('-3')), /: trace b\.csv:2: expected Timestamp/)
})
