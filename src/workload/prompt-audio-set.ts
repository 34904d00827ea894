import { type PromptAudio, promptAudio } from '../protocols/prompt-images.js'
import { IMAGE_BYTES_BUDGET } from './prompt-image-set.js'
import { syntheticWav } from './synthetic-wav.js'

/**
 * --audio COUNTxSECONDS: synthetic speech-like WAV clips sent with every chat prompt (`input_audio`),
 * generated once before the run, each prompt its own up to the media budget (then reused in turn).
 */

export interface AudioSpec {
  count: number
  seconds: number
}

export const AUDIO_SYNTAX = 'COUNTxSECONDS, e.g. 1x5 (1-8 clips of 0.5-600 seconds)'

export function parseAudioSpec(text: string): AudioSpec | null {
  const match = /^(\d+)x(\d+(?:\.\d+)?)$/.exec(text.trim())
  if (match === null) return null
  const count = Number(match[1])
  const seconds = Number(match[2])
  return count >= 1 && count <= 8 && seconds >= 0.5 && seconds <= 600 ? { count, seconds } : null
}

export interface PromptAudioSet {
  of(id: number): readonly PromptAudio[]
  distinct: number
}

export function promptAudioSet(spec: AudioSpec, prompts: number, seed: number): PromptAudioSet {
  const first = syntheticWav(spec.seconds, seed * 173 + 1)
  const distinct = Math.max(
    1,
    Math.min(prompts, Math.floor(IMAGE_BYTES_BUDGET / (first.byteLength * spec.count))),
  )
  const sets: PromptAudio[][] = []
  for (let set = 0; set < distinct; set++) {
    const clips: PromptAudio[] = []
    for (let k = 0; k < spec.count; k++)
      clips.push(
        promptAudio(set === 0 && k === 0 ? first : syntheticWav(spec.seconds, seed * 173 + 1 + set * 8 + k)),
      )
    sets.push(clips)
  }
  return { of: (id) => sets[id % distinct] as PromptAudio[], distinct }
}
