/**
 * Token-length distributions for prompts and outputs: `256` (fixed), `normal(512, 64)`,
 * `uniform(100, 900)`, or `dataset` (the dataset's own lengths). Draws are seeded, whole and at least
 * one token (zero for inputs only when the fixed value is zero), so a run can be repeated exactly.
 */

import { standardNormal } from '../random.js'

export type LengthSpec =
  | { kind: 'fixed'; value: number }
  | { kind: 'normal'; mean: number; sd: number }
  | { kind: 'uniform'; min: number; max: number }
  | { kind: 'dataset' }

export const LENGTH_SYNTAX =
  'a token count such as 256, or "normal(512, 64)", "uniform(100, 900)" or "dataset"'

const NUMBER = String.raw`\s*(\d+(?:\.\d+)?)\s*`
const NORMAL = new RegExp(`^normal\\(${NUMBER},${NUMBER}\\)$`)
const UNIFORM = new RegExp(`^uniform\\(${NUMBER},${NUMBER}\\)$`)

/** Parses a length as written in a config file or flag; null when it is not one. */
export function parseLength(value: number | string): LengthSpec | null {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= 0 ? { kind: 'fixed', value } : null
  }
  const text = value.trim().toLowerCase()
  if (/^\d+$/.test(text)) return { kind: 'fixed', value: Number(text) }
  if (text === 'dataset') return { kind: 'dataset' }
  const normal = NORMAL.exec(text)
  if (normal !== null) {
    const mean = Number(normal[1])
    const sd = Number(normal[2])
    return mean >= 1 ? { kind: 'normal', mean, sd } : null
  }
  const uniform = UNIFORM.exec(text)
  if (uniform !== null) {
    const min = Number(uniform[1])
    const max = Number(uniform[2])
    return Number.isInteger(min) && Number.isInteger(max) && min >= 1 && max >= min
      ? { kind: 'uniform', min, max }
      : null
  }
  return null
}

export function formatLength(spec: LengthSpec): string {
  switch (spec.kind) {
    case 'fixed':
      return String(spec.value)
    case 'normal':
      return `normal(${spec.mean}, ${spec.sd})`
    case 'uniform':
      return `uniform(${spec.min}, ${spec.max})`
    case 'dataset':
      return 'dataset'
  }
}

/** The length a plan expects on average (cost estimates, result metadata); `fallback` for `dataset`. */
export function meanLength(spec: LengthSpec, fallback: number): number {
  switch (spec.kind) {
    case 'fixed':
      return spec.value
    case 'normal':
      return spec.mean
    case 'uniform':
      return (spec.min + spec.max) / 2
    case 'dataset':
      return fallback
  }
}

/** One draw; `dataset` returns `fromDataset` (the entry's own length). Normal draws are clamped to >= 1. */
export function drawLength(spec: LengthSpec, random: () => number, fromDataset: number): number {
  switch (spec.kind) {
    case 'fixed':
      return spec.value
    case 'normal':
      return Math.max(1, Math.round(spec.mean + spec.sd * standardNormal(random)))
    case 'uniform':
      return spec.min + Math.floor(random() * (spec.max - spec.min + 1))
    case 'dataset':
      return fromDataset
  }
}
