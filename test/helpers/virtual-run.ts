import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hostCosts, Target } from '../../bench/gate/virtual-target.js'
import { resolveSimParams, type SimParams, VirtualClock } from '../../src/model/engine.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { buildResult } from '../../src/result/build-result.js'
import { RECORDS_FILE, RESULT_FILE, SERVER_METRICS_FILE } from '../../src/result/folder-layout.js'
import { controlRequests } from '../../src/run/plan/level-plan.js'

/**
 * A result folder as `run` writes it, made in virtual time: the simulator's engine on a
 * VirtualClock (bench/gate/virtual-target.ts) with 5% noise on every step from a fixed seed, a
 * closed-loop gradient of its levels (each run `repeat` times back to back, then the drift control),
 * summarized by the same buildResult as `run` and `report`. For tests whose subject is what is
 * judged of runs (compare, repeats), not how long a run takes: the same folders on any machine, in
 * milliseconds.
 *
 * The run's set-up (client, workload, estimate) is the one of test/fixtures/rendered/conc, a real
 * run of a 4-slot simulator over levels 1,2,4,8: its meta is the template, its lengths and levels
 * replaced by this run's.
 */
const TEMPLATE = fileURLToPath(new URL('../fixtures/rendered/conc/', import.meta.url))
const TEMPLATE_LEVELS = [1, 2, 4, 8]

export interface VirtualRun {
  sim: Partial<SimParams>
  /** A subset of 1,2,4,8 (the template's levels, whose client figures are kept). */
  levels: readonly number[]
  requests: number
  inputTokens: number
  outputTokens: number
  /** The seed of the steps' noise: an A/A pair is two seeds of one server. */
  seed: number
  /** Each level run this many times back to back (`--repeat`); default 1. */
  repeat?: number
}

/** Writes the run into `dir` (a new folder) and returns its result. */
export function writeVirtualRun(dir: string, run: VirtualRun): BenchResult {
  const template = JSON.parse(readFileSync(join(TEMPLATE, RESULT_FILE), 'utf8')) as BenchResult
  const runId = template.meta.run_id as string
  const clock = new VirtualClock()
  const target = new Target(
    hostCosts(resolveSimParams(run.sim), { decode: 1, prefill: 1 }, () => 1, clock, seededRandom(run.seed)),
    clock,
    { input: run.inputTokens, output: run.outputTokens },
  )
  // The run clock of a real run starts near a second in (the process's own start-up).
  clock.advanceBy(1_000)
  const repeat = run.repeat ?? 1
  const records: RequestRecord[] = []
  for (const level of run.levels)
    for (let r = 0; r < repeat; r++)
      records.push(
        ...target.block(level, run.requests, {
          level,
          phase: 'measure',
          run: runId,
          ...(repeat > 1 ? { repeat: r } : {}),
        }),
      )
  const first = run.levels[0] as number
  records.push(
    ...target.block(first, controlRequests(run.requests, first), {
      level: first,
      phase: 'control',
      run: runId,
    }),
  )
  const meta = {
    ...template.meta,
    slo: {},
    workload: { ...template.meta.workload, input_tokens: run.inputTokens, output_tokens: run.outputTokens },
    load: {
      ...template.meta.load,
      levels: [...run.levels],
      requests_per_level: run.requests,
      ...(repeat > 1 ? { repeat } : {}),
    },
    levels_run: template.meta.levels_run.filter((level) => run.levels.includes(level.value)),
  }
  if (!run.levels.every((level) => TEMPLATE_LEVELS.includes(level)))
    throw new Error(`writeVirtualRun: levels ${run.levels} not all in the template's ${TEMPLATE_LEVELS}`)
  const result = buildResult(records, meta)
  cpSync(TEMPLATE, dir, { recursive: true, filter: (path) => !path.includes('expected') })
  rmSync(join(dir, SERVER_METRICS_FILE), { force: true })
  writeFileSync(join(dir, RECORDS_FILE), records.map((record) => `${JSON.stringify(record)}\n`).join(''))
  writeFileSync(join(dir, RESULT_FILE), JSON.stringify(result))
  return result
}
