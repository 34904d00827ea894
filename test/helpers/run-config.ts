import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULTS } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'

export function tempDir(prefix = 'llmbench-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/**
 * For tests whose subject is timing figures (TTFT, TPOT, a knee): a worker thread per core, as a real
 * run has, rather than testConfig's one thread, whose loop a busy machine delays for every stream.
 */
export const TIMING_FIGURES = { workers: 'auto' } as const

/** A run config for tests: defaults, pointed at `baseUrl`, with small loads. */
export function testConfig(
  baseUrl: string,
  model: string,
  overrides: {
    levels: number[]
    requests?: number
    duration_s?: number
    input_tokens?: number
    output_tokens?: number
    warmup?: number
    out_dir: string
    preflight?: boolean
    calibrate?: boolean
    workers?: number | 'auto'
  },
): RunConfig {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.target.base_url = baseUrl
  config.target.model = model
  config.load.levels = overrides.levels
  config.load.requests_per_level = overrides.duration_s === undefined ? (overrides.requests ?? 4) : null
  config.load.duration_per_level_s = overrides.duration_s ?? null
  config.load.warmup_requests = overrides.warmup ?? 0
  config.workload.input_tokens = overrides.input_tokens ?? 32
  config.workload.output_tokens = overrides.output_tokens ?? 8
  config.workload.input = { kind: 'fixed', value: config.workload.input_tokens }
  config.workload.output = { kind: 'fixed', value: config.workload.output_tokens }
  // Calibration probes are requests of their own; tests of it turn it on.
  config.workload.calibrate = overrides.calibrate ?? false
  config.client.timeout_s = 30
  config.run.out_dir = overrides.out_dir
  config.run.preflight = overrides.preflight ?? true
  // One worker thread unless a test asks for more: started from source, each thread loads the client
  // through tsx (about a second of CPU), and 'auto' would start one per core for runs of a few
  // requests. Several threads are tested where they are the subject (workers.test.ts), and tests of
  // timing figures ask for a thread per core (TIMING_FIGURES).
  config.run.workers = overrides.workers ?? 1
  // No charts/ or report.html (a second or two of CPU each), as cliArgs does for the CLI's runs; a test
  // that reads them sets config.run.charts back to true.
  config.run.charts = false
  return config
}
