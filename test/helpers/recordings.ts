import { readdirSync, readFileSync } from 'node:fs'
import type { RequestPlan } from '../../src/client/stream-client.js'
import type { Protocol } from '../../src/protocols/names.js'
import type { RequestRecord } from '../../src/records/types.js'
import { PROTOCOL_FIXTURE_DIR, SSE_FIXTURE_DIR } from './fixtures.js'

/** Every recording of test/fixtures/sse and test/fixtures/protocols, with the protocol it is read as. */
export interface Recording {
  /** sse/NAME or protocols/NAME */
  name: string
  protocol: Protocol
  body: Buffer
}

/** How the protocol recordings are read, by their names (see test/fixtures/protocols/README.md). */
export function protocolOf(name: string): Protocol {
  if (name.startsWith('anthropic-')) return 'messages'
  if (name.startsWith('openai-responses-')) return 'responses'
  if (name === 'llamacpp_completions.sse') return 'completions'
  return 'chat'
}

export function allRecordings(): Recording[] {
  const read = (dir: string, folder: string): Recording[] =>
    readdirSync(dir)
      .filter((name) => name.endsWith('.sse'))
      .sort()
      .map((name) => ({
        name: `${folder}/${name}`,
        protocol: folder === 'sse' ? 'chat' : protocolOf(name),
        body: readFileSync(dir + name),
      }))
  return [...read(SSE_FIXTURE_DIR, 'sse'), ...read(PROTOCOL_FIXTURE_DIR, 'protocols')]
}

/** A measured request's plan with a small JSON body. */
export function measurePlan(body: Buffer = Buffer.from('{"model":"m"}')): RequestPlan {
  return { seq: 0, worker: 0, level: 1, phase: 'measure', prompt_id: 0, scheduled_at: null, attempt: 1, body }
}

/**
 * A record without its clock readings (stamped or not, and how many token times): what must not
 * depend on how the bytes were split or which client read them. `connection`, `connect_ms` and
 * `connection_wait_ms` are left out when asked.
 */
export function recordContent(record: RequestRecord, withConnection = true): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    // connect_ms and connection_wait_ms are the connection's (only the h1 client times them), and clock readings.
    const clocked = key === 'connect_ms' || key === 'connection_wait_ms'
    if ((key === 'connection' || clocked) && !withConnection) continue
    if (key.endsWith('_at') || clocked) kept[key] = value === null ? null : 'stamped'
    else if (key === 'token_times') kept[key] = (value as number[]).length
    else kept[key] = value
  }
  return kept
}
