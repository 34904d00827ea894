/**
 * --start-at, the one wall-clock time sharded runs share, parsed in one place for `run`, the
 * k8s-manifest command and the manifest builder.
 */

/** An ISO time with a zone: without one, each machine would read it in its own local time. */
export const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i

const EPOCH_SECONDS = /^\d+(\.\d+)?$/

/** Parses --start-at: an ISO time, or epoch seconds. Null when it is neither. */
export function parseStartAt(text: string): number | null {
  const trimmed = text.trim()
  if (EPOCH_SECONDS.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const ms = Date.parse(trimmed)
  return Number.isNaN(ms) ? null : ms
}

/** Whether every machine reads `text` as the same instant: epoch seconds, or an ISO time with a zone. */
export function isSameEverywhere(text: string): boolean {
  const trimmed = text.trim()
  return EPOCH_SECONDS.test(trimmed) || (ISO_WITH_ZONE.test(trimmed) && parseStartAt(trimmed) !== null)
}
