import { performance } from 'node:perf_hooks'
import type { RunConfig } from '../../config/types.js'
import type { LevelProgress } from '../../report/progress.js'
import { levelSeconds, type RequestCost } from '../plan/estimate.js'
import { levelValues } from '../plan/level-plan.js'

/**
 * The run's elapsed time and an estimate of the rest, for the live line. The rest: what is left of
 * the running level (a timed level's window; a counted level's requests at the pace it is going),
 * plus each later level as the plan projects it from the warm probes, corrected by how the levels
 * so far compared with their projection (a server that queues runs long at every level).
 */
export class RunClock {
  private readonly startedAt = performance.now()
  private readonly left: number[]
  private levelStartedAt = performance.now()
  private projected = 0
  private actual = 0
  /** --repeat: which run of the level is going, for the live line; null = each level runs once. */
  private run: LevelProgress['repeat'] | null = null

  constructor(
    private readonly config: RunConfig,
    /** One request's projected cost (the probes' median); null = no probes. */
    private readonly cost: RequestCost | null,
  ) {
    // A copy: levelValues hands out the config's own array, which the run iterates.
    // --repeat: each level is begun and ended once per run of it.
    this.left = levelValues(config).flatMap((value) => Array<number>(config.load.repeat).fill(value))
  }

  beginLevel(value: number, run: LevelProgress['repeat'] | null = null): void {
    this.run = run
    const at = this.left.indexOf(value)
    if (at >= 0) this.left.splice(at, 1)
    this.levelStartedAt = performance.now()
  }

  endLevel(value: number): void {
    if (this.cost === null) return
    this.projected += this.levelSeconds(value)
    this.actual += (performance.now() - this.levelStartedAt) / 1000
  }

  /** The level's progress with the run's clock added. */
  at(progress: LevelProgress): LevelProgress {
    return {
      ...progress,
      ...(this.run == null ? {} : { repeat: this.run }),
      run: { elapsed_s: (performance.now() - this.startedAt) / 1000, remaining_s: this.remaining(progress) },
    }
  }

  private remaining(p: LevelProgress): number | null {
    let current: number | null
    if (p.duration_s !== null) current = Math.max(0, p.duration_s - p.elapsed_s)
    else if (p.total !== null && p.done > 0) current = ((p.total - p.done) * p.elapsed_s) / p.done
    else current = p.warming_up && this.cost !== null ? this.levelSeconds(p.value) : null
    if (current === null) return null
    if (this.left.length === 0) return current
    if (this.cost === null) return null
    const pace = this.projected > 0 ? this.actual / this.projected : 1
    return current + this.left.reduce((sum, value) => sum + this.levelSeconds(value), 0) * pace
  }

  private levelSeconds(value: number): number {
    return levelSeconds(this.config, value, this.cost ?? { request_s: 0 })
  }
}
