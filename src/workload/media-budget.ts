import { type AudioSpec, parseAudioSpec } from './prompt-audio-set.js'
import { type ImageSpec, parseImageSpec } from './prompt-image-set.js'
import { WAV_SAMPLE_RATE } from './synthetic-wav.js'

/**
 * How many distinct prompts a run with images or audio can hold. Every prompt's body is built
 * before the run and carries its media base64-encoded; each load thread holds a copy. With
 * `--images 8x2048x2048` a run peaked at 4.3 GB and `--audio 4x600` at 3.4 GB (issue 36): the
 * bodies are now sized to a budget (prompts beyond it reuse bodies in turn), a single body past
 * MAX_MEDIA_PER_REQUEST is refused, and the plan says what is held.
 */

/** Bodies' media held for one run, per thread that holds them. */
export const MEDIA_BODIES_BUDGET_BYTES = 256 * 1024 * 1024
/** One request's media at most: past it no server takes the request and the client cannot hold many. */
export const MAX_MEDIA_PER_REQUEST_BYTES = 256 * 1024 * 1024

/** Base64 makes 4 characters of every 3 bytes. */
const BASE64 = 4 / 3

/** An upper bound on one prompt's encoded media, bytes: PNG of noise does not deflate below its pixels; WAV is 16-bit mono. */
export function mediaBytesPerPrompt(images: ImageSpec | null, audio: AudioSpec | null): number {
  const imageBytes = images === null ? 0 : images.count * (images.width * 3 + 1) * images.height
  const audioBytes = audio === null ? 0 : audio.count * Math.ceil(audio.seconds * WAV_SAMPLE_RATE) * 2
  return Math.ceil((imageBytes + audioBytes) * BASE64)
}

export interface MediaBudget {
  /** The distinct prompts the run builds bodies for. */
  distinct: number
  /** Their media in all, bytes (an upper bound). */
  bytes: number
  /** The plan's line: what is held; null without media. */
  note: string | null
}

/** The distinct prompts for `wanted` of them with the workload's media; throws RangeError for a body too large. */
export function mediaBudget(
  workload: { images: string | null; audio: string | null },
  wanted: number,
): MediaBudget {
  const images = workload.images === null ? null : parseImageSpec(workload.images)
  const audio = workload.audio === null ? null : parseAudioSpec(workload.audio)
  const perPrompt = mediaBytesPerPrompt(images, audio)
  if (perPrompt === 0) return { distinct: wanted, bytes: 0, note: null }
  const flags = [
    workload.images === null ? null : `--images ${workload.images}`,
    workload.audio === null ? null : `--audio ${workload.audio}`,
  ]
    .filter((flag) => flag !== null)
    .join(' ')
  if (perPrompt > MAX_MEDIA_PER_REQUEST_BYTES)
    throw new RangeError(
      `${flags}: one request would carry about ${megabytes(perPrompt)} of media; at most ${megabytes(MAX_MEDIA_PER_REQUEST_BYTES)}: use fewer or smaller images or clips`,
    )
  const distinct = Math.max(1, Math.min(wanted, Math.floor(MEDIA_BODIES_BUDGET_BYTES / perPrompt)))
  const bytes = distinct * perPrompt
  const shared = distinct < wanted ? `, reused in turn past them` : ''
  return {
    distinct,
    bytes,
    note: `media: ${flags}: ${distinct} distinct prompts of up to ${megabytes(perPrompt)} each${shared}: up to ${megabytes(bytes)} of bodies, held by each load thread`,
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`
}
