import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { startSimulator } from '../../src/sim/server.js'
import { simRunArgs, spawnCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

// SIGHUP comes when the terminal or SSH session closes, SIGTERM when Kubernetes stops a pod: both
// are interrupts like Ctrl-C, never a death that loses the level in flight and the partial result.
for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
  test(`${signal} mid-run: stops issuing, drains, writes a partial result and exits 130`, {
    timeout: 60_000,
  }, async () => {
    const sim = await startSimulator({ prefill_base_ms: 10, decode_base_ms: 5 })
    const out = join(tempDir(), 'result')
    try {
      const { child, exited, stderr } = spawnCli(
        simRunArgs(sim.url, out, { levels: '1,2,4', duration: 3, warmup: 0, 'output-tokens': 20 }),
      )
      let sent = false
      child.stderr?.on('data', () => {
        // Once the first level is summarized, the second one is running.
        if (!sent && stderr().includes('level 1:')) {
          sent = true
          child.kill(signal)
        }
      })
      const code = await exited
      assert.equal(code, 130, stderr())
      assert.match(stderr(), /interrupt: no new requests/)
      const summary = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
      assert.equal(summary.meta.partial, true)
      assert.equal(summary.levels[0].concurrency, 1)
      assert.ok(!summary.levels.some((level: { concurrency: number }) => level.concurrency === 4))
      const { tornLastLine } = readRecords(join(out, 'requests.jsonl'))
      assert.equal(tornLastLine, false)
    } finally {
      await sim.close()
    }
  })
}
