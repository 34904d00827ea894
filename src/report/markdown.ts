import { answerLines } from '../analysis/answer.js'
import { joinUrl } from '../config/url.js'
import { levelName } from '../metrics/level-name.js'
import type { BenchResult } from '../result/bench-result.js'
import { achievedNotes } from './achieved-cells.js'
import { driftLine } from './drift-line.js'
import { errorMessageLines } from './failure-notes.js'
import { INTERVAL_HEADS, intervalCells, intervalRows } from './interval-cells.js'
import { kneeCauseLine } from './knee-cause-line.js'
import { levelColumns } from './level-columns.js'
import { repeatsMarkdown } from './repeats-table.js'
import { sessionTables } from './session-tables.js'
import { speculativeTable } from './speculative-table.js'
import { whatIfMarkdown } from './what-if-section.js'
import { lengthsLine, workloadNotes } from './workload-notes.js'

/**
 * Text that came from outside (the model's name, the URL, the server's error messages) as markdown
 * text: `<` as its entity, so a viewer that does not sanitise (a CI job summary, a wiki) shows a tag
 * rather than running it as HTML. The rest stays as the server wrote it ("900 + 512 > 1024").
 */
const inert = (text: string): string => text.replaceAll('<', '&lt;')

/**
 * summary.md: the per-level table, the verdicts and the saturation point, fit for a CI job summary.
 * `predictKnees` false leaves the "What if" knee table to `report` (see ReportOptions.predictKnees).
 */
export function renderMarkdown(result: BenchResult, predictKnees = true): string {
  const { meta } = result
  const columns = levelColumns(result, 'markdown')
  const { headline, detail, repeats, search, targets } = answerLines(result)
  const lines = [
    `# llmbench: ${inert(meta.target.model)}`,
    '',
    `${inert(joinUrl(meta.target.base_url, meta.target.endpoint))} · ${inert(lengthsLine(meta))} · ${meta.client.workers} worker(s) · llmbench ${meta.tool_version} · ${meta.started_at}` +
      (meta.partial ? ' · **partial (interrupted)**' : ''),
    '',
    ...(headline === null ? [] : [`**${headline}**`, '']),
    ...(detail === null ? [] : [detail, '']),
    ...(repeats === null ? [] : [repeats, '']),
    ...(search === null ? [] : [search, '']),
    `**Saturation:** ${result.saturation_summary}`,
    ...(targets.length === 0
      ? []
      : ['', '**Each target on its own load:**', '', ...targets.map((line) => `- ${inert(line)}`)]),
    ...whyLines(result),
    '',
    `| ${columns.map((column) => column.head).join(' | ')} |`,
    `|${' --- |'.repeat(columns.length)}`,
  ]
  for (const level of [...result.levels].sort((a, b) => a.value - b.value))
    lines.push(`| ${columns.map((column) => column.cell(level)).join(' | ')} |`)
  const notes = result.levels
    .filter(
      (level) => level.verdict !== 'healthy' || level.failed > 0 || result.saturation?.value === level.value,
    )
    .map(
      (level) =>
        `- ${levelName(meta, level.value)}: **${level.verdict}**: ${level.advice}${level.client.bound ? ` (${level.client.reasons.join('; ')})` : ''}` +
        errorMessageLines(level)
          .map((line) => `\n  - ${inert(line)}`)
          .join(''),
    )
  for (const level of result.levels)
    for (const note of [...(level.notes ?? []), ...(level.client.notes ?? [])])
      notes.push(`- ${levelName(meta, level.value)}: note: ${inert(note)}`)
  lines.push(...repeatsMarkdown(result))
  lines.push(...sessionTables(result, 'markdown'))
  lines.push(...speculativeTable(result, 'markdown'))
  lines.push(...intervalsMarkdown(result))
  if (notes.length > 0) lines.push('', ...notes)
  if (result.advice.length > 0) lines.push('', ...result.advice.map((line) => `- ${line}`))
  const workload = [...achievedNotes(result), ...workloadNotes(result)]
  if (workload.length > 0) lines.push('', ...workload.map((line) => `- ${line}`))
  lines.push(...whatIfMarkdown(result, predictKnees))
  return `${lines.join('\n')}\n`
}

/** The knee's cause under the saturation line, when there is a knee. */
function whyLines(result: BenchResult): string[] {
  const why = kneeCauseLine(result)
  const drift = driftLine(result)
  return [
    ...(why === null ? [] : ['', why]),
    ...(drift === null ? [] : ['', result.drift?.moved ? `**${inert(drift)}**` : inert(drift)]),
  ]
}

/** Every figure's 95% interval, folded away (a row a figure a level is long): none for older results. */
function intervalsMarkdown(result: BenchResult): string[] {
  const rows = intervalRows(result)
  if (rows.length === 0) return []
  return [
    '',
    '<details><summary>95% intervals of every figure (method, effective sample size)</summary>',
    '',
    `| ${INTERVAL_HEADS.join(' | ')} |`,
    `|${' --- |'.repeat(INTERVAL_HEADS.length)}`,
    ...rows.map((row) => `| ${intervalCells(row).join(' | ')} |`),
    '',
    '</details>',
  ]
}
