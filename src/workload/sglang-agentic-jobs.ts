import { describeValue } from '../describe-value.js'
import { isObject } from '../json-object.js'
import type { ChatMessage } from '../protocols/prompt.js'
import { DatasetError, parseMessage, refuseDeepNesting } from './dataset.js'
import { type JobSet, type JobSpec, type JobTurn, MAX_JOB_TURNS } from './jobs.js'

/**
 * SGLang's agentic trace (bench_serving --dataset-name agentic-trace, sgl-project/sglang pull
 * request 29215, python/sglang/benchmark/datasets/agentic_trace.py): one JSON document,
 *
 *   {"metadata": {...}, "conversations": [[{"messages": [{"role", "content"}, ...], "prompt_tokens": N}, ...], ...]}
 *
 * Each conversation is a list of turns, each turn's `messages` the delta it adds (never the
 * assistant's: the server's own reply goes back into the history, as SGLang replays it). As a job:
 * a conversation is a chain; system messages of its first turn are the preamble; a turn's other
 * messages become its one user message (contents joined by a blank line: a `tool` message without
 * its call id is not sendable on its own). A turn's `output_tokens`, where a later SGLang version
 * records it, sets its max_tokens; otherwise the run's --output-tokens. Turns without messages are
 * skipped, as SGLang skips them. No times: tool waits are 0.
 */

export function isSglangAgenticTrace(value: unknown): boolean {
  return isObject(value) && Array.isArray(value.conversations)
}

export function sglangAgenticJobs(path: string, content: string, outputTokens: number): JobSet {
  refuseDeepNesting(path, content)
  let value: unknown
  try {
    value = JSON.parse(content)
  } catch (err) {
    throw new DatasetError(`agentic trace ${path}: not valid JSON (${parseMessage(err)})`)
  }
  if (!isObject(value) || !Array.isArray(value.conversations))
    throw new DatasetError(`agentic trace ${path}: expected {"conversations": [[turn, ...], ...]}`)
  const jobs: JobSpec[] = []
  for (const [c, conversation] of value.conversations.entries()) {
    const job = readConversation(conversation, c, outputTokens)
    if (typeof job === 'string') throw new DatasetError(`agentic trace ${path}: conversations[${c}]${job}`)
    if (job !== null) jobs.push(job)
  }
  if (jobs.length === 0) throw new DatasetError(`agentic trace ${path}: no conversation with a message`)
  const turns = jobs.reduce((sum, job) => sum + job.turns.length, 0)
  return {
    source: `${path} (SGLang agentic trace: ${jobs.length} conversations as jobs, ${turns} turns)`,
    jobs,
  }
}

/** A conversation as a chain job; null when it has no message; a string says what is wrong (after its path). */
function readConversation(
  conversation: unknown,
  index: number,
  outputTokens: number,
): JobSpec | null | string {
  if (!Array.isArray(conversation)) return `: expected an array of turns, got ${describeValue(conversation)}`
  const preamble: ChatMessage[] = []
  const turns: JobTurn[] = []
  for (const [t, turn] of conversation.entries()) {
    if (!isObject(turn)) return `[${t}]: expected {"messages": [...]}, got ${describeValue(turn)}`
    const messages = turn.messages ?? []
    if (!Array.isArray(messages)) return `[${t}].messages: expected an array, got ${describeValue(messages)}`
    const parts: string[] = []
    for (const [m, message] of messages.entries()) {
      const read = readMessage(message)
      if (read === null) continue
      if (typeof read === 'string') return `[${t}].messages[${m}]: ${read}`
      if (read.role === 'system' && turns.length === 0) preamble.push(read)
      else if (read.content !== '') parts.push(read.content)
    }
    if (parts.length === 0) continue
    if (turns.length === MAX_JOB_TURNS)
      return `: more than ${MAX_JOB_TURNS} turns; at most ${MAX_JOB_TURNS} per job`
    const output = turn.output_tokens ?? outputTokens
    if (typeof output !== 'number' || !Number.isSafeInteger(output) || output < 1)
      return `[${t}].output_tokens: expected a whole number >= 1, got ${describeValue(output)}`
    turns.push({
      input: parts.join('\n\n'),
      output_tokens: output,
      tool_wait_ms: 0,
      parents: turns.length === 0 ? [] : [turns.length - 1],
    })
  }
  if (turns.length === 0) return null
  return { id: `conversation-${index + 1}`, preamble, turns }
}

/**
 * A message's role and text (a content of parts keeps its text parts); null for an assistant's,
 * which a replay replaces by the server's own reply.
 */
function readMessage(message: unknown): ChatMessage | null | string {
  if (!isObject(message) || typeof message.role !== 'string')
    return `expected {"role", "content"}, got ${describeValue(message)}`
  if (message.role === 'assistant') return null
  const content = message.content ?? ''
  if (typeof content === 'string') return { role: message.role === 'system' ? 'system' : 'user', content }
  if (Array.isArray(content)) {
    const texts = content.flatMap((part) =>
      isObject(part) && typeof part.text === 'string' ? [part.text] : [],
    )
    return { role: message.role === 'system' ? 'system' : 'user', content: texts.join('\n') }
  }
  return `"content": expected a string or an array of text parts, got ${describeValue(content)}`
}
