import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/**
 * The import graph's floors, lowest first. A part of src/ (a folder, or a file at the top of src/)
 * may import only from parts on lower floors: not sideways, not up. The result model sits in the
 * middle, so `run`, `report` and `compare` read and write results without importing each other.
 */
const FLOORS: readonly (readonly string[])[] = [
  [
    'random',
    'version',
    'describe-value',
    'json-object',
    'closest-name',
    'json-nesting',
    'printable',
    'text-file',
    'clock',
    'zod',
  ], // helpers with no imports of their own
  ['schema-issue'], // a schema's refusal as one line: the key path, what was expected, what was found
  ['records'], // what one request was: the raw record, reading and writing requests.jsonl
  ['protocols'], // the wire protocols: each one's path, body, auth default and how its responses read
  ['client', 'workload'], // sending one request; prompts, lengths, datasets, tokenizers
  ['schedule', 'server-metrics'], // arrivals and the loop that sends a level's requests; the server's /metrics
  ['metrics'], // figures of one level, from its records
  ['analysis'], // saturation, verdicts and advice, from the levels' figures
  ['model'], // the capacity model: the engine it simulates, its fit from a run, its predictions
  ['result'], // the result model: bench_result.json and the result folder
  ['compare', 'config'], // two results compared; the run's settings
  ['worker', 'report'], // the threads that send the load; terminal, markdown, html, charts
  ['run', 'sim', 'deploy'], // a whole run; the simulated server; Kubernetes manifests
  ['cli'],
  ['index'], // the library entry
]

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

interface ImportEdge {
  /** Both repo-relative, like src/run/shard/merge.ts. */
  from: string
  to: string
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Every relative import of src/: `import ... from`, `export ... from`, `import type`, `import('...')`. */
function readImportGraph(): ImportEdge[] {
  const edges: ImportEdge[] = []
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const from = relative(ROOT, file).split('\\').join('/')
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue
      const to = posix.normalize(posix.join(posix.dirname(from), fileName)).replace(/\.js$/, '.ts')
      edges.push({ from, to })
    }
  }
  return edges
}

/** The part of src/ a file belongs to: its folder, or its own name for a file at the top of src/. */
function partOf(file: string): string {
  const [, first = ''] = file.split('/')
  return first.endsWith('.ts') ? first.slice(0, -'.ts'.length) : first
}

function floorOf(part: string, floors: readonly (readonly string[])[]): number {
  return floors.findIndex((floor) => floor.includes(part))
}

function describeEdge(edge: ImportEdge): string {
  return `${edge.from} → ${edge.to}`
}

/** Imports between parts, grouped by (from part, to part). */
function partEdges(edges: readonly ImportEdge[]): Map<string, Map<string, ImportEdge[]>> {
  const parts = new Map<string, Map<string, ImportEdge[]>>()
  for (const edge of edges) {
    const from = partOf(edge.from)
    const to = partOf(edge.to)
    if (from === to) continue
    const targets = parts.get(from) ?? new Map<string, ImportEdge[]>()
    targets.set(to, [...(targets.get(to) ?? []), edge])
    parts.set(from, targets)
  }
  return parts
}

/** File imports shown per hop of a cycle: enough to find it, few enough to read. */
const SHOWN_PER_HOP = 3

/** Each cycle between parts once, as its file imports hop by hop. */
function partCycles(edges: readonly ImportEdge[]): string[] {
  const graph = partEdges(edges)
  const seen = new Set<string>()
  const cycles: string[] = []
  for (const start of [...graph.keys()].sort()) {
    // Breadth-first from start's targets back to start: the shortest cycle through start.
    const previous = new Map<string, string>()
    const queue = [start]
    while (queue.length > 0 && !previous.has(start)) {
      const part = queue.shift() as string
      for (const next of graph.get(part)?.keys() ?? []) {
        if (previous.has(next)) continue
        previous.set(next, part)
        queue.push(next)
      }
    }
    if (!previous.has(start)) continue
    const path: string[] = []
    for (let part = previous.get(start) as string; part !== start; part = previous.get(part) as string)
      path.unshift(part)
    path.unshift(start)
    const key = [...path].sort().join(' ')
    if (seen.has(key)) continue
    seen.add(key)
    const hops = path.map((from, i) => {
      const to = path[(i + 1) % path.length] as string
      const files = graph.get(from)?.get(to) ?? []
      const more = files.length > SHOWN_PER_HOP ? ` (and ${files.length - SHOWN_PER_HOP} more)` : ''
      return `  ${from} → ${to}: ${files.slice(0, SHOWN_PER_HOP).map(describeEdge).join(', ')}${more}`
    })
    cycles.push([`cycle ${[...path, start].join(' → ')}`, ...hops].join('\n'))
  }
  return cycles
}

/** Imports that go sideways or up the floors, as file → file. */
function importsNotDown(edges: readonly ImportEdge[], floors: readonly (readonly string[])[]): string[] {
  return edges.flatMap((edge) => {
    const from = partOf(edge.from)
    const to = partOf(edge.to)
    if (from === to) return []
    const fromFloor = floorOf(from, floors)
    const toFloor = floorOf(to, floors)
    if (toFloor < fromFloor) return []
    const way = toFloor === fromFloor ? 'sideways' : 'up'
    return [`${describeEdge(edge)} (${way}: ${from} on floor ${fromFloor}, ${to} on floor ${toFloor})`]
  })
}

function failureMessage(what: string, lines: readonly string[]): string {
  return `${what}:\n${lines.join('\n')}`
}

const graph = readImportGraph()

test('the import graph is read: static, type-only, re-export and dynamic imports', () => {
  const has = (from: string, to: string): boolean =>
    graph.some((edge) => edge.from === from && edge.to === to)
  assert.ok(has('src/run/shard/merge.ts', 'src/result/build-result.ts'), 'import ... from')
  assert.ok(has('src/report/markdown.ts', 'src/result/bench-result.ts'), 'import type ... from')
  assert.ok(has('src/index.ts', 'src/result/load-run.ts'), 'export ... from')
  assert.ok(has('src/cli/dispatch.ts', 'src/cli/commands/run.ts'), "import('...')")
})

test('every part of src/ is on a floor', () => {
  const parts = [...new Set(graph.flatMap((edge) => [partOf(edge.from), partOf(edge.to)]))].sort()
  const missing = parts.filter((part) => floorOf(part, FLOORS) < 0)
  assert.equal(missing.length, 0, failureMessage('parts of src/ on no floor (add them to FLOORS)', missing))
})

test('no import cycle between the parts of src/', () => {
  const cycles = partCycles(graph)
  assert.equal(cycles.length, 0, failureMessage('import cycles between parts of src/', cycles))
})

test('every import between parts of src/ points down the floors', () => {
  const wrong = importsNotDown(graph, FLOORS)
  assert.equal(wrong.length, 0, failureMessage('imports that do not point down', wrong))
})

test('the checks catch a cycle and an upward import, naming the files', () => {
  const edges: ImportEdge[] = [
    { from: 'src/run/shard/merge.ts', to: 'src/report/load-run.ts' },
    { from: 'src/report/load-run.ts', to: 'src/run/run-gradient.ts' },
    { from: 'src/report/load-run.ts', to: 'src/report/markdown.ts' },
  ]
  assert.deepEqual(partCycles(edges), [
    [
      'cycle report → run → report',
      '  report → run: src/report/load-run.ts → src/run/run-gradient.ts',
      '  run → report: src/run/shard/merge.ts → src/report/load-run.ts',
    ].join('\n'),
  ])
  assert.deepEqual(importsNotDown(edges, [['report'], ['run']]), [
    'src/report/load-run.ts → src/run/run-gradient.ts (up: report on floor 0, run on floor 1)',
  ])
  assert.deepEqual(importsNotDown(edges, [['report', 'run']]), [
    'src/run/shard/merge.ts → src/report/load-run.ts (sideways: run on floor 0, report on floor 0)',
    'src/report/load-run.ts → src/run/run-gradient.ts (sideways: report on floor 0, run on floor 0)',
  ])
})
