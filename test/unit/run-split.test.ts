import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFlags } from '../../src/cli/setting-flags.js'
import { DEFAULTS, loadRunConfig } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import { modelBodies } from '../../src/run/setup/model-bodies.js'
import { resolveEndpoint } from '../../src/run/setup/resolve-endpoint.js'
import { isSplit, resolveTargets, splitMetaOf } from '../../src/run/setup/run-targets.js'
import { type LevelShare, shareOf } from '../../src/schedule/level-share.js'
import { type TargetWeights, targetShares } from '../../src/schedule/target-share.js'
import { planTargetSplit } from '../../src/schedule/target-split.js'
import { configErrorMessage } from '../helpers/config-error.js'

function weightsOf(weights: number[], seed = 1): TargetWeights {
  const plan = planTargetSplit(
    weights.map((weight, i) => ({ value: i, weight })),
    [{ value: 'm', weight: 1 }],
    seed,
  )
  return { weights, cycle: plan.cycle, offset: plan.offset }
}

function closedLevel(
  concurrency: number,
  requests: number,
  warmup = 0,
  startOffsets?: Float64Array,
): LevelShare {
  return {
    level: concurrency,
    warmup,
    retry: 0,
    window: null,
    load: { kind: 'closed', concurrency, requests, ...(startOffsets === undefined ? {} : { startOffsets }) },
  }
}

test('a closed level is split by weight into streams each target keeps, and the requests follow the streams', () => {
  const shares = targetShares(closedLevel(8, 40, 4), weightsOf([3, 1]))
  const loads = shares.map((share) => share.load)
  assert.deepEqual(
    loads.map((load) => (load.kind === 'closed' ? [load.concurrency, load.requests] : null)),
    [
      [6, 30],
      [2, 10],
    ],
  )
  assert.deepEqual(
    shares.map((share) => share.warmup),
    [3, 1],
  )
  // One stream over two targets: the first gets it, the second sits the level out.
  const one = targetShares(closedLevel(1, 10), weightsOf([1, 1])).map((share) =>
    share.load.kind === 'closed' ? share.load.concurrency : -1,
  )
  assert.deepEqual(one, [1, 0])
})

test('staggered first sends are dealt in turn, so each target starts spread over the stagger', () => {
  const offsets = Float64Array.from([0, 10, 20, 30, 40, 50])
  const shares = targetShares(closedLevel(6, 12, 0, offsets), weightsOf([1, 2]))
  const dealt = shares.map((share) =>
    share.load.kind === 'closed' ? [...(share.load.startOffsets ?? [])] : [],
  )
  assert.deepEqual(dealt, [
    [0, 20],
    [10, 30, 40, 50],
  ])
})

test('an open level deals every arrival to one target by the weighted cycle, interleaved, prompts alongside', () => {
  const offsets = Float64Array.from({ length: 300 }, (_, i) => i * 10)
  const promptIds = Float64Array.from({ length: 300 }, (_, i) => 1000 + i)
  const level: LevelShare = {
    level: 30,
    warmup: 0,
    retry: 0,
    window: null,
    load: { kind: 'open', offsets, maxInFlight: 9, timeoutMs: 1000, promptIds },
  }
  const shares = targetShares(level, weightsOf([2, 1]))
  const open = shares.map((share) => (share.load.kind === 'open' ? share.load : null))
  assert.deepEqual(
    open.map((load) => load?.offsets.length),
    [200, 100],
  )
  assert.deepEqual(
    open.map((load) => load?.maxInFlight),
    [6, 3],
  )
  // Every arrival exactly once, its prompt with it, each target's in time order.
  const all = open.flatMap((load) => [...(load?.offsets ?? [])]).sort((a, b) => a - b)
  assert.deepEqual(all, [...offsets])
  for (const load of open) {
    assert.ok(load !== null)
    for (let i = 0; i < load.offsets.length; i++) {
      assert.equal(load.promptIds?.[i], 1000 + (load.offsets[i] as number) / 10)
      if (i > 0) assert.ok((load.offsets[i] as number) > (load.offsets[i - 1] as number))
    }
  }
  // Interleaved: no 10 consecutive arrivals go to the lighter target.
  const lighter = new Set(open[1]?.offsets)
  let run = 0
  for (const offset of offsets) {
    run = lighter.has(offset) ? run + 1 : 0
    assert.ok(run < 3)
  }
  // Each target's share is then dealt over threads as any level is.
  const threads = [0, 1].map((i) => shareOf(shares[0] as LevelShare, i, 2))
  assert.equal(
    threads.reduce((sum, share) => sum + (share.load.kind === 'open' ? share.load.offsets.length : 0), 0),
    200,
  )
})

function splitConfig(patch: (config: RunConfig) => void): RunConfig {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.target.base_url = 'http://a.test:8000/v1'
  config.target.model = 'base'
  patch(config)
  return config
}

test('each target is the run endpoint at its own URL with its own model; weights multiply', () => {
  const config = splitConfig((c) => {
    c.target.more_base_urls = ['http://b.test:9000']
    c.target.endpoint_weights = [1, 3]
    c.target.more_models = ['lora-1']
  })
  const endpoint = resolveEndpoint(config, 'sk-secret')
  const split = resolveTargets(config, endpoint, {})
  assert.ok(isSplit(split))
  assert.deepEqual(
    split.targets.map((t) => [t.endpoint.url, t.endpoint.body.model, t.endpoint_index, t.model_index]),
    [
      ['http://a.test:8000/v1/chat/completions', 'base', 0, 0],
      ['http://a.test:8000/v1/chat/completions', 'lora-1', 0, 1],
      ['http://b.test:9000/v1/chat/completions', 'base', 1, 0],
      ['http://b.test:9000/v1/chat/completions', 'lora-1', 1, 1],
    ],
  )
  assert.deepEqual(split.weights.weights, [1, 1, 3, 3])
  // The key goes to every endpoint; the result's copy of the URLs holds none.
  assert.equal(split.targets[2]?.endpoint.headers.authorization, 'Bearer sk-secret')
  assert.equal(split.targets[2]?.endpoint.origin, 'http://b.test:9000')
  assert.ok(!JSON.stringify(splitMetaOf(split)).includes('sk-secret'))
  assert.equal(
    isSplit(
      resolveTargets(
        splitConfig(() => {}),
        endpoint,
        {},
      ),
    ),
    false,
  )
})

test("a model's bodies are the planned bodies with its id, nothing else changed", () => {
  const bodies = [
    Buffer.from(
      JSON.stringify({ model: 'base', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
    ),
  ]
  const [own, other] = modelBodies(bodies, ['base', 'lora-1'])
  assert.equal(own?.[0], bodies[0])
  assert.deepEqual(JSON.parse(String(other?.[0])), {
    model: 'lora-1',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 4,
  })
})

test('--base-url and --model repeated fill the lists; weights must match their counts', () => {
  const flags = configFlags({
    'base-url': ['http://a.test', 'http://b.test/'],
    model: ['m1', 'm2', 'm3'],
    'model-weights': '1,1,2',
  })
  const config = loadRunConfig({ configFiles: [], flags })
  assert.equal(config.target.base_url, 'http://a.test')
  assert.deepEqual(config.target.more_base_urls, ['http://b.test'])
  assert.deepEqual(config.target.more_models, ['m2', 'm3'])
  assert.deepEqual(config.target.model_weights, [1, 1, 2])
  const message = configErrorMessage([], { ...flags, endpoint_weights: [1, 2, 3] })
  assert.match(message, /one weight per endpoint/)
  const credentials = configErrorMessage(
    [],
    configFlags({ 'base-url': ['http://a.test', 'http://user:pw@b.test'], model: 'm' }),
  )
  assert.match(credentials, /without user:password@/)
  assert.ok(!credentials.includes('pw@'), credentials)
})

test('several endpoints are refused with sessions, a trace or a cache reset, naming the settings', () => {
  const message = configErrorMessage(
    [],
    configFlags({
      'base-url': ['http://a.test', 'http://b.test'],
      model: 'm',
      'reset-cache': 'before-level',
    }),
  )
  assert.match(message, /one endpoint and one model with sessions, a trace or reset_cache/)
})
