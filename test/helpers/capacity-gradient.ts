import type { BenchResult } from '../../src/result/bench-result.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { TIMING_FIGURES, testConfig } from './run-config.js'
import { runToResult } from './run-result.js'

/**
 * A short gradient past a 4-slot simulator's slots, calibration probes on (prefill at several prompt
 * lengths): what the capacity model's tests fit on.
 */
export async function capacityGradient(
  url: string,
  out: string,
  lengths: { input_tokens: number; output_tokens: number },
): Promise<BenchResult> {
  const config = testConfig(url, SIM_MODEL, {
    levels: [1, 2, 4, 8],
    requests: 12,
    ...lengths,
    warmup: 1,
    calibrate: true,
    out_dir: out,
    ...TIMING_FIGURES,
  })
  // Level 8 lasts about 1.5 s: scrape often enough to see its queue.
  config.server_metrics.interval_s = 0.2
  // No drift control: the model is fitted on the levels alone (src/model reads no control records), and
  // at c=1 the control sent 8 more of the run's slowest requests (predict's --confirm test: 44 s to 38 s).
  config.load.control = false
  return runToResult(config, out)
}
