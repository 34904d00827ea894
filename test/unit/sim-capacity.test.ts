import assert from 'node:assert/strict'
import { test } from 'node:test'
import { findSaturation } from '../../src/analysis/saturation.js'
import {
  AdmissionControl,
  decodeStepMs,
  type JobSink,
  type LevelPrediction,
  prefillMs,
  resolveSimParams,
  SIM_CPU_LIKE,
  SIM_DEFAULTS,
  SimEngine,
  type SimParams,
  simulateClosedLoop,
  VirtualClock,
} from '../../src/model/engine.js'

const opts = { timeout: 20000 }

/** Round numbers so expected times are exact in floating point. */
const P: SimParams = {
  slots: 2,
  queue_limit: 0,
  prefill_base_ms: 50,
  prefill_ms_per_token: 0.5,
  decode_base_ms: 10,
  decode_ms_per_seq: 2,
  prefill_ms_per_token_sq: 0,
  decode_ms_per_context_token: 0,
  seed: 1,
  prefill_blocks_decode: 0,
  kv_cache_tokens: 1000,
}

/** The knee findSaturation places on a predicted gradient (mean TTFT as the only latency figure). */
function kneeOf(levels: readonly LevelPrediction[]): ReturnType<typeof findSaturation> {
  return findSaturation(
    levels.map((x) => ({
      value: x.concurrency,
      output_tokens_per_s: x.output_tokens_per_s,
      ttft_ms: { count: 1, mean: x.mean_ttft_ms, min: x.mean_ttft_ms, max: x.mean_ttft_ms },
      success_rate: 1,
    })),
  )
}

function at(xs: number[], i: number): number {
  const x = xs[i]
  assert.ok(x !== undefined, `index ${i} of ${xs.length}`)
  return x
}

/** A sink that records the virtual time of every token and of the finish. */
function recorder(clock: VirtualClock): JobSink & { tokens: number[]; finishedAt: number | null } {
  const rec = {
    tokens: [] as number[],
    finishedAt: null as number | null,
    onToken: () => rec.tokens.push(clock.now()),
    onFinish: () => {
      rec.finishedAt = clock.now()
    },
  }
  return rec
}

test('prefillMs and decodeStepMs follow the documented formulas', opts, () => {
  assert.equal(prefillMs(P, 0), 50)
  assert.equal(prefillMs(P, 100), 100) // 50 + 0.5 * 100
  assert.equal(decodeStepMs(P, 1), 12) // 10 + 2 * 1
  assert.equal(decodeStepMs(P, 16), 42)
  assert.equal(decodeStepMs(SIM_DEFAULTS, 16), 18)
})

test('resolveSimParams keeps defaults for undefined fields and rejects invalid values', opts, () => {
  const p = resolveSimParams({ slots: 4, queue_limit: undefined })
  assert.equal(p.slots, 4)
  assert.equal(p.queue_limit, SIM_DEFAULTS.queue_limit)
  assert.throws(() => resolveSimParams({ slots: 0 }), RangeError)
  assert.throws(() => resolveSimParams({ slots: 1.5 }), RangeError)
  assert.throws(() => resolveSimParams({ queue_limit: -1 }), RangeError)
  assert.throws(() => resolveSimParams({ decode_base_ms: Number.NaN }), RangeError)
})

test('admission: slots first, then a FIFO queue; release admits the oldest waiter', opts, () => {
  const a = new AdmissionControl<string>(2, 0)
  assert.equal(a.arrive('a'), 'admitted')
  assert.equal(a.arrive('b'), 'admitted')
  assert.equal(a.arrive('c'), 'queued')
  assert.equal(a.arrive('d'), 'queued')
  assert.equal(a.arrive('e'), 'queued')
  assert.deepEqual([a.running, a.waiting], [2, 3])
  assert.equal(a.release('b'), 'c')
  assert.equal(a.phaseOf('c'), 'prefill')
  assert.equal(a.release('d'), undefined, 'a queued request leaves without freeing a slot')
  assert.equal(a.release('a'), 'e', 'd left the queue, so e is next')
  assert.equal(a.release('c'), undefined)
  assert.deepEqual([a.running, a.waiting], [1, 0])
  assert.equal(a.release('zzz'), undefined, 'unknown ids are a no-op')
  assert.throws(() => a.arrive('e'), /twice/)
})

test('admission: rejects beyond queue_limit; 0 means unbounded', opts, () => {
  const bounded = new AdmissionControl<number>(1, 2)
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((id) => bounded.arrive(id)),
    ['admitted', 'queued', 'queued', 'rejected', 'rejected'],
  )
  bounded.release(1)
  assert.equal(bounded.arrive(6), 'queued', 'a place freed up when 2 got the slot')

  const unbounded = new AdmissionControl<number>(1, 0)
  for (let id = 0; id < 1000; id++) assert.notEqual(unbounded.arrive(id), 'rejected')
  assert.equal(unbounded.waiting, 999)
})

test('admission: only requests past prefill count as decoding', opts, () => {
  const a = new AdmissionControl<number>(4, 0)
  a.arrive(1)
  a.arrive(2)
  assert.equal(a.decoding, 0)
  a.startDecode(1)
  assert.deepEqual([a.running, a.decoding], [2, 1])
  assert.throws(() => a.startDecode(1), /not in prefill/)
  a.release(1)
  assert.deepEqual([a.running, a.decoding], [1, 0])
})

test('engine on a fake clock: first token at prefill end, then one per decode step', opts, () => {
  const clock = new VirtualClock()
  const engine = new SimEngine(P, clock)
  const rec = recorder(clock)
  engine.submit({ inputTokens: 20, outputTokens: 4 }, rec)
  assert.equal(rec.tokens.length, 0, 'nothing is emitted synchronously')
  clock.advanceBy(59.9)
  assert.equal(rec.tokens.length, 0)
  clock.runAll()
  // prefill 60, then alone in the batch: step = 10 + 2 * 1 = 12
  assert.deepEqual(rec.tokens, [60, 72, 84, 96])
  assert.equal(rec.finishedAt, 96)
  assert.deepEqual(engine.stats(), {
    admitted: 1,
    rejected: 0,
    completed: 1,
    aborted: 0,
    max_running: 1,
    running: 0,
    waiting: 0,
    kv_tokens: 0,
  })
})

test('engine: the step time grows with the running batch', opts, () => {
  const clock = new VirtualClock()
  const engine = new SimEngine(P, clock)
  const a = recorder(clock)
  const b = recorder(clock)
  engine.submit({ inputTokens: 0, outputTokens: 12 }, a)
  clock.advanceBy(100)
  engine.submit({ inputTokens: 0, outputTokens: 3 }, b) // decodes from 150 to 178
  clock.runAll()
  const gaps = a.tokens.slice(1).map((t, i) => t - at(a.tokens, i))
  // alone: 10 + 2 * 1 = 12 ms; the steps scheduled at 158 and 172, while b decodes too: 10 + 2 * 2 = 14 ms
  assert.deepEqual(gaps, [12, 12, 12, 12, 12, 12, 12, 12, 12, 14, 14])
  assert.deepEqual(b.tokens, [150, 164, 178])
})

test('engine: a queued request starts its prefill when a slot frees up', opts, () => {
  const clock = new VirtualClock()
  const engine = new SimEngine({ ...P, slots: 1 }, clock)
  const first = recorder(clock)
  const second = recorder(clock)
  engine.submit({ inputTokens: 0, outputTokens: 2 }, first)
  assert.equal(engine.submit({ inputTokens: 0, outputTokens: 2 }, second).admission, 'queued')
  clock.runAll()
  assert.deepEqual(first.tokens, [50, 62])
  assert.deepEqual(second.tokens, [112, 124], 'waits 62 ms, then its own 50 ms prefill')
  assert.equal(engine.stats().max_running, 1)
})

test('engine: cancel clears timers and hands the slot to the next request', opts, () => {
  const clock = new VirtualClock()
  const engine = new SimEngine({ ...P, slots: 1, queue_limit: 1 }, clock)
  const long = recorder(clock)
  const next = recorder(clock)
  const h1 = engine.submit({ inputTokens: 0, outputTokens: 1000 }, long)
  engine.submit({ inputTokens: 0, outputTokens: 1 }, next)
  assert.equal(engine.submit({ inputTokens: 0, outputTokens: 1 }, recorder(clock)).admission, 'rejected')
  clock.advanceBy(75) // first token at 50, second at 62, third due at 74
  assert.equal(long.tokens.length, 3)
  h1.cancel()
  h1.cancel() // idempotent
  assert.deepEqual(next.tokens, [], 'the next prefill starts now, at 75')
  clock.runAll()
  assert.deepEqual(next.tokens, [125])
  assert.equal(long.tokens.length, 3, 'no token after cancel')
  assert.equal(clock.pending, 0, 'no timer left behind')
  const s = engine.stats()
  assert.deepEqual([s.admitted, s.rejected, s.completed, s.aborted, s.running], [2, 1, 1, 1, 0])
})

test('engine: cancelling a queued request leaves the running one alone', opts, () => {
  const clock = new VirtualClock()
  const engine = new SimEngine({ ...P, slots: 1 }, clock)
  const running = recorder(clock)
  engine.submit({ inputTokens: 0, outputTokens: 2 }, running)
  const queued = engine.submit({ inputTokens: 0, outputTokens: 2 }, recorder(clock))
  queued.cancel()
  assert.deepEqual([engine.stats().running, engine.stats().waiting], [1, 0])
  clock.runAll()
  assert.equal(running.finishedAt, 62)
  assert.equal(engine.stats().admitted, 1)
})

test('SIM_DEFAULTS show a knee at 16: throughput flattens, TTFT jumps', opts, () => {
  const levels = [1, 4, 8, 16, 32, 64]
  const r = levels.map((concurrency) =>
    simulateClosedLoop(SIM_DEFAULTS, {
      concurrency,
      requests: concurrency * 4,
      inputTokens: 256,
      outputTokens: 64,
    }),
  )
  const tput = r.map((x) => x.output_tokens_per_s)
  const ttft = r.map((x) => x.mean_ttft_ms)
  for (let i = 1; i <= 3; i++) assert.ok(at(tput, i) > 1.4 * at(tput, i - 1), `rises up to 16: ${tput}`)
  // Past the slots, requests admitted from the queue together share a prefill step, so throughput
  // sags a little (2.5% at 32 and 6% at 64 with the streams spread over 3/4 of a request); no more.
  for (let i = 4; i < levels.length; i++) {
    assert.ok(Math.abs(at(tput, i) / at(tput, 3) - 1) < 0.08, `throughput flat beyond 16: ${tput}`)
  }
  assert.ok(at(ttft, 3) < 50, `TTFT at 16 is about one prefill (32.8 ms): ${ttft}`)
  assert.ok(at(ttft, 4) > 10 * at(ttft, 3), `TTFT jumps beyond 16: ${ttft}`)
  assert.ok(at(ttft, 5) > 2 * at(ttft, 4), `and keeps climbing: ${ttft}`)
  assert.ok(r.every((x) => x.max_running <= 16))
})

test(
  'CPU-like mode: a prefill waits for the one before it and for the decode step under way, and stalls decoding meanwhile',
  opts,
  () => {
    const clock = new VirtualClock()
    const engine = new SimEngine({ ...P, prefill_blocks_decode: 1 }, clock)
    const a = recorder(clock)
    const b = recorder(clock)
    engine.submit({ inputTokens: 0, outputTokens: 4 }, a) // prefill 0..50, then steps of 12 alone
    clock.advanceBy(55)
    engine.submit({ inputTokens: 0, outputTokens: 2 }, b) // arrives mid-step: prefill 62..112
    clock.runAll()
    // a: first token at 50, the next at 62 (the step under way when b arrived, which b's prefill waits
    // for, as llama.cpp puts a prompt in its next batch); its next, due at 74, waits for b's prefill to
    // end at 112; then 14-ms steps (two decoding).
    assert.deepEqual(a.tokens, [50, 62, 112, 126])
    assert.deepEqual(b.tokens, [112, 126])
    const both = new SimEngine({ ...P, prefill_blocks_decode: 1 }, new VirtualClock())
    assert.equal(both.params.prefill_blocks_decode, 1)
    assert.throws(() => resolveSimParams({ prefill_blocks_decode: 2 }), RangeError)
  },
)

test(
  'CPU-like mode: a closed loop of long prompts at the slots settles as llama.cpp serves it: one prompt alone, then the other three together, decoding unstalled',
  opts,
  () => {
    // The kit's 4 slots, 384-token prompts and 24 output tokens at c=4 (docs/benchmarks.md): one request
    // prefilled alone, the three sent while it ran prefilled together after it (it stalls meanwhile),
    // then all decode; the single ends a step before the three, and its next prompt is prefilled alone
    // again once their last step is done, before their next prompts arrive.
    const params = {
      ...P,
      slots: 4,
      prefill_base_ms: 10,
      prefill_ms_per_token: 1.35,
      decode_base_ms: 12,
      prefill_blocks_decode: 1,
    }
    const clock = new VirtualClock()
    const engine = new SimEngine(params, clock)
    const requests: { sent: number; tokens: number[] }[] = []
    const send = (): void => {
      const request = { sent: clock.now(), tokens: [] as number[] }
      requests.push(request)
      engine.submit(
        { inputTokens: 384, outputTokens: 24 },
        {
          onToken: () => request.tokens.push(clock.now()),
          onFinish: () => {
            if (requests.length < 16) send()
          },
        },
      )
    }
    for (const at of [0, 183, 343, 501]) clock.after(at, send) // staggered as the kit's run sent them
    clock.runAll()
    const prefill = prefillMs(params, 384)
    const batchOfFour = decodeStepMs(params, 4)
    for (let round = 1; round < 4; round++) {
      const group = requests.slice(4 * round, 4 * round + 4)
      const firsts = group.map((r) => r.tokens[0] as number)
      const ttfts = group.map((r, i) => (firsts[i] as number) - r.sent)
      const alone = ttfts.filter((ttft) => ttft < 1.2 * prefill)
      assert.equal(
        alone.length,
        1,
        `round ${round}: one prompt prefilled alone (TTFTs ${ttfts.map(Math.round)})`,
      )
      const together = group.filter((_, i) => (ttfts[i] as number) >= 1.2 * prefill)
      const first = together[0]?.tokens[0] as number
      assert.ok(
        together.every((r) => Math.abs((r.tokens[0] as number) - first) < 1e-6),
        `round ${round}: three share a step`,
      )
      for (const r of together) {
        const gaps = r.tokens.slice(1).map((t, i) => t - (r.tokens[i] as number))
        assert.ok(
          Math.max(...gaps) <= batchOfFour + 1e-6,
          `round ${round}: the three decode unstalled (${Math.max(...gaps)} ms)`,
        )
      }
    }
    // Streams started together are one batch: four prompts in one step, all first tokens at its end.
    const batchClock = new VirtualClock()
    const batch = new SimEngine(params, batchClock)
    const sinks = [0, 1, 2, 3].map(() => recorder(batchClock))
    for (const sink of sinks) batch.submit({ inputTokens: 384, outputTokens: 2 }, sink)
    batchClock.runAll()
    assert.deepEqual(
      sinks.map((sink) => sink.tokens[0]),
      sinks.map(() => 4 * prefill),
    )
  },
)

test(
  'CPU-like preset: sub-linear from c=1 up to the slots, flat beyond; the knee lands on the slots',
  opts,
  () => {
    const params = resolveSimParams(SIM_CPU_LIKE)
    const levels = [1, 2, 4, 8, 16, 32]
    const r = levels.map((concurrency) =>
      simulateClosedLoop(params, {
        concurrency,
        requests: concurrency * 6,
        inputTokens: 128,
        outputTokens: 64,
      }),
    )
    const tput = r.map((x) => x.output_tokens_per_s)
    for (let i = 1; i <= 3; i++) {
      const gain = at(tput, i) / at(tput, i - 1)
      assert.ok(gain > 1.2 && gain < 1.8, `sub-linear but growing up to 8: ${tput}`)
    }
    // Past the slots, prompts queued while a prefill runs share its next step (as llama.cpp batches
    // them), so small convoys form at the queue and throughput sits a few percent below the slots'.
    assert.ok(Math.abs(at(tput, 4) / at(tput, 3) - 1) < 0.05, `flat beyond the 8 slots: ${tput}`)
    const knee = kneeOf(r)
    assert.equal(knee?.value, params.slots, knee?.reason)
  },
)

test(
  'convoy: prompts admitted within one engine step share it, each waiting for the sum of their prefills',
  opts,
  () => {
    const clock = new VirtualClock()
    const engine = new SimEngine({ ...P, slots: 4 }, clock)
    const [a, b, c, d] = [1, 2, 3, 4].map(() => recorder(clock))
    engine.submit({ inputTokens: 0, outputTokens: 3 }, a as JobSink)
    engine.submit({ inputTokens: 0, outputTokens: 3 }, b as JobSink)
    clock.advanceBy(5) // within the step's first decode step (10 ms with none decoding): joins it
    engine.submit({ inputTokens: 0, outputTokens: 3 }, c as JobSink)
    clock.advanceBy(25) // past it: a step of its own, overlapping the other (no CPU-like blocking)
    engine.submit({ inputTokens: 0, outputTokens: 2 }, d as JobSink)
    clock.runAll()
    // The shared step: 3 prefills of 50 ms from t=0, then they decode as one batch of 3 (16 ms steps,
    // 18 ms while d decodes with them).
    assert.deepEqual(a?.tokens, [150, 166, 182])
    assert.deepEqual(b?.tokens, a?.tokens)
    assert.deepEqual(c?.tokens, a?.tokens)
    assert.deepEqual(d?.tokens, [80, 92])
  },
)

test(
  'convoy, CPU-like: prompts arriving while a prefill runs share the next step; decoding waits for both',
  opts,
  () => {
    const clock = new VirtualClock()
    const engine = new SimEngine({ ...P, slots: 3, prefill_blocks_decode: 1 }, clock)
    const [a, b, c] = [1, 2, 3].map(() => recorder(clock))
    engine.submit({ inputTokens: 0, outputTokens: 2 }, a as JobSink) // step 0..50
    clock.advanceBy(20)
    engine.submit({ inputTokens: 0, outputTokens: 1 }, b as JobSink) // next step, from 50
    clock.advanceBy(10)
    engine.submit({ inputTokens: 0, outputTokens: 1 }, c as JobSink) // the same one: 50..150
    clock.runAll()
    assert.deepEqual(b?.tokens, [150])
    assert.deepEqual(c?.tokens, [150])
    // a's second token was due at 62, inside the shared step: it comes at its end.
    assert.deepEqual(a?.tokens, [50, 150])
  },
)

test(
  'at c = slots, streams released together stay a convoy; staggered ones keep the server full, knee at the slots',
  opts,
  () => {
    // A llama.cpp-like CPU engine with 5 slots, 64-token prompts and 96 output tokens.
    const params = resolveSimParams({ ...SIM_CPU_LIKE, slots: 5 })
    const levels = [1, 2, 3, 4, 5, 6, 8, 10]
    const level = (concurrency: number, start: 'staggered' | 'together') =>
      simulateClosedLoop(params, {
        concurrency,
        requests: concurrency * 8,
        inputTokens: 64,
        outputTokens: 96,
        start,
      })
    const staggered = levels.map((c) => level(c, 'staggered'))
    const single = prefillMs(params, 64)
    const atSlots = level(5, 'staggered')
    const convoy = level(5, 'together')
    // Released together, the five prompts share one prefill step every round: each sees ~5 prefills.
    assert.ok(convoy.mean_prefill_ms > 4.5 * single, `together: prefill ${convoy.mean_prefill_ms} ms`)
    assert.ok(atSlots.mean_prefill_ms < 1.2 * single, `staggered: prefill ${atSlots.mean_prefill_ms} ms`)
    assert.ok(convoy.output_tokens_per_s < atSlots.output_tokens_per_s, 'the convoy costs throughput')
    // Staggered, the server runs full at the slots: no more throughput at twice the slots.
    const twice = level(10, 'staggered')
    assert.ok(
      Math.abs(twice.output_tokens_per_s / atSlots.output_tokens_per_s - 1) < 0.03,
      `c=5 ${atSlots.output_tokens_per_s}, c=10 ${twice.output_tokens_per_s}`,
    )
    const knee = kneeOf(staggered)
    assert.equal(knee?.value, params.slots, knee?.reason)
    // On a GPU-like engine (prefills overlap decoding) the convoy's shared prefill costs far more.
    const gpu = (start: 'staggered' | 'together') =>
      simulateClosedLoop(SIM_DEFAULTS, {
        concurrency: 16,
        requests: 64,
        inputTokens: 256,
        outputTokens: 64,
        start,
      })
    const [gpuStaggered, gpuTogether] = [gpu('staggered'), gpu('together')]
    assert.ok(
      gpuTogether.output_tokens_per_s < 0.8 * gpuStaggered.output_tokens_per_s,
      `GPU-like at its 16 slots: together ${gpuTogether.output_tokens_per_s}, staggered ${gpuStaggered.output_tokens_per_s}`,
    )
  },
)
