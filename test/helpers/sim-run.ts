import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchResult } from '../../src/result/bench-result.js'
import { type CliResult, runCli, simRunArgs } from './cli.js'
import { tempDir } from './run-config.js'

/** A simulator as a test holds it: in this process (startSimulator) or its own (startSimulatorProcess). */
interface Simulator {
  url: string
  close(): Promise<void>
}

/** The run a test sends: `llmbench run` against the simulator with these flags (see simRunArgs). */
export interface SimRunSpec {
  flags: Record<string, string | number | true>
  extra?: readonly string[]
  env?: NodeJS.ProcessEnv
  timeoutMs?: number
  /** The result folder's name, in a fresh temporary folder. */
  folder?: string
  /** The check reads charts/ or report.html: the run draws them (see cliArgs). */
  charts?: boolean
}

export interface SimRun<S extends Simulator> {
  /** Still up while the check runs: later runs and reports can use it. */
  sim: S
  out: string
  run: CliResult
}

/**
 * The skeleton of a test of a whole run: waits for the simulator `starting`, runs the CLI against it
 * into a fresh result folder, hands the run to `check`, and closes the simulator however `check` ends.
 */
export async function withSimRun<S extends Simulator, T>(
  starting: Promise<S>,
  spec: SimRunSpec,
  check: (run: SimRun<S>) => Promise<T> | T,
): Promise<T> {
  const sim = await starting
  try {
    const out = join(tempDir(), spec.folder ?? 'result')
    const run = await runCli(simRunArgs(sim.url, out, spec.flags, spec.extra), {
      env: spec.env,
      timeoutMs: spec.timeoutMs,
      charts: spec.charts ?? false,
    })
    return await check({ sim, out, run })
  } finally {
    await sim.close()
  }
}

/** The bench_result.json of the run in `out`. */
export function readResult(out: string): BenchResult {
  return JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
}
