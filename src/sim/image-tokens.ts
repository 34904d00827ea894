/**
 * Image tokens as a vision model's server counts them: one token per merged patch, Qwen2-VL's
 * rule (28 × 28 px after its 2 × 2 merge of 14-px ViT patches): ceil(height / 28) · ceil(width / 28).
 * The simulator reads each image's size from its header only (image-size.ts), never its pixels.
 */

import { imageSize } from '../workload/image-size.js'

/** The side of one merged patch in pixels: Qwen2-VL's 28 by default. */
export const DEFAULT_IMAGE_PATCH_PX = 28

/** Tokens one image of this size costs: one per patch, a partial patch counting whole. */
export function imageTokensOfSize(width: number, height: number, patchPx: number): number {
  return Math.ceil(height / patchPx) * Math.ceil(width / patchPx)
}

/**
 * The image tokens of a request's messages: the image parts of every protocol the simulator
 * speaks (chat `image_url`, Responses `input_image`, Messages `image` with a base64 source).
 * An image it cannot size (a URL it will not fetch, bytes no header names) is an error message.
 */
export function imageTokens(messages: unknown, patchPx: number): number | string {
  let tokens = 0
  for (const part of contentParts(messages)) {
    const base64 = imageBase64(part)
    if (base64 === undefined) continue
    if (base64.startsWith('!')) return base64.slice(1)
    // Only the header is read: decode the start, and the whole only if its header lies further in.
    const size =
      imageSize(Buffer.from(base64.slice(0, HEADER_BASE64_CHARS), 'base64')) ??
      imageSize(Buffer.from(base64, 'base64'))
    if (size === undefined) return 'an image part is neither a PNG nor a JPEG'
    tokens += imageTokensOfSize(size.width, size.height, patchPx)
  }
  return tokens
}

/** Every content part of every message whose content is a list of parts (text, images, audio). */
export function* contentParts(messages: unknown): Generator<unknown> {
  if (!Array.isArray(messages)) return
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content
    if (Array.isArray(content)) yield* content
  }
}

/** 64 KiB of bytes: past any PNG's IHDR and most JPEGs' frame header (EXIF may push it further). */
const HEADER_BASE64_CHARS = 87_384 // 21,846 whole base64 quanta: 65,538 bytes

/**
 * An image part's base64; undefined for a part that is no image; '!' and a sentence when it
 * cannot be read.
 */
function imageBase64(part: unknown): string | undefined {
  if (part === null || typeof part !== 'object') return undefined
  const p = part as Record<string, unknown>
  if (p.type === 'image_url') {
    const url = (p.image_url as { url?: unknown } | undefined)?.url
    return dataUriBase64(url)
  }
  if (p.type === 'input_image') return dataUriBase64(p.image_url)
  if (p.type === 'image') {
    const source = p.source as { type?: unknown; data?: unknown } | undefined
    if (source?.type !== 'base64' || typeof source.data !== 'string') {
      return '!the simulator reads only base64 image sources'
    }
    return source.data
  }
  return undefined
}

function dataUriBase64(url: unknown): string {
  if (typeof url !== 'string') return '!an image part has no URL'
  const match = /^data:[^;,]*;base64,/.exec(url)
  if (match === null) return '!the simulator fetches no image URLs: send images as base64 data URIs'
  return url.slice(match[0].length)
}
