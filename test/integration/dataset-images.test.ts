import assert from 'node:assert/strict'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SIM_MODEL } from '../../src/sim/server.js'
import { DatasetError, loadDataset } from '../../src/workload/dataset.js'
import { imageMediaType } from '../../src/workload/dataset-images.js'
import { buildBody } from '../../src/workload/request-body.js'
import { syntheticPng } from '../../src/workload/synthetic-png.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

/**
 * Dataset rows with images of their own: real files (a JPEG and a WebP from CPython's test data,
 * test/fixtures/images/README.md; a PNG written by our encoder) and URLs. Files are read once and sent
 * inline with the media type their bytes say; URLs pass through; a missing or foreign file is
 * refused naming the dataset, the line and the image.
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/images/', import.meta.url))
const count = (text: string): number => text.split(/\s+/).length

function datasetDir(): string {
  const dir = tempDir()
  copyFileSync(join(FIXTURES, 'python.jpg'), join(dir, 'python.jpg'))
  copyFileSync(join(FIXTURES, 'python.webp'), join(dir, 'python.webp'))
  writeFileSync(join(dir, 'chart.png'), syntheticPng(56, 56, 1))
  return dir
}

test('media types come from the bytes: PNG, JPEG, WebP; anything else is none', () => {
  const dir = datasetDir()
  assert.equal(imageMediaType(readFileSync(join(dir, 'chart.png'))), 'image/png')
  assert.equal(imageMediaType(readFileSync(join(dir, 'python.jpg'))), 'image/jpeg')
  assert.equal(imageMediaType(readFileSync(join(dir, 'python.webp'))), 'image/webp')
  assert.equal(imageMediaType(Buffer.from('%PDF-1.7')), null)
})

test("a row's files are read once and sent inline, its URLs as they are, in the protocol's parts", () => {
  const dir = datasetDir()
  const path = join(dir, 'rows.jsonl')
  writeFileSync(
    path,
    `${[
      { prompt: 'What is in the logo?', images: ['python.jpg', 'https://example.test/cat.png'] },
      { prompt: 'And this one?', images: ['python.jpg'] },
      { prompt: 'No image here.' },
    ]
      .map((row) => JSON.stringify(row))
      .join('\n')}\n`,
  )
  const dataset = loadDataset(path, count)
  const [first, second, third] = dataset.entries
  assert.equal(first?.images?.length, 2)
  assert.equal(third?.images, undefined)
  assert.equal(first?.images?.[0], second?.images?.[0], 'the same file is read and encoded once')
  const body = JSON.parse(
    String(
      buildBody(
        { model: 'm', endpoint: '/v1/chat/completions', stream: true },
        first?.messages ?? '',
        8,
        first?.images,
      ),
    ),
  )
  const parts = body.messages.at(-1).content
  assert.equal(parts[0].type, 'text')
  assert.match(parts[1].image_url.url, /^data:image\/jpeg;base64,\/9j\//)
  assert.equal(parts[2].image_url.url, 'https://example.test/cat.png')
  const messages = JSON.parse(
    String(
      buildBody(
        { model: 'm', endpoint: '/v1/messages', stream: true },
        first?.messages ?? '',
        8,
        first?.images,
      ),
    ),
  )
  assert.equal(messages.messages.at(-1).content[1].source.media_type, 'image/jpeg')
  assert.deepEqual(messages.messages.at(-1).content[2].source, {
    type: 'url',
    url: 'https://example.test/cat.png',
  })
})

test('a missing or foreign image file is refused naming the dataset, the line and the image', () => {
  const dir = datasetDir()
  writeFileSync(join(dir, 'notes.txt'), 'not an image')
  const path = join(dir, 'rows.jsonl')
  writeFileSync(
    path,
    `${JSON.stringify({ prompt: 'a', images: ['gone.png'] })}\n${JSON.stringify({ prompt: 'b', images: ['notes.txt'] })}\n${JSON.stringify({ prompt: 'c', images: 'x.png' })}\n`,
  )
  assert.throws(
    () => loadDataset(path, count),
    (error: unknown) => {
      assert.ok(error instanceof DatasetError)
      assert.match(error.message, /rows\.jsonl:1: image "gone\.png": no file .*gone\.png/)
      assert.match(error.message, /rows\.jsonl:2: image "notes\.txt": not a PNG, JPEG, GIF or WebP file/)
      assert.match(
        error.message,
        /rows\.jsonl:3: "images": expected a non-empty list of file paths or http\(s\) URLs/,
      )
      return true
    },
  )
})

test("the server counts a row's images in its input: a 16x16 JPEG and a 56x56 PNG cost the simulator 1 + 4 tokens", {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({
    slots: 4,
    prefill_base_ms: 5,
    prefill_ms_per_token: 0,
    decode_base_ms: 5,
  })
  const dir = datasetDir()
  try {
    const serverInput = async (images: boolean): Promise<number | null> => {
      const path = join(dir, `rows-${images}.jsonl`)
      const rows = ['Describe the logo.', 'Describe the chart.', 'Compare them.']
      writeFileSync(
        path,
        `${rows.map((prompt) => JSON.stringify({ prompt, ...(images ? { images: ['python.jpg', 'chart.png'] } : {}) })).join('\n')}\n`,
      )
      const out = tempDir()
      const config = testConfig(sim.url, SIM_MODEL, { levels: [1], requests: 6, out_dir: out })
      config.workload.dataset = path
      config.workload.input = { kind: 'dataset' }
      const result = await runToResult(config, out)
      if (images) {
        assert.match(result.meta.workload.dataset, /3 rows with images of their own/)
        assert.equal(result.meta.workload.images, 'dataset')
      }
      return result.levels[0]?.input.server_mean ?? null
    }
    const plain = await serverInput(false)
    const withImages = await serverInput(true)
    assert.ok(plain !== null && withImages !== null)
    assert.equal(Math.round((withImages - plain) * 10) / 10, 1 + 4)
  } finally {
    await sim.close()
  }
})
