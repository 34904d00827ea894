import { seededRandom } from '../random.js'

/**
 * Several endpoints and models in one run (issue 29): the targets, and which one arrival n goes to.
 *
 * A target is one (endpoint, model) pair; its weight is the endpoint's weight times the model's, so
 * `--base-url A --base-url B --model x --model y` gives each pair a quarter of the load, and an
 * endpoint's share is its weight over the endpoints' total whatever the models' split is. A closed
 * loop splits each level's streams by these weights (target-share.ts); an open loop deals its
 * arrivals by the cycle below.
 *
 * The assignment is a smooth weighted round-robin (nginx's): over any Σw consecutive requests each
 * target gets exactly its weight's worth, interleaved (weights 2:1 give A B A A B A, not A A B), so a
 * short level already has the asked-for shares. The seed only rotates where the cycle starts, so two
 * runs with one seed send request n to the same target, and a different seed does not always start
 * on the first endpoint. Pure: no state between requests, any worker can compute any request's target.
 */

export interface WeightedChoice<T> {
  value: T
  /** A positive whole number: the choice's share of requests is weight / Σ weights. */
  weight: number
}

export interface Target<E, M> {
  endpoint: E
  model: M
  /** Index into the endpoints given; a record stores it beside the URL. */
  endpoint_index: number
  model_index: number
  weight: number
}

export interface TargetSplit<E, M> {
  targets: Target<E, M>[]
  /** One cycle of target indexes, Σ weights long. */
  cycle: number[]
  /** Where request 0 falls in the cycle: drawn from the seed. */
  offset: number
}

/** The largest total weight one cycle may hold: the cycle is built once, held in memory. */
export const MAX_TOTAL_WEIGHT = 100_000

export function planTargetSplit<E, M>(
  endpoints: readonly WeightedChoice<E>[],
  models: readonly WeightedChoice<M>[],
  seed: number,
): TargetSplit<E, M> {
  if (endpoints.length === 0 || models.length === 0) {
    throw new Error('a run needs at least one endpoint and one model')
  }
  for (const choice of [...endpoints, ...models]) {
    if (!Number.isInteger(choice.weight) || choice.weight < 1) {
      throw new Error(`a weight must be a positive whole number, got ${choice.weight}`)
    }
  }
  const targets: Target<E, M>[] = endpoints.flatMap((endpoint, e) =>
    models.map((model, m) => ({
      endpoint: endpoint.value,
      model: model.value,
      endpoint_index: e,
      model_index: m,
      weight: endpoint.weight * model.weight,
    })),
  )
  const weights = reduceWeights(targets.map((t) => t.weight))
  const total = weights.reduce((a, b) => a + b, 0)
  if (total > MAX_TOTAL_WEIGHT) {
    throw new Error(
      `the weights' cycle is ${total} requests long; at most ${MAX_TOTAL_WEIGHT} (use smaller weights)`,
    )
  }
  const cycle = smoothCycle(weights)
  // Its own stream, so the split does not move the prompts' or lengths' draws.
  const offset = Math.floor(seededRandom(seed * 4099 + 29)() * cycle.length)
  return { targets, cycle, offset }
}

/** The target request `requestNumber` (0-based, the run's own count) is sent to. */
export function targetOf<E, M>(split: TargetSplit<E, M>, requestNumber: number): Target<E, M> {
  const at = (requestNumber + split.offset) % split.cycle.length
  return split.targets[split.cycle[at] as number] as Target<E, M>
}

/** Divides the weights by their greatest common divisor: 2:4 cycles like 1:2, in 3 requests not 6. */
function reduceWeights(weights: readonly number[]): number[] {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))
  const divisor = weights.reduce(gcd)
  return weights.map((w) => w / divisor)
}

/**
 * nginx's smooth weighted round-robin: each turn every target gains its weight, the one with the most
 * is picked and loses the total. Ties go to the lower index, so the cycle depends on nothing but the weights.
 */
function smoothCycle(weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0)
  const current = weights.map(() => 0)
  const cycle: number[] = []
  for (let turn = 0; turn < total; turn++) {
    let best = 0
    for (let i = 0; i < weights.length; i++) {
      current[i] = (current[i] as number) + (weights[i] as number)
      if ((current[i] as number) > (current[best] as number)) best = i
    }
    current[best] = (current[best] as number) - total
    cycle.push(best)
  }
  return cycle
}
