/**
 * The built-in OpenAI-compatible simulator: `GET /v1/models`, `POST /v1/chat/completions`,
 * `POST /v1/completions` (streamed or not), timed by the capacity model in ../model/engine.ts; the Responses
 * API, Anthropic Messages and embeddings endpoints in the same timing (./protocol-frames.ts).
 *
 * Token accounting: every output token is one word from SIM_WORDS, each a single token in both
 * cl100k_base and o200k_base, so a local tokenizer counts the same completion_tokens as `usage` does.
 * Input tokens are estimated as ceil(chars / 4) over the message contents (chat) or the prompt
 * (completions; a prompt given as token ids counts one per id). The estimate drives the prefill time and
 * usage.prompt_tokens only.
 *
 * `GET /metrics` (also `/v1/metrics`) serves the capacity model's own view in vLLM's metric names
 * (./vllm-metrics.ts); the `timings` option adds llama.cpp's `timings` to each response.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { REAL_TIME } from '../clock.js'
import { isObject } from '../json-object.js'
import {
  type JobSink,
  type JobTimeline,
  resolveSimParams,
  SimEngine,
  type SimParams,
  type SimStats,
} from '../model/engine.js'
import type { Protocol } from '../protocols/names.js'
import { protocolOf, protocolServedAt } from '../protocols/wire-protocol.js'
import { seededRandom } from '../random.js'
import { loadTokenizer } from '../workload/tokenizers.js'
import { audioTokens, DEFAULT_AUDIO_TOKENS_PER_S } from './audio-tokens.js'
import { chunkFrames, type Frames, type Usage } from './chunk-frames.js'
import { checkDraft, type DraftPlan, draftPlan, type SimDraft, stepSink } from './draft-model.js'
import {
  FAULT_DELAY_MS,
  FAULT_OVERSIZED_BYTES,
  FAULT_STALL_MS,
  type FaultKind,
  FaultPicker,
  type FaultRate,
} from './faults.js'
import { DEFAULT_IMAGE_PATCH_PX, imageTokens } from './image-tokens.js'
import { llamaCppTimings } from './llamacpp-timings.js'
import { EXPOSITION_CONTENT_TYPE } from './metrics-exposition.js'
import { PrefixCache, toolCallsKeyText } from './prefix-cache.js'
import { protocolSink } from './protocol-frames.js'
import {
  checkQuirks,
  closeAfterResponse,
  droppedOnClosing,
  KEEP_ALIVE_HEADERS,
  type SimQuirks,
} from './quirks.js'
import {
  checkReasoning,
  phaseOf,
  type ReasoningPlan,
  reasoningPlan,
  type SimReasoning,
  type TokenPhase,
  withReasoningUsage,
} from './reasoning.js'
import { checkSlowdown, type SimSlowdown, slowDownAt } from './slowdown.js'
import { forcedToolCall } from './tool-calls.js'
import { VllmMetrics } from './vllm-metrics.js'

export interface SimulatorOptions extends Partial<SimParams> {
  /** Faults to inject and the share of generation requests each hits. */
  faults?: FaultRate[]
  /** Default 127.0.0.1 */
  host?: string
  /** Default 0: a free port. */
  port?: number
  /** The one model id served. Default "llmbench-sim". */
  model?: string
  /**
   * How usage.prompt_tokens is counted: "estimate" (default, ceil(chars / 4), cheapest) or "exact"
   * (o200k tokens of the message contents), plus `template_tokens` for a chat template's wrapping.
   */
  prompt_counting?: 'estimate' | 'exact'
  /** Tokens a chat template adds around every chat prompt (role markers, special tokens). Default 0. */
  template_tokens?: number
  /**
   * Side in pixels of one image token's patch: an image costs ceil(h / p) · ceil(w / p) prompt
   * tokens, prefilled like text. Default 28, Qwen2-VL's merged patch (14-px ViT patches, 2 × 2 merged).
   */
  image_patch_px?: number
  /**
   * Prompt tokens one second of `input_audio` costs, prefilled like text. Default 25: Qwen2-Audio's
   * Whisper encoder (50 frames a second, pooled by 2).
   */
  audio_tokens_per_s?: number
  /**
   * Share of requests that meet end-of-sequence before max_tokens (seeded): they stop at a random
   * point with finish_reason "stop", unless the request sends ignore_eos or min_tokens. Default 0.
   */
  early_stop?: number
  /** Misbehaviours of real servers (llama.cpp's close after each response, ...): see quirks.ts. */
  quirks?: SimQuirks
  /**
   * Tokens of context per request: a request whose prompt + max_tokens exceeds it gets HTTP 400 with
   * llama.cpp's sentence, as a server started with too small a context does. Default: no limit.
   */
  context_size?: number
  /**
   * llama.cpp's `timings` (prompt_n, prompt_ms, predicted_n, predicted_ms, ...) on the finish chunk of
   * a stream and on a non-streamed response, from the model's own prefill and decode times. Default off.
   */
  timings?: boolean
  /** A reasoning phase before each chat answer (reasoning_content deltas, usage reasoning_tokens): see reasoning.ts. */
  reasoning?: SimReasoning
  /**
   * A prefix cache (./prefix-cache.ts) as large as kv_cache_tokens: repeated prompt prefixes (a shared
   * prefix, a session's history) cost no prefill and are reported as cached_tokens. Default off.
   */
  prefix_cache?: boolean
  /** Slower from a given request on (./slowdown.ts); default never. */
  slowdown?: SimSlowdown
  /**
   * Speculative decoding with a draft model of this acceptance rate (./draft-model.ts): each decode
   * step writes its accepted drafts and its own token back to back. Default none.
   */
  draft?: SimDraft
}

export interface RunningSimulator {
  /** Base URL including /v1, e.g. http://127.0.0.1:PORT/v1 */
  url: string
  port: number
  /** Cancels every request, destroys open sockets, resolves once the server is closed. Idempotent. */
  close(): Promise<void>
  stats(): SimStats
  /**
   * Stalls the server for `ms`: generation requests arriving meanwhile get no answer (not even
   * headers) until it ends, as a server in a long garbage-collection pause or a failover would.
   */
  hold(ms: number): void
}

import { SIM_MODEL } from './model-id.js'

export { SIM_MODEL }

/** quirks.events_after_done: the gap between those events, ms. */
const AFTER_DONE_EVENT_GAP_MS = 2

/** Request bodies above this are refused with 413, bytes. */
const MAX_BODY_BYTES = 8 * 1024 * 1024
/** Default of max_tokens when the request gives none, as in the OpenAI completions API. */
const DEFAULT_MAX_TOKENS = 16

/**
 * Output vocabulary. Each entry is a leading space plus lowercase ASCII letters: JSON-safe as is (no
 * escaping on the hot path) and one token for GPT tokenizers, also when concatenated.
 */
export const SIM_WORDS: readonly string[] = [
  'the model token time server request batch queue load fast',
  'slow data stream text word value result point level rate',
  'test first next last small large simple system state event',
  'signal number line block cache memory input output engine slot',
]
  .join(' ')
  .split(' ')
  .map((w) => ` ${w}`)

/**
 * The words of request number `requestNo` (1-based, in arrival order) on a simulator seeded `seed`:
 * a mulberry32 generator seeded from both, so the text is reproducible and differs between requests.
 */
export function wordSource(seed: number, requestNo: number): () => string {
  let state = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(requestNo, 0xc2b2ae35)) | 0
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296
    return SIM_WORDS[Math.floor(r * SIM_WORDS.length)] ?? ' the'
  }
}

interface SimContext {
  readonly engine: SimEngine<NodeJS.Timeout>
  /** What `GET /metrics` shows; the engine feeds it. */
  readonly metrics: VllmMetrics
  readonly timings: boolean
  readonly model: string
  readonly modelsBody: string
  /** Generation requests seen, in arrival order: the per-request counter of the text generator. */
  requestCount: number
  readonly faults: FaultPicker
  readonly counting: PromptCounting
  readonly earlyStop: number
  readonly contextSize: number
  /** performance.now() until which new generation requests wait (hold()). */
  heldUntil: number
  readonly quirks: SimQuirks
  readonly reasoning: SimReasoning | null
  readonly prefixCache: PrefixCache | null
  readonly slowdown: SimSlowdown | null
  readonly draft: Required<SimDraft> | null
}

interface PromptCounting {
  exact: boolean
  templateTokens: number
  imagePatchPx: number
  audioTokensPerS: number
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const {
    host = '127.0.0.1',
    port = 0,
    model = SIM_MODEL,
    faults = [],
    prompt_counting = 'estimate',
    template_tokens = 0,
    image_patch_px = DEFAULT_IMAGE_PATCH_PX,
    audio_tokens_per_s = DEFAULT_AUDIO_TOKENS_PER_S,
    early_stop = 0,
    quirks = {},
    context_size = Number.POSITIVE_INFINITY,
    timings = false,
    reasoning,
    prefix_cache = false,
    slowdown,
    draft,
    ...overrides
  } = opts
  if (!(Number.isInteger(template_tokens) && template_tokens >= 0))
    throw new RangeError(`template_tokens must be a non-negative integer, got ${template_tokens}`)
  if (!(Number.isInteger(image_patch_px) && image_patch_px >= 1))
    throw new RangeError(`image_patch_px must be a positive integer, got ${image_patch_px}`)
  if (!(audio_tokens_per_s > 0))
    throw new RangeError(`audio_tokens_per_s must be above 0, got ${audio_tokens_per_s}`)
  if (!(early_stop >= 0 && early_stop <= 1))
    throw new RangeError(`early_stop must be in [0, 1], got ${early_stop}`)
  const params = resolveSimParams(overrides)
  const metrics = new VllmMetrics(model, params.kv_cache_tokens)
  const ctx: SimContext = {
    engine: new SimEngine(params, REAL_TIME, metrics),
    metrics,
    timings,
    model,
    modelsBody: JSON.stringify({
      object: 'list',
      // With a prefix cache it plays vLLM's (owned_by "vllm", POST /reset_prefix_cache), so a run's
      // --reset-cache finds vLLM's call here.
      data: [{ id: model, object: 'model', owned_by: prefix_cache ? 'vllm' : 'llmbench' }],
    }),
    requestCount: 0,
    faults: new FaultPicker(faults, params.seed),
    counting: {
      exact: prompt_counting === 'exact',
      templateTokens: template_tokens,
      imagePatchPx: image_patch_px,
      audioTokensPerS: audio_tokens_per_s,
    },
    earlyStop: early_stop,
    contextSize: context_size,
    heldUntil: 0,
    quirks: checkQuirks(quirks),
    reasoning: checkReasoning(reasoning),
    prefixCache: prefix_cache ? new PrefixCache(params.kv_cache_tokens) : null,
    slowdown: checkSlowdown(slowdown),
    draft: checkDraft(draft),
  }
  // keepAlive: TCP keep-alive probes; HTTP keep-alive (connection reuse) is on by default.
  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => onRequest(ctx, req, res))
  const boundPort = await listen(server, host, port)
  let closing: Promise<void> | undefined
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/v1`,
    port: boundPort,
    stats: () => ctx.engine.stats(),
    hold: (ms) => {
      ctx.heldUntil = Math.max(ctx.heldUntil, performance.now() + ms)
    },
    close: () => {
      closing ??= shutdown(server, ctx.engine)
      return closing
    },
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve((server.address() as AddressInfo).port)
    })
  })
}

function shutdown(server: Server, engine: SimEngine<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()))
    server.closeAllConnections()
    engine.cancelAll()
  })
}

// ---------------------------------------------------------------------------------------------------
// Routing and request parsing

interface ApiError {
  status: number
  message: string
  type: string
  code: string | null
}

interface GenerationRequest {
  protocol: Protocol
  stream: boolean
  includeUsage: boolean
  maxTokens: number
  promptTokens: number
  /** False when the request asks to ignore end-of-sequence. */
  eosAllowed: boolean
  /** The messages (chat) or prompt (completions) as sent: what the prefix cache keys. */
  input?: unknown
  /** Embeddings: texts to embed. */
  inputs: number
  /** The parsed body, for what the answer depends on beyond its length (a forced tool call). */
  body?: Record<string, unknown>
}

function onRequest(ctx: SimContext, req: IncomingMessage, res: ServerResponse): void {
  // A write racing a client disconnect must not crash the process; 'close' cancels the job.
  res.on('error', () => {})
  if (ctx.quirks.close_after_response === true && droppedOnClosing(req)) return
  route(ctx, req, res).catch(() => {
    if (!res.headersSent)
      sendError(res, { status: 500, message: 'simulator error', type: 'server_error', code: null })
    else res.destroy()
  })
}

async function route(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Server-side TTFT and E2E count from here, before the body is read (as vLLM's from the request's arrival).
  const arrivedAt = REAL_TIME.now()
  const path = (req.url ?? '/').split('?', 1)[0]
  if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, ctx.modelsBody)
  // vLLM serves /metrics at the origin root; /v1/metrics too, for a client that appends it to the base URL.
  if (req.method === 'GET' && (path === '/metrics' || path === '/v1/metrics')) {
    const body = ctx.metrics.render(ctx.engine.stats())
    res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) })
    res.end(body)
    return
  }
  // vLLM's (dev mode) cache reset, at the root: the cache is emptied, the answer is an empty 200.
  if (req.method === 'POST' && path === '/reset_prefix_cache' && ctx.prefixCache !== null) {
    req.resume()
    ctx.prefixCache.clear()
    res.writeHead(200, { 'content-length': 0 })
    res.end()
    return
  }
  const protocol = protocolServedAt(path)
  if (protocol === null || req.method !== 'POST') {
    const message = `Unknown request URL: ${req.method ?? ''} ${path ?? ''}`
    return sendError(res, { status: 404, message, type: 'invalid_request_error', code: 'unknown_url' })
  }
  const body = await readBody(req)
  if (body === null) {
    const message = `Request body larger than ${MAX_BODY_BYTES} bytes`
    return sendError(res, { status: 413, message, type: 'invalid_request_error', code: null })
  }
  const parsed = parseGeneration(protocol, body, ctx.model, ctx.counting)
  if ('status' in parsed) return sendError(res, parsed)
  if (parsed.promptTokens + parsed.maxTokens > ctx.contextSize) {
    const message = `the request exceeds the available context size (${parsed.promptTokens} prompt + ${parsed.maxTokens} max_tokens > ${ctx.contextSize}), try increasing it`
    return sendError(res, badRequest(message, 'exceed_context_size_error'))
  }
  const held = ctx.heldUntil - performance.now()
  if (held > 0) await new Promise((resolve) => setTimeout(resolve, held))
  const fault = ctx.faults.next()
  if (fault !== null && injectBeforeResponse(fault, req, res, parsed)) return
  if (fault === 'slow-headers') await new Promise((resolve) => setTimeout(resolve, FAULT_DELAY_MS))
  if (!res.destroyed) generate(ctx, parsed, res, fault, arrivedAt)
}

const STATUS_FAULTS: Partial<Record<FaultKind, ApiError>> = {
  '401': {
    status: 401,
    message: 'Incorrect API key provided.',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
  '403': {
    status: 403,
    message: 'You are not allowed to use this model.',
    type: 'invalid_request_error',
    code: null,
  },
  '404': {
    status: 404,
    message: 'The model does not exist (injected fault).',
    type: 'invalid_request_error',
    code: 'model_not_found',
  },
  '429': {
    status: 429,
    message: 'Rate limit reached (injected fault).',
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
  },
  '500': {
    status: 500,
    message: 'Internal server error (injected fault).',
    type: 'server_error',
    code: null,
  },
  '502': { status: 502, message: 'Bad gateway (injected fault).', type: 'server_error', code: null },
  '503': { status: 503, message: 'Service unavailable (injected fault).', type: 'server_error', code: null },
}

/** Faults that replace the response entirely; true when one was injected. */
function injectBeforeResponse(
  fault: FaultKind,
  req: IncomingMessage,
  res: ServerResponse,
  r: GenerationRequest,
): boolean {
  const status = STATUS_FAULTS[fault]
  if (status !== undefined) {
    if (fault === '429') res.setHeader('retry-after', '1')
    sendError(res, status)
    return true
  }
  if (fault === 'reset') {
    req.socket.destroy()
    return true
  }
  if (fault === 'non-sse' && r.stream) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>')
    return true
  }
  return false
}

/** The body as text, or null when it exceeds MAX_BODY_BYTES (drained, so the connection stays usable). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size <= MAX_BODY_BYTES) chunks.push(chunk)
  }
  return size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')
}

function badRequest(message: string, code: string | null = null): ApiError {
  return { status: 400, message, type: 'invalid_request_error', code }
}

function parseGeneration(
  protocol: Protocol,
  text: string,
  model: string,
  counting: PromptCounting,
): GenerationRequest | ApiError {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return badRequest('We could not parse the JSON body of your request.', 'invalid_json')
  }
  if (!isObject(body)) return badRequest('The request body must be a JSON object.', 'invalid_json')
  if (typeof body.model !== 'string') return badRequest('You must provide a model parameter.')
  if (body.model !== model) {
    const message = `The model \`${body.model}\` does not exist`
    return { status: 404, message, type: 'invalid_request_error', code: 'model_not_found' }
  }
  const { request: fields, carries } = protocolOf(protocol)
  // Every protocol but legacy completions has its prompt counted as chat turns (request-fields.ts).
  const input = fields.prompt(body)
  const counted = counting.exact
    ? exactInputTokens(input)
    : fields.countsTurns
      ? chatInputTokens(input)
      : promptInputTokens(input)
  const images = carries.images ? imageTokens(input, counting.imagePatchPx) : 0
  if (typeof images === 'string') return badRequest(images)
  const audio = carries.audio ? audioTokens(input, counting.audioTokensPerS) : 0
  if (typeof audio === 'string') return badRequest(audio)
  const promptTokens =
    counted === null ? null : counted + images + audio + (fields.countsTurns ? counting.templateTokens : 0)
  if (promptTokens === null) return badRequest(fields.promptRefusal)
  const request = parseOptions(protocol, body, promptTokens)
  if (!('status' in request)) {
    request.input = input
    if (carries.tools) request.body = body
  }
  return request
}

function parseOptions(
  protocol: Protocol,
  body: Record<string, unknown>,
  promptTokens: number,
): GenerationRequest | ApiError {
  const { request: fields, streams } = protocolOf(protocol)
  const maxTokens = fields.maxTokens(body) ?? DEFAULT_MAX_TOKENS
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return badRequest("'max_tokens' must be an integer >= 1")
  }
  // A protocol that never streams (embeddings) answers with one body whatever `stream` says.
  const stream = streams && (body.stream ?? false)
  if (typeof stream !== 'boolean') return badRequest("'stream' must be a boolean")
  const includeUsage = fields.streamsUsage(body)
  // Servers that honour ignore_eos/min_tokens (vLLM, SGLang, TGI) generate up to max_tokens regardless.
  const minTokens = typeof body.min_tokens === 'number' ? body.min_tokens : 0
  const eosAllowed = body.ignore_eos !== true && minTokens < maxTokens
  const inputs = fields.inputs(body)
  return { protocol, stream, includeUsage, maxTokens, promptTokens, eosAllowed, inputs }
}

/** o200k tokens of a chat's message contents (or a completions prompt); null when not readable. */
function exactInputTokens(input: unknown): number | null {
  const tokenizer = loadTokenizer('o200k')
  if (typeof input === 'string') return tokenizer.count(input)
  if (!Array.isArray(input)) return null
  let tokens = 0
  for (const m of input) {
    if (typeof m === 'string') tokens += tokenizer.count(m)
    else if (isObject(m) && typeof m.content === 'string') tokens += tokenizer.count(m.content)
    else if (isObject(m) && Array.isArray(m.content)) {
      for (const p of m.content)
        if (isObject(p) && typeof p.text === 'string') tokens += tokenizer.count(p.text)
    }
    if (isObject(m)) tokens += tokenizer.count(toolCallsText(m.tool_calls))
  }
  return tokens
}

/** ceil(chars / 4) of all message contents (string, or text parts); null if `messages` is not an array. */
function chatInputTokens(messages: unknown): number | null {
  if (!Array.isArray(messages)) return null
  let chars = 0
  for (const m of messages) {
    if (!isObject(m)) continue
    if (typeof m.content === 'string') chars += m.content.length
    else if (Array.isArray(m.content)) chars += textPartsLength(m.content)
    chars += toolCallsText(m.tool_calls).length
  }
  return Math.ceil(chars / 4)
}

/** An assistant turn's tool calls as prompt text (names and arguments, as a chat template writes them); '' when none. */
function toolCallsText(calls: unknown): string {
  if (!Array.isArray(calls)) return ''
  let text = ''
  for (const call of calls) {
    const fn = isObject(call) && isObject(call.function) ? call.function : null
    if (fn === null) continue
    if (typeof fn.name === 'string') text += fn.name
    if (typeof fn.arguments === 'string') text += fn.arguments
  }
  return text
}

function textPartsLength(parts: unknown[]): number {
  let chars = 0
  for (const p of parts) if (isObject(p) && typeof p.text === 'string') chars += p.text.length
  return chars
}

/** ceil(chars / 4) of a string or string[] prompt, one per id of a token-id prompt; null otherwise. */
function promptInputTokens(prompt: unknown): number | null {
  if (typeof prompt === 'string') return Math.ceil(prompt.length / 4)
  if (!Array.isArray(prompt)) return null
  let chars = 0
  let ids = 0
  for (const p of prompt) {
    if (typeof p === 'string') chars += p.length
    else if (typeof p === 'number') ids++
    else if (Array.isArray(p)) ids += p.length
    else return null
  }
  return Math.ceil(chars / 4) + ids
}

// ---------------------------------------------------------------------------------------------------
// Generation

/** Where request `requestNo` meets end-of-sequence: max_tokens, or (early_stop of the time) earlier. */
function earlyStopAt(ctx: SimContext, requestNo: number, maxTokens: number): number {
  if (ctx.earlyStop === 0 || maxTokens < 2) return maxTokens
  const random = seededRandom((ctx.engine.params.seed * 7_368_787) ^ (requestNo * 2_654_435_761))
  if (random() >= ctx.earlyStop) return maxTokens
  return 1 + Math.floor(random() * (maxTokens - 1))
}

function generate(
  ctx: SimContext,
  r: GenerationRequest,
  res: ServerResponse,
  fault: FaultKind | null,
  arrivedAt: number,
): void {
  const requestNo = ++ctx.requestCount
  slowDownAt(ctx.engine.params, ctx.slowdown, requestNo)
  const { carries } = protocolOf(r.protocol)
  const next = wordSource(ctx.engine.params.seed, requestNo)
  const outputTokens = r.eosAllowed ? earlyStopAt(ctx, requestNo, r.maxTokens) : r.maxTokens
  const finishReason = outputTokens < r.maxTokens ? 'stop' : 'length'
  // Only a protocol with a reasoning field or events of its own has a reasoning phase.
  const phases = reasoningPlan(ctx.reasoning, carries.reasoning, outputTokens)
  // A chat reply is the words the sinks will stream, drawn again from the same seeded source; a tool
  // call comes back in the history as the call (its arguments around the words), with no text.
  const words = (): string =>
    Array.from({ length: outputTokens }, wordSource(ctx.engine.params.seed, requestNo)).join('')
  const toolCall = r.body === undefined ? null : forcedToolCall(r.body, requestNo, ctx.quirks.tool_calls)
  const reply = (): string =>
    toolCall === null
      ? words()
      : toolCallsKeyText([
          { function: { name: toolCall.name, arguments: `${toolCall.head}${words()}${toolCall.tail}` } },
        ])
  const cached = ctx.prefixCache?.serve(r.input, r.promptTokens, carries.conversation ? reply() : null) ?? 0
  const usage: Usage = withReasoningUsage(
    {
      prompt_tokens: r.promptTokens,
      completion_tokens: ctx.quirks.usage_completion_tokens ?? outputTokens,
      total_tokens: r.promptTokens + outputTokens,
    },
    phases,
  )
  if (ctx.prefixCache !== null) usage.prompt_tokens_details = { cached_tokens: cached }
  const plan =
    ctx.draft === null
      ? null
      : draftPlan(
          ctx.draft,
          outputTokens,
          seededRandom((ctx.engine.params.seed * 40_503) ^ (requestNo * 2_246_822_519)),
        )
  const timings = ctx.timings
    ? (t: JobTimeline): string =>
        JSON.stringify({
          ...llamaCppTimings(r.promptTokens - cached, outputTokens, t, cached),
          ...draftTimings(plan),
        })
    : null
  // Chat and legacy completions answer in OpenAI chunks (chunk-frames.ts); the other protocols in
  // events and bodies of their own (protocol-frames.ts).
  const frames = chunkFrames(r.protocol, ctx.model, requestNo, toolCall)
  const answer: JobSink & { open?: () => void } =
    frames === null
      ? protocolSink(
          res,
          {
            protocol: r.protocol,
            model: ctx.model,
            requestNo,
            finishReason,
            inputs: r.inputs,
            usage: { input: r.promptTokens, output: outputTokens, cached, reasoning: phases?.tokens ?? 0 },
            phaseOf: (index) => phaseOf(phases, index),
          },
          next,
          r.stream,
          fault,
        )
      : r.stream
        ? new StreamSink(
            res,
            frames,
            next,
            r.includeUsage ? frames.usage(usage) : null,
            fault,
            outputTokens,
            finishReason,
            ctx.quirks,
            timings,
            phases,
          )
        : new JsonSink(res, frames, next, usage, finishReason, timings, phases)
  // Only the uncached tokens are prefilled (and, a simplification, held in the KV accounting). With a
  // draft the engine times steps, each handing its tokens on at once.
  const handle = ctx.engine.submit(
    { inputTokens: r.promptTokens - cached, outputTokens: plan?.steps.length ?? outputTokens, arrivedAt },
    plan === null ? answer : stepSink(plan, answer, ctx.metrics),
  )
  if (handle.admission === 'rejected') {
    const message = 'The server is overloaded: the request queue is full. Retry later.'
    sendError(res, { status: 503, message, type: 'server_error', code: 'overloaded' })
    return
  }
  // Fires on normal end too; cancel() is then a no-op. A leaking server (quirks.ignore_disconnect)
  // never cancels: the slot stays taken until the job ends by itself.
  if (ctx.quirks.ignore_disconnect !== true) res.on('close', handle.cancel)
  answer.open?.()
}

/** llama.cpp's draft counts in its timings (builds since mid-2025), with a draft; nothing without. */
function draftTimings(plan: DraftPlan | null): { draft_n?: number; draft_n_accepted?: number } {
  return plan === null ? {} : { draft_n: plan.drafted, draft_n_accepted: plan.accepted }
}

/** Writes each event as it happens: headers at once, then one SSE event per token. */
class StreamSink implements JobSink {
  /** While a `stall` fault holds the stream: when it lets go, and what it held back. */
  private stalledUntil = 0
  private held: string[] = []
  /** Words generated but not yet sent (quirks.tokens_per_event > 1). */
  private batched = ''
  /** Whether an answer event went out: the first carries frames.firstTokenPrefix (a tool call's opening). */
  private answered = false

  constructor(
    private readonly res: ServerResponse,
    private readonly frames: Frames,
    private readonly next: () => string,
    /** The usage event, or null when the client did not ask for it. */
    private readonly usageEvent: string | null,
    private readonly fault: FaultKind | null = null,
    private readonly maxTokens = 0,
    private readonly finishReason = 'length',
    private readonly quirks: SimQuirks = {},
    /** The `timings` JSON of a finished request, or null when they are off. */
    private readonly timings: ((t: JobTimeline) => string) | null = null,
    /** Which tokens are reasoning (reasoning.ts); null = all answer. */
    private readonly phases: ReasoningPlan | null = null,
  ) {}

  /** One event of `phase` carrying `text`. */
  private frame(phase: TokenPhase, text: string): string {
    const reasoning = phase === 'reasoning' ? this.frames.reasoning : null
    if (reasoning !== null) return reasoning.prefix + text + reasoning.suffix
    const prefix = this.answered
      ? this.frames.tokenPrefix
      : (this.frames.firstTokenPrefix ?? this.frames.tokenPrefix)
    this.answered = true
    return prefix + text + this.frames.tokenSuffix
  }

  open(): void {
    const closing = this.quirks.close_after_response === true
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...(closing ? KEEP_ALIVE_HEADERS : { connection: 'keep-alive' }),
    })
    if (closing) closeAfterResponse(this.res)
    this.res.socket?.setNoDelay(true)
    this.res.flushHeaders()
    if (this.frames.open !== null) this.res.write(this.frames.open)
  }

  onToken(index: number): void {
    const perEvent = this.quirks.tokens_per_event ?? 1
    const phase = phaseOf(this.phases, index)
    // Hidden thinking takes its decode step and is never sent.
    if (phase === 'hidden') {
      this.next()
      return
    }
    if (perEvent > 1) {
      // A batch never spans the thinking and the answer: what was batched goes out as thinking.
      if (phase === 'answer' && this.batched !== '' && phaseOf(this.phases, index - 1) === 'reasoning')
        this.res.write(this.frame('reasoning', this.takeBatch()))
      this.batched += this.next()
      if ((index + 1) % perEvent !== 0) return
    }
    const event = this.frame(phase, perEvent > 1 ? this.takeBatch() : this.next())
    if (this.fault !== null && index === Math.floor(this.maxTokens / 2) && this.injectMidStream()) return
    if (Date.now() < this.stalledUntil) {
      this.held.push(event)
      return
    }
    if (this.held.length > 0) {
      this.res.write(this.held.join(''))
      this.held = []
    }
    this.res.write(event)
  }

  onFinish(timeline: JobTimeline): void {
    if (this.fault === 'no-done') return // every token sent; no finish, no [DONE], connection left open
    const wait = this.stalledUntil - Date.now()
    if (wait > 0) {
      // Finish when the stall lets go, unless the response closes first (the client gave up, or the
      // simulator is stopping): a held finish must not keep a stopped `llmbench sim` alive for 30 s.
      if (this.res.closed) return
      const timer = setTimeout(() => this.onFinish(timeline), wait)
      this.res.once('close', () => clearTimeout(timer))
      return
    }
    if (this.held.length > 0) this.res.write(this.held.join(''))
    if (this.batched !== '')
      this.res.write(this.frame(phaseOf(this.phases, this.maxTokens - 1), this.takeBatch()))
    const tail = this.timings === null ? '' : `,"timings":${this.timings(timeline)}`
    this.res.write(this.frames.finish(this.finishReason, tail))
    if (this.usageEvent !== null) this.res.write(this.usageEvent)
    if (this.quirks.hold_after_done === true) {
      this.res.write('data: [DONE]\n\n') // and the response never ends
      return
    }
    const after = this.quirks.events_after_done ?? 0
    if (after === 0) {
      this.res.end('data: [DONE]\n\n')
      return
    }
    this.res.write('data: [DONE]\n\n')
    this.eventsAfterDone(after)
  }

  /** Token events after [DONE], a little apart (so counting them would stretch the request), then the end. */
  private eventsAfterDone(left: number): void {
    if (this.res.destroyed) return
    if (left === 0) {
      this.res.end()
      return
    }
    this.res.write(this.frames.tokenPrefix + this.next() + this.frames.tokenSuffix)
    setTimeout(() => this.eventsAfterDone(left - 1), AFTER_DONE_EVENT_GAP_MS)
  }

  private takeBatch(): string {
    const words = this.batched
    this.batched = ''
    return words
  }

  /** The mid-stream faults; true when the stream ends here. */
  private injectMidStream(): boolean {
    switch (this.fault) {
      case 'disconnect':
        this.res.destroy()
        return true
      case 'malformed':
        this.res.write('data: {"id":"broken","choices":[{"index":0,"delta":{"content":"x"}\n\n')
        return false
      case 'error-event':
        this.res.end(
          'data: {"error":{"message":"injected failure","type":"server_error","code":500}}\n\ndata: [DONE]\n\n',
        )
        return true
      case 'error-field':
        this.res.end(
          'error: {"code":500,"message":"injected failure","type":"server_error"}\n\ndata: [DONE]\n\n',
        )
        return true
      case 'stall':
        this.stalledUntil = Date.now() + FAULT_STALL_MS
        return false
      case 'oversized':
        this.res.write(
          `${this.frames.tokenPrefix}${'x'.repeat(FAULT_OVERSIZED_BYTES)}${this.frames.tokenSuffix}`,
        )
        return false
      default:
        return false
    }
  }
}

/** Non-streaming: same timing, one JSON body at the end, usage always included. */
class JsonSink implements JobSink {
  private readonly words: string[] = []
  private readonly reasoningWords: string[] = []

  constructor(
    private readonly res: ServerResponse,
    private readonly frames: Frames,
    private readonly next: () => string,
    private readonly usage: Usage,
    private readonly finishReason = 'length',
    private readonly timings: ((t: JobTimeline) => string) | null = null,
    private readonly phases: ReasoningPlan | null = null,
  ) {}

  onToken(index: number): void {
    const phase = phaseOf(this.phases, index)
    if (phase === 'answer') this.words.push(this.next())
    else if (phase === 'reasoning') this.reasoningWords.push(this.next())
    else this.next()
  }

  onFinish(timeline: JobTimeline): void {
    const { id, created, model, object } = this.frames
    const reasoning = this.reasoningWords.length === 0 ? null : this.reasoningWords.join('')
    const choice = this.frames.choice(this.words.join(''), reasoning, this.finishReason)
    const body = JSON.stringify({ id, object, created, model, choices: [choice], usage: this.usage })
    // llama-server's non-streamed response has `timings` at the top level, after usage.
    const tail = this.timings === null ? '' : `,"timings":${this.timings(timeline)}`
    sendJson(this.res, 200, tail === '' ? body : `${body.slice(0, -1)}${tail}}`)
  }
}

// ---------------------------------------------------------------------------------------------------
// Plain responses

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

/** The OpenAI error shape: {"error":{"message","type","param","code"}}. */
function sendError(res: ServerResponse, e: ApiError): void {
  sendJson(
    res,
    e.status,
    JSON.stringify({ error: { message: e.message, type: e.type, param: null, code: e.code } }),
  )
}
