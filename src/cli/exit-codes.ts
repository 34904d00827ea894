/** Exit codes, as docs/exit-codes.md documents them: scripts and CI gates rely on these numbers. */
export const EXIT = {
  ok: 0,
  /** The run finished but a gate failed (regression, SLO, success rate). */
  gateFailed: 1,
  /** Usage or configuration error. */
  usage: 2,
  /** Preflight failed: unreachable, auth, unknown model. */
  preflight: 3,
  /** The disk filled up (ENOSPC): the run was stopped; what was written before is readable. */
  diskFull: 4,
  /** compare could not decide: a run drifted or a level's client was bound; re-run, do not ship or block on it. */
  inconclusive: 5,
  /**
   * A coordinated shard run (--coordinator, `coordinate`) did not run as one: a shard or the coordinator
   * was lost, or the coordinator refused the shard; the level in progress is marked incomplete.
   */
  coordination: 6,
  /** Interrupted; partial results were still written. */
  interrupted: 130,
} as const

/** An error that ends the command with a given exit code and a message for the user. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
    this.name = 'CliError'
  }
}
