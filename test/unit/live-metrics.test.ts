import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LiveMetrics } from '../../src/run/level/live-metrics.js'
import { family, parsePrometheus } from '../helpers/prometheus.js'
import { makeRecord } from '../helpers/records.js'

test('live metrics: its own registry on 127.0.0.1, requests by level/phase/outcome, tokens, TTFT and ITL in seconds, level and in-flight', async () => {
  const live = await LiveMetrics.start('127.0.0.1', 0)
  try {
    assert.match(live.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    live.setLevel(4)
    let inFlight = 3
    live.watchInFlight(() => inFlight)
    live.observe(makeRecord({ level: 4, sent_at: 0, token_times: [20, 30, 45], input_tokens: 7 }))
    live.observe(makeRecord({ level: 4, sent_at: 0, token_times: [40, 50] }))
    live.observe(
      makeRecord({
        level: 4,
        phase: 'warmup',
        error: { class: 'http_5xx', message: 'x' },
        input_tokens: null,
      }),
    )
    const text = await (await fetch(live.url)).text()
    const families = parsePrometheus(text)
    const requests = family(families, 'llmbench_requests_total').metrics
    const count = (outcome: string, phase: string) =>
      Number(requests.find((s) => s.labels?.outcome === outcome && s.labels?.phase === phase)?.value)
    assert.equal(count('ok', 'measure'), 2)
    assert.equal(count('http_5xx', 'warmup'), 1)
    const tokens = family(families, 'llmbench_tokens_total').metrics
    assert.equal(Number(tokens.find((s) => s.labels?.kind === 'output')?.value), 5)
    assert.equal(Number(tokens.find((s) => s.labels?.kind === 'input')?.value), 17)
    // Histograms read from the text itself (the test parser drops _sum/_count when `le` comes first).
    const line = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
    assert.equal(line('llmbench_ttft_seconds_count\\{level="4"\\}'), 2)
    assert.equal(line('llmbench_ttft_seconds_sum\\{level="4"\\}'), 0.06)
    assert.equal(line('llmbench_ttft_seconds_bucket\\{le="0.025",level="4"\\}'), 1, 'TTFT 20 ms, in seconds')
    assert.equal(line('llmbench_itl_seconds_count\\{level="4"\\}'), 3)
    assert.equal(Number(family(families, 'llmbench_level').metrics[0]?.value), 4)
    assert.equal(Number(family(families, 'llmbench_in_flight_requests').metrics[0]?.value), 3)
    inFlight = 1
    const again = parsePrometheus(await (await fetch(live.url)).text())
    assert.equal(
      Number(family(again, 'llmbench_in_flight_requests').metrics[0]?.value),
      1,
      'read when scraped',
    )
    assert.ok(
      !families.some((f) => f.name.startsWith('process_') || f.name.startsWith('nodejs_')),
      'own registry',
    )
    assert.equal((await fetch(live.url.replace('/metrics', '/'))).status, 404)
    // Scraped during the run, the endpoint stays up after close for one more scrape (the final
    // counts), and that scrape ends the wait at once, not after the 15 s limit.
    const closing = live.close(true)
    const last = parsePrometheus(await (await fetch(live.url)).text())
    assert.equal(Number(family(last, 'llmbench_in_flight_requests').metrics[0]?.value), 0, 'none in flight')
    await closing
  } finally {
    await live.close(true)
  }
})

test('live metrics: a port in use is an error naming the address', async () => {
  const first = await LiveMetrics.start('127.0.0.1', 0)
  try {
    const port = Number(new URL(first.url).port)
    await assert.rejects(
      LiveMetrics.start('127.0.0.1', port),
      /live metrics: cannot listen on 127\.0\.0\.1:\d+ \(--metrics-port, --metrics-host\): .*EADDRINUSE/,
    )
  } finally {
    await first.close(false)
  }
})
