/**
 * Compressed responses. llmbench asks for `accept-encoding: identity`, but some proxies compress an
 * event stream anyway (`Content-Encoding: gzip`). The dispatch API (the h1 client's, or undici's) hands us the raw bytes, which an
 * SSE parser reads as garbage ("stream ended without [DONE]"), so they are decoded here, as they arrive.
 */
import {
  brotliDecompressSync,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzipSync,
  inflateSync,
} from 'node:zlib'

/** The encodings node:zlib decodes, by their Content-Encoding token. */
const DECODERS = {
  gzip: { stream: createGunzip, whole: gunzipSync },
  'x-gzip': { stream: createGunzip, whole: gunzipSync },
  deflate: { stream: createInflate, whole: inflateSync },
  br: { stream: createBrotliDecompress, whole: brotliDecompressSync },
} as const

export type ContentEncoding = keyof typeof DECODERS

/** `identity` (or none): null; a known encoding: its name; anything else (zstd...): { unsupported }. */
export function contentEncodingOf(
  value: string | string[] | undefined,
): ContentEncoding | { unsupported: string } | null {
  const text = (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().toLowerCase()
  if (text === '' || text === 'identity') return null
  return Object.hasOwn(DECODERS, text) ? (text as ContentEncoding) : { unsupported: text }
}

/** A whole (small) body decoded at once: error bodies and non-streamed JSON answers. */
export function decodeWhole(encoding: ContentEncoding, body: Buffer): Buffer {
  return DECODERS[encoding].whole(body)
}

/**
 * A compressed body decoded as it arrives. zlib decodes off the main thread, so the decoded bytes come
 * a moment later; each piece is handed on with the arrival time of the compressed read it came from
 * (zlib emits a write's output before that write's callback), so timestamps stay those of the wire.
 */
export class StreamDecoder {
  /** Arrival times of the reads zlib has not finished with, oldest first. */
  private readonly arrivals: number[] = []
  private lastArrival = 0
  private readonly zlib

  constructor(
    encoding: ContentEncoding,
    onData: (decoded: Buffer, at: number) => void,
    onError: (error: Error) => void,
  ) {
    this.zlib = DECODERS[encoding].stream()
    this.zlib.on('data', (decoded: Buffer) => onData(decoded, this.arrivals[0] ?? this.lastArrival))
    this.zlib.on('error', onError)
  }

  push(chunk: Buffer, at: number): void {
    this.arrivals.push(at)
    this.lastArrival = at
    this.zlib.write(chunk, () => this.arrivals.shift())
  }

  /** The body ended: `onEnd` runs once everything received is decoded (not on a decoding error). */
  end(onEnd: () => void): void {
    this.zlib.once('end', onEnd)
    this.zlib.end()
  }

  destroy(): void {
    this.zlib.destroy()
  }
}
