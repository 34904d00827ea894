// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
/**
 * Connections and stream ends as real servers do them, reproduced by the simulator's quirks:
 * llama.cpp's close after every response (while its headers say keep-alive), events after [DONE],
 * a connection held open after [DONE], impossible usage, several tokens per event. Every test starts
 * its own simulator on a free port and closes it.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { Pool } from 'undici'
import { sendRequest } from '../../src/client/stream-client.js'
import type { RunConfig } from '../../src/config/types.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { buildBody } from '../../src/workload/request-body.js'
import { streamTarget } from '../helpers/request-plan.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const FAST: SimulatorOptions = {
  prefill_base_ms: 2,
  prefill_ms_per_token: 0,
  decode_base_ms: 2,
  decode_ms_per_seq: 0,
}

interface Ran {
  result: BenchResult
  records: RequestRecord[]
  log: string[]
}

async function run(
  url: string,
  tweak: (config: RunConfig) => void,
  overrides: Partial<Parameters<typeof testConfig>[2]> = {},
): Promise<Ran> {
  const out = tempDir()
  const config = testConfig(url, SIM_MODEL, { levels: [1, 2, 4], requests: 20, out_dir: out, ...overrides })
  tweak(config)
  const log: string[] = []
  const outcome: RunOutcome = await runGradient({
    config,
    apiKey: null,
    outDir: out,
    log: (line) => log.push(line),
    stop: new StopSignal(),
  })
  assert.equal(outcome.kind, 'done', outcome.kind === 'preflight-failed' ? outcome.preflight.summary : '')
  const result = (outcome as Extract<RunOutcome, { kind: 'done' }>).result
  return { result, records: readRecords(`${out}/requests.jsonl`).records, log }
}

const measured = (records: RequestRecord[]) => records.filter((r) => r.phase === 'measure')

test('the close-after-response quirk really races a keep-alive client: a raw undici Pool loses requests', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, quirks: { close_after_response: true } })
  const pool = new Pool(new URL(sim.url).origin, { connections: 1, pipelining: 1 })
  const body = buildBody({ model: SIM_MODEL, endpoint: '/v1/chat/completions', stream: true }, 'hi', 4)
  let failed = 0
  try {
    // Sequential, each sent as soon as the previous response ends: what a closed loop does.
    for (let i = 0; i < 40; i++) {
      try {
        const response = await pool.request({
          origin: new URL(sim.url).origin,
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        await response.body.text()
      } catch (error) {
        assert.match(String((error as { code?: string }).code), /UND_ERR_SOCKET|ECONNRESET/)
        failed++
      }
    }
  } finally {
    await pool.destroy()
    await sim.close()
  }
  assert.ok(failed > 0, 'without detection, some requests die on a connection the server is closing')
})

test('against a server that closes after responses (no preflight): no failure, resends counted, each request reached the server once', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, quirks: { close_after_response: true } })
  try {
    const { result, records, log } = await run(sim.url, () => {}, { preflight: false, warmup: 2 })
    for (const level of result.levels) {
      assert.equal(level.failed, 0, JSON.stringify(level.error_samples))
      assert.equal(level.requests, 20)
    }
    assert.equal(result.meta.client.connections?.server_closes_after_response, 'load')
    assert.equal(log.filter((line) => line.includes('closes connections right after')).length, 1, 'said once')
    // Each successful record is one request the server completed; a lost first try never reached it.
    assert.equal(sim.stats().completed, records.filter((r) => r.error === null).length)
    const resent = records.filter((r) => r.resent !== undefined)
    for (const record of resent) {
      assert.equal(record.connection, 'new', 'a resend goes out on a new connection')
      assert.match(record.resent?.reason ?? '', /other side closed|ECONNRESET|socket/i)
    }
    const levelResent = result.levels.reduce((sum, level) => sum + (level.connections?.resent ?? 0), 0)
    assert.equal(levelResent, measured(records).filter((r) => r.resent !== undefined).length)
    // Once noticed, connections are not reused: the last level opened one per request.
    const last = result.levels.at(-1)
    assert.equal(last?.connections?.opened, 20)
    assert.equal(last?.connections?.reused, 0)
    assert.ok(result.meta.client.architecture.includes('a new connection per request'))
  } finally {
    await sim.close()
  }
})

test('with the preflight, the probes notice the closes and the load never reuses a connection', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, quirks: { close_after_response: true } })
  try {
    const { result, records } = await run(sim.url, () => {}, { levels: [1, 2], warmup: 2 })
    assert.equal(result.meta.client.connections?.server_closes_after_response, 'probes')
    for (const level of result.levels) assert.equal(level.failed, 0)
    const load = records.filter((r) => r.phase === 'measure' || r.phase === 'warmup')
    assert.ok(load.every((r) => r.connection === 'new' && r.resent === undefined))
    assert.equal(sim.stats().completed, records.filter((r) => r.error === null).length)
  } finally {
    await sim.close()
  }
})

test('keep-alive reuses connections; --no-keepalive opens one per request', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator(FAST)
  try {
    const kept = await run(sim.url, () => {}, { levels: [2], preflight: false })
    const level = kept.result.levels[0]
    assert.ok((level?.connections?.reused ?? 0) >= 18, JSON.stringify(level?.connections))
    assert.equal(kept.result.meta.client.connections?.server_closes_after_response, null)
    assert.equal(level?.connections?.closed_by_server, 0)

    const fresh = await run(
      sim.url,
      (config) => {
        config.client.keepalive = false
      },
      { levels: [2], preflight: false },
    )
    const off = fresh.result.levels[0]
    assert.equal(off?.connections?.opened, 20)
    assert.equal(off?.connections?.reused, 0)
    assert.equal(off?.failed, 0)
    assert.equal(fresh.result.meta.client.connections?.keepalive, false)
    assert.ok(fresh.result.meta.client.architecture.includes('keep-alive off'))
  } finally {
    await sim.close()
  }
})

test('a server that drops a request mid-response is still a failure, never resent', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, faults: [{ kind: 'disconnect', rate: 1 }] })
  try {
    const { result, records } = await run(sim.url, () => {}, {
      levels: [1],
      requests: 6,
      preflight: false,
      output_tokens: 8,
    })
    assert.equal(result.levels[0]?.failed, 6)
    for (const record of measured(records)) {
      assert.equal(record.error?.class, 'connection')
      assert.equal(record.status, 200, 'the response had begun')
      assert.equal(record.resent, undefined)
    }
  } finally {
    await sim.close()
  }
})

test('[DONE] ends the request: later events are not tokens, and are counted', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, quirks: { events_after_done: 3 } })
  try {
    const { result, records } = await run(sim.url, () => {}, {
      levels: [1],
      requests: 6,
      preflight: false,
      output_tokens: 8,
    })
    const level = result.levels[0]
    assert.equal(level?.failed, 0)
    for (const record of measured(records)) {
      assert.equal(record.output_tokens, 8)
      assert.equal(record.chunks, 8, 'events after [DONE] are not token events')
      assert.equal(record.token_times.length, 8)
    }
    assert.ok((level?.events?.requests_with_events_after_done ?? 0) > 0)
    assert.ok(level?.notes?.some((note) => note.includes('after [DONE]')))
  } finally {
    await sim.close()
  }
})

test('[DONE] then a late event: the end is [DONE], not the late event', { timeout: 30_000 }, async () => {
  const LATE_MS = 600
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: {"choices":[{"index":0,"delta":{"content":" hello"},"finish_reason":null}]}\n\n')
      res.write('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
      setTimeout(() => {
        if (res.destroyed) return
        res.end('data: {"choices":[{"index":0,"delta":{"content":" late"},"finish_reason":null}]}\n\n')
      }, LATE_MS)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const pool = new Pool(origin, { connections: 1 })
  try {
    const target = streamTarget(pool, origin)
    const plan = {
      seq: 0,
      worker: 0,
      level: 1,
      phase: 'measure' as const,
      prompt_id: 0,
      scheduled_at: null,
      attempt: 1,
      body: Buffer.from('{}'),
    }
    const record = await sendRequest(target, plan)
    assert.equal(record.error, null)
    assert.equal(record.chunks, 1)
    const last = record.token_times.at(-1) as number
    assert.ok(record.end_at - last < LATE_MS / 2, `ended ${record.end_at - last} ms after the last token`)
    // The held connection was closed by the client, so the next request works on a new one.
    const next = await sendRequest(target, { ...plan, seq: 1 })
    assert.equal(next.error, null)
    assert.equal(next.connection, 'new')
  } finally {
    await pool.destroy()
    await new Promise((resolve) => server.close(resolve))
  }
})

test('a server that holds the connection open after [DONE] costs no timeout', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, quirks: { hold_after_done: true } })
  try {
    const started = Date.now()
    const { result, records } = await run(
      sim.url,
      (config) => {
        config.client.timeout_s = 30
        config.client.idle_timeout_s = 20
      },
      { levels: [2], requests: 8, preflight: false },
    )
    assert.equal(result.levels[0]?.failed, 0)
    assert.ok(Date.now() - started < 15_000, 'finished far sooner than one idle timeout')
    for (const record of measured(records)) {
      assert.equal(record.output_tokens, 8)
      assert.ok(record.end_at - (record.token_times.at(-1) as number) < 5_000)
    }
  } finally {
    await sim.close()
  }
})

for (const bad of [-5, 1e15]) {
  test(`usage of ${bad} is not trusted: the tokenizer's count is used, both are kept, the level says so`, {
    timeout: 60_000,
  }, async () => {
    const sim = await startSimulator({ ...FAST, quirks: { usage_completion_tokens: bad } })
    try {
      const { result, records } = await run(sim.url, () => {}, {
        levels: [1],
        requests: 5,
        preflight: false,
        output_tokens: 8,
      })
      const level = result.levels[0]
      for (const record of measured(records)) {
        assert.equal(record.rejected_usage?.completion_tokens, bad)
        assert.equal(record.token_source, 'tokenizer')
        assert.equal(record.output_tokens, 8, 'sim words are one o200k token each')
      }
      assert.equal(level?.token_counting.usage_rejected, 5)
      assert.equal(level?.output_tokens, 40)
      assert.ok((level?.output_tokens_per_s ?? 0) > 0 && (level?.output_tokens_per_s ?? 0) < 1e5)
      assert.ok(level?.notes?.some((note) => note.includes('impossible usage')))
    } finally {
      await sim.close()
    }
  })
}

test('several tokens per event: tokens per event is measured and the level notes it', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, quirks: { tokens_per_event: 3 } })
  try {
    const { result } = await run(sim.url, () => {}, {
      levels: [1],
      requests: 5,
      preflight: false,
      output_tokens: 12,
    })
    const level = result.levels[0]
    assert.equal(level?.events?.tokens_per_event, 3)
    assert.ok(level?.notes?.some((note) => note.includes('3.00 tokens on average')))
    const perEvent = level?.itl_ms.mean ?? 0
    const perToken = level?.events?.itl_per_token_ms.mean ?? 0
    assert.ok(Math.abs(perToken * 3 - perEvent) < 0.01 * perEvent + 1e-9, `${perToken} × 3 vs ${perEvent}`)
  } finally {
    await sim.close()
  }
})
