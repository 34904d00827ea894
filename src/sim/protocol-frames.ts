/**
 * The simulator's Responses API (`/v1/responses`), Anthropic Messages (`/v1/messages`) and
 * embeddings (`/v1/embeddings`) endpoints: the events and bodies they answer with (their requests are
 * read by each protocol's descriptor: protocols/request-fields.ts), timed by the same capacity model as chat (the
 * engine calls onToken once per output token, then onFinish). An embeddings request is a prefill
 * and one step of the engine, answered with one body when the step ends.
 *
 * Each token is one event, as with chat. A token's phase (reasoning or answer) picks its event:
 * Responses `response.reasoning_summary_text.delta` or `response.output_text.delta`, Messages a
 * `thinking_delta` in a thinking block or a `text_delta` in a text block; a change of phase closes
 * the open item or block and opens the next, as the real APIs do.
 */

import type { ServerResponse } from 'node:http'
import type { JobSink } from '../model/engine.js'
import type { Protocol } from '../protocols/names.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { FaultKind } from './faults.js'

export type TokenPhase = 'reasoning' | 'answer'

type Json = Record<string, unknown>

export interface ProtocolUsage {
  input: number
  output: number
  /** Prompt tokens served from a prefix cache (0 until the simulator keeps one). */
  cached: number
  reasoning: number
}

/** Everything a protocol answer needs besides its tokens. */
export interface ProtocolReply {
  protocol: Protocol
  model: string
  requestNo: number
  /** Finish in chat's words: 'stop' (end of sequence) or 'length' (max tokens reached). */
  finishReason: string
  usage: ProtocolUsage
  /** Embeddings: vectors to return. */
  inputs: number
  /**
   * The phase of output token `index`; every token is answer when absent. A hidden token (thinking
   * not sent, see reasoning.ts) takes its decode step and sends nothing.
   */
  phaseOf?: (index: number) => TokenPhase | 'hidden'
}

/** The SSE events of one streamed answer, built as the tokens come. */
export interface EventWriter {
  open(): string
  token(text: string, phase: TokenPhase): string
  finish(): string
  /** A mid-stream error event, as the protocol sends one. */
  error(message: string): string
  /** A token event cut off inside its JSON (the `malformed` fault). */
  malformed(): string
  /** The finished answer as one body (a non-streamed request). */
  whole(): Json
}

const sse = (type: string, data: Json): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

const TRUNCATED_DATA = 'data: {"type":\n\n'

class ResponsesWriter implements EventWriter {
  private sequence = 0
  private readonly id: string
  private readonly created = Math.floor(Date.now() / 1000)
  /** Output items so far; the last one is open while tokens of its phase come. */
  private readonly items: { id: string; phase: TokenPhase; text: string }[] = []

  constructor(private readonly reply: ProtocolReply) {
    this.id = `resp_llmbench_${reply.requestNo}`
  }

  private event(type: string, data: Json): string {
    return sse(type, { ...data, sequence_number: this.sequence++ })
  }

  private response(status: string): Json {
    return { id: this.id, object: 'response', created_at: this.created, status, model: this.reply.model }
  }

  open(): string {
    const response = { ...this.response('in_progress'), output: [], usage: null }
    return this.event('response.created', { response }) + this.event('response.in_progress', { response })
  }

  token(text: string, phase: TokenPhase): string {
    let opened = ''
    let item = this.items[this.items.length - 1]
    if (item === undefined || item.phase !== phase) {
      if (item !== undefined) opened += this.closeItem(item)
      item = {
        id: `${phase === 'answer' ? 'msg' : 'rs'}_llmbench_${this.reply.requestNo}_${this.items.length}`,
        phase,
        text: '',
      }
      this.items.push(item)
      opened += this.openItem(item)
    }
    item.text += text
    const at = { item_id: item.id, output_index: this.items.length - 1 }
    return phase === 'answer'
      ? `${opened}${this.event('response.output_text.delta', { ...at, content_index: 0, delta: text })}`
      : `${opened}${this.event('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: text })}`
  }

  finish(): string {
    const last = this.items[this.items.length - 1]
    const closed = last === undefined ? '' : this.closeItem(last)
    return closed + this.event(this.terminal(), { response: this.whole() })
  }

  error(message: string): string {
    return this.event('error', { code: 'server_error', message, param: null })
  }

  malformed(): string {
    return `event: response.output_text.delta\n${TRUNCATED_DATA}`
  }

  /** response.completed, or response.incomplete when max_output_tokens cut it. */
  private terminal(): string {
    return this.reply.finishReason === 'length' ? 'response.incomplete' : 'response.completed'
  }

  /** The finished response: its output items and usage (the non-streamed body too). */
  whole(): Json {
    const { usage, finishReason } = this.reply
    const length = finishReason === 'length'
    return {
      ...this.response(length ? 'incomplete' : 'completed'),
      incomplete_details: length ? { reason: 'max_output_tokens' } : null,
      output: this.items.map((item) => this.itemBody(item)),
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning },
        total_tokens: usage.input + usage.output,
      },
    }
  }

  private itemBody(item: { id: string; phase: TokenPhase; text: string }): Json {
    return item.phase === 'answer'
      ? {
          id: item.id,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], text: item.text }],
        }
      : { id: item.id, type: 'reasoning', summary: [{ type: 'summary_text', text: item.text }] }
  }

  private openItem(item: { id: string; phase: TokenPhase; text: string }): string {
    const output_index = this.items.length - 1
    const added = this.event('response.output_item.added', {
      output_index,
      item: { ...this.itemBody(item), status: 'in_progress' },
    })
    return item.phase === 'answer'
      ? added +
          this.event('response.content_part.added', {
            item_id: item.id,
            output_index,
            content_index: 0,
            part: { type: 'output_text', annotations: [], text: '' },
          })
      : added +
          this.event('response.reasoning_summary_part.added', {
            item_id: item.id,
            output_index,
            summary_index: 0,
            part: { type: 'summary_text', text: '' },
          })
  }

  private closeItem(item: { id: string; phase: TokenPhase; text: string }): string {
    const output_index = this.items.indexOf(item)
    const at = { item_id: item.id, output_index }
    const done =
      item.phase === 'answer'
        ? this.event('response.output_text.done', { ...at, content_index: 0, text: item.text })
        : this.event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text })
    return done + this.event('response.output_item.done', { output_index, item: this.itemBody(item) })
  }
}

class MessagesWriter implements EventWriter {
  private block = -1
  private phase: TokenPhase | null = null
  private readonly id: string
  private readonly content: Json[] = []

  constructor(private readonly reply: ProtocolReply) {
    this.id = `msg_llmbench_${reply.requestNo}`
  }

  open(): string {
    const message = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      content: [],
      model: this.reply.model,
      stop_reason: null,
      stop_sequence: null,
      usage: this.usage(1),
    }
    // Anthropic's own stream has a ping among its first events: a client must pass over it.
    return sse('message_start', { message }) + sse('ping', {})
  }

  token(text: string, phase: TokenPhase): string {
    let opened = ''
    if (phase !== this.phase) {
      if (this.phase !== null) opened += sse('content_block_stop', { index: this.block })
      this.block++
      this.phase = phase
      const content_block =
        phase === 'answer' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' }
      this.content.push(content_block)
      opened += sse('content_block_start', { index: this.block, content_block })
    }
    const current = this.content[this.block] as Json
    const delta =
      phase === 'answer' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text }
    if (phase === 'answer') current.text = `${String(current.text)}${text}`
    else current.thinking = `${String(current.thinking)}${text}`
    return `${opened}${sse('content_block_delta', { index: this.block, delta })}`
  }

  finish(): string {
    const stop = this.phase === null ? '' : sse('content_block_stop', { index: this.block })
    const delta = { stop_reason: this.stopReason(), stop_sequence: null }
    return `${stop}${sse('message_delta', { delta, usage: { output_tokens: this.reply.usage.output } })}${sse('message_stop', {})}`
  }

  error(message: string): string {
    return sse('error', { error: { type: 'api_error', message } })
  }

  malformed(): string {
    return `event: content_block_delta\n${TRUNCATED_DATA}`
  }

  whole(): Json {
    return {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.reply.model,
      content: this.content,
      stop_reason: this.stopReason(),
      stop_sequence: null,
      usage: this.usage(this.reply.usage.output),
    }
  }

  private stopReason(): string {
    return this.reply.finishReason === 'length' ? 'max_tokens' : 'end_turn'
  }

  /** Anthropic's input_tokens leaves the cached prompt tokens out; they are cache_read_input_tokens. */
  private usage(output: number): Json {
    const { input, cached } = this.reply.usage
    return {
      input_tokens: input - cached,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: cached,
      output_tokens: output,
    }
  }
}

/** A stand-in vector: a few seeded numbers (the benchmark times the answer, never reads it). */
function embedding(requestNo: number, index: number): number[] {
  const vector: number[] = []
  for (let i = 0; i < 8; i++) vector.push(Math.round(Math.sin(requestNo * 31 + index * 7 + i) * 1e6) / 1e6)
  return vector
}

function embeddingsBody(reply: ProtocolReply): Json {
  const data = []
  for (let index = 0; index < reply.inputs; index++)
    data.push({ object: 'embedding', index, embedding: embedding(reply.requestNo, index) })
  const { input } = reply.usage
  return { object: 'list', data, model: reply.model, usage: { prompt_tokens: input, total_tokens: input } }
}

/**
 * Each protocol's event writer; null: it answers in OpenAI chunks (chat, completions: chunk-frames.ts)
 * or, never streaming, with one body of its own (embeddings' vectors).
 */
const EVENT_WRITERS: Readonly<Record<Protocol, (new (reply: ProtocolReply) => EventWriter) | null>> = {
  chat: null,
  completions: null,
  responses: ResponsesWriter,
  messages: MessagesWriter,
  embeddings: null,
}

/** The event writer of `reply.protocol`, or null when it has none. */
function writerOf(reply: ProtocolReply): EventWriter | null {
  const Writer = EVENT_WRITERS[reply.protocol]
  return Writer === null ? null : new Writer(reply)
}

/** The event writer of a streamed Responses or Messages answer (exported for tests of the phases). */
export function eventWriter(reply: ProtocolReply): EventWriter {
  const writer = writerOf(reply)
  if (writer === null) throw new Error(`the simulator writes no events of the ${reply.protocol} protocol`)
  return writer
}

/** Streams one answer: the protocol's opening events with the headers, one event per token, the terminal event. */
class ProtocolStreamSink implements JobSink {
  private readonly writer: EventWriter

  constructor(
    private readonly res: ServerResponse,
    private readonly reply: ProtocolReply,
    private readonly next: () => string,
    private readonly fault: FaultKind | null,
  ) {
    this.writer = eventWriter(reply)
  }

  open(): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    })
    this.res.socket?.setNoDelay(true)
    this.res.write(this.writer.open())
  }

  onToken(index: number): void {
    if (this.res.destroyed) return
    const phase = this.reply.phaseOf?.(index) ?? 'answer'
    const text = this.next()
    if (phase !== 'hidden') this.res.write(this.writer.token(text, phase))
    if (this.fault !== null && index === Math.floor(this.reply.usage.output / 2)) this.injectMidStream()
  }

  onFinish(): void {
    if (this.res.destroyed || this.fault === 'no-done') return
    this.res.end(this.writer.finish())
  }

  /** The chat faults that have a meaning here: a cut connection, a broken event, an error event. */
  private injectMidStream(): void {
    switch (this.fault) {
      case 'disconnect':
        this.res.destroy()
        break
      case 'malformed':
        this.res.write(this.writer.malformed())
        break
      case 'error-event':
        this.res.end(this.writer.error('injected failure'))
        break
      default:
        break
    }
  }
}

/** Answers with one JSON body when the last token is out: a non-streamed request, or embeddings. */
class ProtocolJsonSink implements JobSink {
  /** Null: a protocol without events answers with its vectors (embeddings). */
  private readonly writer: EventWriter | null

  constructor(
    private readonly res: ServerResponse,
    private readonly reply: ProtocolReply,
    private readonly next: () => string,
  ) {
    this.writer = writerOf(reply)
  }

  onToken(index: number): void {
    const phase = this.reply.phaseOf?.(index) ?? 'answer'
    const text = this.next()
    if (phase !== 'hidden') this.writer?.token(text, phase)
  }

  onFinish(): void {
    const body = JSON.stringify(this.writer === null ? embeddingsBody(this.reply) : this.writer.whole())
    this.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    this.res.end(body)
  }
}

/** The sink of one answer of `reply.protocol`; `open()` (when present) sends the headers once admitted. */
export function protocolSink(
  res: ServerResponse,
  reply: ProtocolReply,
  next: () => string,
  stream: boolean,
  fault: FaultKind | null,
): JobSink & { open?: () => void } {
  return stream && protocolOf(reply.protocol).streams
    ? new ProtocolStreamSink(res, reply, next, fault)
    : new ProtocolJsonSink(res, reply, next)
}
