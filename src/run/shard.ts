/**
 * One shard of a run spread over several processes or machines: shard `index` of `count` runs its
 * share of every level, starting each level at the shared wall-clock schedule.
 */
export interface ShardInfo {
  index: number
  count: number
  host: string
  /** Wall-clock time all shards start their first level at (ISO). */
  start_at: string | null
  /**
   * This host's clock offset estimate against the target server, ms (server Date header minus the
   * local midpoint of the request); null when the server sent no Date. Date has 1 s resolution, so
   * this catches a badly wrong clock, not milliseconds.
   */
  clock_offset_ms: number | null
  /** Digest of everything that must be equal across shards to merge them. */
  config_digest: string
}

/** Parses `--shard I/N` (0-based I, like Kubernetes' JOB_COMPLETION_INDEX); null on bad input. */
export function parseShard(text: string): { index: number; count: number } | null {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim())
  if (match === null) return null
  const index = Number(match[1])
  const count = Number(match[2])
  return count >= 1 && index < count ? { index, count } : null
}
