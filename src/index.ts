/**
 * llmbench as a library: the CLI is a thin layer over these. Every figure is a pure function of
 * the records plus meta (buildResult), so a program can run a gradient, re-read a result folder,
 * or compare two runs exactly as the commands do.
 */
export { findSaturation, type Saturation } from './analysis/saturation.js'
export { type SseEvent, SseParser } from './client/sse.js'
export type { Endpoint } from './client/target.js'
export {
  type Comparison,
  compareRuns,
  DEFAULT_MAX_REGRESSION,
  DEFAULT_MIN_CHANGE,
} from './compare/compare.js'
export { ConfigError, type ConfigIssue } from './config/errors.js'
export { DEFAULTS, loadRunConfig } from './config/load.js'
export type { ConfigFlags, MoreBaseUrl, MoreEndpoint, RunConfig } from './config/types.js'
export { evaluateSlos, findCapacity, type Slo, toSlos } from './metrics/slo.js'
export { type LevelSummary, summarizeLevel } from './metrics/summarize.js'
export { readRecords } from './records/jsonl-reader.js'
export type { ErrorClass, RequestRecord } from './records/types.js'
export { writeReports } from './report/render-folder.js'
export { type BenchResult, RESULT_SCHEMA } from './result/bench-result.js'
export { buildResult } from './result/build-result.js'
export { loadRun } from './result/load-run.js'
export type { RunMeta } from './result/run-meta.js'
export { upgradeResult } from './result/upgrade.js'
export { RunShapeError } from './run/plan/run-shape.js'
export { type RunOptions, type RunOutcome, runGradient } from './run/run-gradient.js'
export { readApiKey } from './run/setup/api-key.js'
export { endpointFromEnv, resolveEndpoint } from './run/setup/resolve-endpoint.js'
export { type ResolvedEndpoint, type RunTargets, resolveTargets } from './run/setup/run-targets.js'
export { MergeError, type MergeOutcome, mergeShards } from './run/shard/merge.js'
export {
  type PreparedRun,
  prepareRun,
  type RunRequest,
  type RunSession,
  type StartOutcome,
  startRun,
} from './run/start-run.js'
export { StopSignal } from './run/stop-signal.js'
export { type ArrivalPlan, type ArrivalProcess, arrivalOffsets } from './schedule/arrivals.js'
export { type RunningSimulator, SIM_MODEL, startSimulator } from './sim/server.js'
export { type Dataset, DatasetError, loadDataset } from './workload/dataset.js'
export { ExactPromptSource } from './workload/exact-prompts.js'
export { type LengthSpec, parseLength } from './workload/lengths.js'
export { loadTokenizer, type Tokenizer, TokenizerError } from './workload/tokenizers.js'
