import type { BenchResult } from '../result/bench-result.js'
import { levelName } from '../result/level-name.js'

/**
 * The prefix cache's effect, under the level table: a session run's figures per turn (the prompt
 * grows with the history, the cached share with it, and TTFT shows what that bought), and, whenever
 * the server reported cache hits, TTFT p50 by the share of the prompt served from the cache.
 */
export function sessionTables(result: BenchResult, format: 'text' | 'markdown'): string[] {
  const levels = [...result.levels].sort((a, b) => a.value - b.value)
  const lines: string[] = []
  const turnRows = levels.flatMap((level) =>
    (level.turns ?? []).map((t) => [
      levelName(result.meta, level.value),
      String(t.turn),
      String(t.requests),
      `${one(t.ttft_ms_p50)} / ${one(t.ttft_ms_p95)}`,
      one(t.input_tokens_mean),
      one(t.cached_tokens_mean),
      t.cached_share === null ? '–' : `${(t.cached_share * 100).toFixed(1)}%`,
    ]),
  )
  if (turnRows.length > 0)
    lines.push(
      '',
      'Sessions, per turn (prompt tokens as the server counted them):',
      ...table(
        ['level', 'turn', 'requests', 'TTFT ms p50 / p95', 'input tok', 'cached tok', 'cached'],
        turnRows,
        format,
      ),
    )
  const effectRows = levels.flatMap((level) =>
    (level.cache_effect ?? [])
      .filter((bucket) => bucket.requests > 0)
      .map((bucket) => [
        levelName(result.meta, level.value),
        `${Math.round(bucket.from * 100)}–${Math.round(bucket.to * 100)}%`,
        String(bucket.requests),
        one(bucket.ttft_ms_p50),
        one(bucket.uncached_tokens_mean),
      ]),
  )
  if (effectRows.length > 0)
    lines.push(
      '',
      'TTFT against the cached share of the prompt:',
      ...table(['level', 'cached share', 'requests', 'TTFT ms p50', 'uncached tok'], effectRows, format),
    )
  return lines
}

function one(value: number | null): string {
  return value === null ? '–' : String(Math.round(value))
}

function table(head: string[], rows: string[][], format: 'text' | 'markdown'): string[] {
  if (format === 'markdown')
    return [
      `| ${head.join(' | ')} |`,
      `|${' --- |'.repeat(head.length)}`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ]
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)))
  const line = (cells: string[]): string =>
    `  ${cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ')}`.trimEnd()
  return [line(head), ...rows.map(line)]
}
