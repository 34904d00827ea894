import { SAME_REFUSAL } from '../metrics/failure-causes.js'
import type { LevelFigures } from '../metrics/target-levels.js'

/**
 * Several endpoints in one run, some of them dead (hanging, answering 500, refusing the key): a run
 * level pools every target's requests, so the dead ones' timeouts and errors made the whole level
 * read "overloaded: back off" while the live targets answered every request (issue 36 item 12).
 * The level's verdict is judged on the live targets' evidence: a failed target's failures are the
 * target's, not the load's, and are set beside the verdict with the target named.
 */

/** A failed target's figures at one run level, and how it is named in words. */
export interface FailedTargetLevel {
  name: string
  figures: LevelFigures
}

/** The figures the level's verdict judges: the failed targets' failures counted as not load. */
export function judgedWithoutFailedTargets<
  Level extends Pick<LevelFigures, 'requests' | 'errors' | 'non_load_failures'>,
>(level: Level, failed: readonly FailedTargetLevel[]): Level {
  const theirs = failedTargetsShare(failed)
  if (theirs.loadLike === 0 && theirs.timeouts === 0) return level
  const nonLoad = level.non_load_failures
  return {
    ...level,
    errors: { ...level.errors, timeout: Math.max(0, level.errors.timeout - theirs.timeouts) },
    non_load_failures: {
      requests: (nonLoad?.requests ?? 0) + theirs.loadLike,
      cause: nonLoad?.cause ?? 'a failed target',
      message: nonLoad?.message ?? theirs.names.join(', '),
      hint: nonLoad?.hint ?? 'see the targets: each failed one says why',
    },
  }
}

/** "12 of its failures are from a failed target (http://b/v1 (m)), not load": null when they had none here. */
export function failedTargetsNote(failed: readonly FailedTargetLevel[]): string | null {
  const theirs = failedTargetsShare(failed)
  if (theirs.failures === 0) return null
  const who = theirs.names.length === 1 ? 'a failed target' : `${theirs.names.length} failed targets`
  return `${theirs.failures} of its failures are from ${who} (${theirs.names.join('; ')}), not load: judged on the others`
}

/**
 * Of a target's failures, those counted as not load request by request, as the run's pooled level
 * counts them: a target that got the same 5xx for every request is judged misconfigured on its own,
 * but each of those 5xx is load to a level where other targets answered.
 */
function perRequestNonLoad(figures: LevelFigures): number {
  const nonLoad = figures.non_load_failures
  if (nonLoad == null || nonLoad.cause === SAME_REFUSAL) return 0
  return Math.min(figures.failed, nonLoad.requests)
}

/**
 * The failed targets' failures at a level; those of them not already counted as non-load (a
 * refused key is, a timeout or a 5xx is not); their timeouts; their names.
 */
function failedTargetsShare(failed: readonly FailedTargetLevel[]): {
  failures: number
  loadLike: number
  timeouts: number
  names: string[]
} {
  let failures = 0
  let loadLike = 0
  let timeouts = 0
  const names: string[] = []
  for (const { name, figures } of failed) {
    if (figures.failed === 0) continue
    failures += figures.failed
    loadLike += figures.failed - perRequestNonLoad(figures)
    timeouts += figures.errors.timeout
    names.push(name)
  }
  return { failures, loadLike, timeouts, names }
}
