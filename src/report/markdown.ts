import { joinUrl } from '../config/url.js'
import type { Distribution } from '../metrics/distribution.js'
import type { BenchResult } from '../result/bench-result.js'
import { levelName } from '../result/level-name.js'
import { achievedNotes, levelCell, throughputCell } from './achieved-cells.js'
import { errorMessageLines } from './failure-notes.js'
import { kneeCauseLine } from './knee-cause-line.js'
import { reasoningColumns } from './reasoning-cells.js'
import { serverColumns } from './server-cells.js'
import { sessionTables } from './session-tables.js'
import { lengthsLine, workloadNotes } from './workload-notes.js'

const one = (value: number | null | undefined, digits = 0): string =>
  value === null || value === undefined ? '–' : value.toFixed(digits)

const percentiles = (distribution: Distribution, keys: string[], digits = 0): string =>
  keys.map((key) => one(distribution[key], digits)).join(' / ')

/** summary.md: the per-level table, the verdicts and the saturation point, fit for a CI job summary. */
export function renderMarkdown(result: BenchResult): string {
  const { meta } = result
  const keys = meta.percentiles.map((p) => `p${p}`)
  const hasSlo = result.levels.some((level) => level.slo !== null)
  const hasCost = result.levels.some((level) => level.cost != null)
  const server = [...serverColumns(result), ...reasoningColumns(result)]
  const serverHeads = server.map((column) => ` ${column.head.replace('\n', ' ')} |`).join('')
  const currency = result.cost?.currency ?? ''
  const lines = [
    `# llmbench: ${meta.target.model}`,
    '',
    `${joinUrl(meta.target.base_url, meta.target.endpoint)} · ${lengthsLine(meta)} · ${meta.client.workers} worker(s) · llmbench ${meta.tool_version} · ${meta.started_at}` +
      (meta.partial ? ' · **partial (interrupted)**' : ''),
    '',
    `**Saturation:** ${result.saturation_summary}`,
    ...whyLines(result),
    ...(result.capacity_summary === null ? [] : ['', `**Capacity:** ${result.capacity_summary}`]),
    '',
    `| ${meta.trace != null ? 'trace speed' : meta.load.mode === 'request_rate' ? 'rate (req/s)' : 'concurrency'} | requests | success | TTFT ms ${keys.join('/')} | TPOT ms ${keys.join('/')} | ITL ms p50 | E2E ms p50 | output tok/s | req/s |${serverHeads}${hasSlo ? ' SLO good % |' : ''}${hasCost ? ` tokens in / out | cost ${currency} |` : ''} verdict |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- |${' --- |'.repeat(server.length)}${hasSlo ? ' --- |' : ''}${hasCost ? ' --- | --- |' : ''} --- |`,
  ]
  for (const level of [...result.levels].sort((a, b) => a.value - b.value)) {
    const slo =
      level.slo === null ? '' : ` ${(level.slo.good_share * 100).toFixed(1)}${level.slo.meets ? '' : ' ✗'} |`
    const cost =
      level.cost == null
        ? ''
        : ` ${level.cost.input_tokens} / ${level.cost.output_tokens} | ${level.cost.amount.toFixed(4)} |`
    lines.push(
      `| ${levelCell(level, meta.load.mode === 'request_rate')} | ${level.requests} | ${(level.success_rate * 100).toFixed(1)}% | ` +
        `${percentiles(level.ttft_ms, keys)} | ${percentiles(level.tpot_ms, keys, 1)} | ${one(level.itl_ms.p50, 1)} | ` +
        `${one(level.e2e_ms.p50)} | ${throughputCell(level)} | ${level.requests_per_s.toFixed(2)} |${server.map((column) => ` ${column.cell(level)} |`).join('')}${slo}${cost} ` +
        `${level.verdict} |`,
    )
  }
  const notes = result.levels
    .filter(
      (level) => level.verdict !== 'healthy' || level.failed > 0 || result.saturation?.value === level.value,
    )
    .map(
      (level) =>
        `- ${levelName(meta, level.value)}: **${level.verdict}**: ${level.advice}${level.client.bound ? ` (${level.client.reasons.join('; ')})` : ''}` +
        errorMessageLines(level)
          .map((line) => `\n  - ${line}`)
          .join(''),
    )
  for (const level of result.levels)
    for (const note of [...(level.notes ?? []), ...(level.client.notes ?? [])])
      notes.push(`- ${levelName(meta, level.value)}: note: ${note}`)
  lines.push(...sessionTables(result, 'markdown'))
  if (notes.length > 0) lines.push('', ...notes)
  if (result.advice.length > 0) lines.push('', ...result.advice.map((line) => `- ${line}`))
  const workload = [...achievedNotes(result), ...workloadNotes(result)]
  if (workload.length > 0) lines.push('', ...workload.map((line) => `- ${line}`))
  return `${lines.join('\n')}\n`
}

/** The knee's cause under the saturation line, when there is a knee. */
function whyLines(result: BenchResult): string[] {
  const why = kneeCauseLine(result)
  return why === null ? [] : ['', why]
}
