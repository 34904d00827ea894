import { readFileSync } from 'node:fs'
import { isObject } from '../json-object.js'
import {
  type JsonSchema,
  type StructuredOutput,
  TOOL_CHOICES,
  type ToolFunction,
} from '../protocols/structured-parts.js'
import { z } from '../zod.js'
import { unboundedPattern } from './bounded-pattern.js'

/**
 * Structured output and tool calling (issue 29): the answer's schema and the functions offered,
 * loaded once before the run (the protocol's body builder writes them: protocols/structured-parts.ts),
 * and the validators each answer is checked with on the main thread (./output-check.ts).
 */

/** The structured output in the form `engine` reads: llama.cpp gets its own schema form. */
export function forEngine(output: StructuredOutput, engine: string | null): StructuredOutput {
  return engine === 'llama.cpp' ? { ...output, schemaForm: 'json-object' } : output
}

export class StructuredOutputError extends Error {
  override name = 'StructuredOutputError'
}

/** The built-in answer schema: an invoice as an extraction task returns it, strict (every key required, no others). */
export const BUILTIN_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    invoice_number: { type: 'string' },
    issued: { type: 'string', description: 'ISO date' },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
    total: { type: 'number', minimum: 0 },
    paid: { type: 'boolean' },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          item: { type: 'string' },
          quantity: { type: 'integer', minimum: 1 },
          unit_price: { type: 'number', minimum: 0 },
        },
        required: ['item', 'quantity', 'unit_price'],
        additionalProperties: false,
      },
    },
  },
  required: ['invoice_number', 'issued', 'currency', 'total', 'paid', 'lines'],
  additionalProperties: false,
}

/** The built-in tools: four functions of the kinds assistants are given. */
export const BUILTIN_TOOLS: ToolFunction[] = [
  {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
  {
    name: 'web_search',
    description: 'Search the web and return the top results',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        max_results: { type: 'integer', minimum: 1, maximum: 10 },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: 'create_event',
    description: 'Add an event to the calendar',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        start: { type: 'string', description: 'ISO date-time' },
        duration_minutes: { type: 'integer', minimum: 1 },
        attendees: { type: 'array', items: { type: 'string' } },
      },
      required: ['title', 'start', 'duration_minutes'],
      additionalProperties: false,
    },
  },
  {
    name: 'calculate',
    description: 'Evaluate an arithmetic expression',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string' } },
      required: ['expression'],
      additionalProperties: false,
    },
  },
]

/** The run's structured output, from its settings; files are read and checked here, before anything is sent. */
export function loadStructuredOutput(settings: {
  response_schema: string | null
  tools: string | null
  tool_choice: string
}): StructuredOutput | null {
  if (settings.response_schema === null && settings.tools === null) return null
  const schema =
    settings.response_schema === null
      ? null
      : settings.response_schema === 'builtin'
        ? { name: 'invoice', schema: BUILTIN_SCHEMA }
        : { name: 'answer', schema: readSchemaFile(settings.response_schema) }
  if (schema !== null) compileSchema(schema.schema, `response_schema ${settings.response_schema}`)
  const tools =
    settings.tools === null
      ? null
      : settings.tools === 'builtin'
        ? BUILTIN_TOOLS
        : readToolsFile(settings.tools)
  for (const tool of tools ?? [])
    compileSchema(tool.parameters, `tools ${settings.tools}: ${tool.name}'s parameters`)
  const choice = settings.tool_choice
  if (tools !== null && !TOOL_CHOICES.has(choice) && !tools.some((tool) => tool.name === choice)) {
    throw new StructuredOutputError(
      `tool_choice: expected auto, required, none or one of the tools' names (${tools.map((t) => t.name).join(', ')}), got ${JSON.stringify(choice)}`,
    )
  }
  return { schema, tools, toolChoice: choice }
}

/** A validator of values against a JSON Schema (zod's reading of it); a schema it cannot read is refused. */
export function compileSchema(schema: JsonSchema, where: string): z.ZodType {
  const unbounded = unboundedPattern(schema)
  if (unbounded !== null)
    throw new StructuredOutputError(
      `${where}: ${unbounded.path} ${JSON.stringify(unbounded.pattern)} cannot be matched in bounded time ` +
        "(backreferences and lookarounds are refused: a server's answer could hold the run for hours); expected a pattern without them",
    )
  try {
    return z.fromJSONSchema(withRequiredDeclared(schema) as Parameters<typeof z.fromJSONSchema>[0])
  } catch (error) {
    throw new StructuredOutputError(
      `${where}: not a JSON Schema llmbench can validate with: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

/**
 * The schema with every `required` name that `properties` leaves out declared there as any value:
 * JSON Schema requires such a key all the same, and zod's reading would drop the requirement.
 */
export function withRequiredDeclared(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withRequiredDeclared)
  if (!isObject(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema))
    out[key] = key === 'enum' || key === 'const' ? value : withRequiredDeclared(value)
  if (Array.isArray(schema.required)) {
    const properties = isObject(out.properties) ? { ...out.properties } : {}
    for (const name of schema.required)
      if (typeof name === 'string' && !(name in properties)) properties[name] = {}
    out.properties = properties
  }
  return out
}

function readJsonFile(path: string, what: string): unknown {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new StructuredOutputError(
      `${what} ${path}: cannot read it: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new StructuredOutputError(
      `${what} ${path}: not JSON: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

function readSchemaFile(path: string): JsonSchema {
  const value = readJsonFile(path, 'response_schema')
  if (!isObject(value))
    throw new StructuredOutputError(`response_schema ${path}: expected a JSON Schema object`)
  return value
}

/** An OpenAI tools array: [{type: "function", function: {name, description?, parameters}}]. */
function readToolsFile(path: string): ToolFunction[] {
  const value = readJsonFile(path, 'tools')
  if (!Array.isArray(value) || value.length === 0)
    throw new StructuredOutputError(
      `tools ${path}: expected a non-empty array of {"type": "function", "function": {...}}`,
    )
  return value.map((entry, i) => {
    const fn =
      isObject(entry) && entry.type === 'function' && isObject(entry.function) ? entry.function : null
    if (
      fn === null ||
      typeof fn.name !== 'string' ||
      !/^[A-Za-z0-9_-]{1,64}$/.test(fn.name) ||
      !isObject(fn.parameters)
    )
      throw new StructuredOutputError(
        `tools ${path}: [${i}]: expected {"type": "function", "function": {"name": "a_name", "parameters": {...}}}`,
      )
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      parameters: fn.parameters,
    }
  })
}
