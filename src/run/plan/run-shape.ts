import { levelsSizedByDefault } from '../../config/load.js'
import type { RunConfig } from '../../config/types.js'
import { defaultPrecisionLoad } from '../level/precision-watch.js'

/**
 * What shapes a run whatever starts it (issue 37 item 4): the default sizing of levels nobody sized,
 * and the combinations no run can take. Decided here, below the CLI, so `llmbench run`, a program
 * calling prepareRun/startRun and one calling runGradient directly run the same plan from the same
 * settings (test/unit/library-cli-plan.test.ts).
 */

/** How the run is spread: over shards of other processes, on a wall-clock schedule. */
export interface RunSpread {
  sharded: boolean
  scheduled: boolean
}

/** A run the settings cannot make; its message names the settings (as flags) and what to do. */
export class RunShapeError extends Error {
  override name = 'RunShapeError'
}

/**
 * The config as the run uses it: levels nobody sized run until the knee's own figures are precise
 * (DEFAULT_PRECISION). A config already shaped (not the one loadRunConfig made) comes back as is,
 * so shaping twice (prepareRun, then runGradient) changes nothing.
 */
export function shapedConfig(config: RunConfig, sharded: boolean): RunConfig {
  if (!levelsSizedByDefault(config)) return config
  if (pairedInterleave(config))
    return { ...config, load: { ...config.load, requests_per_level: PAIRED_DEFAULT_REQUESTS } }
  return { ...config, load: defaultPrecisionLoad(config, sharded) }
}

/**
 * Requests each target gets per level of a --paired interleave run nobody sized. bench:gate under a
 * neighbour switching on and off every 8-20 s (docs/benchmarks.md): at 40, the A/A false alarms were
 * 18% (all four pairs on one side, the blocks' order in step with the neighbour); at 80, 5%, and a
 * 20% slowdown was caught 95% of the time against 68%. Together (separate hardware) had no false
 * alarm at 40 and keeps the general default.
 */
export const PAIRED_DEFAULT_REQUESTS = 80

function pairedInterleave(config: RunConfig): boolean {
  return config.run.paired && config.run.paired_mode === 'interleave' && config.load.mode === 'concurrency'
}

/** The plan's word on a paired run's default size; null where it did not apply. */
export function describePairedSizing(loaded: RunConfig, shaped: RunConfig): string | null {
  if (!levelsSizedByDefault(loaded) || !pairedInterleave(shaped)) return null
  return (
    `sizing: no --requests given: each paired level sends ${shaped.load.requests_per_level} requests to each target ` +
    '(blocks of A and B taking turns need that many to keep a neighbour that switches every few seconds from ' +
    'lining up with them: docs/benchmarks.md); --requests N for another size'
  )
}

/** Refuses a run the settings cannot make (RunShapeError), before anything is sent or written. */
export function refuseUnrunnable(config: RunConfig, spread: RunSpread): void {
  const { sharded, scheduled } = spread
  if (sharded && config.load.precision !== null)
    throw new RunShapeError(
      '--precision with --shard: each shard would stop its share on its own figures, and the merged level would be precise by accident. Run --precision in one process (its worker threads spread the load), or shard fixed-size levels',
    )
  if (!sharded && !scheduled) return
  const spreadBy = sharded ? '--shard (or JOB_COMPLETION_INDEX)' : '--start-at'
  // A shard's repeats would be merged with the other shards' by level alone, and --start-at's schedule
  // gives each level one slot: neither knows a level run more than once.
  if (config.load.repeat > 1)
    throw new RunShapeError(
      `--repeat ${config.load.repeat} cannot be combined with ${spreadBy}: run the repeats in one process, or compare separate sharded runs`,
    )
  // A shard runs its share of levels it is told; a search chooses its next level from what it measured.
  if (config.run.search)
    throw new RunShapeError(
      `--search cannot be combined with ${spreadBy}: a search chooses each level from the ones before, which a shard or a schedule fixes in advance`,
    )
  // Both targets' blocks alternate inside one process: a shard would run one target's share.
  if (config.run.paired)
    throw new RunShapeError(
      `--paired cannot be combined with ${spreadBy}: both targets' blocks alternate in one process`,
    )
}
