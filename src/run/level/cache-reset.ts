import type { CacheResetMode } from '../../config/cache-reset-mode.js'
import type { CacheResetMeta } from '../../result/run-meta.js'
import type { ServerSelf } from '../../result/server-self.js'

/**
 * The engine's own call that empties its prefix/KV cache, chosen from what the server said it is
 * (meta.server.engine), as each engine documents it:
 *   llama.cpp  POST /slots/{id}?action=erase, once per slot (ids 0 .. total_slots - 1; its `--slot-save-path`
 *              enables the slot actions)
 *   SGLang     POST /flush_cache
 *   vLLM       POST /reset_prefix_cache (served in its dev mode, VLLM_SERVER_DEV_MODE=1; absent otherwise)
 * Paths at the server's root, beside /v1. Pure: the sending is cache-reset-send.ts.
 */
export interface CacheResetCall {
  engine: NonNullable<ServerSelf['engine']>
  /** The call in words, as the run description and meta say it: "POST /slots/{id}?action=erase". */
  call: string
  /** Every path one reset posts to, in order. */
  paths: string[]
}

export const ENGINE_CALLS = {
  'llama.cpp': 'POST /slots/{id}?action=erase',
  sglang: 'POST /flush_cache',
  vllm: 'POST /reset_prefix_cache',
} as const satisfies Record<CacheResetCall['engine'], string>

/** The call for this server, or why there is none (a sentence for "not started: ..."). */
export function cacheResetCall(server: ServerSelf | null): CacheResetCall | { refusal: string } {
  const known = `llmbench knows llama.cpp's ${ENGINE_CALLS['llama.cpp']}, SGLang's ${ENGINE_CALLS.sglang} and vLLM's ${ENGINE_CALLS.vllm}`
  if (server === null || server.engine === null) {
    const said =
      server === null
        ? 'the server said nothing about itself (no /props, /slots, /get_server_info or /v1/models answer)'
        : `the server's engine was not recognised (from ${server.answered.join(', ')})`
    return { refusal: `--reset-cache: ${said}, so its cache-reset call is unknown; ${known}` }
  }
  const { engine } = server
  if (engine === 'llama.cpp') {
    if (server.slots === null)
      return {
        refusal: `--reset-cache: llama.cpp did not say how many slots it has (/props total_slots, /slots), so there are no slot ids to erase; start it with --slots`,
      }
    return {
      engine,
      call: ENGINE_CALLS[engine],
      paths: Array.from({ length: server.slots }, (_, id) => `/slots/${id}?action=erase`),
    }
  }
  return { engine, call: ENGINE_CALLS[engine], paths: [ENGINE_CALLS[engine].replace(/^POST /, '')] }
}

/** What a failed call means for each engine: how to get the call served. */
export function enableHint(engine: CacheResetCall['engine']): string {
  if (engine === 'llama.cpp') return 'llama.cpp serves slot actions when started with --slot-save-path DIR'
  if (engine === 'vllm') return 'vLLM serves it only in dev mode (VLLM_SERVER_DEV_MODE=1)'
  return 'SGLang flushes only when no request is running'
}

/** The run description's words: "cache reset before each level via POST /slots/{id}?action=erase". */
export function describeCacheReset(mode: Exclude<CacheResetMode, 'off'>, call: CacheResetCall): string {
  const when = mode === 'before-level' ? 'before each level' : 'once before the first level'
  const slots =
    call.engine === 'llama.cpp' ? ` (${call.paths.length} slot${call.paths.length === 1 ? '' : 's'})` : ''
  return `cache reset ${when} via ${call.call}${slots}`
}

/** meta.cache_reset before any reset: what will be called, and when. */
export function cacheResetMeta(mode: Exclude<CacheResetMode, 'off'>, call: CacheResetCall): CacheResetMeta {
  return {
    mode,
    engine: call.engine,
    call: call.call,
    calls_per_reset: call.paths.length,
    note: describeCacheReset(mode, call),
    resets: [],
  }
}
