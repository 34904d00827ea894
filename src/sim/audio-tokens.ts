import { wavSeconds } from '../workload/synthetic-wav.js'
import { contentParts } from './image-tokens.js'

/**
 * What the simulator charges for chat `input_audio` parts: ceil(seconds × tokens per second) each,
 * the seconds read from the WAV's own header, as an audio encoder turns a clip into a fixed number of
 * frames a second. Default 25 a second: Qwen2-Audio (Whisper's 50 frames a second, pooled by 2).
 */
export const DEFAULT_AUDIO_TOKENS_PER_S = 25

/** The prompt tokens the messages' audio parts cost; a clip it cannot read is an error message. */
export function audioTokens(messages: unknown, tokensPerS: number): number | string {
  let tokens = 0
  for (const part of contentParts(messages)) {
    const p = part as { type?: unknown; input_audio?: { data?: unknown; format?: unknown } } | null
    if (p?.type !== 'input_audio') continue
    const data = p.input_audio?.data
    if (typeof data !== 'string' || p.input_audio?.format !== 'wav')
      return 'the simulator reads only input_audio parts of base64 WAV (format "wav")'
    // The header is at the start: 64 base64 characters hold its 48 bytes.
    const seconds =
      wavSeconds(Buffer.from(data.slice(0, 64), 'base64')) ?? wavSeconds(Buffer.from(data, 'base64'))
    if (seconds === null) return 'an input_audio part is not a WAV file'
    tokens += Math.ceil(seconds * tokensPerS)
  }
  return tokens
}
