import { answerLines, answerOf } from '../analysis/answer.js'
import { MIN_HEALTHY_SUCCESS_RATE } from '../analysis/verdict.js'
import { levelName } from '../metrics/level-name.js'
import type { Verdict } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import { driftLine } from './drift-line.js'
import { escapeHtml } from './escape-html.js'
import { kneeCauseLine } from './knee-cause-line.js'

/**
 * The verdicts a level can get (the four patterns of a load and the set-up failure that stops a run
 * before any), each with what the figures show and what to do: the same verdicts, in the same order,
 * as docs/results.md; analysis/verdict.ts gives them.
 */
const PATTERNS: { verdict: Verdict; shows: string; act: string }[] = [
  {
    verdict: 'healthy',
    shows: 'throughput rises with the load; TTFT stays near its floor',
    act: 'below the knee: keep adding load; at the knee: record it as capacity',
  },
  {
    verdict: 'saturated',
    shows: 'throughput flat past the knee while TTFT climbs: the extra streams wait in a queue',
    act: 'the knee level is the capacity; more load only adds waiting',
  },
  {
    verdict: 'overloaded',
    shows: `success rate below ${MIN_HEALTHY_SUCCESS_RATE * 100}% or timeouts`,
    act: 'back off to the previous level',
  },
  {
    verdict: 'client-bound',
    shows: 'the load generator itself was busy: its figures are not the server’s',
    act: 'more workers or machines, then re-run',
  },
]
const MISCONFIGURED = {
  verdict: 'misconfigured' as Verdict,
  shows: 'requests failed for reasons that are not load',
  act: 'fix the set-up and re-run',
}
const INTERRUPTED = {
  verdict: 'interrupted' as Verdict,
  shows: 'cut short by an interrupt: too few requests to judge',
  act: 'shown, not judged; re-run the level for its figures',
}

/**
 * The top of report.html: the capacity in one line (the SLO capacity when SLOs were set, else the
 * knee), why the knee is there (the server-side cause), and the four-pattern table with each level in
 * the row of its verdict and those rows highlighted. Plain HTML from the result: no chart needed.
 */
export function headlineHtml(result: BenchResult): string {
  const { meta } = result
  const knee = result.saturation
  const answer = answerOf(result).text
  // Without a capacity the answer line already is the SLO sentence.
  const { detail, repeats, search, targets } = answerLines(result)
  const lines = [
    knee === null ? null : `Knee: ${result.saturation_summary}`,
    repeats,
    search,
    ...targets,
    detail === null ? null : `Under the SLOs: ${detail}`,
    kneeCauseLine(result),
    driftLine(result),
  ].filter((line): line is string => line !== null)
  const byVerdict = new Map<Verdict, string[]>()
  for (const level of [...result.levels].sort((a, b) => a.value - b.value))
    byVerdict.set(level.verdict, [...(byVerdict.get(level.verdict) ?? []), levelName(meta, level.value)])
  const patterns = [
    ...PATTERNS,
    ...(byVerdict.has('misconfigured') ? [MISCONFIGURED] : []),
    ...(byVerdict.has('interrupted') ? [INTERRUPTED] : []),
  ]
  const rows = patterns
    .map(({ verdict, shows, act }) => {
      const levels = byVerdict.get(verdict) ?? []
      return `<tr class="${levels.length > 0 ? 'match' : ''}" data-verdict="${verdict}"><th>${verdict}</th><td>${escapeHtml(shows)}</td><td>${escapeHtml(act)}</td><td>${levels.length > 0 ? escapeHtml(levels.join(', ')) : '–'}</td></tr>`
    })
    .join('\n')
  return `<section class="headline">
<p class="answer">${escapeHtml(answer)}</p>
${lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n')}
<table class="patterns"><thead><tr><th>pattern</th><th>what the figures show</th><th>what to do</th><th>levels here</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</section>`
}

/** The headline's styles: the answer large, the matching patterns highlighted. */
export const HEADLINE_STYLE = `
.headline { border: 1px solid #d6dbe6; border-radius: 6px; padding: .8rem 1.2rem; margin: 1rem 0; background: #fbfcfe; }
.headline .answer { font-size: 1.6rem; font-weight: 600; margin: .2rem 0 .6rem; }
.patterns th, .patterns td { text-align: left; } .patterns tbody th { background: none; font-family: monospace; }
.patterns tr.match { background: #fff3cd; font-weight: 600; } .patterns tr:not(.match) { color: #888; }`
