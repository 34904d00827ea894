import assert from 'node:assert/strict'
import { test } from 'node:test'
import { collectGarbage } from '../../src/report/collect-garbage.js'
import { toPng } from '../../src/report/render-folder.js'

/** 1000×1000, drawn at twice its size: each PNG's pixels are 2000 × 2000 × 4 bytes = 16 MB of native memory. */
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="1000"><rect width="1000" height="1000" fill="#4c78a8"/></svg>'
const PIXELS_MB = 16
const DRAWINGS = 8

const rssMb = (): number => process.memoryUsage.rss() / 1048576

test('PNGs drawn one after another do not pile up in memory when garbage is collected between them', async () => {
  // The first drawing loads resvg's addon and the system fonts: the baseline is taken after it.
  toPng(SVG, false)
  await collectGarbage()
  const before = rssMb()
  let peak = before
  for (let i = 0; i < DRAWINGS; i++) {
    assert.ok(toPng(SVG, false).length > 0)
    peak = Math.max(peak, rssMb())
    await collectGarbage()
  }
  // Without the collection every drawing's pixels stay resident: 8 × 16 MB = 128 MB more.
  const grown = peak - before
  assert.ok(
    grown < 3 * PIXELS_MB,
    `RSS grew ${grown.toFixed(0)} MB over ${DRAWINGS} drawings of ${PIXELS_MB} MB each`,
  )
})
