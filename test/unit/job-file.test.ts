import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { seededRandom } from '../../src/random.js'
import { DatasetError } from '../../src/workload/dataset.js'
import { loadJobFile } from '../../src/workload/job-file.js'
import { ancestorsOf, turnDepths } from '../../src/workload/jobs.js'
import { syntheticJobs } from '../../src/workload/synthetic-jobs.js'

const EXAMPLE = fileURLToPath(new URL('../../examples/jobs.jsonl', import.meta.url))
/** Stands in for the tokenizer: text of `tokens` words, distinct by id. */
const WORDS = { prompt: (id: number, tokens: number): string => Array(tokens).fill(`w${id}`).join(' ') }

function withFile(content: string, check: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-jobs-'))
  try {
    const path = join(dir, 'jobs.jsonl')
    writeFileSync(path, content)
    check(path)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('the documented example file: a fan-out of two joined, text and sized turns, defaults filled in', () => {
  const set = loadJobFile(EXAMPLE, WORDS, 77)
  assert.equal(set.jobs.length, 2)
  const [agent, sized] = set.jobs as [NonNullable<(typeof set.jobs)[0]>, NonNullable<(typeof set.jobs)[0]>]
  assert.equal(agent.id, 'fix-failing-test')
  assert.deepEqual(
    agent.turns.map((t) => t.parents),
    [[], [0], [0], [1, 2], [3]],
  )
  assert.deepEqual(turnDepths(agent.turns), [0, 1, 1, 2, 3])
  assert.deepEqual(ancestorsOf(agent.turns, 3), [0, 1, 2])
  assert.deepEqual(ancestorsOf(agent.turns, 2), [0])
  assert.deepEqual(
    agent.turns.map((t) => t.tool_wait_ms),
    [1200, 400, 400, 2500, 0],
  )
  // The last turn names no output length: the run's own.
  assert.equal(agent.turns[4]?.output_tokens, 77)
  assert.equal(agent.preamble[0]?.role, 'system')
  // Sized turns: exact text of that many tokens; the system prompt too.
  assert.deepEqual(
    sized.turns.map((t) => t.input.split(' ').length),
    [120, 600, 600],
  )
  assert.equal(sized.preamble[0]?.content.split(' ').length, 400)
  // Chained by default, and each delta distinct.
  assert.deepEqual(
    sized.turns.map((t) => t.parents),
    [[], [0], [1]],
  )
  assert.notEqual(sized.turns[1]?.input, sized.turns[2]?.input)
})

test('a bad job file is refused with its path, its line and the turn at fault', () => {
  const good = '{"id": "a", "turns": [{"input": "hi"}]}'
  const cases: [string, RegExp][] = [
    [
      '{"id": "b", "turns": [{"input": "x"}, {"input": "y", "parents": [1]}]}',
      /:2: turns\[1\]: "parents": 1 is not an earlier turn/,
    ],
    [
      '{"id": "b", "turns": [{"input": "x", "tool_wait_s": -1}]}',
      /:2: turns\[0\]: "tool_wait_s": expected seconds >= 0/,
    ],
    [
      '{"id": "b", "turns": [{"input": "x", "input_tokens": 3}]}',
      /:2: turns\[0\]: expected "input" \(text\) or "input_tokens"/,
    ],
    ['{"id": "b", "turns": [{"text": "x"}]}', /:2: turns\[0\]: unknown key "text"/],
    ['{"id": "b", "turns": []}', /:2: "turns": expected a non-empty array/],
    [
      '{"id": "b", "turns": [{"input": "x", "output_tokens": 0}]}',
      /:2: turns\[0\]: "output_tokens": expected a whole number >= 1/,
    ],
    [
      '{"id": "b", "turns": [{"input": "x"}, {"input": "y", "parents": [0, 0]}]}',
      /:2: turns\[1\]: "parents": \[0,0\] names a turn twice/,
    ],
    ['{"id": "b", "turns": [{"input": "x"}', /:2: not valid JSON/],
    ['[1, 2]', /:2: expected a job object/],
  ]
  for (const [line, expected] of cases)
    withFile(`${good}\n${line}\n`, (path) => {
      assert.throws(
        () => loadJobFile(path, WORDS, 10),
        (error: unknown) => {
          assert.ok(error instanceof DatasetError)
          assert.ok(error.message.startsWith(`job file ${path}:2: `), error.message)
          assert.match(error.message, expected)
          return true
        },
      )
    })
  withFile('\n', (path) =>
    assert.throws(() => loadJobFile(path, WORDS, 10), /job file .*: the file is empty/),
  )
})

test('synthetic jobs: the stated shape (a root, a fan-out, its join, a chain) and tool waits of the set mean', () => {
  const random = seededRandom(3)
  const jobs = syntheticJobs(WORDS, 'system', {
    count: 400,
    steps: 4,
    fanOut: 3,
    toolWaitMeanMs: 2000,
    inputTokens: () => 5,
    outputTokens: () => 7,
    random,
  })
  assert.equal(jobs.length, 400)
  const job = jobs[0] as NonNullable<(typeof jobs)[0]>
  assert.deepEqual(
    job.turns.map((t) => t.parents),
    [[], [0], [0], [0], [1, 2, 3], [4]],
  )
  assert.deepEqual(turnDepths(job.turns), [0, 1, 1, 1, 2, 3])
  assert.equal(job.turns.at(-1)?.tool_wait_ms, 0, 'the last step waits for nothing')
  const waits = jobs.flatMap((j) => j.turns.slice(0, -1).map((t) => t.tool_wait_ms))
  const mean = waits.reduce((a, b) => a + b, 0) / waits.length
  // 2000 waits of an exponential with mean 2000 ms: the standard error is 2000/sqrt(2000) ≈ 45 ms.
  assert.ok(Math.abs(mean - 2000) < 200, `mean tool wait ${mean} ms`)
  assert.ok(waits.every((w) => w >= 0))
  const chain = syntheticJobs(WORDS, '', {
    count: 1,
    steps: 3,
    fanOut: 1,
    toolWaitMeanMs: 0,
    inputTokens: () => 5,
    outputTokens: () => 7,
    random,
  })
  assert.deepEqual(
    chain[0]?.turns.map((t) => [t.parents, t.tool_wait_ms]),
    [
      [[], 0],
      [[0], 0],
      [[1], 0],
    ],
  )
  assert.deepEqual(chain[0]?.preamble, [])
})

const ROLLOUT = fileURLToPath(new URL('../fixtures/jobs/rollout-trace.jsonl', import.meta.url))
const SGLANG = fileURLToPath(new URL('../fixtures/jobs/sglang-agentic-trace.json', import.meta.url))

test("a rollout trace (vLLM TPU's {group, stream, prompt_len, out_lens, obs_lens}): a group is a job of parallel stream chains", () => {
  const set = loadJobFile(ROLLOUT, WORDS, 99)
  assert.match(set.source, /rollout trace: 2 groups as jobs, 3 streams, 6 turns/)
  const [group0, group1] = set.jobs as [NonNullable<(typeof set.jobs)[0]>, NonNullable<(typeof set.jobs)[0]>]
  assert.equal(group0.id, 'group-0')
  // Streams in order (stream 0's 3 turns, then stream 1's 2), each a chain from its own root.
  assert.deepEqual(
    group0.turns.map((t) => [t.parents, t.output_tokens]),
    [
      [[], 39],
      [[0], 6],
      [[1], 5],
      [[], 12],
      [[3], 6],
    ],
  )
  // Both roots send the group's one prompt, of the first stream's length (stream 0: 75 tokens).
  assert.equal(group0.turns[0]?.input, group0.turns[3]?.input)
  assert.equal(group0.turns[0]?.input.split(' ').length, 75)
  // Turn i > 0 sends observation i-1; the observation after the last turn is never sent.
  assert.deepEqual(
    group0.turns.map((t) => t.input.split(' ').length),
    [75, 2, 94, 75, 9],
  )
  assert.deepEqual(turnDepths(group0.turns), [0, 1, 2, 0, 1])
  assert.equal(group1.turns.length, 1)
  assert.ok(group0.turns.every((t) => t.tool_wait_ms === 0))
  withFile(
    '{"group": 0, "stream": 0, "prompt_len": 5, "out_lens": [3, 4], "obs_lens": [1]}\n{"group": 0, "stream": 1, "prompt_len": 5, "out_lens": [3, 4], "obs_lens": []}\n',
    (path) =>
      assert.throws(
        () => loadJobFile(path, WORDS, 9),
        /rollout trace .*:2: "obs_lens": 0 observations for 2 turns/,
      ),
  )
  withFile('{"group": 0, "stream": 0, "prompt_len": 5, "out_lens": [3, 0]}\n', (path) =>
    assert.throws(
      () => loadJobFile(path, WORDS, 9),
      /rollout trace .*:1: "out_lens": expected a non-empty array of whole numbers >= 1/,
    ),
  )
})

test("SGLang's agentic trace JSON: each conversation a chain, its deltas' messages as one user turn, the recorded replies dropped", () => {
  const set = loadJobFile(SGLANG, WORDS, 99)
  assert.match(set.source, /SGLang agentic trace: 2 conversations as jobs, 4 turns/)
  const first = set.jobs[0] as NonNullable<(typeof set.jobs)[0]>
  assert.deepEqual(first.preamble, [{ role: 'system', content: 'You are a coding agent.' }])
  assert.deepEqual(
    first.turns.map((t) => [t.input, t.output_tokens, t.parents]),
    [
      ['Fix the failing test.', 99, []],
      ['FAIL parser.test.ts\n\nGo on.', 99, [0]],
      ['Summarize.', 33, [1]],
    ],
  )
  withFile(
    '{"conversations": [[{"messages": [{"role": "user", "content": "a"}]}], [{"messages": "x"}]]}',
    (path) =>
      assert.throws(
        () => loadJobFile(path, WORDS, 9),
        /agentic trace .*: conversations\[1\]\[0\]\.messages: expected an array/,
      ),
  )
})
