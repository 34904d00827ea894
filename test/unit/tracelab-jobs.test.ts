import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DatasetError } from '../../src/workload/dataset.js'
import { loadJobFile } from '../../src/workload/job-file.js'
import { MAX_JOB_TURNS } from '../../src/workload/jobs.js'
import { TRACELAB_CSV_HEADER } from '../../src/workload/tracelab-jobs.js'

/** Stands in for the tokenizer: text of `tokens` words. */
const WORDS = { prompt: (id: number, tokens: number): string => Array(tokens).fill(`w${id}`).join(' ') }
const words = (text: string): number => text.split(' ').length
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/jobs/${name}`, import.meta.url))

function withFile(name: string, content: string, check: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-tracelab-'))
  try {
    const path = join(dir, name)
    writeFileSync(path, content)
    check(path)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test("TraceLab's canonical CSV: a session is a chain in round order, round 0's prefix its system prompt, tool waits kept", () => {
  const set = loadJobFile(fixture('tracelab.csv'), WORDS, 99)
  assert.match(set.source, /TraceLab CSV: 2 sessions as chain jobs, 4 turns/)
  const [a, b] = set.jobs
  assert.equal(a?.id, 's-a')
  assert.equal(words(a?.preamble[0]?.content as string), 3000)
  assert.deepEqual(
    a?.turns.map((t) => [words(t.input), t.output_tokens, t.tool_wait_ms, t.parents]),
    [
      [120, 40, 850.5, []],
      [30, 12, 0, [0]],
    ],
  )
  // Rows out of order in the file: round_idx orders them.
  assert.equal(b?.id, 's-b')
  assert.equal(words(b?.preamble[0]?.content as string), 2000)
  assert.deepEqual(
    b?.turns.map((t) => [words(t.input), t.output_tokens, t.tool_wait_ms]),
    [
      [60, 20, 1200],
      [7, 5, 0],
    ],
  )
})

test("TraceLab's round trace (JSONL): tools' wall latencies summed, the runner's where the wall one is null", () => {
  const set = loadJobFile(fixture('tracelab-rounds.jsonl'), WORDS, 99)
  assert.match(set.source, /TraceLab round trace: 1 sessions as chain jobs, 2 turns/)
  const job = set.jobs[0]
  assert.equal(words(job?.preamble[0]?.content as string), 2500)
  assert.deepEqual(
    job?.turns.map((t) => [words(t.input), t.output_tokens, t.tool_wait_ms, t.parents]),
    [
      [90, 33, 475, []],
      [15, 8, 0, [0]],
    ],
  )
})

test('a bad line refuses the trace, naming the file, the line and the field', () => {
  const cases: [string, string, RegExp][] = [
    [
      't.csv',
      `${TRACELAB_CSV_HEADER}\ns,1,1,0,0,0,0\ns,x,1,0,1,0,0\n`,
      /TraceLab trace .*t\.csv:3: "input_len": expected a whole number >= 0, got "x"/,
    ],
    ['t.csv', `${TRACELAB_CSV_HEADER}\ns,1,1,0,0\n`, /t\.csv:2: 5 cells for 7 columns/],
    [
      't.csv',
      `${TRACELAB_CSV_HEADER}\ns,1,1,0,0,-5,0\n`,
      /t\.csv:2: "tool_wait_after_ms": expected a number of ms >= 0, got "-5"/,
    ],
    [
      't.jsonl',
      '{"session_id": "s", "round_index": 0, "newly_append_tokens": 1, "output_tokens": 1}\n{"session_id": "s", "round_index": 1, "newly_append_tokens": 1.5, "output_tokens": 1}\n',
      /TraceLab trace .*t\.jsonl:2: "newly_append_tokens": expected a whole number >= 0, got 1\.5/,
    ],
    [
      't.jsonl',
      '{"session_id": "s", "round_index": 0, "newly_append_tokens": 1, "output_tokens": 1}\n{"session_id": "s", oops\n',
      /t\.jsonl:2: not valid JSON/,
    ],
    [
      't.jsonl',
      '{"session_id": "s", "round_index": 0, "newly_append_tokens": 1, "output_tokens": 1, "tools": [{"tool_wall_latency_ms": "slow"}]}\n',
      /t\.jsonl:1: "tools"\[0\]: latency expected a number of ms >= 0, got "slow"/,
    ],
  ]
  for (const [name, content, message] of cases)
    withFile(name, content, (path) => {
      assert.throws(
        () => loadJobFile(path, WORDS, 10),
        (error: unknown) => error instanceof DatasetError && message.test(error.message),
        `${name}: ${message}`,
      )
    })
})

test(`a session of more than ${MAX_JOB_TURNS} rounds keeps its first ${MAX_JOB_TURNS}, and the source says so`, () => {
  const rows = Array.from({ length: MAX_JOB_TURNS + 3 }, (_, i) => `long,5,5,0,${i},10,100`)
  withFile('long.csv', `${TRACELAB_CSV_HEADER}\n${rows.join('\n')}\n`, (path) => {
    const set = loadJobFile(path, WORDS, 10)
    assert.equal(set.jobs[0]?.turns.length, MAX_JOB_TURNS)
    assert.match(set.source, new RegExp(`1 sessions cut to their first ${MAX_JOB_TURNS} rounds`))
  })
})
