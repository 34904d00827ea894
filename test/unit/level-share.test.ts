import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEFAULTS } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import { planLevel, WHOLE_RUN } from '../../src/run/plan/level-plan.js'
import {
  connectionsOf,
  type LevelShare,
  type OpenShare,
  shareOf,
  warmupConcurrency,
} from '../../src/schedule/level-share.js'

function closedLevel(concurrency: number, requests: number | null, warmup: number): LevelShare {
  return {
    level: concurrency,
    warmup,
    retry: 0,
    window: null,
    load: { kind: 'closed', concurrency, requests },
  }
}

function openLevel(arrivals: number, maxInFlight: number, warmup: number): LevelShare {
  const offsets = Float64Array.from({ length: arrivals }, (_, i) => i * 10)
  return {
    level: 100,
    warmup,
    retry: 0,
    window: null,
    load: { kind: 'open', offsets, maxInFlight, timeoutMs: 500 },
  }
}

/** Every thread share of every shard share: the level as the processes and their threads run it. */
function threadShares(level: LevelShare, shards: number, threads: number): LevelShare[] {
  return Array.from({ length: shards }, (_, s) => shareOf(level, s, shards)).flatMap((shard) =>
    Array.from({ length: threads }, (_, t) => shareOf(shard, t, threads)),
  )
}

/** The open load of a share that must have one. */
function openLoad(share: LevelShare | null | undefined): OpenShare {
  assert.ok(share !== null && share !== undefined && share.load.kind === 'open')
  return share.load
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0)

test('closed: streams split evenly, requests and warm-up in proportion to them, remainders first', () => {
  const parts = [0, 1, 2].map((i) => shareOf(closedLevel(10, 40, 5), i, 3))
  assert.deepEqual(
    parts.map((p) => p.load),
    [
      { kind: 'closed', concurrency: 4, requests: 16 },
      { kind: 'closed', concurrency: 3, requests: 12 },
      { kind: 'closed', concurrency: 3, requests: 12 },
    ],
  )
  // 5 over [4, 3, 3] is 2, 1.5, 1.5: the tie goes to the earlier part.
  assert.deepEqual(
    parts.map((p) => p.warmup),
    [2, 2, 1],
  )
  assert.deepEqual(parts.map(connectionsOf), [4, 3, 3])
})

test('a share of a share: 7 streams over 2 shards then 3 threads, as the pool ran them', () => {
  const threads = threadShares(closedLevel(7, 40, 9), 2, 3)
  assert.deepEqual(threads.map(connectionsOf), [2, 1, 1, 1, 1, 1])
  // Shards take 23 and 17 requests (40 over [4, 3]); shard 0's 23 over [2, 1, 1] is 11.5, 5.75, 5.75.
  assert.deepEqual(
    threads.map((t) => (t.load.kind === 'closed' ? t.load.requests : -1)),
    [11, 6, 6, 6, 6, 5],
  )
  assert.equal(sum(threads.map((t) => t.warmup)), 9)
})

test('fewer streams than parts: the last parts get no stream, no request and no warm-up', () => {
  const parts = [0, 1, 2, 3].map((i) => shareOf(closedLevel(2, 5, 4), i, 4))
  assert.deepEqual(parts.map(connectionsOf), [1, 1, 0, 0])
  assert.deepEqual(
    parts.map((p) => (p.load.kind === 'closed' ? p.load.requests : -1)),
    [3, 2, 0, 0],
  )
  assert.deepEqual(
    parts.map((p) => p.warmup),
    [2, 2, 0, 0],
  )
})

test('the parts of every division add up to the level exactly', () => {
  for (const concurrency of [1, 2, 3, 5, 16])
    for (const requests of [null, 1, 7, 40])
      for (const warmup of [0, 1, 5])
        for (const shards of [1, 2, 3])
          for (const threads of [1, 2, 4]) {
            const parts = threadShares(closedLevel(concurrency, requests, warmup), shards, threads)
            const where = `c=${concurrency} n=${requests} w=${warmup} ${shards}x${threads}`
            assert.equal(sum(parts.map(connectionsOf)), concurrency, where)
            assert.equal(sum(parts.map((p) => p.warmup)), warmup, where)
            const issued = parts.map((p) => (p.load.kind === 'closed' ? (p.load.requests ?? 0) : 0))
            assert.equal(sum(issued), requests ?? 0, where)
            // No request is left to a part without a stream to send it.
            for (const part of parts)
              if (connectionsOf(part) === 0) assert.equal(issued[parts.indexOf(part)], 0)
          }
})

test('open: the schedule dealt round-robin at both scales, every arrival once and in order', () => {
  const level = openLevel(23, 1024, 0)
  const threads = threadShares(level, 2, 3)
  // Shard s of 2, thread t of 3 sends arrivals s + 2 (t + 3 k): dealt once, then dealt again.
  assert.deepEqual(Array.from(openLoad(threads[4]).offsets), [30, 90, 150, 210])
  const all = threads.flatMap((t) => Array.from(openLoad(t).offsets)).sort((a, b) => a - b)
  assert.deepEqual(all, Array.from(openLoad(level).offsets))
  for (const thread of threads) {
    const { offsets, timeoutMs } = openLoad(thread)
    for (let i = 1; i < offsets.length; i++) assert.ok((offsets[i] as number) > (offsets[i - 1] as number))
    assert.equal(timeoutMs, 500)
  }
})

test('open: the in-flight bound splits evenly, at least one per part, and warm-up follows it', () => {
  const bounds = (maxInFlight: number, parts: number): number[] =>
    Array.from({ length: parts }, (_, i) => connectionsOf(shareOf(openLevel(10, maxInFlight, 0), i, parts)))
  assert.deepEqual(bounds(1024, 3), [342, 341, 341])
  assert.deepEqual(bounds(3, 4), [1, 1, 1, 1])
  const warmups = [0, 1, 2].map((i) => shareOf(openLevel(10, 4, 7), i, 3).warmup)
  // 7 over bounds [2, 1, 1] is 3.5, 1.75, 1.75: the larger remainders take the two left over.
  assert.deepEqual(warmups, [3, 2, 2])
})

test('warm-up runs as many at once as the share has streams; an open loop a few at a time', () => {
  assert.equal(warmupConcurrency(closedLevel(3, null, 10)), 3)
  assert.equal(warmupConcurrency(closedLevel(3, null, 2)), 2)
  assert.equal(warmupConcurrency(openLevel(5, 64, 10)), 4)
  assert.equal(warmupConcurrency(openLevel(5, 64, 1)), 1)
})

test('planLevel: every shard derives the same seeded schedule and keeps its own arrivals', () => {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.load.mode = 'request_rate'
  config.load.arrival = 'poisson'
  config.load.requests_per_level = 101
  const whole = openLoad(planLevel(config, 20, WHOLE_RUN))
  assert.equal(whole.offsets.length, 101)
  assert.equal(
    whole.timeoutMs,
    120_000,
    'arrivals are dropped after the request timeout (120 s by default), in ms',
  )
  const shards = [0, 1, 2].map((index) => openLoad(planLevel(config, 20, { index, count: 3 })))
  assert.deepEqual(
    shards.flatMap((s) => Array.from(s.offsets)).sort((a, b) => a - b),
    Array.from(whole.offsets),
  )
  assert.deepEqual(planLevel(config, 20, { index: 1, count: 3 })?.load, shards[1])
  config.workload.seed += 1
  assert.notDeepEqual(openLoad(planLevel(config, 20, WHOLE_RUN)).offsets, whole.offsets)
})

test('planLevel: a shard without streams sits the level out, and its warm-up is not lost', () => {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.load.mode = 'concurrency'
  config.load.requests_per_level = 10
  config.load.warmup_requests = 4
  const first = planLevel(config, 1, { index: 0, count: 2 })
  assert.equal(planLevel(config, 1, { index: 1, count: 2 }), null)
  assert.deepEqual(first?.load, { kind: 'closed', concurrency: 1, requests: 10 })
  assert.equal(first?.warmup, 4)
})

test('planLevel, staggered: every stream of the level gets a start once, over shards then threads', () => {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.load.mode = 'concurrency'
  const closedLoad = (share: LevelShare | null | undefined) => {
    assert.ok(share !== null && share !== undefined && share.load.kind === 'closed')
    return share.load
  }
  const whole = closedLoad(planLevel(config, 7, WHOLE_RUN, null, 700))
  const starts = Array.from(whole.startOffsets ?? [])
  assert.equal(starts.length, 7)
  assert.ok(starts.every((start) => start >= 0 && start < 700))
  const shards = [0, 1].map((index) => planLevel(config, 7, { index, count: 2 }, null, 700))
  const threads = shards.flatMap((shard) => {
    assert.ok(shard !== null)
    return [0, 1, 2].map((i) => closedLoad(shareOf(shard, i, 3)))
  })
  // Each part has one start per stream, and the parts' starts are the level's.
  for (const part of threads) assert.equal(part.startOffsets?.length, part.concurrency)
  assert.deepEqual(
    threads.flatMap((part) => Array.from(part.startOffsets ?? [])).sort((a, b) => a - b),
    [...starts].sort((a, b) => a - b),
  )
  // Off, and one stream: no starts to wait for.
  assert.equal(closedLoad(planLevel(config, 7, WHOLE_RUN)).startOffsets, undefined)
  assert.equal(closedLoad(planLevel(config, 1, WHOLE_RUN, null, 700)).startOffsets, undefined)
})
