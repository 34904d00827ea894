import assert from 'node:assert/strict'
import { test } from 'node:test'
import { promptAudio } from '../../src/protocols/prompt-images.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { parseAudioSpec } from '../../src/workload/prompt-audio-set.js'
import { buildBody } from '../../src/workload/request-body.js'
import { syntheticWav, WAV_SAMPLE_RATE, wavSeconds } from '../../src/workload/synthetic-wav.js'
import { configErrorMessage } from '../helpers/config-error.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

/**
 * --audio: seeded speech-like WAV clips as chat `input_audio` parts. The simulator charges
 * ceil(seconds × 25) prompt tokens a clip (Qwen2-Audio's rate), read from the WAV's own header, so a
 * run with --audio 2x1.5 counts 2 × 38 = 76 input tokens a request beyond the same run without.
 */
test('a WAV says its own length; its samples are speech-like: sound and silence, seeded', () => {
  const wav = syntheticWav(1.5, 7)
  assert.equal(wav.byteLength, 44 + 1.5 * WAV_SAMPLE_RATE * 2)
  assert.equal(wavSeconds(wav), 1.5)
  assert.deepEqual(syntheticWav(1.5, 7), wav, 'the same seed draws the same clip')
  const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.byteLength))
  const silent = pcm.filter((sample) => sample === 0).length / pcm.length
  assert.ok(silent > 0.1 && silent < 0.7, `${silent} of the samples silent`)
  assert.equal(wavSeconds(Buffer.from('not a wav file at all')), null)
  assert.deepEqual(parseAudioSpec('2x1.5'), { count: 2, seconds: 1.5 })
  assert.equal(parseAudioSpec('0x5'), null)
})

test('a clip goes in the last user turn as an input_audio part; other protocols are refused', () => {
  const clip = promptAudio(syntheticWav(0.5, 1))
  const body = JSON.parse(
    String(
      buildBody(
        { model: 'm', endpoint: '/v1/chat/completions', stream: true },
        'Transcribe this.',
        8,
        [],
        [clip],
      ),
    ),
  )
  assert.deepEqual(body.messages[0].content[1], {
    type: 'input_audio',
    input_audio: { data: clip.base64, format: 'wav' },
  })
  assert.throws(
    () =>
      buildBody(
        { model: 'm', endpoint: '/v1/responses', protocol: 'responses', stream: true },
        'x',
        8,
        [],
        [clip],
      ),
    /no audio parts/,
  )
  assert.match(
    configErrorMessage([], { base_url: 'http://a.test', model: 'm', audio: '1x5', protocol: 'completions' }),
    /expected audio with the chat protocol/,
  )
  assert.match(
    configErrorMessage([], { base_url: 'http://a.test', model: 'm', audio: '1x5s' }),
    /COUNTxSECONDS/,
  )
})

test('the simulator counts each clip at 25 tokens a second: 2 clips of 1.5 s are 76 more input tokens', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({
    slots: 4,
    prefill_base_ms: 5,
    prefill_ms_per_token: 0,
    decode_base_ms: 5,
  })
  try {
    const serverInput = async (audio: string | null): Promise<number[]> => {
      const out = tempDir()
      const config = testConfig(sim.url, SIM_MODEL, { levels: [1, 2], requests: 6, out_dir: out })
      config.workload.audio = audio
      const result = await runToResult(config, out)
      if (audio !== null) {
        assert.match(result.meta.workload.dataset, /2 synthetic 1.5 s WAV clips per prompt/)
        assert.equal(result.meta.workload.audio, audio)
      }
      return result.levels.map((level) => {
        assert.equal(level.success_rate, 1)
        return level.input.server_mean as number
      })
    }
    const plain = await serverInput(null)
    const withAudio = await serverInput('2x1.5')
    assert.deepEqual(
      withAudio.map((mean, i) => Math.round((mean - (plain[i] as number)) * 10) / 10),
      [2 * Math.ceil(1.5 * 25), 2 * Math.ceil(1.5 * 25)],
    )
  } finally {
    await sim.close()
  }
})
