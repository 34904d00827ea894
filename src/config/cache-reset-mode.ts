/**
 * When the server's prefix/KV cache is reset with the engine's own call (src/run/level/cache-reset.ts):
 *   off           never (the default)
 *   before-level  before each measured level (its warm-up included), so no level inherits the last one's cache
 *   before-run    once, after the set-up's probes and before the first level
 */
export const CACHE_RESET_MODES = ['off', 'before-level', 'before-run'] as const
export type CacheResetMode = (typeof CACHE_RESET_MODES)[number]
