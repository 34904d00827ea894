/**
 * An image's width and height from its header alone, for PNG and JPEG: what a server needs to
 * charge image tokens by size (the simulator does), without decoding a pixel.
 */

export type ImageFormat = 'png' | 'jpeg'

export interface ImageSize {
  format: ImageFormat
  width: number
  height: number
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

/** The size in a PNG's IHDR or a JPEG's start-of-frame marker; undefined for anything else. */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  return pngSize(bytes) ?? jpegSize(bytes)
}

function pngSize(bytes: Uint8Array): ImageSize | undefined {
  if (bytes.length < 24 || PNG_SIGNATURE.some((byte, i) => bytes[i] !== byte)) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  // IHDR is the first chunk: length (4), "IHDR" (4), then width and height.
  if (String.fromCharCode(...bytes.subarray(12, 16)) !== 'IHDR') return undefined
  return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
}

/** Walk the JPEG's markers to the first start-of-frame (SOF0-SOF15 but DHT, JPG and DAC). */
function jpegSize(bytes: Uint8Array): ImageSize | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = 2
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined
    const marker = bytes[at + 1] as number
    if (marker === 0xff) {
      at += 1 // fill byte
      continue
    }
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) {
      if (at + 9 > bytes.length) return undefined
      return { format: 'jpeg', height: view.getUint16(at + 5), width: view.getUint16(at + 7) }
    }
    at += 2 + view.getUint16(at + 2)
  }
  return undefined
}
