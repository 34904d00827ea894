import type { RunConfig } from '../../config/types.js'
import { type Prompt, promptText } from '../../protocols/prompt.js'
import type { PromptImage } from '../../protocols/prompt-images.js'
import type { StructuredOutput } from '../../protocols/structured-parts.js'
import { seededRandom } from '../../random.js'
import type { Dataset } from '../../workload/dataset.js'
import type { ExactPromptSource } from '../../workload/exact-prompts.js'
import type { JobSpec } from '../../workload/jobs.js'
import { drawLength } from '../../workload/lengths.js'
import { parseAudioSpec, promptAudioSet } from '../../workload/prompt-audio-set.js'
import { parseImageSpec, promptImageSet } from '../../workload/prompt-image-set.js'
import { type BodyOptions, buildBody } from '../../workload/request-body.js'
import type { SessionSpec } from '../../workload/sessions.js'
import type { Tokenizer } from '../../workload/tokenizers.js'

/**
 * The run's prompts, built and serialized before any clock starts: request i uses prompt
 * i mod prompts.length. Each one carries the lengths it asks for, so the report can set what was
 * requested beside what the server counted and produced.
 */
export interface PlannedPrompt {
  body: Buffer
  /** Input tokens asked for: the drawn length (synthetic) or the conversation's own (dataset). */
  input_tokens: number
  /** max_tokens sent. */
  output_tokens: number
}

export interface WorkloadPlan {
  prompts: PlannedPrompt[]
  /** --sessions: the conversations the workers run turn by turn; `prompts` is then empty. */
  sessions?: SessionSpec[]
  /** --jobs: the jobs the workers run turn by turn; `prompts` is then empty. */
  jobs?: JobSpec[]
  /** Sessions or jobs with --tools: the functions every body the workers build offers. */
  structured?: StructuredOutput
  input_mean: number
  output_mean: number
  /**
   * Trace replay: prompts[first, first + count) are the warm-up's own (not measured, sharing no
   * prefix with a measured prompt); absent = warm-up requests take the next prompts like any other.
   */
  warmup_prompts?: { first: number; count: number }
  /**
   * Synthetic prompts with a drift control: the levels' prompts [first, first + count) and the
   * control's own after them, never sent before it (see LevelShare.prompts); absent = none reserved.
   */
  level_prompts?: { first: number; count: number }
  control_prompts?: { first: number; count: number }
  /** What the prompts are, in words (result metadata). */
  source: string
  /** Dataset rows that carry images of their own (JSONL `images`); absent when none do. */
  rows_with_images?: number
  /** The tokenizer the lengths are counted with. */
  tokenizer: string
}

export interface PlanSources {
  /** Model, endpoint, stream, ignore_eos: the endpoint's, the same in every body. */
  body: BodyOptions
  tokenizer: Tokenizer
  prompts: ExactPromptSource
  dataset: Dataset | null
  /** Local tokens to send for a requested server-side length (calibration); identity without it. */
  localLength: (tokens: number) => number
  /** Distinct synthetic prompts. */
  distinct: number
  /** Synthetic prompts beyond `distinct` kept for the drift control alone; absent or 0 = none. */
  controlReserve?: number
}

export function planWorkload(config: RunConfig, sources: PlanSources): WorkloadPlan {
  const { workload } = config
  // Length draws get their own stream so changing a length does not change the prompts' words.
  const random = seededRandom(workload.seed * 7919 + 17)
  const prompts: PlannedPrompt[] = []
  const spec = workload.images === null ? null : parseImageSpec(workload.images)
  const count = sources.dataset?.entries.length ?? sources.distinct
  const images = spec === null ? null : promptImageSet(spec, count, workload.seed)
  const audioSpec = workload.audio === null ? null : parseAudioSpec(workload.audio)
  const audio = audioSpec === null ? null : promptAudioSet(audioSpec, count, workload.seed)
  const make = (
    prompt: Prompt,
    input: number,
    fromDataset: number,
    own: readonly PromptImage[] = [],
  ): void => {
    const output = Math.max(1, drawLength(workload.output, random, fromDataset))
    // A dataset row's own images first, then --images' synthetic ones.
    const synthetic = images?.of(prompts.length) ?? []
    prompts.push({
      body: buildBody(
        sources.body,
        prompt,
        output,
        own.length === 0 ? synthetic : [...own, ...synthetic],
        audio?.of(prompts.length) ?? [],
      ),
      input_tokens: input,
      output_tokens: output,
    })
  }
  const { dataset } = sources
  if (dataset !== null) {
    for (const entry of dataset.entries) {
      const input = sources.tokenizer.count(promptText(entry.messages))
      make(entry.messages, input, entry.output_tokens ?? config.workload.output_tokens, entry.images)
    }
  } else {
    const reserve = sources.controlReserve ?? 0
    for (let id = 0; id < sources.distinct + reserve; id++) {
      const input = drawLength(workload.input, random, workload.input_tokens)
      make(sources.prompts.prompt(id, sources.localLength(input)), input, workload.output_tokens)
    }
  }
  const rowsWithImages = dataset?.entries.filter((entry) => entry.images !== undefined).length ?? 0
  const ownImages =
    rowsWithImages === 0
      ? ''
      : `; ${rowsWithImages} row${rowsWithImages === 1 ? '' : 's'} with images of their own`
  const withAudio =
    audioSpec === null || audio === null
      ? ''
      : `; ${audioSpec.count} synthetic ${audioSpec.seconds} s WAV clip${audioSpec.count === 1 ? '' : 's'} per prompt (${audio.distinct} distinct set${audio.distinct === 1 ? '' : 's'})`
  const withImages =
    spec === null || images === null
      ? ownImages
      : `; ${spec.count} synthetic ${spec.width}x${spec.height} PNG image${spec.count === 1 ? '' : 's'} per prompt (${images.distinct} distinct set${images.distinct === 1 ? '' : 's'}; input tokens requested are the text's, the server counts the images' beside)`
  const mean = (key: 'input_tokens' | 'output_tokens'): number =>
    Math.round(prompts.reduce((sum, p) => sum + p[key], 0) / Math.max(1, prompts.length))
  const reserved = dataset === null ? (sources.controlReserve ?? 0) : 0
  return {
    prompts,
    ...(reserved > 0
      ? {
          level_prompts: { first: 0, count: sources.distinct },
          control_prompts: { first: sources.distinct, count: reserved },
        }
      : {}),
    ...(rowsWithImages === 0 ? {} : { rows_with_images: rowsWithImages }),
    tokenizer: sources.tokenizer.name,
    input_mean: mean('input_tokens'),
    output_mean: mean('output_tokens'),
    source:
      (dataset === null
        ? `synthetic (seeded word prompts, seed ${workload.seed}${workload.shared_prefix > 0 ? `, ${workload.shared_prefix}-token shared prefix` : ''})`
        : `${dataset.path} (${dataset.format}, ${dataset.entries.length} prompts${dataset.skipped > 0 ? `, ${dataset.skipped} skipped` : ''})`) +
      withImages +
      withAudio,
  }
}
