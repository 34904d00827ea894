import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { inflateSync, crc32 as zlibCrc32 } from 'node:zlib'
import { chatImagePart, promptImage } from '../../src/protocols/prompt-images.js'
import { DEFAULT_IMAGE_PATCH_PX, imageTokens, imageTokensOfSize } from '../../src/sim/image-tokens.js'
import { imageSize } from '../../src/workload/image-size.js'
import { crc32, encodePng, syntheticPng } from '../../src/workload/synthetic-png.js'

/** The chunks of a PNG file: type, data, and whether the stored CRC matches. */
function chunks(png: Buffer): { type: string; data: Buffer; crcOk: boolean }[] {
  const found = []
  let at = 8
  while (at < png.length) {
    const length = png.readUInt32BE(at)
    const type = png.subarray(at + 4, at + 8).toString('latin1')
    const data = png.subarray(at + 8, at + 8 + length)
    const stored = png.readUInt32BE(at + 8 + length)
    found.push({ type, data, crcOk: stored === crc32(png.subarray(at + 4, at + 8 + length)) })
    at += 12 + length
  }
  return found
}

test('crc32 agrees with zlib on text and on bytes', () => {
  for (const text of ['', 'IEND', 'The quick brown fox'])
    assert.equal(crc32(Buffer.from(text)), zlibCrc32(text))
  assert.equal(crc32(Buffer.from('IEND')), 0xae426082) // the CRC every PNG's IEND carries
})

test('a PNG decodes back: signature, IHDR, one IDAT that inflates to the pixels, IEND, CRCs sound', () => {
  const rgb = new Uint8Array([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30])
  const png = encodePng(2, 2, rgb)
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const parts = chunks(png)
  assert.deepEqual(
    parts.map((c) => c.type),
    ['IHDR', 'IDAT', 'IEND'],
  )
  assert.ok(parts.every((c) => c.crcOk))
  const ihdr = parts[0]?.data as Buffer
  assert.equal(ihdr.readUInt32BE(0), 2)
  assert.equal(ihdr.readUInt32BE(4), 2)
  assert.deepEqual([...ihdr.subarray(8)], [8, 2, 0, 0, 0])
  const raw = inflateSync(parts[1]?.data as Buffer)
  assert.deepEqual([...raw], [0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 10, 20, 30])
})

test('synthetic PNGs are the same for a seed, differ across seeds, and do not compress like flat colour', () => {
  const a = syntheticPng(64, 48, 7)
  assert.deepEqual(a, syntheticPng(64, 48, 7))
  assert.notDeepEqual(a, syntheticPng(64, 48, 8))
  const flat = encodePng(64, 48, new Uint8Array(64 * 48 * 3).fill(128))
  // Photo-like: deflate keeps at least a third of the raw bytes; a flat image shrinks to almost none.
  assert.ok(a.length > (64 * 48 * 3) / 3, `synthetic PNG is ${a.length} bytes`)
  assert.ok(flat.length * 10 < a.length)
})

test('imageSize reads width and height from a PNG header and a JPEG frame header', () => {
  assert.deepEqual(imageSize(syntheticPng(30, 17, 1)), { format: 'png', width: 30, height: 17 })
  // A minimal JPEG: SOI, an APP0 segment, then SOF0 with height 480, width 640.
  const jpeg = Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80,
    0x03,
  ])
  assert.deepEqual(imageSize(jpeg), { format: 'jpeg', width: 640, height: 480 })
  assert.equal(imageSize(Buffer.from('not an image')), undefined)
})

test('the sim charges ceil(h/28)·ceil(w/28) tokens per image, whatever the protocol part', () => {
  assert.equal(DEFAULT_IMAGE_PATCH_PX, 28)
  assert.equal(imageTokensOfSize(28, 28, 28), 1)
  assert.equal(imageTokensOfSize(29, 28, 28), 2)
  assert.equal(imageTokensOfSize(448, 448, 28), 256)
  const image = promptImage('image/png', syntheticPng(100, 60, 3)) // 4 × 3 patches
  const chat = [
    { role: 'user', content: [{ type: 'text', text: 'hi' }, chatImagePart(image), chatImagePart(image)] },
  ]
  assert.equal(imageTokens(chat, 28), 24)
  const responses = [{ role: 'user', content: [{ type: 'input_image', image_url: image.url }] }]
  assert.equal(imageTokens(responses, 14), 8 * 5)
  const messages = [
    {
      role: 'user',
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: image.base64 } }],
    },
  ]
  assert.equal(imageTokens(messages, 28), 12)
  assert.match(
    String(
      imageTokens([{ role: 'user', content: [chatImagePart({ ...image, url: 'https://x/y.png' })] }], 28),
    ),
    /data URI/,
  )
})

test('a real decoder reads the synthetic PNG (python3 with PIL; skipped without it)', (t) => {
  // Debian's python3-pil lands in /usr/bin/python3, which a pyenv python3 on PATH may shadow.
  const python = ['python3', '/usr/bin/python3'].find((candidate) => {
    try {
      execFileSync(candidate, ['-c', 'import PIL'], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })
  if (python === undefined) {
    t.skip('no python3 with PIL (Debian: apt-get install python3-pil)')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-png-'))
  try {
    const path = join(dir, 'image.png')
    writeFileSync(path, syntheticPng(33, 21, 5))
    const out = execFileSync(python, [
      '-c',
      'import sys; from PIL import Image; im = Image.open(sys.argv[1]); im.load(); print(im.size[0], im.size[1], im.mode, im.getpixel((0, 0)))',
      path,
    ]).toString()
    assert.match(out, /^33 21 RGB \(/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
