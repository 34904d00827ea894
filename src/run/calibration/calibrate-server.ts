import { performance } from 'node:perf_hooks'
import { displayUrl } from '../../client/redact.js'
import type { Endpoint } from '../../client/target.js'
import { ttftMs } from '../../metrics/derive.js'
import {
  type CalibrationDesign,
  type CalibrationPoint,
  type CalibrationSpeed,
  designCalibration,
  estimatePointS,
  prefillLengths,
  slotProbe,
} from '../../model/calibration-design.js'
import { type CalibrationRun, fitCalibration } from '../../model/calibration-fit.js'
import { mostOverlapping } from '../../model/calibration-measure.js'
import { MODEL_FILE_FORMAT, type ModelFile, type PlannedPoint } from '../../model/model-file.js'
import { type SpeedCheck, speedCheck, speedCheckPoint, widenedBySpeedCheck } from '../../model/speed-check.js'
import type { RequestRecord } from '../../records/types.js'
import { ExactPromptSource } from '../../workload/exact-prompts.js'
import { loadTokenizer } from '../../workload/tokenizers.js'
import { calibrate } from '../setup/calibrate.js'
import { readServerSelf } from '../setup/server-self-read.js'
import { sendPoint } from './send-point.js'

export interface CalibrateRequest {
  endpoint: Endpoint
  budgetS: number
  /** --context: tokens of context per slot when the server does not say. */
  contextPerSlot: number | null
  /** Progress lines for stderr. */
  log: (line: string) => void
}

export class CalibrationRefused extends Error {}

/** Prompt ids far from any run's (which start at 0): the calibration warms no prefix cache a run then hits. */
const FIRST_PROMPT_ID = 3_000_000
/** Tokens decoded by the first look at the decode step. */
const LOOK_OUTPUT_TOKENS = 16

/**
 * `llmbench model --calibrate`: ask the server what it is, size prompts to its tokenizer, probe its
 * slots, design the calibration to fit the budget left (calibration-design.ts), send its points one
 * after another, each within what the budget still holds, and fit the model on what they measured.
 */
export async function calibrateServer(request: CalibrateRequest): Promise<ModelFile> {
  const { endpoint, budgetS, log } = request
  const started = performance.now()
  const deadline = started + budgetS * 1000
  const elapsedS = () => (performance.now() - started) / 1000
  const { self, contextPerSlot, fromServer } = await serverContext(request)
  const declaredSlots = self?.slots ?? null
  const tokenizer = loadTokenizer('o200k')
  const prompts = new ExactPromptSource(tokenizer, { seed: 7 })
  const longest = Math.max(...prefillLengths(contextPerSlot))
  const sizing = await calibrate(endpoint, prompts, longest, 'o200k')
  log(sizing.ok ? sizing.calibration.summary : `prompt sizing: ${sizing.reason}`)
  const calibration = sizing.ok ? sizing.calibration : null
  const runs: CalibrationRun[] = []
  const planned: PlannedPoint[] = []
  /** When each run that ran out began (performance.now()). */
  const began = new Map<CalibrationRun, number>()
  let nextId = FIRST_PROMPT_ID
  const send = async (point: CalibrationPoint): Promise<CalibrationRun | null> => {
    const at = performance.now()
    if (at + point.estimatedS * 1000 > deadline) {
      planned.push({ ...point, outcome: 'skipped', ok: 0, failed: 0, took_s: 0 })
      return null
    }
    const sent = await sendPoint(endpoint, prompts, calibration, point, nextId, deadline)
    nextId += point.requests
    const ok = sent.records.filter((r) => r.error === null).length
    planned.push({
      ...point,
      outcome: sent.cut ? 'cut' : 'ran',
      ok,
      failed: sent.records.length - ok,
      took_s: round((performance.now() - at) / 1000),
    })
    if (sent.cut) return null
    const run = { point, records: sent.records }
    runs.push(run)
    began.set(run, at)
    return run
  }
  // A first look at the speed (one request of a few tokens), then the slot probe at that speed.
  const look: CalibrationPoint = {
    purpose: 'decode',
    concurrency: 1,
    requests: 1,
    inputTokens: 32,
    outputTokens: LOOK_OUTPUT_TOKENS,
    estimatedS: 0,
  }
  const first = await sendPoint(endpoint, prompts, calibration, look, nextId++, deadline)
  const prefillSpeed = prefillSpeedOf(sizing.records)
  const oneStep = stepOf(first.records) ?? 50
  const probePlan = slotProbe(declaredSlots)
  const probeSpeed: CalibrationSpeed = { ...prefillSpeed, fullStepMs: oneStep * probePlan.concurrency }
  await send({ ...probePlan, estimatedS: estimatePointS(probePlan, probeSpeed) })
  const probeRun = runs.find((run) => run.point.purpose === 'slots')
  const probeSlots = probeRun === undefined ? null : mostOverlapping(probeRun.records) || null
  const slots = declaredSlots ?? probeSlots ?? 1
  const design = designCalibration({
    budgetS,
    spentS: elapsedS(),
    contextPerSlot,
    slots,
    speed: {
      ...prefillSpeed,
      // The probe's step at its full batch, with a margin: a busy machine is slower some seconds than others.
      fullStepMs: 1.25 * (stepOf(probeRun?.records ?? []) ?? oneStep * slots),
    },
  })
  log(planText(design, elapsedS()))
  for (const point of design.points) await send(point)
  const check = await repeatForSpeed(design, runs, began, send)
  log(speedCheckText(check))
  const fitted = fitCalibration(runs, {
    engine: self?.engine ?? null,
    slots: declaredSlots,
    contextPerSlot,
    contextSource: fromServer === null ? 'flag' : 'server',
  })
  const model =
    check === null || fitted.interval === undefined
      ? fitted
      : { ...fitted, interval: widenedBySpeedCheck(fitted.interval, check) }
  const spent = round(elapsedS())
  const skipped = planned.filter((p) => p.outcome !== 'ran').length
  log(
    `calibration took ${spent} s of its ${budgetS} s budget` +
      (skipped > 0 ? `; ${skipped} point(s) the budget could not hold were left out` : ''),
  )
  return {
    format: MODEL_FILE_FORMAT,
    calibrated_at: new Date().toISOString(),
    server: {
      base_url: displayUrl(endpoint.url.replace(endpoint.path, '')),
      model: endpoint.body.model,
      engine: self?.engine ?? null,
      context_per_slot: contextPerSlot,
      context_source: fromServer === null ? 'flag' : 'server',
    },
    calibration: {
      budget_s: budgetS,
      spent_s: spent,
      design: design.richness,
      points: planned,
      speed_check: check,
    },
    model,
  }
}

/**
 * How far one point moves when measured again: the batch-1 decode point sent once more after the
 * design (speed-check.ts). The repeat joins the fit too, so the decode step is the two moments' average.
 * Null when the point did not run, or the budget left could not hold its repeat.
 */
async function repeatForSpeed(
  design: CalibrationDesign,
  runs: readonly CalibrationRun[],
  began: ReadonlyMap<CalibrationRun, number>,
  send: (point: CalibrationPoint) => Promise<CalibrationRun | null>,
): Promise<SpeedCheck | null> {
  const point = speedCheckPoint(design.points)
  const first = point === null ? undefined : runs.find((run) => run.point === point)
  if (point === null || first === undefined) return null
  const repeat = await send(point)
  if (repeat === null) return null
  const apart = ((began.get(repeat) ?? 0) - (began.get(first) ?? 0)) / 1000
  return speedCheck(point, first.records, repeat.records, apart)
}

function speedCheckText(check: SpeedCheck | null): string {
  if (check === null)
    return 'speed check: the batch-1 decode point was not measured twice (the budget left could not hold it): how far a point moves when measured again is not in the prediction intervals'
  const change = `${check.change >= 0 ? '+' : ''}${(check.change * 100).toFixed(1)}%`
  return (
    `speed check: ${check.point}: TPOT p50 ${check.first_tpot_ms} ms, then ${check.repeat_tpot_ms} ms ` +
    `${check.seconds_apart} s later (${change}): the machine or the server moved that much, added to the prediction intervals`
  )
}

/** What the server says of itself, and the context per slot the prompts are spread over (its own, or --context). */
async function serverContext(request: CalibrateRequest) {
  const { endpoint, budgetS, log } = request
  const self = await readServerSelf(endpoint)
  const fromServer = self?.context_per_slot ?? null
  const contextPerSlot = fromServer ?? request.contextPerSlot
  if (contextPerSlot === null)
    throw new CalibrationRefused(
      'the server did not say its context per slot (llama.cpp /props n_ctx): give it with --context N, so prompts can be spread to half of it',
    )
  log(
    `calibrating ${displayUrl(endpoint.url)} (${endpoint.body.model}) within ${budgetS} s: ` +
      `${self?.engine ?? 'engine not recognised'}, ${self?.slots ?? 'unknown'} slots, ${contextPerSlot} tokens of context per slot` +
      (fromServer === null ? ' (--context)' : ''),
  )
  return { self, contextPerSlot, fromServer }
}

/** The plan in words: points, what they are, the estimate against the budget left. */
function planText(design: CalibrationDesign, spentS: number): string {
  const of = (purpose: CalibrationPoint['purpose']) => design.points.filter((p) => p.purpose === purpose)
  const prefill = [...new Set(of('prefill').map((p) => p.inputTokens))].sort((a, b) => a - b)
  const decode = of('decode')
  const batches = [...new Set(decode.map((p) => p.concurrency))].sort((a, b) => a - b)
  const contexts = [...new Set(decode.map((p) => p.inputTokens))]
  return (
    `plan: ${design.points.length} points, about ${design.estimatedS.toFixed(0)} s (slow side) of the ${(design.budgetS - spentS).toFixed(0)} s left: ` +
    `prefill at c=1 over ${prefill.join(', ')} prompt tokens; decode at batch ${batches.join(', ')} with ${contexts.join(' and ')}-token prompts; ${design.richness}` +
    (design.overBudget ? '; OVER the budget even at its leanest: the points it cannot hold are left out' : '')
  )
}

/** The prefill's speed from the sizing probes: the shortest's time as the fixed part, the longest's per token. */
function prefillSpeedOf(
  records: readonly RequestRecord[],
): Pick<CalibrationSpeed, 'prefillBaseMs' | 'prefillMsPerToken'> {
  const timed = records.flatMap((r) => {
    const tokens = r.server_timings?.prompt_n ?? r.input_tokens
    const ms = r.server_timings?.prompt_ms ?? ttftMs(r)
    return r.error === null && tokens !== null && tokens > 0 && ms !== null ? [{ tokens, ms }] : []
  })
  if (timed.length === 0) return { prefillBaseMs: 50, prefillMsPerToken: 2 }
  const shortest = timed.reduce((a, b) => (b.tokens < a.tokens ? b : a))
  const longest = timed.reduce((a, b) => (b.tokens > a.tokens ? b : a))
  return { prefillBaseMs: shortest.ms, prefillMsPerToken: longest.ms / longest.tokens }
}

/** The median time per output token after the first. */
function stepOf(records: readonly RequestRecord[]): number | null {
  const steps = records
    .filter((r) => r.error === null && r.token_times.length > 2)
    .map(
      (r) => ((r.token_times.at(-1) as number) - (r.token_times[0] as number)) / (r.token_times.length - 1),
    )
    .sort((a, b) => a - b)
  return steps.length === 0 ? null : (steps[Math.floor(steps.length / 2)] as number)
}

function round(x: number): number {
  return Math.round(x * 10) / 10
}
