import type { Endpoint } from '../../client/target.js'
import type { CacheResetMode } from '../../config/cache-reset-mode.js'
import type { CacheResetMeta } from '../../result/run-meta.js'
import type { ServerSelf } from '../../result/server-self.js'
import { type CacheResetCall, cacheResetCall, cacheResetMeta } from './cache-reset.js'
import { sendCacheReset } from './cache-reset-send.js'

/**
 * --reset-cache during a run: checked once before the load (the call is made, so a server without it
 * is refused before any level, never found out at the first one), then made before each level or
 * once before the first, each reset recorded in meta.cache_reset.
 */
export class CacheResetter {
  readonly meta: CacheResetMeta

  private constructor(
    private readonly endpoint: Endpoint,
    private readonly call: CacheResetCall,
    mode: Exclude<CacheResetMode, 'off'>,
  ) {
    this.meta = cacheResetMeta(mode, call)
  }

  /** The call chosen for `server` and made once; a sentence for "not started: ..." when there is none or it failed. */
  static async check(
    mode: Exclude<CacheResetMode, 'off'>,
    endpoint: Endpoint,
    server: ServerSelf | null,
    interrupt?: AbortSignal,
  ): Promise<CacheResetter | { refusal: string }> {
    const call = cacheResetCall(server)
    if ('refusal' in call) return call
    const tried = await sendCacheReset(endpoint, call, interrupt === undefined ? {} : { interrupt })
    if (!tried.ok) return { refusal: tried.problem }
    return new CacheResetter(endpoint, call, mode)
  }

  get mode(): CacheResetMeta['mode'] {
    return this.meta.mode
  }

  /**
   * One reset before `before` ("level 4", "control"), with nothing in flight. A failure here (the
   * call worked before the run) is said and recorded, and the level runs on a cache not reset.
   */
  async reset(before: string, log: (line: string) => void): Promise<void> {
    const at = new Date().toISOString()
    const outcome = await sendCacheReset(this.endpoint, this.call)
    if (outcome.ok) {
      this.meta.resets.push({ before, at, ms: outcome.ms })
      return
    }
    this.meta.resets.push({ before, at, ms: 0, error: outcome.problem })
    log(`warning: ${outcome.problem} (before ${before}: it runs on a cache not reset)`)
  }
}
