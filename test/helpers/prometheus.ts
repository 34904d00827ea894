import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

/** One sample of parse-prometheus-text-format's output (values stay strings, as in the text). */
export interface PromSample {
  labels?: Record<string, string>
  value?: string
  buckets?: Record<string, string>
  count?: string
  sum?: string
}

export interface PromFamily {
  name: string
  help: string
  type: string
  metrics: PromSample[]
}

/** The installed parser (CommonJS, no type declarations), typed for the tests. */
export const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => PromFamily[]

/** Reference recordings for the simulator's /metrics and timings, with their provenance (README.md). */
export const SIM_REFERENCE_DIR = fileURLToPath(new URL('../fixtures/sim-references/', import.meta.url))

export function readSimReference(name: string): string {
  return readFileSync(`${SIM_REFERENCE_DIR}${name}`, 'utf8')
}

/** The family named `name`; throws when it is missing. */
export function family(families: PromFamily[], name: string): PromFamily {
  const found = families.find((f) => f.name === name)
  if (found === undefined) throw new Error(`no metric family ${name}`)
  return found
}

/** The first sample of family `name`. */
export function sample(families: PromFamily[], name: string): PromSample {
  const first = family(families, name).metrics[0]
  if (first === undefined) throw new Error(`metric family ${name} has no sample`)
  return first
}

/** A gauge's or counter's value as a number. */
export function value(families: PromFamily[], name: string): number {
  return Number(sample(families, name).value)
}

/**
 * A histogram's `_count` and `_sum`, read from the text: parse-prometheus-text-format 1.1.1 keeps them
 * only for a histogram without labels (its flattenMetrics drops them, and the labels, otherwise), and
 * vLLM's (and the simulator's) carry model_name. Throws when either line is missing.
 */
export function histogramTotals(text: string, name: string): { count: number; sum: number } {
  const read = (suffix: string): number => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name}_${suffix}{`) || l.startsWith(`${name}_${suffix} `))
    if (line === undefined) throw new Error(`no ${name}_${suffix} sample`)
    return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return { count: read('count'), sum: read('sum') }
}

/** A histogram's cumulative buckets by `le` (the parser keeps these, without the other labels). */
export function buckets(families: PromFamily[], name: string): Record<string, string> {
  const found = sample(families, name).buckets
  if (found === undefined) throw new Error(`${name} has no buckets`)
  return found
}
