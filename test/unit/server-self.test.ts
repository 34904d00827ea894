import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { slotsBesideKnee } from '../../src/result/server-self.js'
import { contextWarning } from '../../src/run/setup/context-warning.js'
import { describeServer } from '../../src/run/setup/server-self-parse.js'
import { ENGINE_FIXTURE_DIR, LLAMACPP_KIT_SELF } from '../helpers/fixtures.js'

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(`${ENGINE_FIXTURE_DIR}${name}`, 'utf8'))
}

const NONE = { props: null, slots: null, models: null, serverInfo: null }

// Figures read off the files (test/fixtures/engines/README.md says where each comes from).
test('llama.cpp kit: /props, /slots and /v1/models of a 4-slot server with 1024 tokens per slot', () => {
  const server = describeServer(
    {
      props: fixture('llamacpp_props.json'),
      slots: fixture('llamacpp_slots_busy.json'),
      models: fixture('llamacpp_models.json'),
      serverInfo: null,
    },
    'x',
  )
  assert.deepEqual(server, LLAMACPP_KIT_SELF)
})

test('llama.cpp: /props alone (the documented example, 1 slot), and /slots alone', () => {
  const props = describeServer({ ...NONE, props: fixture('llamacpp-props-doc-example.json') }, null)
  assert.equal(props?.slots, 1)
  assert.equal(props?.context_per_slot, 1024)
  const slots = describeServer({ ...NONE, slots: fixture('llamacpp_slots_busy.json') }, null)
  assert.deepEqual([slots?.engine, slots?.slots, slots?.context_per_slot], ['llama.cpp', 4, 1024])
  // /v1/models alone names the engine by its owner, without slots.
  const models = describeServer({ ...NONE, models: fixture('llamacpp_models.json') }, null)
  assert.deepEqual([models?.engine, models?.slots, models?.max_model_len], ['llama.cpp', null, null])
})

test('vLLM /v1/models: max_model_len 16384 of the served model', () => {
  const server = describeServer(
    { ...NONE, models: fixture('vllm-v1-models-max-model-len.json') },
    'phi-3.5-mini-instruct',
  )
  assert.deepEqual(server, {
    engine: 'vllm',
    slots: null,
    context_per_slot: null,
    max_model_len: 16384,
    answered: ['/v1/models'],
  })
})

test('SGLang /get_server_info: max_running_requests 128; its context_length is null there', () => {
  const server = describeServer({ ...NONE, serverInfo: fixture('sglang-get-server-info.json') }, null)
  assert.deepEqual(server, {
    engine: 'sglang',
    slots: 128,
    context_per_slot: null,
    max_model_len: null,
    answered: ['/get_server_info'],
  })
})

test('nothing answered, or answers of another shape: unknown, never an error', () => {
  assert.equal(describeServer(NONE, null), null)
  const odd = describeServer({ props: 'x', slots: [1, 2], models: { data: 'no' }, serverInfo: [] }, null)
  assert.deepEqual(odd, {
    engine: null,
    slots: null,
    context_per_slot: null,
    max_model_len: null,
    answered: ['/props', '/slots', '/v1/models', '/get_server_info'],
  })
})

test('figures past any real server (1e308) are unknown, as -1 is; the bounds themselves are kept', () => {
  const answers = (slots: number, context: number) => ({
    props: { total_slots: slots, default_generation_settings: { n_ctx: context } },
    slots: null,
    models: { data: [{ id: 'm', owned_by: 'vllm', max_model_len: context }] },
    serverInfo: { max_total_num_tokens: 1, max_running_requests: slots, context_length: context },
  })
  const figures = (server: ReturnType<typeof describeServer>) => [
    server?.slots,
    server?.context_per_slot,
    server?.max_model_len,
  ]
  assert.deepEqual(figures(describeServer(answers(1e308, 1e308), 'm')), [null, null, null])
  assert.deepEqual(figures(describeServer(answers(-1, -1), 'm')), [null, null, null])
  assert.deepEqual(figures(describeServer(answers(65_537, 100_000_001), 'm')), [null, null, null])
  assert.deepEqual(
    figures(describeServer(answers(65_536, 100_000_000), 'm')),
    [65_536, 100_000_000, 100_000_000],
  )
  // SGLang alone: its max_running_requests and context_length are bounded the same way.
  const sglang = (value: number) =>
    describeServer({ ...NONE, serverInfo: answers(value, value).serverInfo }, null)
  assert.deepEqual(figures(sglang(1e308)), [null, null, null])
  assert.deepEqual(figures(sglang(128)), [128, null, 128])
})

const prompt = (input: number, output: number) => ({
  body: Buffer.alloc(0),
  input_tokens: input,
  output_tokens: output,
})

test('context warning: the largest input + output against llama.cpp context per slot, naming what to change', () => {
  const server = describeServer(
    { ...NONE, props: fixture('llamacpp_props.json'), slots: fixture('llamacpp_slots_busy.json') },
    null,
  )
  assert.equal(contextWarning(server, [prompt(500, 500), prompt(24, 1000)]), null, '1024 fits')
  const warning = contextWarning(server, [prompt(500, 500), prompt(700, 400), prompt(25, 1000)])
  assert.ok(warning !== null)
  assert.match(warning, /700 input \+ 400 output = 1100 tokens/)
  assert.match(warning, /context per slot, 1024 tokens \(its context split over 4 slots\)/)
  assert.match(warning, /-c ≥ 4400 \(1100 × 4 slots\)/)
  assert.match(warning, /--input-tokens or --output-tokens/)
})

test('context warning: vLLM max_model_len; silent when the server said nothing', () => {
  const vllm = describeServer({ ...NONE, models: fixture('vllm-v1-models-max-model-len.json') }, null)
  assert.equal(contextWarning(vllm, [prompt(16000, 384)]), null)
  const warning = contextWarning(vllm, [prompt(16000, 385)])
  assert.match(warning ?? '', /max_model_len, 16384 tokens/)
  assert.match(warning ?? '', /--max-model-len/)
  assert.equal(contextWarning(null, [prompt(1e6, 1e6)]), null)
})

test('slot count beside the knee', () => {
  const server = describeServer({ ...NONE, props: fixture('llamacpp_props.json') }, null)
  assert.equal(slotsBesideKnee(4, server), "knee at 4 = the server's 4 slots")
  assert.equal(slotsBesideKnee(8, server), 'the server reports 4 slots')
  assert.equal(slotsBesideKnee(4, null), null)
})
