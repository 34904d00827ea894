import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  MEDIA_BODIES_BUDGET_BYTES,
  mediaBudget,
  mediaBytesPerPrompt,
} from '../../src/workload/media-budget.js'
import { promptImageSet } from '../../src/workload/prompt-image-set.js'

test('bodies with images or audio are sized to a budget: --images 8x2048x2048 held one body, not hundreds (issue 36)', () => {
  const big = mediaBudget({ images: '8x2048x2048', audio: null }, 512)
  assert.equal(big.distinct, 1)
  assert.ok(big.bytes <= MEDIA_BODIES_BUDGET_BYTES)
  assert.match(
    big.note ?? '',
    /--images 8x2048x2048: 1 distinct prompts of up to 128 MB each, reused in turn/,
  )
  const clips = mediaBudget({ images: null, audio: '4x600' }, 512)
  assert.ok(
    clips.distinct * mediaBytesPerPrompt(null, { count: 4, seconds: 600 }) <= MEDIA_BODIES_BUDGET_BYTES,
  )
  assert.ok(clips.distinct >= 1 && clips.distinct < 512)
  // Small media: every prompt its own, as before; none: untouched and said nothing.
  assert.equal(mediaBudget({ images: '1x64x64', audio: null }, 200).distinct, 200)
  assert.deepEqual(mediaBudget({ images: null, audio: null }, 300), { distinct: 300, bytes: 0, note: null })
  // One request past what any server takes is refused, naming the flag.
  assert.throws(
    () => mediaBudget({ images: '16x4096x4096', audio: null }, 10),
    /--images 16x4096x4096: one request would carry about/,
  )
})

test('the bound is an upper bound on what a prompt carries: a PNG of noise does not encode larger', () => {
  const set = promptImageSet({ count: 2, width: 96, height: 64 }, 1, 7)
  const encoded = set.of(0).reduce((sum, image) => sum + image.base64.length, 0)
  assert.ok(encoded <= mediaBytesPerPrompt({ count: 2, width: 96, height: 64 }, null), `${encoded}`)
})
