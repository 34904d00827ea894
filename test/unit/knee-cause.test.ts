import assert from 'node:assert/strict'
import { test } from 'node:test'
import { explainKnee, type LevelServerView } from '../../src/analysis/knee-cause.js'

function level(value: number, figures: Partial<LevelServerView> = {}): LevelServerView {
  return {
    value,
    client_ttft_p50_ms: 100,
    itl_p99_ms: 20,
    client_bound: false,
    server_ttft_p50_ms: null,
    queue_before_engine_p50_ms: null,
    running_max: null,
    running_mean: null,
    waiting_mean: null,
    in_flight_mean: null,
    kv_usage_max: null,
    preemptions: null,
    ...figures,
  }
}

test('no server figures: "not enough server data", not a guess', () => {
  const cause = explainKnee([level(4), level(8)], 4)
  assert.equal(cause.kind, 'no-server-data')
  assert.match(cause.evidence, /not enough server data/)
})

test('the client watching itself wins: a busy client explains the knee before any server figure', () => {
  const cause = explainKnee([level(4, { kv_usage_max: 1 }), level(8, { client_bound: true })], 4)
  assert.equal(cause.kind, 'client-bound')
})

test('KV cache full or preempting past the knee: kv-cache, with the memory setting', () => {
  const full = explainKnee([level(16, { kv_usage_max: 0.7 }), level(32, { kv_usage_max: 0.98 })], 16)
  assert.equal(full.kind, 'kv-cache')
  assert.match(full.evidence, /use up to 98%/)
  assert.match(full.setting, /gpu-memory-utilization/)
  const preempting = explainKnee([level(16, { kv_usage_max: 0.5 }), level(32, { preemptions: 3 })], 16)
  assert.equal(preempting.kind, 'kv-cache')
  assert.match(preempting.evidence, /3 preemption/)
})

test('the llama.cpp case: TTFT spent before the engine while its queue stays empty is the HTTP layer, not the engine', () => {
  const levels = [
    level(4, { client_ttft_p50_ms: 500, queue_before_engine_p50_ms: 40, running_max: 4, waiting_mean: 0 }),
    level(8, { client_ttft_p50_ms: 3000, queue_before_engine_p50_ms: 2500, running_max: 4, waiting_mean: 0 }),
  ]
  const cause = explainKnee(levels, 4, { slots: 4 })
  assert.equal(cause.kind, 'outside-scheduler')
  assert.match(
    cause.evidence,
    /2500 ms of the 3000 ms TTFT p50 is spent outside its scheduler while its own queue stayed empty \(waiting 0 on average\) \(4 slots\)/,
  )
  assert.match(cause.setting, /--parallel/)
  // The same gap with the engine's own queue full is the engine's queue, not the layer in front of it.
  const queued = levels.map((l) => ({ ...l, waiting_mean: l.value === 8 ? 6 : 0 }))
  assert.equal(explainKnee(queued, 4, { slots: 4 }).kind, 'batch-slots')
})

test('llama.cpp with more HTTP threads than slots: the engine defers one request, three more wait in front of it', () => {
  // A run of the kit at 4 slots (6 HTTP threads, one of them answering the scrape): at 8 streams the
  // engine's deferred queue averaged 1.0 while ~3 requests waited in the HTTP pool. The edge of an
  // absolute "empty queue" rule flipped this verdict between runs; where most requests wait decides.
  const levels = [
    level(4, {
      client_ttft_p50_ms: 102,
      queue_before_engine_p50_ms: 38,
      running_max: 4,
      running_mean: 3.3,
      waiting_mean: 0,
      in_flight_mean: 3.9,
    }),
    level(8, {
      client_ttft_p50_ms: 479,
      queue_before_engine_p50_ms: 438,
      running_max: 4,
      running_mean: 4,
      waiting_mean: 1,
      in_flight_mean: 7.8,
    }),
  ]
  const cause = explainKnee(levels, 4, { slots: 4 })
  assert.equal(cause.kind, 'outside-scheduler', cause.evidence)
  assert.match(
    cause.evidence,
    /its own queue held 1\.0 requests on average and 2\.8 waited in front of it \(4 slots\)/,
  )
  // vLLM's shape: every request the engine is not running sits in its own queue.
  const engineQueue = levels.map((l) => (l.value === 8 ? { ...l, waiting_mean: 3.8 } : l))
  assert.equal(explainKnee(engineQueue, 4, { slots: 4 }).kind, 'batch-slots')
  // As many inside as outside: the engine's queue is not empty, and it is blamed.
  const even = levels.map((l) => (l.value === 8 ? { ...l, waiting_mean: 1.9 } : l))
  assert.equal(explainKnee(even, 4, { slots: 4 }).kind, 'batch-slots')
})

test('client TTFT far above the server histogram TTFT counts as time outside the scheduler too', () => {
  const cause = explainKnee(
    [level(8, { server_ttft_p50_ms: 40 }), level(16, { client_ttft_p50_ms: 900, server_ttft_p50_ms: 60 })],
    8,
  )
  assert.equal(cause.kind, 'outside-scheduler')
  assert.match(cause.evidence, /840 ms of the 900 ms/)
  // A few ms of network on a fast server is not a queue.
  const fast = explainKnee(
    [level(8, { server_ttft_p50_ms: 40 }), level(16, { client_ttft_p50_ms: 70, server_ttft_p50_ms: 45 })],
    8,
  )
  assert.notEqual(fast.kind, 'outside-scheduler')
})

test('running flat at its maximum while the queue grows and the KV cache has room: batch slots', () => {
  const cause = explainKnee(
    [
      level(8, { running_max: 8, waiting_mean: 0.2, kv_usage_max: 0.4 }),
      level(16, { running_max: 8, waiting_mean: 7.5, kv_usage_max: 0.45 }),
    ],
    8,
  )
  assert.equal(cause.kind, 'batch-slots')
  assert.match(cause.evidence, /running requests flat at 8/)
  assert.match(cause.setting, /max-num-seqs/)
})

test('ITL p99 rising past the knee with no other cause: prefill interference', () => {
  const cause = explainKnee(
    [level(8, { itl_p99_ms: 30, running_max: 8 }), level(16, { itl_p99_ms: 90, running_max: 16 })],
    8,
  )
  assert.equal(cause.kind, 'prefill-interference')
  assert.match(cause.evidence, /from 30 to 90 ms/)
})

test('server figures that single out nothing: undetermined, said as such', () => {
  const cause = explainKnee([level(8, { running_max: 8 }), level(16, { running_max: 16 })], 8)
  assert.equal(cause.kind, 'undetermined')
})

test('an engine queue that averaged 0.67 is worded from the gauge, never called empty', () => {
  const levels = [
    level(4, { client_ttft_p50_ms: 500, queue_before_engine_p50_ms: 40, running_max: 4, waiting_mean: 0 }),
    level(8, {
      client_ttft_p50_ms: 3000,
      queue_before_engine_p50_ms: 2500,
      running_max: 4,
      waiting_mean: 0.67,
    }),
  ]
  const cause = explainKnee(levels, 4, { slots: 4 })
  assert.equal(cause.kind, 'outside-scheduler')
  assert.match(cause.evidence, /while its own queue held 0\.67 requests on average/)
  assert.doesNotMatch(cause.evidence, /empty/)
})

test('a remote endpoint: the round trip is taken out of the time before the engine before any cause is named', () => {
  // 60 ms of network on every request, a server whose HTTP layer holds nothing: 62 ms before the engine past the knee.
  const levels = [
    level(4, { client_ttft_p50_ms: 105, queue_before_engine_p50_ms: 60, running_max: 4, waiting_mean: 0 }),
    level(8, { client_ttft_p50_ms: 110, queue_before_engine_p50_ms: 62, running_max: 4, waiting_mean: 0 }),
  ]
  assert.equal(
    explainKnee(levels, 4, { slots: 4 }).kind,
    'outside-scheduler',
    'without the round trip: the network is called a queue',
  )
  const measured = explainKnee(levels, 4, { slots: 4, roundTrip: { ms: 60, source: 'first-byte' } })
  assert.notEqual(measured.kind, 'outside-scheduler', measured.evidence)
  // A real queue in front of the engine is still one, and the evidence says what was taken out.
  const queued = levels.map((l) =>
    l.value === 8 ? { ...l, client_ttft_p50_ms: 600, queue_before_engine_p50_ms: 560 } : l,
  )
  const cause = explainKnee(queued, 4, { slots: 4, roundTrip: { ms: 60, source: 'first-byte' } })
  assert.equal(cause.kind, 'outside-scheduler')
  assert.match(
    cause.evidence,
    /500 ms of the 600 ms TTFT p50 is spent outside its scheduler, beyond a 60 ms round trip/,
  )
  // The histogram path (no stream timings) takes it out too: 80 ms over the server's TTFT, 40 of it network.
  const histogram = [
    level(8, { server_ttft_p50_ms: 40 }),
    level(16, { client_ttft_p50_ms: 120, server_ttft_p50_ms: 40 }),
  ]
  assert.equal(explainKnee(histogram, 8).kind, 'outside-scheduler')
  assert.notEqual(
    explainKnee(histogram, 8, { roundTrip: { ms: 40, source: 'connect' } }).kind,
    'outside-scheduler',
  )
})

/** A knee of each kind, to read its setting: [kind, levels]. */
const KNEES: [string, LevelServerView[]][] = [
  ['kv-cache', [level(16, { kv_usage_max: 0.7 }), level(32, { kv_usage_max: 0.98 })]],
  [
    'outside-scheduler',
    [
      level(4, { client_ttft_p50_ms: 500, queue_before_engine_p50_ms: 40, running_max: 4, waiting_mean: 0 }),
      level(8, {
        client_ttft_p50_ms: 3000,
        queue_before_engine_p50_ms: 2500,
        running_max: 4,
        waiting_mean: 0,
      }),
    ],
  ],
  [
    'batch-slots',
    [
      level(4, { running_max: 4, waiting_mean: 0.2, kv_usage_max: 0.4 }),
      level(8, { running_max: 4, waiting_mean: 3.5, kv_usage_max: 0.45 }),
    ],
  ],
  [
    'prefill-interference',
    [level(4, { itl_p99_ms: 30, running_max: 4 }), level(8, { itl_p99_ms: 90, running_max: 8 })],
  ],
  ['no-server-data', [level(4), level(8)]],
]

/** Each engine's flags (as its own documentation spells them), and a flag of each other engine it must not be told. */
const ENGINES = {
  'llama.cpp': {
    own: {
      'kv-cache': /--ctx-size/,
      'outside-scheduler': /--threads-http/,
      'batch-slots': /--parallel .*--ctx-size.*--threads/,
      'prefill-interference': /--ubatch-size and --batch-size/,
      'no-server-data': /--metrics/,
    },
    foreign:
      /--max-num-seqs|--enable-chunked-prefill|--gpu-memory-utilization|--max-running-requests|--mem-fraction-static|--max-batch-|vLLM|SGLang|TGI/,
  },
  vllm: {
    own: {
      'kv-cache': /--gpu-memory-utilization/,
      'outside-scheduler': /proxy or gateway/,
      'batch-slots': /--max-num-seqs/,
      'prefill-interference': /--enable-chunked-prefill and --max-num-batched-tokens/,
      'no-server-data': /vLLM \/metrics/,
    },
    foreign:
      /--parallel|--ctx-size|--threads|--max-running-requests|--mem-fraction-static|--chunked-prefill-size|--max-batch-|llama\.cpp|SGLang|TGI/,
  },
  sglang: {
    own: {
      'kv-cache': /--mem-fraction-static/,
      'outside-scheduler': /proxy or gateway/,
      'batch-slots': /--max-running-requests/,
      'prefill-interference': /--chunked-prefill-size/,
      'no-server-data': /--enable-metrics/,
    },
    foreign:
      /--parallel|--ctx-size|--threads|--max-num-seqs|--gpu-memory-utilization|--enable-chunked-prefill|--max-batch-|llama\.cpp|vLLM|TGI/,
  },
  tgi: {
    own: {
      'kv-cache': /--max-batch-total-tokens/,
      'outside-scheduler': /--max-concurrent-requests/,
      'batch-slots': /--max-batch-total-tokens/,
      'prefill-interference': /--max-batch-prefill-tokens/,
      'no-server-data': /TGI \/metrics/,
    },
    foreign:
      /--parallel|--ctx-size|--threads|--max-num-seqs|--gpu-memory-utilization|--enable-chunked-prefill|--max-running-requests|--mem-fraction-static|llama\.cpp|vLLM|SGLang/,
  },
} as const

for (const [engine, flags] of Object.entries(ENGINES)) {
  test(`a ${engine} server is told its own flags for every cause, and no other engine's`, () => {
    for (const [kind, levels] of KNEES) {
      const cause = explainKnee(levels, levels[0]?.value as number, {
        slots: 4,
        engine: engine as keyof typeof ENGINES,
      })
      assert.equal(cause.kind, kind, cause.evidence)
      assert.match(cause.setting, flags.own[kind as keyof typeof flags.own], `${kind}: ${cause.setting}`)
      assert.doesNotMatch(cause.setting, flags.foreign, `${kind}: ${cause.setting}`)
    }
  })
}

test('an engine not recognised: each cause names the knob and every engine its flag', () => {
  for (const [kind, levels] of KNEES) {
    const cause = explainKnee(levels, levels[0]?.value as number, { slots: 4 })
    assert.equal(cause.kind, kind)
    if (kind === 'outside-scheduler')
      assert.match(cause.setting, /proxy or gateway.*llama\.cpp --parallel.*TGI/)
    else assert.match(cause.setting, /vLLM.*SGLang|llama\.cpp.*vLLM/, `${kind}: ${cause.setting}`)
  }
})
