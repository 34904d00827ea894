import { isObject } from '../json-object.js'
import type { Frames } from './chunk-frames.js'

/**
 * The simulator's tool calls: a chat request that forces one (`tool_choice: "required"`, or a
 * function named) is answered with a call of that function (the first offered, for "required")
 * instead of text, streamed as OpenAI streams it: the call's id, name and the opening of its
 * arguments on the first token's delta, each further token a piece of the arguments, and the closing
 * with `finish_reason: "tool_calls"`. `auto` and `none` are answered in text: the simulator never
 * decides to call on its own, so a test knows which replies are calls. The arguments fill every
 * required property of the function's parameters (an enum's first value, 1, true, {} or []), and the
 * generated words go into its first free string property, so the output's length is still
 * max_tokens' and a schema of such properties validates. A simplification: a call is always closed,
 * its finish "tool_calls", even where a real model would have been cut by max_tokens.
 */
export interface SimToolCall {
  /** '' for a malformed call: the server sent none. */
  id: string
  /** '' for a malformed call. */
  name: string
  /** The arguments' JSON text before the generated words, and after them. */
  head: string
  tail: string
}

/** quirks.tool_calls: a forced call answered in text (`absent`), or with no id, no name and arguments that are not JSON (`malformed`). */
export type ToolCallQuirk = 'absent' | 'malformed'

/** Where the generated words go in the arguments' JSON, before it is split around them. */
const WORDS = '\u0001words\u0001'

/** The call that answers `body`, or null when it does not force one (or the quirk drops it). */
export function forcedToolCall(
  body: Record<string, unknown>,
  requestNo: number,
  quirk: ToolCallQuirk | undefined,
): SimToolCall | null {
  const fn = forcedFunction(body)
  if (fn === null || quirk === 'absent') return null
  if (quirk === 'malformed') return { id: '', name: '', head: '{"', tail: '' }
  const args = argumentsOf(fn.parameters)
  const [head = '', tail = ''] = JSON.stringify(args).split(JSON.stringify(WORDS))
  return { id: `call_sim_${requestNo}`, name: fn.name, head: `${head}"`, tail: `"${tail}` }
}

function forcedFunction(body: Record<string, unknown>): { name: string; parameters: unknown } | null {
  const tools = Array.isArray(body.tools) ? body.tools : []
  const functions = tools.flatMap((tool) =>
    isObject(tool) && isObject(tool.function) && typeof tool.function.name === 'string'
      ? [{ name: tool.function.name, parameters: tool.function.parameters }]
      : [],
  )
  const choice = body.tool_choice
  if (choice === 'required') return functions[0] ?? null
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    const name = choice.function.name
    return functions.find((fn) => fn.name === name) ?? null
  }
  return null
}

/** An object for `parameters`: every required property filled, the words in the first free string one. */
function argumentsOf(parameters: unknown): Record<string, unknown> {
  const properties = isObject(parameters) && isObject(parameters.properties) ? parameters.properties : {}
  const required = isObject(parameters) && Array.isArray(parameters.required) ? parameters.required : []
  const names = Object.keys(properties)
  const wordsIn = names.find((name) => isFreeString(properties[name])) ?? 'text'
  const args: Record<string, unknown> = {}
  for (const name of names) {
    if (name === wordsIn) args[name] = WORDS
    else if (required.includes(name)) args[name] = valueFor(properties[name])
  }
  if (!(wordsIn in args)) args[wordsIn] = WORDS
  return args
}

function isFreeString(schema: unknown): boolean {
  return isObject(schema) && schema.type === 'string' && !Array.isArray(schema.enum)
}

function valueFor(schema: unknown): unknown {
  if (!isObject(schema)) return null
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  switch (schema.type) {
    case 'string':
      return 'x'
    case 'number':
    case 'integer':
      return 1
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object':
      return {}
    default:
      return null
  }
}

/** `text` as it sits inside a JSON string of an event: the arguments are a JSON text inside JSON. */
export function inJsonString(text: string): string {
  return JSON.stringify(text).slice(1, -1)
}

/**
 * The chat chunks of a reply that is `call`, around `choice` (the text that opens a chunk's one
 * choice): what replaces the content deltas and the finish of a text reply.
 */
export function toolCallChunks(
  choice: string,
  call: SimToolCall,
): Pick<Frames, 'firstTokenPrefix' | 'tokenPrefix' | 'tokenSuffix' | 'finish' | 'choice'> {
  const opening = `{"index":0,${call.id === '' ? '' : `"id":"${call.id}",`}"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":"${inJsonString(call.head)}`
  const piece = '{"index":0,"function":{"arguments":"'
  return {
    firstTokenPrefix: `${choice}"delta":{"tool_calls":[${opening}`,
    tokenPrefix: `${choice}"delta":{"tool_calls":[${piece}`,
    tokenSuffix: '"}}]},"finish_reason":null}]}\n\n',
    finish: (_reason, tail = '') => {
      const closing = call.tail === '' ? '{}' : `{"tool_calls":[${piece}${inJsonString(call.tail)}"}}]}`
      return `${choice}"delta":${closing},"finish_reason":"tool_calls"}]${tail}}\n\n`
    },
    choice: (text, reasoning) => ({
      index: 0,
      message: {
        role: 'assistant',
        ...(reasoning === null ? {} : { reasoning_content: reasoning }),
        content: null,
        tool_calls: [
          {
            ...(call.id === '' ? {} : { id: call.id }),
            type: 'function',
            function: { name: call.name, arguments: `${call.head}${text}${call.tail}` },
          },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    }),
  }
}
