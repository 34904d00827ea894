import { type PromptImage, promptImage } from '../protocols/prompt-images.js'
import { syntheticPng } from './synthetic-png.js'

/**
 * --images COUNTxWIDTHxHEIGHT: synthetic PNG images sent with every prompt, generated once before
 * the run. Prompts get images of their own (a server caches images by content, as it caches a
 * prompt's prefix), up to IMAGE_BYTES_BUDGET of encoded images; past that, prompts reuse them in turn.
 */

export interface ImageSpec {
  count: number
  width: number
  height: number
}

export const IMAGES_SYNTAX = 'COUNTxWIDTHxHEIGHT, e.g. 2x448x448 (1-16 images of 16-4096 pixels a side)'

/** "2x448x448" → its parts; null when it is not that shape or out of bounds. */
export function parseImageSpec(text: string): ImageSpec | null {
  const match = /^(\d+)x(\d+)x(\d+)$/.exec(text.trim())
  if (match === null) return null
  const [count, width, height] = match.slice(1).map(Number) as [number, number, number]
  const side = (n: number): boolean => n >= 16 && n <= 4096
  return count >= 1 && count <= 16 && side(width) && side(height) ? { count, width, height } : null
}

/** Encoded images kept for one run at most: beyond it, prompts share images. */
export const IMAGE_BYTES_BUDGET = 64 * 1024 * 1024

export interface PromptImageSet {
  /** The images prompt `id` carries. */
  of(id: number): readonly PromptImage[]
  /** Distinct image sets (prompts beyond them reuse one in turn). */
  distinct: number
}

/** Images for `prompts` distinct prompts, seeded: the same seed draws the same pixels. */
export function promptImageSet(spec: ImageSpec, prompts: number, seed: number): PromptImageSet {
  const first = syntheticPng(spec.width, spec.height, seed * 131 + 1)
  const perSet = first.byteLength * spec.count
  const distinct = Math.max(1, Math.min(prompts, Math.floor(IMAGE_BYTES_BUDGET / perSet)))
  const sets: PromptImage[][] = []
  for (let set = 0; set < distinct; set++) {
    const images: PromptImage[] = []
    for (let k = 0; k < spec.count; k++) {
      const png =
        set === 0 && k === 0 ? first : syntheticPng(spec.width, spec.height, seed * 131 + 1 + set * 16 + k)
      images.push(promptImage('image/png', png))
    }
    sets.push(images)
  }
  return { of: (id) => sets[id % distinct] as PromptImage[], distinct }
}
