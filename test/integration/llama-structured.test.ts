// test-lane: long
// (a real engine on one thread of this CPU, in the shared lane: its subject is what the server answers,
// not its speed; the knee on the real engine, which is, keeps the alone lane: llama-cpp.test.ts)
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { freePort } from '../helpers/free-port.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'

/**
 * Structured output and tool calls against a real llama.cpp (the team's kit beside this repository,
 * started with --jinja for tools). Its random-weight model writes nonsense, but llama.cpp constrains
 * it with a grammar from the schema, so a schema of enums and booleans leaves it no room to be
 * invalid, and one of free strings lets it run past max_tokens inside a string (truncated). This
 * build refuses tools on a stream (HTTP 500), so the tool run is not streamed, and its calls come back
 * either parsed (`tool_calls`) or, cut by max_tokens, as the text of its generic `{"tool_call": ...}`.
 * In a session (--sessions --tools), each later turn sends the call and its result (about 5 s).
 */
const KIT = fileURLToPath(new URL('../../../shared/engines/llama.cpp/start.sh', import.meta.url))
const skip = existsSync(KIT)
  ? false
  : `no llama.cpp kit at ${KIT} (the team's ../shared is not beside this clone)`

const MODE = {
  type: 'object',
  properties: { mode: { type: 'string', enum: ['eco', 'fast'] }, boost: { type: 'boolean' } },
  required: ['mode', 'boost'],
  additionalProperties: false,
}

function startLlamaServer(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile('bash', [KIT, String(port), '2', '--jinja'], { timeout: 300_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${KIT} failed: ${stderr || error.message}`))
      else resolve(Number.parseInt(stdout.trim(), 10))
    })
  })
}

test('llama.cpp: schema answers validate and are counted; forced tool calls are read, timed and checked, and carried through a session', {
  skip,
  timeout: 600_000,
}, async () => {
  const port = await freePort()
  const pid = await startLlamaServer(port)
  const dir = tempDir()
  try {
    const schemaFile = join(dir, 'mode.json')
    writeFileSync(schemaFile, JSON.stringify(MODE))
    // One level of two streams: what is checked is each answer, not how the load was offered (two
    // levels of six requests each cost this file a third more of the CPU it shares with the lane).
    const schemaRun = testConfig(`http://127.0.0.1:${port}`, 'tiny', {
      levels: [2],
      requests: 4,
      output_tokens: 48,
      out_dir: join(dir, 'schema'),
    })
    schemaRun.load.control = false
    schemaRun.workload.response_schema = schemaFile
    const schema = await runToResult(schemaRun, join(dir, 'schema'))
    for (const level of schema.levels) {
      const counts = level.structured?.schema
      assert.ok(counts != null, `level ${level.value} has schema counts`)
      assert.equal(counts.checked, level.ok, 'every successful answer is checked')
      assert.equal(counts.valid + counts.invalid + counts.truncated, counts.checked)
      // The grammar leaves no invalid answer: a schema of enums and booleans closes well inside 48 tokens.
      assert.equal(counts.valid, counts.checked, JSON.stringify(counts))
      assert.equal(level.output_valid_share, 1)
    }

    const toolsFile = join(dir, 'tools.json')
    writeFileSync(
      toolsFile,
      JSON.stringify([
        // This llama.cpp refuses a function without a description (HTTP 500 "key 'description' not found").
        { type: 'function', function: { name: 'set_mode', description: 'Set the mode', parameters: MODE } },
      ]),
    )
    const toolRun = testConfig(`http://127.0.0.1:${port}`, 'tiny', {
      levels: [2],
      requests: 4,
      output_tokens: 120,
      out_dir: join(dir, 'tools'),
    })
    toolRun.load.control = false
    toolRun.client.stream = false
    toolRun.workload.tools = toolsFile
    toolRun.workload.tool_choice = 'required'
    const tools = await runToResult(toolRun, join(dir, 'tools'))
    for (const level of tools.levels) {
      const counts = level.structured?.tools
      assert.ok(
        counts != null,
        `level ${level.value} has tool counts: ${JSON.stringify({ ok: level.ok, errors: level.error_samples })}`,
      )
      assert.equal(counts.requests, level.ok)
      assert.equal(counts.call_share, 1, 'tool_choice required: every answer calls the tool')
      assert.equal(counts.invalid, 0, 'a call the grammar shaped is valid unless max_tokens cut it')
      assert.equal(counts.valid + counts.truncated, counts.checked)
    }
    const { records } = readRecords(join(dir, 'tools', RECORDS_FILE))
    const measured = records.filter((record) => record.phase === 'measure')
    for (const record of measured) {
      assert.equal(record.tool_calls, 1)
      // A truncated call is one max_tokens cut, and a valid one closed before it.
      if (record.tool_check === 'truncated') assert.equal(record.finish_reason, 'length')
      assert.equal(record.first_tool_call_at, undefined, 'not streamed: no first delta to time')
    }

    // A 3-turn session with forced calls: each later turn sends the call and its result (the turn's
    // 40-token input), so the prompt grows by at least that, and every turn is counted a tool-call turn.
    const sessionRun = testConfig(`http://127.0.0.1:${port}`, 'tiny', {
      levels: [1],
      requests: 3,
      input_tokens: 40,
      output_tokens: 120,
      out_dir: join(dir, 'tool-session'),
      preflight: false,
    })
    sessionRun.load.control = false
    sessionRun.client.stream = false
    Object.assign(sessionRun.workload, {
      sessions: true,
      turns: 3,
      tools: toolsFile,
      tool_choice: 'required',
    })
    const session = await runToResult(sessionRun, join(dir, 'tool-session'))
    const turns = readRecords(join(dir, 'tool-session', RECORDS_FILE))
      .records.filter((record) => record.phase === 'measure')
      .sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0))
    assert.deepEqual(
      turns.map((r) => [r.turn, r.error, r.tool_calls, r.tool_call_source]),
      [0, 1, 2].map((t) => [t, null, 1, 'deltas']),
    )
    for (let t = 1; t < turns.length; t++) {
      const grown = (turns[t]?.input_tokens ?? 0) - (turns[t - 1]?.input_tokens ?? 0)
      assert.ok(grown >= 40, `turn ${t}: the prompt grew by ${grown} tokens, less than the tool result`)
    }
    assert.deepEqual(
      session.levels[0]?.turns?.map((f) => f.tool_call_turns),
      [1, 1, 1],
    )
  } finally {
    process.kill(pid)
  }
})
