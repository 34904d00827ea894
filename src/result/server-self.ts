/**
 * What the server said about itself before the run (meta.server): read from llama.cpp's /props and
 * /slots, vLLM's /v1/models, SGLang's /get_server_info, whichever answered (run/setup/server-self-read.ts).
 */
export interface ServerSelf {
  /** Which engine answered, when its answers name it; null = not recognised. */
  engine: 'llama.cpp' | 'vllm' | 'sglang' | null
  /** Requests the engine runs at once: llama.cpp's total_slots, SGLang's max_running_requests; null = unknown. */
  slots: number | null
  /** llama.cpp: tokens of context each slot has (its -c split over the slots); null = unknown. */
  context_per_slot: number | null
  /** vLLM and SGLang: the longest prompt + output a request may have; null = unknown. */
  max_model_len: number | null
  /** The paths that answered with JSON, e.g. ["/props", "/slots", "/v1/models"]. */
  answered: string[]
  /** Set when the plan's largest request does not fit (see run/setup/context-warning.ts), as warned before the run. */
  context_warning?: string
}

/**
 * The server's slot count beside the knee, in words: "the server's 4 slots" when the knee sits on
 * them, else how many it has. Null when the server did not say.
 */
export function slotsBesideKnee(kneeValue: number, server: ServerSelf | null | undefined): string | null {
  const slots = server?.slots ?? null
  if (slots === null) return null
  const what = server?.engine === 'sglang' ? 'max_running_requests' : 'slots'
  const plural = what === 'slots' && slots === 1 ? 'slot' : what
  if (kneeValue === slots) return `knee at ${kneeValue} = the server's ${slots} ${plural}`
  return `the server reports ${slots} ${plural}`
}

/** One line for the terminal: "server: llama.cpp, 4 slots, 1024 tokens of context per slot". */
export function describeServerSelf(server: ServerSelf): string {
  const parts = [
    server.engine ?? 'engine not recognised',
    server.slots === null
      ? null
      : `${server.slots} ${server.engine === 'sglang' ? 'max running requests' : 'slots'}`,
    server.context_per_slot === null ? null : `${server.context_per_slot} tokens of context per slot`,
    server.max_model_len === null ? null : `max_model_len ${server.max_model_len}`,
  ]
  return `server: ${parts.filter((part) => part !== null).join(', ')} (from ${server.answered.join(', ')})`
}
