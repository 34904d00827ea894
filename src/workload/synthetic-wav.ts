import { seededRandom } from '../random.js'

/**
 * A seeded, speech-like WAV for --audio: 16 kHz mono 16-bit PCM, bursts of shaped noise (syllables of
 * 120–300 ms) between short pauses, so an encoder sees the sound and silence of speech rather than
 * constant noise or a tone. Written by hand: the RIFF header is 44 bytes.
 */

export const WAV_SAMPLE_RATE = 16_000

export function syntheticWav(seconds: number, seed: number): Buffer {
  const samples = Math.max(1, Math.round(seconds * WAV_SAMPLE_RATE))
  const random = seededRandom(seed * 7 + 3)
  const pcm = new Int16Array(samples)
  let at = 0
  while (at < samples) {
    const syllable = Math.round((0.12 + random() * 0.18) * WAV_SAMPLE_RATE)
    const pause = Math.round((0.04 + random() * 0.16) * WAV_SAMPLE_RATE)
    const loudness = 3000 + random() * 9000
    // A voiced-like carrier (100-250 Hz) under the noise, both under a sine envelope.
    const pitch = 100 + random() * 150
    for (let i = 0; i < syllable && at + i < samples; i++) {
      const envelope = Math.sin((Math.PI * i) / syllable)
      const carrier = Math.sin((2 * Math.PI * pitch * i) / WAV_SAMPLE_RATE)
      const noise = random() * 2 - 1
      pcm[at + i] = Math.round(loudness * envelope * (0.6 * carrier + 0.4 * noise))
    }
    at += syllable + pause
  }
  const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)
  const header = Buffer.alloc(44)
  header.write('RIFF', 0, 'ascii')
  header.writeUInt32LE(36 + data.byteLength, 4)
  header.write('WAVE', 8, 'ascii')
  header.write('fmt ', 12, 'ascii')
  header.writeUInt32LE(16, 16) // PCM format chunk size
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(1, 22) // mono
  header.writeUInt32LE(WAV_SAMPLE_RATE, 24)
  header.writeUInt32LE(WAV_SAMPLE_RATE * 2, 28) // byte rate
  header.writeUInt16LE(2, 32) // block align
  header.writeUInt16LE(16, 34) // bits per sample
  header.write('data', 36, 'ascii')
  header.writeUInt32LE(data.byteLength, 40)
  return Buffer.concat([header, data])
}

/** A WAV's duration in seconds from its own header (fmt byte rate, data size); null when it is not one. */
export function wavSeconds(bytes: Uint8Array): number | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (
    buffer.length < 12 ||
    buffer.toString('ascii', 0, 4) !== 'RIFF' ||
    buffer.toString('ascii', 8, 12) !== 'WAVE'
  )
    return null
  let byteRate: number | null = null
  let at = 12
  while (at + 8 <= buffer.length) {
    const id = buffer.toString('ascii', at, at + 4)
    const size = buffer.readUInt32LE(at + 4)
    if (id === 'fmt ' && at + 20 <= buffer.length) byteRate = buffer.readUInt32LE(at + 16)
    if (id === 'data') return byteRate !== null && byteRate > 0 ? size / byteRate : null
    at += 8 + size + (size % 2)
  }
  return null
}
