import { LEVEL_FIGURES } from '../metrics/figure-catalogue.js'

/**
 * What each figure means, written into every bench_result.json so a reader never has to guess,
 * with the names other tools use for the same quantity (they do not agree with each other). A level
 * figure's definition is declared with the figure (metrics/figure-catalogue.ts); the run's own are here.
 */
const RUN_DEFINITIONS = {
  knee_cause:
    'saturation.cause: why the knee is where it is, judged on the first level past it from the server figures: ' +
    'client-bound (the client watched itself busy), kv-cache (KV use >= 95% or preemptions), outside-scheduler ' +
    "(at least half of the client's TTFT p50, and 50 ms, spent before the engine beyond the network's round trip while " +
    'its own queue averages under one request or holds fewer ' +
    'of the waiting requests than wait in front of it: an HTTP layer, slots, a proxy), batch-slots (running flat at its maximum while the queue grows and KV has room), ' +
    'prefill-interference (ITL p99 x1.5), undetermined, or no-server-data. Each names the setting to look at, in the flags ' +
    'of the engine the server said it is (meta.server.engine), or of each engine when it was not recognised.',
  percentiles:
    'Exact over the raw samples of successful requests, linear interpolation between closest ranks (numpy default).',
  timestamps: 'performance.now() (monotonic), taken when the bytes arrive, before parsing.',
}

/** Each level figure's definition and its sub-fields', in the catalogue's order, then the run's. */
function levelDefinitions(): Record<string, string> {
  const definitions: Record<string, string> = {}
  for (const figure of LEVEL_FIGURES) {
    for (const [key, field] of Object.entries(figure.fields))
      if (field?.definition !== undefined) definitions[key] = field.definition
    Object.assign(definitions, figure.definitions)
  }
  return definitions
}

export const DEFINITIONS: Readonly<Record<string, string>> = { ...levelDefinitions(), ...RUN_DEFINITIONS }
