import { isObject, type Json } from '../../json-object.js'
import type { ServerSelf } from '../../result/server-self.js'

/**
 * Pure readers of the answers engines give about themselves. Each takes the parsed JSON of one
 * path (or null when it did not answer with JSON) and returns only what it found; anything of an
 * unexpected shape is simply unknown.
 */
export interface SelfAnswers {
  /** llama.cpp GET /props */
  props: unknown
  /** llama.cpp GET /slots */
  slots: unknown
  /** GET /v1/models (every OpenAI-compatible server; vLLM and SGLang add max_model_len) */
  models: unknown
  /** SGLang GET /get_server_info */
  serverInfo: unknown
}

/** What all the answers say together; null when none answered with JSON. */
export function describeServer(answers: SelfAnswers, model: string | null): ServerSelf | null {
  const answered = (
    [
      ['/props', answers.props],
      ['/slots', answers.slots],
      ['/v1/models', answers.models],
      ['/get_server_info', answers.serverInfo],
    ] as const
  )
    .filter(([, answer]) => answer !== null && answer !== undefined)
    .map(([path]) => path)
  if (answered.length === 0) return null
  const props = llamaProps(answers.props)
  const slotList = llamaSlots(answers.slots)
  const models = modelList(answers.models, model)
  const sglang = sglangInfo(answers.serverInfo)
  const engine =
    props !== null || slotList !== null ? 'llama.cpp' : sglang !== null ? 'sglang' : (models.engine ?? null)
  return {
    engine,
    slots: props?.slots ?? slotList?.slots ?? sglang?.slots ?? null,
    context_per_slot: props?.context ?? slotList?.context ?? null,
    max_model_len: models.maxModelLen ?? sglang?.contextLength ?? null,
    answered,
  }
}

/** llama.cpp /props: default_generation_settings.n_ctx is the context of one slot; total_slots. */
export function llamaProps(json: unknown): { slots: number | null; context: number | null } | null {
  if (!isObject(json)) return null
  const settings = isObject(json.default_generation_settings) ? json.default_generation_settings : null
  const found = { slots: slotCount(json.total_slots), context: tokenCount(settings?.n_ctx) }
  return found.slots === null && found.context === null ? null : found
}

/** llama.cpp /slots: one entry per slot, each with its n_ctx. */
export function llamaSlots(json: unknown): { slots: number; context: number | null } | null {
  if (!Array.isArray(json) || json.length === 0 || !json.every((slot) => isObject(slot) && 'n_ctx' in slot))
    return null
  return { slots: json.length, context: tokenCount((json[0] as Json).n_ctx) }
}

/**
 * /v1/models: max_model_len of the run's model (vLLM, SGLang), else of the first entry that has one;
 * owned_by names the engine ("vllm", "sglang", "llamacpp").
 */
export function modelList(
  json: unknown,
  model: string | null,
): { maxModelLen: number | null; engine: ServerSelf['engine'] | null } {
  const data = isObject(json) && Array.isArray(json.data) ? json.data.filter(isObject) : []
  const entry =
    data.find((item) => item.id === model) ?? data.find((item) => tokenCount(item.max_model_len) !== null)
  const owner = String(entry?.owned_by ?? data[0]?.owned_by ?? '').toLowerCase()
  const engine =
    owner === 'vllm' ? 'vllm' : owner === 'sglang' ? 'sglang' : owner === 'llamacpp' ? 'llama.cpp' : null
  return { maxModelLen: tokenCount(entry?.max_model_len), engine }
}

/** SGLang /get_server_info: its server arguments flattened, plus internal_states[]. */
export function sglangInfo(json: unknown): { slots: number | null; contextLength: number | null } | null {
  if (!isObject(json) || !('max_total_num_tokens' in json || Array.isArray(json.internal_states))) return null
  const state =
    Array.isArray(json.internal_states) && isObject(json.internal_states[0]) ? json.internal_states[0] : {}
  return {
    slots: slotCount(json.max_running_requests) ?? slotCount(state.max_running_requests),
    contextLength: tokenCount(json.context_length) ?? tokenCount(state.context_length),
  }
}

/**
 * Bounds past any real server: an answer beyond them (1e308 from a broken or hostile server) is
 * unknown, as -1 is, rather than a figure the knee and the context warning would reason with.
 */
export const MAX_SELF_SLOTS = 65_536
export const MAX_SELF_CONTEXT_TOKENS = 100_000_000

function slotCount(value: unknown): number | null {
  return wholeUpTo(value, MAX_SELF_SLOTS)
}

function tokenCount(value: unknown): number | null {
  return wholeUpTo(value, MAX_SELF_CONTEXT_TOKENS)
}

function wholeUpTo(value: unknown, max: number): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= max ? value : null
}
