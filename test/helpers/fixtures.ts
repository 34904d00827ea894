import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The team's SSE recordings, copied from ../shared/fixtures/sse with their README (each file's source
 * and changes) and SHA256SUMS, so the tests run on a clone that has no ../shared beside it.
 */
export const SSE_FIXTURE_DIR = fileURLToPath(new URL('../fixtures/sse/', import.meta.url))

export function sseFixtureNames(): string[] {
  return readdirSync(SSE_FIXTURE_DIR)
    .filter((name) => name.endsWith('.sse'))
    .sort()
}

export function readSseFixture(name: string): Buffer {
  return readFileSync(`${SSE_FIXTURE_DIR}${name}`)
}

/** Streams beyond plain chat (llama.cpp timings, usage details), from ../shared/fixtures/protocols; see their README. */
export const PROTOCOL_FIXTURE_DIR = fileURLToPath(new URL('../fixtures/protocols/', import.meta.url))

/** What servers say about themselves (/props, /slots, /v1/models, /get_server_info), from ../shared/fixtures/engines. */
export const ENGINE_FIXTURE_DIR = fileURLToPath(new URL('../fixtures/engines/', import.meta.url))

/** What the kit's recorded /props, /slots and /v1/models say together (read off the files). */
export const LLAMACPP_KIT_SELF = {
  engine: 'llama.cpp',
  slots: 4,
  context_per_slot: 1024,
  max_model_len: null,
  answered: ['/props', '/slots', '/v1/models'],
} as const
