import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Dispatcher } from 'undici'
import { type ChunkInfo, errorEventMessage, type ToolCallDelta } from '../protocols/chunk.js'
import type { ProtocolInterpreter } from '../protocols/protocol-interpreter.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { ErrorClass, RequestRecord, ToolCallPart } from '../records/types.js'
import {
  classifyStatus,
  classifyTransportError,
  describeTransportError,
  RequestTimeoutError,
  StreamLimitError,
  type TimeoutKind,
  timeoutKindOf,
} from './classify.js'
import {
  answered,
  awaitSocket,
  ConnectionWatch,
  claimSocket,
  releaseSocket,
  type SocketState,
  type SocketUser,
  diedUnanswered as socketDiedUnanswered,
  socketNamed,
} from './connections.js'
import { type ContentEncoding, contentEncodingOf, decodeWhole, StreamDecoder } from './content-decoding.js'
import { stopWatching, watchInterrupt } from './interrupt-watch.js'
import { ReasoningPhase } from './reasoning-phase.js'
import { redact } from './redact.js'
import { type SseEvent, SseParser } from './sse.js'
import type { ReadStamped, StreamDispatcher } from './stream-dispatcher.js'
import type { Target } from './target.js'

/** More distinct tool calls than this in one answer is a malformed stream, not a workload. */
const MAX_TOOL_CALLS = 256

/** One request to send: identity plus its pre-serialized body. */
export interface RequestPlan {
  seq: number
  worker: number
  level: number
  phase: RequestRecord['phase']
  prompt_id: number
  /** When the caller wanted it sent; null = "now" (a loop's first request has no earlier wish). */
  scheduled_at: number | null
  attempt: number
  body: Buffer
  /** --cancel-share: abort the request once this many token-bearing events arrived; absent = let it end. */
  cancel_after_events?: number
}

/** One SSE event larger than this is a broken stream, not something to buffer without end. */
export const MAX_EVENT_BYTES = 8 * 1024 * 1024
/** Error bodies are kept only up to this size: enough for the server's message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024
/** Non-streamed bodies are cut at this size rather than growing without bound. */
const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024
/**
 * After `[DONE]`, the response gets this long to end. A server that holds the connection open
 * longer is cut (the record is settled at `[DONE]`, a success): it costs this, not a timeout. Not
 * shorter: on a busy event loop the timer can run before the read that carries the body's end, and
 * a healthy connection would be cut.
 */
export const AFTER_DONE_GRACE_MS = 100

let defaultWatch: ConnectionWatch | null = null

/** Targets built without a watch (tests, `check`) share one that keeps connections alive. */
function watchOf(target: Target): ConnectionWatch {
  if (target.connections !== undefined) return target.connections
  defaultWatch ??= new ConnectionWatch(true)
  return defaultWatch
}

/**
 * Sends one request and resolves with its record. Never rejects: every failure becomes a record
 * with an error class, so a load level can never be broken by one bad response.
 *
 * A request that dies on a reused connection before any byte of its response (the server closed
 * the idle connection as the request went out: "other side closed") is resent at once, once, on
 * a connection of its own, as browsers and curl do. Its record is the resend's, marked `resent`:
 * the lost attempt never reached the server's work, so it is neither a server failure nor hidden.
 */
export async function sendRequest(target: Target, plan: RequestPlan): Promise<RequestRecord> {
  const first = await exchange(target, plan, target.dispatcher, false)
  if (!diedUnanswered(first, target)) return first
  // A one-off client guarantees a new connection: a pool might hand out another stale one.
  // undici only for a caller that handed in an undici dispatcher (it is loaded then already).
  const fresh: StreamDispatcher =
    target.dispatcher.oneOff?.() ??
    new (await import('undici')).Client(target.origin, { connectTimeout: target.connectTimeoutMs ?? 10_000 })
  try {
    const record = await exchange(target, { ...plan, scheduled_at: first.scheduled_at }, fresh, true)
    record.resent = { reason: first.error?.message ?? '' }
    return record
  } finally {
    fresh.destroy().catch(() => {})
  }
}

function exchange(
  target: Target,
  plan: RequestPlan,
  dispatcher: StreamDispatcher,
  reset: boolean,
): Promise<RequestRecord> {
  return new Promise((resolve) => new Exchange(target, plan, resolve).start(dispatcher, reset))
}

/** Failed on a connection that had carried a request before, with no response byte. */
function diedUnanswered(record: RequestRecord, target: Target): boolean {
  return (
    record.error?.class === 'connection' &&
    record.connection === 'reused' &&
    record.status === null &&
    target.interrupt?.aborted !== true
  )
}

/**
 * The state of one request/response exchange, as an undici dispatch handler (driven by the h1
 * client, client/h1/, or by undici). The first statement of every data callback takes the
 * timestamp: nothing (parsing, bookkeeping) runs before it; with the h1 client it is the stamp its
 * read callback took first thing (ReadStamped), so every event of one read has the read's arrival.
 */
class Exchange implements Dispatcher.DispatchHandler, SocketUser {
  private readonly record: RequestRecord
  private readonly parser: SseParser | null = null
  private readonly interpreter: ProtocolInterpreter
  private controller: Dispatcher.DispatchController | null = null
  private timer: NodeJS.Timeout | null = null
  private firstTokenTimer: NodeJS.Timeout | null = null
  private idleTimer: NodeJS.Timeout | null = null
  /** Arrival of the latest read: the idle timer measures the silence from here when it fires. */
  private lastReadAt = 0
  /** A 200 whose content type says it is neither an event stream nor JSON. */
  private notEventStream: string | null = null
  private settled = false
  /** Body bytes kept for error statuses and non-streamed responses. */
  private bodyParts: Buffer[] = []
  private bodyBytes = 0
  private isEventStream = false
  private sawDone = false
  /** A redirect's Location: named in the failure, since redirects are not followed. */
  private location: string | null = null
  /** The body's Content-Encoding when it is compressed; an event stream is decoded as it arrives. */
  private encoding: ContentEncoding | null = null
  private decoder: StreamDecoder | null = null
  /** Arrival of `[DONE]`: the request's end; whatever follows is ignored (and counted). */
  private doneAt: number | null = null
  private eventsAfterDone = 0
  private afterDoneTimer: NodeJS.Timeout | null = null
  private readonly watch: ConnectionWatch
  private reset = false
  private socket: SocketState | null = null
  private streamError: { class: ErrorClass; message: string } | null = null
  private usageCompletion: number | null = null
  /** Generated text, kept only to count tokens when the server sends no usage. */
  private textParts: string[] = []
  /** When reasoning and answer began, and the reasoning text: see reasoning-phase.ts. */
  private readonly reasoning = new ReasoningPhase()
  /**
   * Tool calls by their index, merged from their deltas (only when the answer makes any). A map,
   * not an array: the index is the server's word, and `index: 1000000000` made a sparse array
   * that took minutes to walk (issue 36).
   */
  private toolCalls = new Map<number, ToolCallPart>()
  /**
   * The generated text without the tool calls' names and arguments, kept only from the first event
   * that carries a call: what the assistant turn said beside its calls, for a session's history.
   */
  private textBesideCalls: string[] | null = null

  constructor(
    private readonly target: Target,
    private readonly plan: RequestPlan,
    private readonly resolve: (record: RequestRecord) => void,
  ) {
    this.record = {
      seq: plan.seq,
      worker: plan.worker,
      level: plan.level,
      phase: plan.phase,
      prompt_id: plan.prompt_id,
      scheduled_at: 0,
      sent_at: 0,
      headers_at: null,
      first_token_at: null,
      end_at: 0,
      token_times: [],
      status: null,
      error: null,
      input_tokens: null,
      output_tokens: 0,
      token_source: 'tokenizer',
      tokenizer_output_tokens: null,
      chunks: 0,
      finish_reason: null,
      server_timings: null,
      cached_tokens: null,
      reasoning_tokens: null,
      first_reasoning_at: null,
      first_answer_at: null,
      attempt: plan.attempt,
    }
    this.interpreter = protocolOf(target.protocol).interpreter()
    if (target.stream) this.parser = new SseParser((event, at) => this.onEvent(event, at))
    this.watch = watchOf(target)
  }

  /** `reset`: ask for a connection of this request's own (`connection: close`), whatever the policy. */
  start(dispatcher: StreamDispatcher, reset: boolean): void {
    const { target } = this
    this.reset = reset || !this.watch.keepAlive
    if (target.interrupt !== undefined) watchInterrupt(target.interrupt, this.onInterrupt)
    this.timer = setTimeout(
      () => this.abort(new RequestTimeoutError('total', target.timeoutMs)),
      target.timeoutMs,
    )
    const firstTokenMs = target.firstTokenTimeoutMs
    if (target.stream && firstTokenMs !== null && firstTokenMs < target.timeoutMs) {
      this.firstTokenTimer = setTimeout(
        () => this.abort(new RequestTimeoutError('first_token', firstTokenMs)),
        firstTokenMs,
      )
    }
    // Until the client writes the request, "sent" means handed to the connection pool; if it fails
    // before any write (refused, TLS), this is the stamp the record keeps.
    this.record.sent_at = performance.now()
    this.record.scheduled_at = this.plan.scheduled_at ?? this.record.sent_at
    try {
      dispatcher.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: target.headers,
          body: this.plan.body,
          // Keep-alive off (by choice, or because the server closes after responses): the client
          // sends `connection: close` and never reuses the socket.
          reset: this.reset,
          // Our own timer bounds the whole request; undici's idle timers must not fire first (the h1
          // client has none).
          headersTimeout: target.timeoutMs + 1000,
          bodyTimeout: target.timeoutMs + 1000,
        },
        this,
      )
    } catch (error) {
      this.fail(classifyTransportError(error), describeTransportError(error), performance.now())
    }
  }

  /**
   * Called by the client right before it writes the request to its socket. Subtleness ahead: this
   * is the real send time. A new connection must first connect (and undici, when it is the
   * dispatcher, holds a request for an event-loop turn before reusing a keep-alive socket); both
   * are the client's delays, not the server's. So sent_at moves here,
   * TTFT and E2E start here, and the wait shows up as dispatch lateness (sent_at - scheduled_at).
   */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    const at = performance.now()
    // Settled while waiting for its connection (a timeout, Ctrl-C): its record is final, so the
    // request is not written at all.
    if (this.settled) {
      controller.abort(new Error('request settled before it was written'))
      return
    }
    this.controller = controller
    if (this.plan.scheduled_at === null) this.record.scheduled_at = at
    // Until now sent_at was the hand-over to the pool: the difference is the wait for the connection.
    this.record.connection_wait_ms = at - this.record.sent_at
    this.record.sent_at = at
    awaitSocket(this)
  }

  /** The socket, named right after onRequestStart: by undici's sendHeaders (see connections.ts) or the h1 client. */
  onSocket(socket: Socket, connectMs?: number): void {
    socketNamed(this)
    const state = this.watch.track(socket, this.reset)
    this.socket = state
    this.record.connection = claimSocket(state, this.record.sent_at) ? 'reused' : 'new'
    if (connectMs !== undefined && this.record.connection === 'new') this.record.connect_ms = connectMs
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // The h1 client stamped the read that carried the head; undici did not.
    const at = (controller as ReadStamped).readAt ?? performance.now()
    this.record.headers_at = at
    this.record.status = statusCode
    if (statusCode >= 300 && statusCode < 400)
      this.location = String(headers.location ?? '(no Location header)')
    if (this.socket !== null) answered(this.socket, announcesClose(headers.connection))
    const contentType = String(headers['content-type'] ?? '')
    // A server may ignore stream:true and answer with one JSON body; some send no content type.
    this.isEventStream = this.parser !== null && !contentType.includes('application/json')
    if (this.isEventStream && contentType !== '' && !contentType.includes('text/event-stream')) {
      this.isEventStream = false
      this.notEventStream = contentType
    }
    // The idle timer watches the silence between reads from here on. A read only stamps
    // lastReadAt: re-arming a timer on every read (refresh()) cost more than any other bookkeeping
    // per event; the timer, when it fires, re-arms itself for what is left of the silence.
    this.lastReadAt = at
    this.idleTimer = setTimeout(this.onIdle, this.target.idleTimeoutMs)
    // Last: it may fail the request at once, which clears the timers set above.
    this.startDecoding(headers['content-encoding'], statusCode)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const at = (controller as ReadStamped).readAt ?? performance.now()
    if (this.settled) return
    this.lastReadAt = at
    const status = this.record.status ?? 0
    if (status >= 200 && status < 300 && this.isEventStream) {
      if (this.decoder !== null) this.decoder.push(chunk, at)
      else this.feedEvents(chunk, at)
      return
    }
    const limit = status >= 200 && status < 300 ? MAX_JSON_BODY_BYTES : MAX_ERROR_BODY_BYTES
    if (this.bodyBytes < limit) {
      this.bodyParts.push(chunk)
      this.bodyBytes += chunk.length
    } else if (limit === MAX_JSON_BODY_BYTES) {
      this.abort(
        new StreamLimitError(`a response body larger than ${MAX_JSON_BODY_BYTES / 1048576} MiB`),
        'stream',
      )
    }
  }

  onResponseEnd(controller: Dispatcher.DispatchController): void {
    const at = (controller as ReadStamped).readAt ?? performance.now()
    // The whole response arrived: a close by the server from here on is a close after a response.
    if (this.socket !== null) releaseSocket(this.socket, at, true)
    if (this.settled) return
    const status = this.record.status ?? 0
    if (status < 200 || status >= 300) {
      const message =
        this.location === null
          ? serverMessage(this.bodyText(), status)
          : `HTTP ${status}: redirect to ${this.location}`
      this.fail(classifyStatus(status), message, at)
      return
    }
    if (this.notEventStream !== null) {
      const start = this.bodyText().replace(/\s+/g, ' ').slice(0, 80)
      this.fail(
        'stream',
        `HTTP 200 with content-type ${this.notEventStream}, not an event stream: ${start}`,
        at,
      )
    } else if (this.isEventStream) {
      if (this.decoder === null) this.endEvents(at)
      else this.decoder.end(() => this.endEvents(at))
    } else {
      this.finishJsonBody(at)
    }
  }

  /** Event-stream bytes (decoded when compressed), stamped with the arrival of the read they came in. */
  private feedEvents(chunk: Buffer, at: number): void {
    if (this.settled) return
    const parser = this.parser as SseParser
    parser.push(chunk, at)
    // The body's end usually comes in the same read as [DONE]: look once this read is done.
    if (this.doneAt !== null && this.afterDoneTimer === null) queueMicrotask(this.armAfterDone)
    if (parser.pendingBytes > MAX_EVENT_BYTES) {
      this.abort(new StreamLimitError(`an SSE event larger than ${MAX_EVENT_BYTES / 1048576} MiB`), 'stream')
    }
  }

  private endEvents(at: number): void {
    if (this.settled) return
    ;(this.parser as SseParser).end(at)
    this.finishStream(this.doneAt ?? at)
  }

  /** A compressed body (a proxy's doing, we ask for identity): decoded, or a clear failure. */
  private startDecoding(header: string | string[] | undefined, status: number): void {
    const encoding = contentEncodingOf(header)
    if (encoding === null) return
    if (typeof encoding === 'object') {
      if (status >= 200 && status < 300)
        this.abort(
          new Error(`compressed stream (${encoding.unsupported}) that llmbench cannot decode`),
          'stream',
        )
      return
    }
    this.encoding = encoding
    if (!this.isEventStream || status < 200 || status >= 300) return
    this.decoder = new StreamDecoder(
      encoding,
      (decoded, at) => this.feedEvents(decoded, at),
      (error) =>
        this.abort(
          new Error(`compressed stream (${encoding}) that does not decode: ${error.message}`),
          'stream',
        ),
    )
  }

  /** [DONE] came and the response has not ended: give it a moment, then settle and cut it. */
  private readonly armAfterDone = (): void => {
    if (this.settled || this.afterDoneTimer !== null) return
    this.afterDoneTimer = setTimeout(() => {
      if (this.settled) return
      this.finishStream(this.doneAt as number)
      // The record is settled (a success): the abort only closes the held connection, never reused.
      this.controller?.abort(new Error('[DONE] received; connection held open, closed'))
    }, AFTER_DONE_GRACE_MS)
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const at = performance.now()
    if (this.settled) return
    this.fail(classifyTransportError(error), describeTransportError(error), at, timeoutKindOf(error))
  }

  private onEvent(event: SseEvent, at: number): void {
    // A cancel settles the record mid-read: the read's later events belong to no request now.
    if (this.settled) return
    if (this.doneAt !== null) {
      this.eventsAfterDone++
      return
    }
    if (event.error !== null || event.event === 'error') {
      this.streamError ??= {
        class: 'stream',
        message: `error event in stream: ${errorEventMessage(event.error ?? event.data)}`,
      }
      return
    }
    if (event.data === '') return
    const info = this.interpreter.event(event.event, event.data)
    if (info.done) {
      // A Responses stream's terminal event carries its usage; chat's [DONE] carries nothing.
      this.take(info, at)
      this.sawDone = true
      this.doneAt = at
      return
    }
    this.take(info, at)
  }

  private take(info: ChunkInfo, at: number): void {
    const record = this.record
    if (info.malformed) {
      this.streamError ??= { class: 'stream', message: 'malformed chunk: not JSON' }
      return
    }
    if (info.error !== null) {
      this.streamError ??= { class: 'stream', message: `error in stream: ${info.error}` }
      return
    }
    if (info.tokenBearing) {
      if (record.first_token_at === null) {
        record.first_token_at = at
        if (this.firstTokenTimer !== null) clearTimeout(this.firstTokenTimer)
      }
      record.token_times.push(at)
      record.chunks++
      this.reasoning.onEvent(record, info, at)
      this.keepText(info)
      this.target.onText?.(info.text)
      const cancelAfter = this.plan.cancel_after_events
      if (cancelAfter !== undefined && record.chunks >= cancelAfter) this.cancelAt(at)
    }
    if (info.usage !== null) {
      // Anthropic tells the prompt's size and the output's in different events: each keeps the last said.
      if (info.usage.completion_tokens !== null) this.usageCompletion = info.usage.completion_tokens
      if (info.usage.prompt_tokens !== null) record.input_tokens = info.usage.prompt_tokens
    }
    if (info.finishReason !== null) record.finish_reason = info.finishReason
    if (info.toolCalls !== undefined) this.takeToolCalls(info.toolCalls, info.tokenBearing ? at : null)
    // Usage and timings may come in separate chunks: each keeps what the last one that had it said.
    const inBand = info.inBand
    if (inBand !== null) {
      if (inBand.timings !== null) record.server_timings = inBand.timings
      if (inBand.speculation !== undefined) record.server_speculation = inBand.speculation
      if (inBand.cached_tokens !== null) record.cached_tokens = inBand.cached_tokens
      if (inBand.reasoning_tokens !== null) record.reasoning_tokens = inBand.reasoning_tokens
    }
  }

  /** Keeps an event's text for the count, and apart from its tool calls once the answer makes any. */
  private keepText(info: ChunkInfo): void {
    this.textParts.push(info.text)
    const callChars = info.toolCallChars ?? 0
    if (callChars > 0 && this.textBesideCalls === null) this.textBesideCalls = this.textParts.slice(0, -1)
    this.textBesideCalls?.push(callChars > 0 ? info.text.slice(0, info.text.length - callChars) : info.text)
  }

  /** Tool-call deltas merged by index: the name once, the arguments' text in pieces; `at` null for a body not streamed. */
  private takeToolCalls(deltas: readonly ToolCallDelta[], at: number | null): void {
    const record = this.record
    if (at !== null && record.first_tool_call_at == null) record.first_tool_call_at = at
    for (const delta of deltas) {
      let call = this.toolCalls.get(delta.index)
      if (call === undefined) {
        if (this.toolCalls.size >= MAX_TOOL_CALLS) {
          this.streamError ??= {
            class: 'stream',
            message: `the answer made more than ${MAX_TOOL_CALLS} tool calls`,
          }
          continue
        }
        call = { name: '', arguments: '' }
        this.toolCalls.set(delta.index, call)
      }
      if (call.id === undefined && delta.id !== '') call.id = delta.id
      if (call.name === '') call.name = delta.name
      call.arguments += delta.arguments
    }
  }

  private finishStream(at: number): void {
    if (this.streamError !== null) {
      this.fail(this.streamError.class, this.streamError.message, at)
      return
    }
    if (!this.sawDone && this.record.finish_reason === null) {
      this.fail('stream', `stream ended without ${this.interpreter.end}`, at)
      return
    }
    this.succeed(at)
  }

  private finishJsonBody(at: number): void {
    let parsed: unknown
    try {
      parsed = JSON.parse(this.bodyText())
    } catch {
      this.fail('stream', 'response body is not JSON', at)
      return
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      this.fail('stream', 'response body is not a JSON object', at)
      return
    }
    const info = this.interpreter.body(parsed as Record<string, unknown>)
    // A non-streamed response has no first token to time: TTFT stays null, E2E is the figure.
    const tokenBearing = info.tokenBearing
    info.tokenBearing = false
    this.take(info, at)
    if (tokenBearing) {
      this.keepText(info)
      this.reasoning.onBody(info)
    }
    if (this.streamError !== null) {
      this.fail(this.streamError.class, this.streamError.message, at)
      return
    }
    this.succeed(at)
  }

  private succeed(at: number): void {
    this.countOutput()
    this.settle(at)
  }

  private fail(
    errorClass: ErrorClass,
    message: string,
    at: number,
    timeout: TimeoutKind | null = null,
  ): void {
    this.record.error = { class: errorClass, message: redact(message, this.target.secrets) }
    if (errorClass === 'connection' && this.record.status === null && this.record.connection === 'reused')
      socketDiedUnanswered(this.socket as SocketState)
    if (timeout !== null) this.record.error.timeout = timeout
    // A failed request's partial output is counted the same way, so it stays visible.
    this.countOutput()
    this.settle(at)
  }

  /**
   * Output tokens from the server's usage when it sent one; the text goes along for the main
   * thread to count with the offline tokenizer (completeTokenCounts), off the hot path.
   */
  private countOutput(): void {
    const record = this.record
    record.output_text = this.textParts.join('')
    this.textParts = []
    if (this.toolCalls.size > 0) {
      record.tool_call_parts = [...this.toolCalls.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, call]) => call)
      this.toolCalls = new Map()
      if (this.textBesideCalls !== null) record.tool_call_content = this.textBesideCalls.join('')
    }
    this.textBesideCalls = null
    this.reasoning.finish(record)
    if (this.usageCompletion !== null) {
      record.output_tokens = this.usageCompletion
      record.token_source = 'usage'
    } else {
      record.token_source = 'tokenizer'
    }
  }

  private settle(at: number): void {
    if (this.settled) return
    this.settled = true
    if (this.timer !== null) clearTimeout(this.timer)
    if (this.target.interrupt !== undefined) stopWatching(this.target.interrupt, this.onInterrupt)
    if (this.firstTokenTimer !== null) clearTimeout(this.firstTokenTimer)
    if (this.idleTimer !== null) clearTimeout(this.idleTimer)
    if (this.afterDoneTimer !== null) clearTimeout(this.afterDoneTimer)
    if (this.socket !== null) releaseSocket(this.socket, at, false)
    if (this.eventsAfterDone > 0) this.record.events_after_done = this.eventsAfterDone
    this.record.end_at = at
    this.bodyParts = []
    this.decoder?.destroy()
    this.resolve(this.record)
  }

  /** The idle timer fired: a timeout if nothing was read for idleTimeoutMs, else wait for the rest. */
  private readonly onIdle = (): void => {
    const idleMs = this.target.idleTimeoutMs
    const left = idleMs - (performance.now() - this.lastReadAt)
    if (left > 0) this.idleTimer = setTimeout(this.onIdle, Math.ceil(left))
    else this.abort(new RequestTimeoutError('idle', idleMs))
  }

  /**
   * --cancel-share: the plan's abort, as a user stopping a reply. The record settles as cancelled
   * (its tokens so far counted), then the connection is closed: the only way HTTP/1.1 has to tell
   * the server to stop, and the socket is never reused. Later events of the same read are dropped
   * (settled), and the close the abort causes reaches the settled record as a no-op.
   */
  private cancelAt(at: number): void {
    if (this.settled) return
    this.record.cancelled = { after_events: this.record.chunks }
    this.countOutput()
    this.settle(at)
    this.controller?.abort(new CancelledByPlanError(this.record.chunks))
  }

  private readonly onInterrupt = (): void => {
    const reason = this.target.interrupt?.reason
    this.abort(reason instanceof Error ? reason : new Error('interrupted'), 'other')
  }

  private abort(reason: Error, errorClass: ErrorClass = classifyTransportError(reason)): void {
    if (this.settled) return
    const at = performance.now()
    this.fail(errorClass, reason.message, at, timeoutKindOf(reason))
    this.controller?.abort(reason)
  }

  private bodyText(): string {
    const body = Buffer.concat(this.bodyParts)
    if (this.encoding === null) return body.toString('utf8')
    try {
      return decodeWhole(this.encoding, body).toString('utf8')
    } catch {
      return `(a ${this.encoding}-compressed body that does not decode)`
    }
  }
}

/** The abort's reason: the plan cancelled the request, the client chose to close. */
class CancelledByPlanError extends Error {
  constructor(events: number) {
    super(`cancelled by the plan after ${events} token events`)
    this.name = 'CancelledByPlanError'
  }
}

/** `Connection: close` (any case, possibly among other tokens): the server says the connection ends. */
function announcesClose(value: string | string[] | undefined): boolean {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '')
  return text.split(',').some((token) => token.trim().toLowerCase() === 'close')
}

/** The server's own words for an error status: OpenAI's error.message when present. */
function serverMessage(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown }
    const error = parsed.error
    if (typeof error === 'string') return `HTTP ${status}: ${error}`
    if (error && typeof error.message === 'string') return `HTTP ${status}: ${error.message}`
    if (typeof parsed.message === 'string') return `HTTP ${status}: ${parsed.message}`
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return `HTTP ${status}: ${body || '(empty body)'}`
}
