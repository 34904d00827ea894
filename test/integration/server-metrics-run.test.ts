import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { buildResult } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { readServerScrapes } from '../../src/server-metrics/scrape-file.js'
import { SCRAPE_TIMEOUT_MS } from '../../src/server-metrics/targets.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function close(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

function done(outcome: RunOutcome): Extract<RunOutcome, { kind: 'done' }>['result'] {
  assert.equal(outcome.kind, 'done')
  return (outcome as Extract<RunOutcome, { kind: 'done' }>).result
}

/**
 * A server whose /metrics never answers (headers never sent), one that answers 404, and one that
 * serves vLLM-style metrics whose generation counter grows by 10 per scrape. The run must end as
 * if the stalling one were not there (its scrapes cut, recorded as gaps), stop asking the 404 one,
 * and keep per-level figures from the third that `report` recomputes the same from the file.
 */
test('a stalling or 404 metrics endpoint does not slow the run; scrapes are kept and re-read', {
  timeout: 120_000,
}, async () => {
  const held: import('node:http').ServerResponse[] = []
  const stalling = createServer((req, res) => {
    req.resume()
    held.push(res)
  })
  const missing = createServer((req, res) => {
    req.resume()
    res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n')
  })
  let scrapesServed = 0
  const engine = createServer((req, res) => {
    req.resume()
    scrapesServed++
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
    res.end(
      '# TYPE vllm:num_requests_running gauge\n' +
        `vllm:num_requests_running{model_name="m"} ${scrapesServed % 3}\n` +
        '# TYPE vllm:generation_tokens counter\n' +
        `vllm:generation_tokens_total{model_name="m"} ${10 * scrapesServed}\n`,
    )
  })
  const sim = await startSimulator({ slots: 8, prefill_base_ms: 20, decode_base_ms: 10 })
  const out = tempDir()
  try {
    const [stallUrl, missingUrl, engineUrl] = await Promise.all([
      listen(stalling),
      listen(missing),
      listen(engine),
    ])
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1, 2],
      requests: 6,
      output_tokens: 20,
      out_dir: out,
    })
    // Not 'auto': the simulator serves its own /metrics, which would add its figures to the fake engine's.
    config.server_metrics.urls = [`${stallUrl}/metrics`, `${missingUrl}/metrics`, `${engineUrl}/metrics`]
    config.server_metrics.interval_s = 0.2
    const logs: string[] = []
    const started = performance.now()
    const result = done(
      await runGradient({
        config,
        apiKey: null,
        outDir: out,
        log: (line) => logs.push(line),
        stop: new StopSignal(),
      }),
    )
    const seconds = (performance.now() - started) / 1000
    // 12 requests of ~0.2 s: a few seconds. A wait for the stalling endpoint would add its 5 s
    // timeout per scrape (or never end); the bound leaves room for a busy machine, not for that.
    assert.ok(seconds < SCRAPE_TIMEOUT_MS / 1000 + 10, `the run took ${seconds.toFixed(1)} s`)
    assert.ok(held.length >= 1, 'the stalling endpoint was asked')

    const scrapes = readServerScrapes(join(out, 'server-metrics.jsonl'))
    const of = (url: string) => scrapes.filter((scrape) => scrape.url === `${url}/metrics`)
    assert.ok(
      of(stallUrl).every((s) => s.kind === 'gap'),
      'the stalling URL leaves gaps only',
    )
    assert.ok(of(stallUrl).length >= 1)
    assert.deepEqual(
      of(missingUrl).map((s) => s.kind),
      ['stopped'],
      'a 404 is asked once',
    )
    assert.ok(
      logs.some((line) => line.includes(`${missingUrl}/metrics answered HTTP 404`)),
      logs.join('\n'),
    )
    // Every scrape of the engine answered, except one in flight when the run ended, which the scraper
    // cuts and keeps as a gap saying so (it failed CI once that way: a race with the end, not a fault).
    const engineScrapes = of(engineUrl)
    const answered = engineScrapes.filter((s) => s.kind === 'scrape')
    const others = engineScrapes.filter((s) => s.kind !== 'scrape')
    assert.ok(answered.length >= 3, JSON.stringify(engineScrapes.map((s) => s.kind)))
    assert.ok(
      others.every((s) => s.kind === 'gap' && s.error === 'cut at the end of the run') && others.length <= 1,
      JSON.stringify(others),
    )

    for (const level of result.levels) {
      const server = level.server
      assert.ok(server != null, `level ${level.value} has server figures`)
      // 10 more each scrape, scrapes at least 0.2 s apart: at most 50 a second. Over the window, its
      // edges counted at the rate inside it (not a whole number of scrapes' tens), at most that rate
      // over the window and the capped edges.
      const tokens = server.generation_tokens ?? 0
      assert.ok(tokens > 0 && tokens <= 50 * level.duration_s + 20, `level ${level.value}: ${tokens}`)
      assert.ok(server.running !== null && server.running.max <= 2)
      assert.equal(server.client_ttft_p50_ms, level.ttft_ms.p50)
      assert.equal(server.ttft_ms_bucketed, null)
    }
    // report: the same figures from the files alone.
    const run = loadRun(out)
    assert.ok(run.records !== null)
    const rebuilt = buildResult(run.records, run.result.meta, run.serverScrapes)
    assert.deepEqual(
      rebuilt.levels.map((level) => level.server),
      result.levels.map((level) => level.server),
    )
  } finally {
    await sim.close()
    for (const res of held) res.destroy()
    await Promise.all([close(stalling), close(missing), close(engine)])
  }
})

test("by default the target's own /metrics is scraped: the simulator's running, waiting and TTFT histogram per level", {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ slots: 4, prefill_base_ms: 20, decode_base_ms: 10 })
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [2, 8],
      requests: 16,
      output_tokens: 20,
      out_dir: out,
    })
    config.server_metrics.interval_s = 0.2
    const result = done(
      await runGradient({ config, apiKey: null, outDir: out, log: () => {}, stop: new StopSignal() }),
    )
    const [two, eight] = result.levels.map((level) => level.server)
    assert.ok(two != null && eight != null, 'both levels have server figures')
    assert.ok(two.running !== null && two.running.max <= 2, `running at 2 streams: ${two.running?.max}`)
    // 8 streams on 4 slots: the engine runs 4 and queues the rest.
    assert.equal(eight.running?.max, 4)
    assert.ok((eight.waiting?.max ?? 0) >= 1, `waiting at 8 streams: ${eight.waiting?.max}`)
    assert.ok((eight.ttft_ms_bucketed?.count ?? 0) >= 1, 'the server TTFT histogram moved')
    assert.notEqual(eight.outside_scheduler_ms, null)
  } finally {
    await sim.close()
  }
})
