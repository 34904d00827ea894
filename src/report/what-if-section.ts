import type { BenchResult } from '../result/bench-result.js'
import type { Chart } from './charts.js'
import { escapeHtml } from './escape-html.js'
import { COMMON_WORKLOADS, type WhatIf, whatIf } from './what-if.js'

/**
 * One result's "What if", computed once for both renderers: the model runs in virtual time on four
 * workloads (up to a second or two), and summary.md and report.html are drawn from the same result.
 * `knees` false (a run's own report): no workload is predicted, so nothing runs in virtual time.
 */
const computed = new WeakMap<BenchResult, WhatIf | null>()
const computedWithoutKnees = new WeakMap<BenchResult, WhatIf | null>()
function whatIfOnce(result: BenchResult, knees: boolean): WhatIf | null {
  const memo = knees ? computed : computedWithoutKnees
  if (!memo.has(result)) memo.set(result, whatIf(result, knees ? COMMON_WORKLOADS : []))
  return memo.get(result) ?? null
}

/** Markdown table text: `<` as its entity (as summary.md's other outside text), a `|` escaped. */
const cellText = (text: string): string => text.replaceAll('<', '&lt;').replaceAll('|', '\\|')

/** summary.md's "What if" section; empty when the result carries no model. */
export function whatIfMarkdown(result: BenchResult, knees = true): string[] {
  const section = whatIfOnce(result, knees)
  if (section === null) return []
  return [
    '',
    '## What if',
    '',
    section.intro,
    ...section.tables.flatMap((table) => [
      '',
      `**${table.title}:**`,
      '',
      `| ${table.head.join(' | ')} |`,
      `|${' --- |'.repeat(table.head.length)}`,
      ...table.rows.map((row) => `| ${row.map(cellText).join(' | ')} |`),
    ]),
    ...(section.notes.length === 0 ? [] : ['', ...section.notes.map((note) => `- ${cellText(note)}`)]),
  ]
}

/** report.html's "What if" section, with the model's line over the measured points; empty without a model. */
export function whatIfHtml(result: BenchResult, chart: Chart | null, knees = true): string {
  const section = whatIfOnce(result, knees)
  if (section === null) return ''
  const row = (cells: readonly string[], tag: 'th' | 'td'): string =>
    `<tr>${cells.map((text) => `<${tag}>${escapeHtml(text)}</${tag}>`).join('')}</tr>`
  const tables = section.tables
    .map(
      (table) =>
        `<h3>${escapeHtml(table.title)}</h3><table class="what-if"><thead>${row(table.head, 'th')}</thead><tbody>${table.rows.map((cells) => row(cells, 'td')).join('')}</tbody></table>`,
    )
    .join('\n')
  const figure =
    chart === null
      ? ''
      : `<figure class="model-fit" data-series="${chart.series}" data-points="${chart.points}">${chart.svg}</figure>`
  const notes =
    section.notes.length === 0
      ? ''
      : `<ul>${section.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>`
  return `<h2>What if</h2>
<p class="meta">${escapeHtml(section.intro)}</p>
${figure}
${tables}
${notes}`
}
