import type { ServerSelf } from '../../result/server-self.js'
import type { PlannedPrompt } from '../plan/workload-plan.js'

/**
 * A warning before the run when the plan's largest request (prompt + max_tokens) does not fit the
 * context the server said it has: on llama.cpp, one slot's (the -c context is split over the slots:
 * -c 4096 with 4 slots gives each request 1024 tokens); on vLLM and SGLang, max_model_len. Such
 * requests fail (vLLM answers 400) or stop short, and the level's figures are not the load's.
 * Null when it fits or the server did not say. The lengths are the plan's, counted with its tokenizer:
 * the server's count, and its chat template, differ a little.
 */
export function contextWarning(server: ServerSelf | null, prompts: readonly PlannedPrompt[]): string | null {
  if (server === null || prompts.length === 0) return null
  let largest = prompts[0] as PlannedPrompt
  for (const prompt of prompts)
    if (prompt.input_tokens + prompt.output_tokens > largest.input_tokens + largest.output_tokens)
      largest = prompt
  const needed = largest.input_tokens + largest.output_tokens
  const request = `the plan's largest request (${largest.input_tokens} input + ${largest.output_tokens} output = ${needed} tokens)`
  const lower = 'lower --input-tokens or --output-tokens'
  if (server.context_per_slot !== null && needed > server.context_per_slot) {
    const { slots } = server
    const split = slots === null ? '' : ` (its context split over ${slots} slots)`
    const larger =
      slots === null
        ? `-c ≥ ${needed} × the slot count`
        : `-c ≥ ${needed * slots} (${needed} × ${slots} slots)`
    return (
      `${request} exceeds the server's context per slot, ${server.context_per_slot} tokens${split}: ` +
      `such requests fail or stop short. ${capitalize(lower)}, or give each slot more: start llama-server ` +
      `with ${larger}, or with fewer slots (-np)`
    )
  }
  if (server.max_model_len !== null && needed > server.max_model_len) {
    return (
      `${request} exceeds the server's max_model_len, ${server.max_model_len} tokens: such requests are ` +
      `refused (HTTP 400) or cut. ${capitalize(lower)}, or start the server with a longer context ` +
      `(vLLM --max-model-len, SGLang --context-length)`
    )
  }
  return null
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
