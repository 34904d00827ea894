import { describeValue } from '../describe-value.js'
import { isObject } from '../json-object.js'
import type { ChatMessage } from '../protocols/prompt.js'
import { DatasetError, keysOf, parseMessage, readText, readTurn, refuseDeepNesting } from './dataset.js'
import type { ExactPromptSource } from './exact-prompts.js'

/**
 * Multi-turn sessions: conversations whose user turns are sent one after another, each request
 * carrying the whole history so far. Only the user turns come from the source; the assistant turns
 * sent back are the replies the server generated in this run (session-body.ts), so the history a
 * server sees is the one it actually wrote, as in a real chat.
 */

export interface SessionSpec {
  /** The conversation's id in its source (session_id, ShareGPT id) or `synthetic-N`. */
  id: string
  /** Messages before the first user turn (a system prompt): the start of every turn's request. */
  preamble: ChatMessage[]
  /** The user turns' texts, in order. */
  turns: string[]
  /** max_tokens of each turn: the source's reference reply length, else the run's output length. */
  output_tokens: number[]
}

export interface SessionSet {
  /** Where the sessions came from, in words (result metadata). */
  source: string
  sessions: SessionSpec[]
}

/** A conversation longer than this is cut: a bound on the history a single request can carry. */
export const MAX_TURNS = 64

const CONVERSATION_SHAPE =
  '"turns" (array of {text}), "conversations" (array of {from, value}) or "messages" (array of {role, content})'

/**
 * Reads multi-turn conversations. The format comes from the content: a file starting with `[` is a
 * ShareGPT JSON array (`conversations: [{from, value}]` or `[{role, content}]`), anything else is JSONL,
 * one conversation per line: AIPerf's `{"session_id", "turns": [{"text"}]}` or a ShareGPT-shaped
 * object. `count` measures reference replies (their length becomes that turn's max_tokens);
 * `outputTokens` is the max_tokens of a turn without one. A malformed conversation is an error that
 * names the file and the entry: a session with a broken turn cannot be replayed in order.
 */
export function loadSessions(
  path: string,
  count: (text: string) => number,
  outputTokens: number,
  maxSessions = 10_000,
): SessionSet {
  const text = readText(path)
  if (text.trim() === '')
    throw new DatasetError(
      `dataset ${path}: the file is empty; expected conversations (JSONL or a JSON array)`,
    )
  const items: { where: string; value: unknown }[] = []
  if (text.trimStart().startsWith('[')) {
    refuseDeepNesting(path, text)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      throw new DatasetError(`dataset ${path}: not valid JSON (${parseMessage(err)})`)
    }
    if (!Array.isArray(value))
      throw new DatasetError(`dataset ${path}: expected a JSON array of conversations`)
    value.slice(0, maxSessions).forEach((item, i) => {
      items.push({ where: `${path}: conversation ${i + 1}`, value: item })
    })
  } else {
    const whole = oneJsonObject(path, text)
    if (whole !== null) throw new DatasetError(whole)
    const lines = text.split('\n')
    for (let i = 0; i < lines.length && items.length < maxSessions; i++) {
      const raw = (lines[i] as string).replace(/\r$/, '')
      if (raw.trim() === '') continue
      refuseDeepNesting(path, raw, i + 1)
      try {
        items.push({ where: `${path}:${i + 1}`, value: JSON.parse(raw) })
      } catch (err) {
        throw new DatasetError(`dataset ${path}:${i + 1}: not valid JSON (${parseMessage(err)})`)
      }
    }
  }
  const sessions: SessionSpec[] = []
  for (const [index, item] of items.entries()) {
    const session = conversation(item.value, index, count, outputTokens)
    if (typeof session === 'string') throw new DatasetError(`dataset ${item.where}: ${session}`)
    sessions.push(session)
  }
  if (sessions.length === 0) throw new DatasetError(`dataset ${path}: no conversations`)
  const turns = sessions.reduce((sum, s) => sum + s.turns.length, 0)
  return { source: `${path} (${sessions.length} sessions, ${turns} user turns)`, sessions }
}

/**
 * A pretty-printed JSON object is neither JSONL nor an array: say what it is rather than fail on its
 * first line. vLLM's multi-turn generator settings are a common such file.
 */
function oneJsonObject(path: string, text: string): string | null {
  const first = text.trimStart().split('\n', 1)[0] as string
  try {
    JSON.parse(first)
    return null
  } catch {
    // Not one object per line: is the whole file one object?
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  if (!isObject(value) || value.turns !== undefined || value.conversations !== undefined) return null
  const vllm =
    value.filetype === 'generate_conversations'
      ? "; this is vLLM's multi-turn generator config: for sessions like it, use --sessions without a dataset, with --turns, --input-tokens, --output-tokens and --shared-prefix"
      : ''
  return `dataset ${path}: one JSON object, not conversations (JSONL, one per line, or a JSON array); ${keysOf(value)}${vllm}`
}

/** One conversation as a session, or what is wrong with it. */
function conversation(
  value: unknown,
  index: number,
  count: (text: string) => number,
  outputTokens: number,
): SessionSpec | string {
  if (!isObject(value)) return `expected an object with ${CONVERSATION_SHAPE}, got ${describeValue(value)}`
  const named = value.session_id ?? value.id
  const id = typeof named === 'string' || typeof named === 'number' ? String(named) : `session-${index + 1}`
  if (value.turns !== undefined) return aiperfTurns(id, value.turns, outputTokens)
  const key =
    value.conversations !== undefined ? 'conversations' : value.messages !== undefined ? 'messages' : null
  if (key === null) return `expected ${CONVERSATION_SHAPE}; ${keysOf(value)}`
  const turns = value[key]
  if (!Array.isArray(turns)) return `"${key}": expected an array of turns, got ${describeValue(turns)}`
  return shareGptTurns(id, key, turns, count, outputTokens)
}

/** AIPerf multi_turn: `turns: [{text}]` (a bare string is taken as the text too). */
function aiperfTurns(id: string, turns: unknown, outputTokens: number): SessionSpec | string {
  if (!Array.isArray(turns) || turns.length === 0)
    return `"turns": expected a non-empty array of {text}, got ${describeValue(turns)}`
  const texts: string[] = []
  for (const [i, turn] of turns.slice(0, MAX_TURNS).entries()) {
    const text = typeof turn === 'string' ? turn : isObject(turn) ? turn.text : undefined
    if (typeof text !== 'string' || text.trim() === '')
      return `turns[${i}]: expected {"text": a non-empty string}, got ${describeValue(turn)}`
    texts.push(text)
  }
  return { id, preamble: [], turns: texts, output_tokens: texts.map(() => outputTokens) }
}

/**
 * ShareGPT: system turns before the first user turn are the preamble; each user turn is sent, and
 * the assistant turn after it only sets that turn's max_tokens (its text is never sent: the run's
 * own reply takes its place). Consecutive user turns are sent as separate turns.
 */
function shareGptTurns(
  id: string,
  key: string,
  turns: unknown[],
  count: (text: string) => number,
  outputTokens: number,
): SessionSpec | string {
  const preamble: ChatMessage[] = []
  const texts: string[] = []
  const outputs: number[] = []
  for (const [i, raw] of turns.entries()) {
    const turn = readTurn(raw)
    if (typeof turn === 'string')
      return `${key}[${i}]: expected {from, value} or {role, content} with a known speaker (human, gpt, user, assistant, system), got ${describeValue(raw)}`
    if (turn.role === 'system') {
      if (texts.length === 0) preamble.push(turn)
      continue
    }
    if (turn.role === 'user') {
      if (texts.length === MAX_TURNS) break
      if (turn.content.trim() === '') return `${key}[${i}]: the user turn is empty`
      texts.push(turn.content)
      outputs.push(outputTokens)
      continue
    }
    // The reference reply of the user turn before it: its length is what that turn asks for.
    if (texts.length > 0 && outputs.length === texts.length) {
      const tokens = count(turn.content)
      if (tokens > 0) outputs[outputs.length - 1] = tokens
    }
  }
  if (texts.length === 0) return `no user turn in "${key}"`
  return { id, preamble, turns: texts, output_tokens: outputs }
}

/**
 * Synthetic sessions: `count` conversations of `turns` user turns, each user message `inputTokens`
 * long (exact, by the run's tokenizer) and each reply asking for `outputTokens`; every session starts
 * with the same `systemTokens`-token system prompt (0 = none), as an agent's fixed instructions do.
 */
export function syntheticSessions(
  prompts: ExactPromptSource,
  systemPrompt: string,
  options: { count: number; turns: number; inputTokens: () => number; outputTokens: () => number },
): SessionSpec[] {
  const preamble: ChatMessage[] = systemPrompt === '' ? [] : [{ role: 'system', content: systemPrompt }]
  const sessions: SessionSpec[] = []
  for (let s = 0; s < options.count; s++) {
    const turns: string[] = []
    const outputs: number[] = []
    for (let t = 0; t < options.turns; t++) {
      // Distinct prompt ids per (session, turn): every user message starts differently.
      turns.push(prompts.prompt(s * MAX_TURNS + t, Math.max(1, options.inputTokens())))
      outputs.push(Math.max(1, options.outputTokens()))
    }
    sessions.push({ id: `synthetic-${s + 1}`, preamble, turns, output_tokens: outputs })
  }
  return sessions
}
