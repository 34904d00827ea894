import assert from 'node:assert/strict'
import { test } from 'node:test'
import { imageTokensOfSize } from '../../src/sim/image-tokens.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

/**
 * A run with --images 2x224x280: every request carries two PNGs, which the simulator charges
 * ceil(224/28)·ceil(280/28) = 80 tokens each, so the server counts 160 input tokens beyond the text's.
 */
test('--images: every request carries its images, and the server counts their tokens beside the text', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({
    slots: 4,
    prefill_base_ms: 5,
    prefill_ms_per_token: 0.01,
    decode_base_ms: 5,
  })
  try {
    // The same prompts with and without images: the server's count differs by the images' tokens.
    const serverInput = async (images: string | null): Promise<number[]> => {
      const out = tempDir()
      const config = testConfig(sim.url, SIM_MODEL, {
        levels: [1, 2],
        requests: 6,
        out_dir: out,
        calibrate: true,
      })
      config.workload.images = images
      const result = await runToResult(config, out)
      if (images !== null)
        assert.match(result.meta.workload.dataset ?? '', /2 synthetic 224x280 PNG images per prompt/)
      return result.levels.map((level) => {
        assert.equal(level.success_rate, 1)
        const input = level.input
        if (images === null) assert.equal(input.image_tokens_mean, undefined, 'no image share without images')
        else {
          // The run says the images' share itself: the server's count over the text's, per request.
          // Within the calibration's own error: a calibrated prompt may miss its length by a token.
          const imageTokens = input.image_tokens_mean ?? Number.NaN
          assert.ok(Math.abs(imageTokens - 160) <= 2, `${imageTokens} image tokens per request, 160 sent`)
          assert.equal(input.image_share, Math.round((imageTokens / (input.server_mean ?? 1)) * 1e4) / 1e4)
        }
        return input.server_mean as number
      })
    }
    const plain = await serverInput(null)
    const withImages = await serverInput('2x224x280')
    const perImage = imageTokensOfSize(224, 280, 28)
    assert.equal(perImage, 80)
    assert.deepEqual(
      withImages.map((mean, i) => Math.round((mean - (plain[i] as number)) * 10) / 10),
      [2 * perImage, 2 * perImage],
    )
  } finally {
    await sim.close()
  }
})
