import type { SimReasoning } from '../../sim/reasoning.js'
import { type FlagSpec, numberFlag, type ParsedFlags, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'

/** The simulator's reasoning-phase flags, shared by `sim` and `demo` (whose simulator is a child process). */
export const SIM_REASONING_FLAGS: FlagSpec[] = [
  {
    name: 'reasoning-tokens',
    type: 'string',
    value: 'N',
    help: 'chat: the first N output tokens of each response are reasoning (reasoning_content deltas, usage reasoning_tokens)',
    default: '0',
  },
  {
    name: 'hide-reasoning',
    type: 'boolean',
    help: 'with --reasoning-tokens: think without sending it (no reasoning events; usage still counts them), as OpenAI o-series',
  },
]

/** --reasoning-tokens and --hide-reasoning as the simulator takes them; a bad value is a usage error. */
export function simReasoning(flags: ParsedFlags): SimReasoning | undefined {
  const tokens = numberFlag(flags, 'reasoning-tokens') ?? 0
  if (!(Number.isInteger(tokens) && tokens >= 0))
    throw new CliError(
      `--reasoning-tokens: expected a non-negative integer, got ${stringFlag(flags, 'reasoning-tokens')}`,
      EXIT.usage,
    )
  const hidden = flags['hide-reasoning'] === true
  if (hidden && tokens === 0)
    throw new CliError(
      '--hide-reasoning needs --reasoning-tokens N (N > 0): there is no thinking to hide',
      EXIT.usage,
    )
  return tokens === 0 ? undefined : { tokens, hidden }
}

/** The same flags for a simulator started as a child process (`demo`). */
export function simReasoningArgs(flags: ParsedFlags): string[] {
  const reasoning = simReasoning(flags)
  if (reasoning === undefined) return []
  return [
    '--reasoning-tokens',
    String(reasoning.tokens),
    ...(reasoning.hidden === true ? ['--hide-reasoning'] : []),
  ]
}
