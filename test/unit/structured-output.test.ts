import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadRunConfig } from '../../src/config/load.js'
import { outputValidShare, structuredAccumulator } from '../../src/metrics/structured-figures.js'
import { chatStructuredFields } from '../../src/protocols/structured-parts.js'
import type { RequestRecord } from '../../src/records/types.js'
import { callsInText, OutputCheck } from '../../src/workload/output-check.js'
import { buildBody } from '../../src/workload/request-body.js'
import {
  BUILTIN_SCHEMA,
  BUILTIN_TOOLS,
  forEngine,
  loadStructuredOutput,
} from '../../src/workload/structured-output.js'
import { configErrorMessage } from '../helpers/config-error.js'
import { makeRecord } from '../helpers/records.js'
import { tempDir } from '../helpers/run-config.js'

const MODE = {
  type: 'object',
  properties: { mode: { enum: ['eco', 'fast'] }, boost: { type: 'boolean' } },
  required: ['mode', 'boost'],
  additionalProperties: false,
}

function answered(text: string, finish = 'stop'): RequestRecord {
  const record = makeRecord({ finish_reason: finish })
  record.output_text = text
  return record
}

test('chat bodies carry the schema as response_format (OpenAI form, or llama.cpp json_object form) and the tools', () => {
  const output = loadStructuredOutput({
    response_schema: 'builtin',
    tools: 'builtin',
    tool_choice: 'get_weather',
  })
  assert.ok(output !== null)
  const options = {
    model: 'm',
    endpoint: '/v1/chat/completions',
    stream: true,
    structured: output,
  }
  const body = JSON.parse(String(buildBody(options, 'hello', 16)))
  assert.deepEqual(body.response_format, {
    type: 'json_schema',
    json_schema: { name: 'invoice', strict: true, schema: BUILTIN_SCHEMA },
  })
  assert.equal(body.tools.length, BUILTIN_TOOLS.length)
  assert.deepEqual(body.tools[0], { type: 'function', function: BUILTIN_TOOLS[0] })
  assert.deepEqual(body.tool_choice, { type: 'function', function: { name: 'get_weather' } })
  assert.equal(body.max_tokens, 16, 'the rest of the body is as before')
  const llama = chatStructuredFields(forEngine(output, 'llama.cpp'))
  assert.deepEqual(llama.response_format, { type: 'json_object', schema: BUILTIN_SCHEMA })
  assert.equal(loadStructuredOutput({ response_schema: null, tools: null, tool_choice: 'auto' }), null)
})

test('answers are valid, invalid, or truncated when cut by max_tokens; failed requests are not checked', () => {
  const check = new OutputCheck({ schema: { name: 'm', schema: MODE }, tools: null, toolChoice: 'auto' })
  const cases: [RequestRecord, string | undefined][] = [
    [answered('{"mode": "eco", "boost": true}\n  '), 'valid'],
    [answered('{"mode": "slow", "boost": true}'), 'invalid'],
    [answered('{"mode": "eco"}'), 'invalid'],
    [answered('{"mode": "eco", "bo', 'length'), 'truncated'],
    [answered('not json'), 'invalid'],
  ]
  for (const [record, expected] of cases) {
    check.check(record)
    assert.equal(record.schema_check, expected, record.output_text)
  }
  const failed = answered('{"mode": "eco", "boost": true}')
  failed.error = { class: 'http_5xx', message: 'HTTP 500' }
  check.check(failed)
  assert.equal(failed.schema_check, undefined)
})

test('a JSON Schema requirement zod would drop still holds: a required key absent from properties', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'] }
  const check = new OutputCheck({ schema: { name: 's', schema }, tools: null, toolChoice: 'auto' })
  const record = answered('{"a": "x"}')
  check.check(record)
  assert.equal(record.schema_check, 'invalid')
})

test("tool calls an engine left in the answer's text are read; one cut by max_tokens is a truncated call", () => {
  assert.deepEqual(callsInText('{"tool_call": {"name": "set_mode", "arguments": {"mode": "eco"}}}  '), [
    { name: 'set_mode', arguments: '{"mode":"eco"}' },
  ])
  assert.equal(callsInText('{"mode": "eco"}'), null)
  const tools = [{ name: 'set_mode', parameters: MODE }]
  const check = new OutputCheck({ schema: null, tools, toolChoice: 'required' })
  const whole = answered('{"tool_call": {"name": "set_mode", "arguments": {"mode": "fast", "boost": false}}}')
  check.check(whole)
  assert.deepEqual([whole.tool_calls, whole.tool_call_source, whole.tool_check], [1, 'text', 'valid'])
  const cut = answered('{"tool_call": {"name": "set_mode", "argu', 'length')
  check.check(cut)
  assert.deepEqual([cut.tool_calls, cut.tool_check], [1, 'truncated'])
  const prose = answered('It is sunny.')
  check.check(prose)
  assert.deepEqual([prose.tool_calls, prose.tool_check], [0, 'none'])
})

test('bad schema and tools files are refused naming the file and what was expected', () => {
  const dir = tempDir()
  const notJson = join(dir, 'schema.json')
  writeFileSync(notJson, '{ not json')
  assert.throws(
    () => loadStructuredOutput({ response_schema: notJson, tools: null, tool_choice: 'auto' }),
    new RegExp(`response_schema ${notJson}: not JSON`),
  )
  const badTools = join(dir, 'tools.json')
  writeFileSync(badTools, JSON.stringify([{ type: 'function', function: { description: 'no name' } }]))
  assert.throws(
    () => loadStructuredOutput({ response_schema: null, tools: badTools, tool_choice: 'auto' }),
    /tools .*tools\.json: \[0\]: expected \{"type": "function"/,
  )
  assert.throws(
    () => loadStructuredOutput({ response_schema: null, tools: 'builtin', tool_choice: 'no_such_tool' }),
    /tool_choice: expected auto, required, none or one of the tools' names \(get_weather/,
  )
  assert.throws(
    () =>
      loadStructuredOutput({ response_schema: join(dir, 'missing.json'), tools: null, tool_choice: 'auto' }),
    /cannot read it/,
  )
})

test('a schema or tools are refused with another protocol, and tool_choice without tools', () => {
  const base = { base_url: 'http://a.test', model: 'm' }
  assert.match(
    configErrorMessage([], { ...base, response_schema: 'builtin', protocol: 'completions' }),
    /expected response_schema and tools with the chat protocol/,
  )
  assert.match(
    configErrorMessage([], { ...base, tool_choice: 'required' }),
    /expected tools with tool_choice/,
  )
})

test('tools go with sessions and jobs (their turns carry the calls); a schema not with sessions, neither with a trace', () => {
  const base = { base_url: 'http://a.test', model: 'm' }
  for (const turnByTurn of [{ sessions: true }, { jobs: true }]) {
    const config = loadRunConfig({ configFiles: [], flags: { ...base, ...turnByTurn, tools: 'builtin' } })
    assert.equal(config.workload.tools, 'builtin')
  }
  assert.match(
    configErrorMessage([], { ...base, sessions: true, response_schema: 'builtin' }),
    /a response schema without sessions/,
  )
  assert.match(
    configErrorMessage([], { ...base, tools: 'builtin', trace: 'trace.jsonl' }),
    /neither with a trace/,
  )
  assert.match(
    configErrorMessage([], { ...base, jobs: true, tools: 'builtin', protocol: 'responses' }),
    /tools with the chat protocol/,
  )
})

test("a level's counts: schema and tool checks of its successful requests, and the time to the first tool call", () => {
  const accumulator = structuredAccumulator([50, 95])
  const call = (check: 'valid' | 'invalid' | 'truncated' | 'none', firstCallAfter: number | null) =>
    makeRecord({
      sent_at: 1000,
      tool_check: check,
      tool_calls: check === 'none' ? 0 : 1,
      tool_call_source: 'deltas',
      first_tool_call_at: firstCallAfter === null ? null : 1000 + firstCallAfter,
    })
  for (const record of [call('valid', 40), call('valid', 60), call('truncated', 50), call('none', null)])
    accumulator.add(record)
  const failed = call('valid', 10)
  failed.error = { class: 'timeout', message: 'timed out' }
  accumulator.add(failed)
  const figures = accumulator.result()
  assert.equal(figures?.schema, null)
  const tools = figures?.tools
  assert.deepEqual(
    tools && [
      tools.requests,
      tools.checked,
      tools.valid,
      tools.truncated,
      tools.call_share,
      tools.valid_share,
    ],
    [4, 3, 2, 1, 0.75, 0.6667],
  )
  assert.equal(tools?.first_call_ms.p50, 50)
  assert.equal(outputValidShare(figures), 0.6667)
  assert.equal(structuredAccumulator([50]).result(), null, 'nothing checked: no figure')
})
