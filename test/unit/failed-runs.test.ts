import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runFailures } from '../../src/analysis/run-gate.js'
import { levelVerdict } from '../../src/analysis/verdict.js'
import { levelFailures } from '../../src/metrics/failure-causes.js'
import { explainFailure, isNonLoadFailure } from '../../src/records/failure-cause.js'
import type { RequestError, RequestRecord } from '../../src/records/types.js'
import { renderMarkdown } from '../../src/report/markdown.js'
import { renderVerdict } from '../../src/report/terminal.js'
import { buildResult } from '../../src/result/build-result.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

const CONTEXT_400 =
  'HTTP 400: the request exceeds the available context size (900 prompt + 512 max_tokens > 1024), try increasing it'

function failed(status: number | null, error: RequestError, level = 1, seq = 0): RequestRecord {
  return makeRecord({ seq, level, sent_at: seq * 10, status, error, output_tokens: 0, token_times: [] })
}

function succeeded(level: number, seq: number, tokens = 8): RequestRecord {
  const start = seq * 10
  return makeRecord({
    seq,
    level,
    sent_at: start,
    token_times: Array.from({ length: tokens }, (_, k) => start + 5 + k),
  })
}

const http = (status: number, message: string, level = 1, seq = 0): RequestRecord =>
  failed(
    status,
    { class: status === 429 ? 'http_429' : status >= 500 ? 'http_5xx' : 'http_4xx', message },
    level,
    seq,
  )
const timeout = (level = 1, seq = 0): RequestRecord =>
  failed(
    null,
    { class: 'timeout', timeout: 'first_token', message: 'no first token within 60 s' },
    level,
    seq,
  )

test('failures that are not load: 4xx other than 408/429, unreadable streams, an unreachable host', () => {
  assert.equal(isNonLoadFailure(http(400, CONTEXT_400)), true)
  assert.equal(isNonLoadFailure(http(401, 'HTTP 401: bad key')), true)
  assert.equal(isNonLoadFailure(http(408, 'HTTP 408: request timeout')), false)
  assert.equal(isNonLoadFailure(http(429, 'HTTP 429: slow down')), false)
  assert.equal(isNonLoadFailure(http(503, 'HTTP 503: busy')), false)
  assert.equal(isNonLoadFailure(timeout()), false)
  assert.equal(isNonLoadFailure(failed(200, { class: 'stream', message: 'malformed chunk: not JSON' })), true)
  assert.equal(
    isNonLoadFailure(failed(null, { class: 'connection', message: 'ECONNREFUSED connect ECONNREFUSED' })),
    true,
  )
  assert.equal(
    isNonLoadFailure(failed(null, { class: 'connection', message: 'UND_ERR_SOCKET other side closed' })),
    false,
  )
  assert.equal(isNonLoadFailure(succeeded(1, 0)), false)
})

test('explainFailure names what to change: lengths, key, model, endpoint', () => {
  assert.match(explainFailure(http(400, CONTEXT_400))?.hint ?? '', /--input-tokens.*--output-tokens/)
  // llama.cpp builds that report it as an error event inside a 200 stream.
  const kv = failed(200, {
    class: 'stream',
    message:
      'error event in stream: Input prompt is too big compared to KV size. Please try increasing KV size.',
  })
  assert.match(
    explainFailure(kv)?.problem ?? '',
    /^prompt \+ max_tokens over the model's context: error event/,
  )
  assert.match(explainFailure(http(401, 'HTTP 401: Incorrect API key'))?.hint ?? '', /--api-key-env/)
  assert.match(
    explainFailure(http(404, 'HTTP 404: The model `x` does not exist'), { model: 'x', models: ['y'] })
      ?.hint ?? '',
    /--model.*Models served: y/,
  )
  assert.match(explainFailure(http(404, 'HTTP 404: Unknown request URL'))?.hint ?? '', /--endpoint/)
  assert.equal(explainFailure(succeeded(1, 0)), null)
  // An unreadable stream points at the record only where one was written: a preflight or a check
  // writes no folder (issue 26: "read the record in requests.jsonl" after a preflight wrote none).
  const unreadable = failed(200, { class: 'stream', message: 'response cut: an SSE event larger than 8 MiB' })
  const format = 'an Anthropic Messages stream'
  assert.equal(
    explainFailure(unreadable, { format })?.hint,
    'the server answered, but not as an Anthropic Messages stream',
  )
  assert.equal(
    explainFailure(unreadable, { format, recordsIn: 'requests.jsonl' })?.hint,
    'the server answered, but not as an Anthropic Messages stream (see requests.jsonl)',
  )
})

test('a level refused for its context is misconfigured, with the server message and its count', () => {
  const records = [0, 1, 2, 3].map((seq) => http(400, CONTEXT_400, 1, seq))
  const { error_messages, misconfiguration } = levelFailures(records, 0, 0)
  assert.deepEqual(error_messages, [{ message: CONTEXT_400, count: 4, numbers_vary: false }])
  // Messages that differ only in the request's own figures are one message.
  const varied = [0, 1, 2].map((seq) =>
    http(400, `HTTP 400: you requested ${4100 + seq} tokens, the maximum context length is 4096`, 1, seq),
  )
  assert.deepEqual(levelFailures(varied, 0, 0).error_messages, [
    {
      message: 'HTTP 400: you requested 4100 tokens, the maximum context length is 4096',
      count: 3,
      numbers_vary: true,
    },
  ])
  assert.equal(misconfiguration?.cause, "prompt + max_tokens over the model's context")
  assert.equal(misconfiguration?.requests, 4)
  assert.equal(misconfiguration?.message, CONTEXT_400)
})

test('load failures (timeouts, 429, 503) are not misconfiguration; messages are ranked by count', () => {
  const records = [
    timeout(1, 0),
    http(429, 'HTTP 429: slow down', 1, 1),
    timeout(1, 2),
    http(503, 'HTTP 503: busy', 1, 3),
    timeout(1, 4),
    succeeded(1, 5),
  ]
  const { error_messages, misconfiguration } = levelFailures(records, 1, 8)
  assert.equal(misconfiguration, null)
  assert.deepEqual(
    error_messages.map((entry) => [entry.count, entry.message]),
    [
      [3, 'no first token within 60 s'],
      [1, 'HTTP 429: slow down'],
      [1, 'HTTP 503: busy'],
    ],
  )
  // A 400 among mostly load failures is not the level's story; half of them is.
  assert.equal(levelFailures([...records, http(400, CONTEXT_400, 1, 6)], 1, 8).misconfiguration, null)
  assert.notEqual(levelFailures([timeout(1, 0), http(400, CONTEXT_400, 1, 1)], 0, 0).misconfiguration, null)
})

test('a level whose successful requests carried no output token is misconfigured, not healthy', () => {
  const empty = [0, 1, 2].map((seq) => makeRecord({ seq, sent_at: seq, output_tokens: 0, token_times: [] }))
  const { misconfiguration } = levelFailures(empty, 3, 0)
  assert.equal(misconfiguration?.cause, 'no output tokens')
  assert.match(
    misconfiguration?.message ?? '',
    /3 request\(s\) succeeded but the server sent no output token/,
  )
  assert.equal(levelFailures([succeeded(1, 0)], 1, 8).misconfiguration, null)
})

test('levelVerdict: misconfigured comes before every other verdict', () => {
  const level = {
    value: 1,
    requests: 4,
    success_rate: 0,
    errors: { timeout: 0, http_4xx: 4, http_429: 0, http_5xx: 0, connection: 0, stream: 0, other: 0 },
    client: { bound: true } as never,
    misconfiguration: { requests: 4, cause: 'x', message: 'y', hint: 'z' },
  }
  assert.equal(levelVerdict(level, null), 'misconfigured')
  assert.equal(levelVerdict({ ...level, misconfiguration: null }, null), 'client-bound')
})

function meta(levels: number[]): RunMeta {
  return {
    target: { model: 'm', base_url: 'http://x', endpoint: '/v1/chat/completions' },
    workload: { input_tokens: 900, output_tokens: 512, stream: true },
    load: { mode: 'concurrency', levels, warmup_requests: 0 },
    percentiles: [50, 95],
    client: {
      timeout_s: 60,
      retry: 0,
      workers: 1,
      architecture: 'x64',
      node_version: 'v20',
      cpus: 2,
      host: 'h',
    },
    tool_version: '0',
    started_at: '2026-01-01T00:00:00Z',
    slo: {},
    partial: false,
    levels_run: levels.map((value) => ({
      value,
      workers: 1,
      client: { cpu_percent: 0, loops: [] },
    })),
  } as unknown as RunMeta
}

test('a run refused for its context: misconfigured levels, the server sentence, no "back off", no "keep adding"', () => {
  const records = [1, 2].flatMap((level) => [0, 1, 2, 3].map((seq) => http(400, CONTEXT_400, level, seq)))
  const result = buildResult(records, meta([1, 2]))
  assert.deepEqual(
    result.levels.map((level) => level.verdict),
    ['misconfigured', 'misconfigured'],
  )
  assert.equal(result.saturation, null)
  const terminal = renderVerdict(result)
  const markdown = renderMarkdown(result)
  for (const text of [terminal, markdown]) {
    assert.doesNotMatch(text, /back off|keep adding concurrency/)
    assert.match(text, /lower --input-tokens/)
  }
  assert.ok(markdown.includes(`4× ${CONTEXT_400}`), markdown)
  // The terminal says the same message once for both levels, with each level's share.
  assert.ok(terminal.includes(`8× ${CONTEXT_400} (c=1: 4, c=2: 4)`), terminal)
  assert.equal(terminal.split(CONTEXT_400).length - 1, 1, terminal)
  assert.match(result.saturation_summary, /c=1, c=2 failed for reasons that are not load/)
  const reasons = runFailures(result.levels, 90, (value) => `c=${value}`)
  assert.equal(reasons.length, 3, reasons.join('\n'))
  assert.match(
    reasons[0] ?? '',
    /^c=1 is misconfigured: prompt \+ max_tokens over the model's context: HTTP 400/,
  )
  assert.match(reasons[2] ?? '', /lowest level \(c=1\) succeeded on 0\.0% .*below --min-success-rate 90%/)
})

test('an honest overload at the top of the ladder passes the run gate; failures at the lowest level do not', () => {
  const healthy = (level: number) => [0, 1, 2, 3].map((seq) => succeeded(level, seq))
  const top = [
    timeout(4, 0),
    http(503, 'HTTP 503: busy', 4, 1),
    http(429, 'HTTP 429: slow', 4, 2),
    succeeded(4, 3),
  ]
  const overloaded = buildResult([...healthy(1), ...healthy(2), ...top], meta([1, 2, 4]))
  assert.equal(overloaded.levels.at(-1)?.verdict, 'overloaded')
  assert.deepEqual(runFailures(overloaded.levels, 90, String), [])

  // The same failures at the lowest level: the run measured mostly failures.
  const low = buildResult(
    top.map((record) => ({ ...record, level: 1 })),
    meta([1]),
  )
  assert.equal(low.levels[0]?.verdict, 'overloaded')
  assert.equal(runFailures(low.levels, 90, String).length, 1)
  assert.deepEqual(runFailures(low.levels, 20, String), [], 'a lower threshold lets it pass')
  assert.deepEqual(runFailures(low.levels, 0, String), [], '0 turns the check off')
})

const KV_EVENT = 'error event in stream: 500 server_error: Input prompt is too big compared to KV size.'
const stream = (message: string, level = 1, seq = 0): RequestRecord =>
  failed(200, { class: 'stream', message }, level, seq)
const refused = (level = 1, seq = 0): RequestRecord =>
  failed(null, { class: 'connection', message: 'ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9' }, level, seq)
const healthyLevel = (level: number, count = 40, from = 0): RequestRecord[] =>
  Array.from({ length: count }, (_, k) => succeeded(level, from + k))

test('one context-length 400 among 40 requests: reported, not misconfigured, not overloaded, the run passes', () => {
  const records = [...healthyLevel(1, 39), http(400, CONTEXT_400, 1, 39), ...healthyLevel(2)]
  const failures = levelFailures(records.slice(0, 40), 39, 39 * 8)
  assert.equal(failures.misconfiguration, null)
  assert.equal(failures.non_load_failures?.requests, 1)
  assert.equal(failures.non_load_failures?.cause, "prompt + max_tokens over the model's context")
  const result = buildResult(records, meta([1, 2]))
  assert.deepEqual(
    result.levels.map((level) => level.verdict),
    ['healthy', 'healthy'],
  )
  assert.doesNotMatch(result.saturation_summary, /not load|says nothing about capacity/)
  assert.deepEqual(runFailures(result.levels, 90, String), [])
  const terminal = renderVerdict(result)
  assert.ok(terminal.includes(`1× ${CONTEXT_400}`), terminal)
  assert.match(terminal, /1 request\(s\) failed for reasons that are not load.*lower --input-tokens/)
  assert.match(
    renderMarkdown(result),
    /c=1: \*\*healthy\*\*.*\n {2}- 1× HTTP 400.*\n {2}- 1 request\(s\) failed for reasons that are not load/,
  )
  // Half of the level's requests refused: the level measured nothing about capacity.
  const half = healthyLevel(1, 20)
  for (let seq = 20; seq < 40; seq++) half.push(http(400, CONTEXT_400, 1, seq))
  assert.equal(levelFailures(half, 20, 160).misconfiguration?.requests, 20)
  assert.equal(buildResult(half, meta([1])).levels[0]?.verdict, 'misconfigured')
})

test('an honest overload is still overloaded when a few requests also failed for reasons that are not load', () => {
  const level = (failures: RequestRecord[]) => {
    const ok = healthyLevel(1, 40 - failures.length)
    const records = [...ok, ...failures.map((record, k) => ({ ...record, seq: ok.length + k }))]
    return buildResult(records, meta([1])).levels[0]
  }
  assert.equal(level([timeout()])?.verdict, 'overloaded')
  assert.equal(level([http(503, 'HTTP 503: busy'), http(503, 'HTTP 503: busy')])?.verdict, 'overloaded')
  assert.equal(level([http(429, 'HTTP 429: slow'), http(429, 'HTTP 429: slow')])?.verdict, 'overloaded')
  // Three over-long prompts alone: healthy; with one 503 beside them, 2.5% load failures: overloaded.
  const contexts = [0, 1, 2].map(() => http(400, CONTEXT_400))
  assert.equal(level(contexts)?.verdict, 'healthy')
  assert.equal(level([...contexts, http(503, 'HTTP 503: busy')])?.verdict, 'overloaded')
  const cut = [0, 1].map(() => stream('stream ended without [DONE] or a finish_reason'))
  assert.equal(level(cut)?.verdict, 'overloaded')
})

test('errors inside a 200 stream: load when the server says so, not load when the request does not fit', () => {
  const load = [
    'error in stream: 500 server_error: injected failure',
    'error event in stream: server_error overloaded: the engine is overloaded',
    'error in stream: 429 rate_limit_exceeded: slow down',
    'error event in stream: 503: try again later',
    'error in stream: generation: Request failed during generation: CUDA out of memory',
    'stream ended without [DONE] or a finish_reason',
  ]
  for (const message of load) assert.equal(isNonLoadFailure(stream(message)), false, message)
  const notLoad = [
    KV_EVENT,
    "error in stream: invalid_request_error context_length_exceeded: This model's maximum context length is 4096 tokens",
    'error in stream: 400 BadRequestError: temperature must be positive',
    'error in stream: validation: Input validation error: `top_p` must be > 0.0',
    'malformed chunk: not JSON',
    'HTTP 200 with content-type text/html, not an event stream: <html>',
    'response body is not JSON',
    'response body is not a JSON object',
  ]
  for (const message of notLoad) assert.equal(isNonLoadFailure(stream(message)), true, message)
  assert.match(
    explainFailure(stream(KV_EVENT))?.problem ?? '',
    /^prompt \+ max_tokens over the model's context/,
  )
  assert.match(
    explainFailure(stream('error in stream: 500 server_error: injected failure'))?.problem ?? '',
    /^the server failed the request mid-stream: error in stream: 500 server_error/,
  )
  // A top level whose streams the server cut or failed is overloaded, not misconfigured.
  const top = Array.from({ length: 40 }, (_, seq) =>
    stream(
      seq % 2 === 0
        ? 'error in stream: 500 server_error: boom'
        : 'stream ended without [DONE] or a finish_reason',
      2,
      seq,
    ),
  )
  const result = buildResult([...healthyLevel(1), ...top], meta([1, 2]))
  assert.deepEqual(
    result.levels.map((level) => level.verdict),
    ['healthy', 'overloaded'],
  )
  assert.deepEqual(runFailures(result.levels, 90, String), [])
})

test('a connection refused after the server answered is load (it went away); before, the set-up is wrong', () => {
  const crashed = buildResult(
    [...healthyLevel(1), ...healthyLevel(2), ...Array.from({ length: 40 }, (_, seq) => refused(4, seq))],
    meta([1, 2, 4]),
  )
  assert.deepEqual(
    crashed.levels.map((level) => level.verdict),
    ['healthy', 'healthy', 'overloaded'],
  )
  assert.equal(crashed.levels[2]?.non_load_failures, null)
  assert.deepEqual(runFailures(crashed.levels, 90, String), [])
  // Half of a level refused after its own first answers: the server died during it.
  const during = buildResult(
    [...healthyLevel(1, 20), ...Array.from({ length: 20 }, (_, k) => refused(1, 20 + k))],
    meta([1]),
  )
  assert.equal(during.levels[0]?.verdict, 'overloaded')

  const never = buildResult(
    Array.from({ length: 8 }, (_, seq) => refused(1, seq)),
    meta([1]),
  )
  assert.equal(never.levels[0]?.verdict, 'misconfigured')
  assert.equal(never.levels[0]?.misconfiguration?.cause, 'unreachable host')
  assert.match(runFailures(never.levels, 90, String)[0] ?? '', /misconfigured: unreachable host/)
})

test('every request refused with the same 500 that is no overload: misconfigured (issue 36: llama.cpp and --tools)', () => {
  const tools = 'HTTP 500: {"code":500,"message":"Cannot use tools with stream","type":"server_error"}'
  const refused = Array.from({ length: 6 }, (_, i) => http(500, tools, 1, i))
  const { misconfiguration } = levelFailures(refused, 0, 0)
  assert.equal(misconfiguration?.requests, 6)
  assert.equal(misconfiguration?.message, tools)
  assert.match(misconfiguration?.hint ?? '', /a feature such as --tools/)
  // Load stays load: a 503 overloaded, answers mixed with successes, messages that differ, too few requests.
  const overloaded = Array.from({ length: 6 }, (_, i) =>
    http(503, 'HTTP 503: server overloaded, try again', 1, i),
  )
  assert.equal(levelFailures(overloaded, 0, 0).misconfiguration, null)
  assert.equal(levelFailures(refused, 3, 24).misconfiguration, null)
  const varied = refused.map((record, i) => ({
    ...record,
    error: { class: 'http_5xx' as const, message: `HTTP 500: worker ${i} died` },
  }))
  assert.equal(levelFailures(varied, 0, 0).misconfiguration, null)
  assert.equal(levelFailures(refused.slice(0, 2), 0, 0).misconfiguration, null)
})
