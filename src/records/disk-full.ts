/** Error codes that mean the disk (or the user's quota) has no room left for what we write. */
const NO_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT'])

export function isNoSpace(error: unknown): boolean {
  return NO_SPACE_CODES.has((error as NodeJS.ErrnoException | null)?.code ?? '')
}

/**
 * The result folder's disk is full: the run stops (nothing more could be recorded, so every further
 * request would be billed and lost) and what was written stays readable. Its own exit code.
 */
export class DiskFullError extends Error {
  constructor(readonly path: string) {
    super(
      `llmbench: no space left on device writing ${path}: the run was stopped. ` +
        'What was written before is kept and readable (requests.jsonl up to its last complete record, ' +
        'bench_result.json as of the last finished level); free space or choose another --out',
    )
    this.name = 'DiskFullError'
  }
}

/** A no-space error from a write as a DiskFullError naming the file; anything else as it is. */
export function asDiskFull(error: unknown, fallbackPath: string): unknown {
  if (error instanceof DiskFullError || !isNoSpace(error)) return error
  return new DiskFullError((error as NodeJS.ErrnoException).path ?? fallbackPath)
}
