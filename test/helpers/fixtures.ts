import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The shared SSE recordings (../shared/fixtures/sse from the repo root), read in place. */
export const SSE_FIXTURE_DIR = fileURLToPath(new URL('../../../shared/fixtures/sse/', import.meta.url))

export function sseFixtureNames(): string[] {
  return readdirSync(SSE_FIXTURE_DIR)
    .filter((name) => name.endsWith('.sse'))
    .sort()
}

export function readSseFixture(name: string): Buffer {
  return readFileSync(`${SSE_FIXTURE_DIR}${name}`)
}
