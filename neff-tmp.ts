import { PrecisionTracker } from './src/metrics/precision.js'
import { makeRecord } from './test/helpers/records.js'
function record(i: number, ttft: number) {
  const times = Array.from({ length: 4 }, (_, k) => i * 100 + ttft + k)
  return makeRecord({ seq: i, sent_at: i * 100, token_times: times })
}
for (const ar of [0, 0.5]) for (const floor of [12, 20]) for (const hold of [1, 2, 4, 6]) {
  let flips = 0, stops = 0, total = 0; const T = 3000
  for (let t = 0; t < T; t++) {
    const tr = new PrecisionTracker({ ttft_p50: 25 })
    let since: number | null = null, stopAt = 0, x = 0
    for (let i = 0; i < 200; i++) {
      x = ar * x + Math.sqrt(1 - ar*ar) * (Math.random()*2-1) * 3
      tr.add(record(i, 20 + x + (Math.random() < 0.05 ? 30 : 0)))
      if (stopAt > 0) break // one in flight measured
      if (tr.requests < floor) continue
      if (tr.assess().every((f) => f.met)) { since ??= tr.requests; if (tr.requests - since >= hold) stopAt = tr.requests } else since = null
    }
    if (stopAt > 0) { stops++; total += tr.requests; if (tr.assess()[0]!.reached_pct === null || !tr.assess()[0]!.met) flips++ }
  }
  console.log(`ar ${ar} floor ${floor} hold ${hold}: stopped ${stops}/${T}, mean n ${(total/stops).toFixed(1)}, flipped after stop ${(100*flips/stops).toFixed(2)}%`)
}
