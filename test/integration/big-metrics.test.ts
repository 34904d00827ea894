import assert from 'node:assert/strict'
import { readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { type RawFamily, readServerScrapes, type ScrapeOk } from '../../src/server-metrics/scrape-file.js'
import { ServerMetricsScraper } from '../../src/server-metrics/scraper.js'
import { manyModelsExposition } from '../helpers/big-exposition.js'
import { tempDir } from '../helpers/run-config.js'
import { waitUntil } from '../helpers/wait.js'

/** Three scrapes of a loopback server answering `body`, into a file; its scrapes and the log. */
async function scrapeThrice(
  body: string,
  model: string,
  maxFileBytes?: number,
): Promise<{ file: string; scrapes: ScrapeOk[]; logs: string[] }> {
  const server = createServer((req, res) => {
    req.resume()
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const file = join(tempDir(), 'server-metrics.jsonl')
  const logs: string[] = []
  const scraper = new ServerMetricsScraper(
    [{ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, headers: {}, auto: false }],
    {
      intervalMs: 100,
      timeoutMs: 20_000,
      file,
      log: (line) => logs.push(line),
      secrets: [],
      model,
      ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
    },
  )
  try {
    scraper.start()
    await waitUntil(() => scraper.scrapes.filter((s) => s.kind === 'scrape').length >= 3, 'three scrapes')
  } finally {
    await scraper.stop(false)
    await new Promise((resolve) => server.close(resolve))
  }
  const scrapes = readServerScrapes(file).filter((s): s is ScrapeOk => s.kind === 'scrape')
  return { file, scrapes, logs }
}

test('a /metrics of 100,000 series: the file keeps the model under test, small; running is its own', async () => {
  // 12,500 models × 8 sample lines: 100,000 series, ~8.9 MB a scrape. The run's model runs 2.
  const body = manyModelsExposition(12_500, 'Qwen/Qwen3-0.6B', 2)
  const { file, scrapes, logs } = await scrapeThrice(body, 'Qwen/Qwen3-0.6B')
  assert.ok(scrapes.length >= 3, JSON.stringify(logs))
  for (const scrape of scrapes) {
    assert.equal(scrape.values.gauges.running, 2, "the model's own, not 3 × 12,499 + 2 summed")
    assert.equal(scrape.values.counters.generation_tokens, 1000)
    assert.deepEqual(scrape.cut, {
      lines: 100_010, // 100,000 samples and 5 families × HELP and TYPE
      kept: 11,
      model: 'qwen/qwen3-0.6b',
      other_model_lines: 12_499 * 7,
      model_matched: true,
    })
  }
  const bytesPerScrape = statSync(file).size / scrapes.length
  assert.ok(
    bytesPerScrape < 16 * 1024,
    `${bytesPerScrape.toFixed(0)} bytes a scrape against ${body.length} served`,
  )
  assert.deepEqual(logs, [])
})

test("no series of the run's model: every model added up and said once; raw families an excerpt; the file capped", async () => {
  const body = manyModelsExposition(2_000, 'served-name', 2)
  const { file, scrapes, logs } = await scrapeThrice(body, 'alias-the-run-sends', 40 * 1024)
  assert.equal(scrapes[0]?.values.gauges.running, 2 + 1_999 * 3)
  assert.equal(scrapes[0]?.cut?.model_matched, false)
  assert.equal(
    logs.filter((line) => line.includes('no series labelled with model alias-the-run-sends')).length,
    1,
  )
  // The raw families of the first scrape: at most 64 series each, with the family's total.
  const first = JSON.parse(readFileSync(file, 'utf8').split('\n')[0] as string) as { families: RawFamily[] }
  const running = first.families.find((family) => family.name === 'vllm:num_requests_running')
  assert.equal(running?.series?.length, 64)
  assert.equal(running?.series_total, 2_000)
  // Past 40 kB, lines without raw families; said once.
  assert.ok(statSync(file).size < 40 * 1024 + 8 * 1024, `${statSync(file).size} bytes`)
  assert.equal(
    logs.filter((line) => line.includes('later scrapes are stored without their raw families')).length,
    1,
  )
})

/** One scrape of a server answering `respond`; what it stored and logged. */
async function scrapeOnce(
  respond: (res: import('node:http').ServerResponse) => void,
): Promise<{ stored: string; logs: string[] }> {
  const server = createServer((req, res) => {
    req.resume()
    respond(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const file = join(tempDir(), 'server-metrics.jsonl')
  const logs: string[] = []
  const scraper = new ServerMetricsScraper(
    [{ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, headers: {}, auto: false }],
    { intervalMs: 100, timeoutMs: 20_000, file, log: (line) => logs.push(line), secrets: [], model: 'm' },
  )
  try {
    scraper.start()
    await waitUntil(() => scraper.scrapes.length >= 1, 'a scrape or a refusal')
  } finally {
    await scraper.stop(false)
    await new Promise((resolve) => server.close(resolve))
  }
  return { stored: readFileSync(file, 'utf8'), logs }
}

test('a gzip-encoded /metrics nobody asked for is refused by its header: never inflated, no raw bytes in the reason', async () => {
  // 64 MiB of zeros in about 64 KiB: a bomb if anything inflated it.
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 })
  const { stored, logs } = await scrapeOnce((res) =>
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(bomb),
  )
  const line = JSON.parse(stored.trim().split('\n')[0] ?? '{}') as { kind: string; reason?: string }
  assert.equal(line.kind, 'stopped', stored)
  assert.equal(line.reason, 'a gzip-encoded body, which was not asked for: no Prometheus metrics there')
  assert.match(logs.join('\n'), /answered a gzip-encoded body, which was not asked for; not scraped again/)
})

test('a binary /metrics body: the reason quotes no control bytes and stays short', async () => {
  const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256))
  const { stored, logs } = await scrapeOnce((res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end(binary),
  )
  const line = JSON.parse(stored.trim().split('\n')[0] ?? '{}') as { kind: string; reason?: string }
  assert.equal(line.kind, 'stopped', stored)
  assert.match(line.reason ?? '', /^not Prometheus text \(/)
  for (const text of [line.reason ?? '', ...logs]) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are what must not be there
    assert.doesNotMatch(text, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/, text)
    assert.ok(text.length < 400, `${text.length} characters`)
  }
})
