/** Parses `--shard I/N` (0-based I, like Kubernetes' JOB_COMPLETION_INDEX); null on bad input. */
export function parseShard(text: string): { index: number; count: number } | null {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim())
  if (match === null) return null
  const index = Number(match[1])
  const count = Number(match[2])
  return count >= 1 && index < count ? { index, count } : null
}
