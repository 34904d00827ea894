import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LevelSummary } from '../../src/metrics/summarize.js'
import { serverColumns } from '../../src/report/server-cells.js'
import type { BenchResult } from '../../src/result/bench-result.js'

/** A level with only the server TTFT figures the column reads. */
function level(ttft: Record<string, unknown>, outside: number | null): LevelSummary {
  return { server: { ttft_ms_bucketed: ttft, outside_scheduler_ms: outside } } as unknown as LevelSummary
}

test('the server TTFT column shows a wide bucket as its range, a narrow one as the estimate', () => {
  const levels = [
    level({ count: 8, mean: 0.003, p50: 0.006, ranges: { p50: { low: 0, high: 0.006 } } }, 24),
    level({ count: 8, mean: 30, p50: 31.2 }, 2),
    level({ count: 8, mean: 9000, p50: 5000, ranges: { p50: { low: 5000, high: null } } }, null),
  ]
  const column = serverColumns({ levels } as unknown as BenchResult).find((c) =>
    c.head.startsWith('server TTFT'),
  )
  assert.ok(column !== undefined)
  assert.deepEqual(
    levels.map((l) => column.cell(l)),
    ['0–0.006 (24)', '31 (2)', '>5000'],
  )
})
