/**
 * Synthetic PNG images for prompts that carry pictures. Written here rather than taken from a
 * library: a PNG is a signature and four chunks (IHDR, IDAT, IEND, each CRC32-sealed) around a
 * zlib stream, and node:zlib already deflates.
 */

import { deflateSync } from 'node:zlib'
import { seededRandom } from '../random.js'

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const BIT_DEPTH = 8
const COLOUR_TYPE_RGB = 2
const FILTER_NONE = 0

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 as PNG seals each chunk with it (ISO 3309, the same as zlib's crc32). */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/** One chunk: length, type, data, and the CRC of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typeAndData))
  return Buffer.concat([length, typeAndData, crc])
}

/** Encode 8-bit RGB pixels, row after row (width × height × 3 bytes), as a PNG file. */
export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`a PNG needs a whole positive width and height, not ${width}×${height}`)
  }
  const stride = width * 3
  if (rgb.length !== stride * height)
    throw new RangeError(`expected ${stride * height} RGB bytes, got ${rgb.length}`)
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.writeUInt8(BIT_DEPTH, 8)
  header.writeUInt8(COLOUR_TYPE_RGB, 9) // bytes 10-12: deflate, adaptive filtering, no interlace: all 0
  // Each scanline opens with its filter byte; "none" keeps the encoder small.
  const raw = Buffer.alloc((stride + 1) * height)
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = FILTER_NONE
    raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1)
  }
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/**
 * Pixels that compress like a photograph's: smooth gradients in each channel with noise on top,
 * so the encoded size (and what a server must decode) is not that of a flat colour, which deflate
 * shrinks to almost nothing. The same seed draws the same pixels.
 */
export function photoLikePixels(width: number, height: number, seed: number): Uint8Array {
  const random = seededRandom(seed)
  const phase = [random(), random(), random()].map((draw) => draw * Math.PI * 2)
  const rgb = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x / width
      const v = y / height
      for (let c = 0; c < 3; c++) {
        const gradient = 128 + 90 * Math.sin(2 * Math.PI * (u + (c + 1) * v * 0.7) + (phase[c] as number))
        const noise = (random() - 0.5) * 48
        rgb[(y * width + x) * 3 + c] = Math.max(0, Math.min(255, Math.round(gradient + noise)))
      }
    }
  }
  return rgb
}

/** A photo-like synthetic PNG of the given size, the same for the same seed. */
export function syntheticPng(width: number, height: number, seed: number): Buffer {
  return encodePng(width, height, photoLikePixels(width, height, seed))
}
