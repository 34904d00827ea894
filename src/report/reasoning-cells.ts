import type { Distribution } from '../metrics/distribution.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import type { ServerColumn } from './server-cells.js'

/**
 * A reasoning model's phases as table columns, present only when some level reasoned: TTFO (the
 * answer's first token; TTFT is the thinking's) with TTFR, reasoning / answer tokens, and the
 * answer phase's TPOT. Levels without reasoning show '-'.
 */
export function reasoningColumns(result: BenchResult): ServerColumn[] {
  if (!result.levels.some((level) => level.reasoning !== undefined)) return []
  const keys = result.meta.percentiles.map((p) => `p${p}`)
  return [
    {
      head: `TTFO ms (answer)\n${keys.join('/')}`,
      cell: (level) => cell(level, (r) => figures(r.ttfo_ms, keys)),
    },
    { head: 'TTFR ms\np50', cell: (level) => cell(level, (r) => one(r.ttfr_ms.p50)) },
    {
      head: 'reasoning / answer\ntokens p50',
      cell: (level) => cell(level, (r) => `${one(r.reasoning_tokens.p50)} / ${one(r.answer_tokens.p50)}`),
    },
    { head: 'answer TPOT\nms p50', cell: (level) => cell(level, (r) => one(r.answer_tpot_ms.p50, 1)) },
  ]
}

function cell(
  level: LevelSummary,
  show: (reasoning: NonNullable<LevelSummary['reasoning']>) => string,
): string {
  return level.reasoning === undefined ? '-' : show(level.reasoning)
}

function figures(distribution: Distribution, keys: string[]): string {
  return keys.map((key) => one(distribution[key])).join(' / ')
}

function one(value: number | null | undefined, digits = 0): string {
  return value == null ? '-' : value.toFixed(digits)
}
