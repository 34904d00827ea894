import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { PROTOCOLS } from '../../src/protocols/names.js'

/**
 * What a protocol carries and how it is read and answered is asked of its descriptor
 * (src/protocols/wire-protocol.ts, capabilities.ts), never decided by comparing its name: a branch on
 * a name is a place a new protocol, or a new capability of an old one, would be missed.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** Where the descriptors live: the only place that may name a protocol to decide something. */
const DESCRIPTORS = 'src/protocols/'

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

// 'completion' too: the simulator once called legacy completions so.
const NAMES = [...PROTOCOLS, 'completion'].join('|')
/** A protocol's name as a literal, in any quotes. */
const NAME = `['"\`](${NAMES})['"\`]`
/**
 * `x === 'chat'`, `'chat' !== x`, `case 'chat':`, `['chat', 'responses'].includes(x)`, a set of names,
 * and a path or name tested by its end (`endpoint.endsWith('/messages')`). A table typed
 * `Record<Protocol, ...>` (the simulator's answer formats) is not a check: the compiler asks it for an
 * entry for every protocol, so a new one cannot be missed there.
 */
const NAME_CHECK = new RegExp(
  [
    `[!=]==?\\s*${NAME}`,
    `${NAME}\\s*[!=]==?`,
    `case\\s+${NAME}\\s*:`,
    `\\[\\s*${NAME}[^\\]]*\\]\\s*\\.(includes|indexOf)\\(`,
    `new Set(<[^>]*>)?\\(\\s*\\[\\s*${NAME}`,
    `\\.(startsWith|endsWith)\\(\\s*['"\`][^'"\`]*\\b(${NAMES})['"\`]\\s*\\)`,
  ].join('|'),
)

/** The lines of src/ outside the descriptors that decide something by a protocol's name. */
function nameChecks(): string[] {
  return sourceFiles(join(ROOT, 'src')).flatMap((file) => {
    const path = relative(ROOT, file).split('\\').join('/')
    if (path.startsWith(DESCRIPTORS)) return []
    return readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => (NAME_CHECK.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : []))
  })
}

test('no code outside src/protocols/ decides by comparing a protocol name', () => {
  assert.deepEqual(nameChecks(), [])
})

test('the scan sees the shapes of a name check', () => {
  for (const line of [
    "if (protocol === 'chat') {",
    "const stream = kind !== 'embeddings' && body.stream",
    "'messages' === protocol",
    "case 'responses':",
    "!['chat', 'responses', 'messages'].includes(protocol)",
    "new Set<Protocol>(['chat', 'responses'])",
    "kind === 'completion'",
    'if (protocol === "messages")',
    'protocol == `embeddings`',
    "endpoint.endsWith('/v1/messages')",
  ])
    assert.match(line, NAME_CHECK, line)
  for (const line of [
    "value.messages !== undefined ? 'messages' : null",
    "protocol: 'chat',",
    "into('embeddings', accumulator)",
    "url.protocol === 'https:'",
    'const EVENT_WRITERS: Record<Protocol, Writer | null> = { chat: null, responses: ResponsesWriter }',
    "endpoint.endsWith('/v1/models')",
    "protocol === 'chat-like'",
  ])
    assert.doesNotMatch(line, NAME_CHECK, line)
})
