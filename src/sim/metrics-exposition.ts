/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: only gauges, counters and
 * histograms with one label set, which is all the simulator's /metrics needs (prom-client is not a
 * dependency). Spec: https://prometheus.io/docs/instrumenting/exposition_formats/
 */

import type { BucketHistogram } from './histogram.js'

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export type MetricFamily =
  | { name: string; help: string; type: 'gauge' | 'counter'; value: number }
  | { name: string; help: string; type: 'histogram'; histogram: BucketHistogram }

/** Every family with `labels` on each sample; a histogram's buckets get `le` after them. */
export function renderExposition(families: readonly MetricFamily[], labels: Record<string, string>): string {
  const labelText = Object.entries(labels)
    .map(([key, value]) => `${key}="${escapeLabelValue(value)}"`)
    .join(',')
  const lines: string[] = []
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`)
    if (family.type !== 'histogram') {
      lines.push(`${family.name}{${labelText}} ${formatValue(family.value)}`)
      continue
    }
    const h = family.histogram
    const cumulative = h.cumulative()
    const sep = labelText === '' ? '' : ','
    for (let i = 0; i <= h.bounds.length; i++) {
      const le = i < h.bounds.length ? formatBound(h.bounds[i] as number) : '+Inf'
      lines.push(`${family.name}_bucket{${labelText}${sep}le="${le}"} ${formatValue(cumulative[i] ?? 0)}`)
    }
    lines.push(`${family.name}_count{${labelText}} ${formatValue(h.count)}`)
    lines.push(`${family.name}_sum{${labelText}} ${formatValue(h.sum)}`)
  }
  return `${lines.join('\n')}\n`
}

/** A sample value: Go/Prometheus spell the non-finite ones NaN, +Inf, -Inf. */
function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (n === Number.POSITIVE_INFINITY) return '+Inf'
  if (n === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(n)
}

/** `le` as Python's prometheus_client writes it (1 -> "1.0"), so the labels match a real vLLM's. */
function formatBound(n: number): string {
  return Number.isInteger(n) ? n.toFixed(1) : String(n)
}

/** Label values escape backslash, double quote and line feed. */
function escapeLabelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')
}

/** HELP text escapes backslash and line feed. */
function escapeHelp(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')
}
