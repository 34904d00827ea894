import { type ClosedLoopLoad, type LevelPrediction, type SimParams, simulateClosedLoop } from './engine.js'

/**
 * simulateClosedLoop, remembered: the same simulation is asked for again and again. The report's
 * "What if" predicts the run's levels, then those levels again with doublings past them; and a
 * level runs min(level, requests) streams, so every level at or past its simulated requests (192 from
 * level 192 up: 256, 512 and 1024 alike) is one simulation. Pure and deterministic, so a remembered
 * prediction is the one a new run would give; the run's end spent half its "What if" on repeats.
 */
const MAX_REMEMBERED = 256
const remembered = new Map<string, LevelPrediction>()

export function simulateClosedLoopOnce(
  params: SimParams,
  load: ClosedLoopLoad,
  percentiles: readonly number[],
): LevelPrediction {
  // Concurrency reaches the simulation only as the streams it keeps in flight.
  const streams = Math.min(load.concurrency, load.requests)
  const key = JSON.stringify([
    params,
    streams,
    load.requests,
    load.inputTokens,
    load.outputTokens,
    load.start,
    percentiles,
  ])
  let prediction = remembered.get(key)
  if (prediction === undefined) {
    prediction = simulateClosedLoop(params, load, percentiles)
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string)
    remembered.set(key, prediction)
  }
  return structuredClone({ ...prediction, concurrency: load.concurrency })
}
