import type { ChatMessage } from '../protocols/prompt.js'
import { ancestorsOf, type JobSpec } from './jobs.js'
import { type BodyOptions, buildBody } from './request-body.js'
import { assistantMessage, inputMessages, NO_REPLY, type TurnReply } from './tool-turn.js'

/**
 * One job as it runs: each turn's request is the preamble, then every ancestor's delta and the reply
 * the server generated for it in this run (in turn order), then the turn's own delta. Along a chain
 * that is exactly a session's history (session-body.ts), so turn k's request extends turn k-1's and
 * the server can serve it from its prefix cache; after a fan-out each branch extends the trunk. A
 * turn that follows a reply with tool calls in the history sends its delta as the tools' results
 * (tool-turn.ts): each branch answers its parent's calls with its own delta, and at a join the turn
 * just before in turn order is the one answered. Built on the load-generating thread, where the replies are.
 */
export class JobConversation {
  private readonly replies: TurnReply[] = []
  private readonly ancestors: number[][]

  constructor(
    readonly spec: JobSpec,
    private readonly options: BodyOptions,
  ) {
    this.ancestors = spec.turns.map((_, t) => ancestorsOf(spec.turns, t))
  }

  /** Turn `turn`'s request body; every ancestor has replied by then (the loop sends it only after its parents). */
  bodyFor(turn: number): Buffer {
    const history: ChatMessage[] = [...this.spec.preamble]
    let previous: TurnReply | null = null
    for (const a of this.ancestors[turn] as number[]) {
      history.push(...inputMessages(previous, this.spec.turns[a]?.input as string))
      previous = this.replies[a] ?? NO_REPLY
      history.push(assistantMessage(previous))
    }
    const own = this.spec.turns[turn]
    if (own === undefined) throw new RangeError(`job ${this.spec.id} has no turn ${turn}`)
    history.push(...inputMessages(previous, own.input))
    return buildBody(this.options, history, own.output_tokens)
  }

  /** The reply to `turn` (its answer without reasoning, its tool calls) joins the history of its descendants. */
  reply(turn: number, reply: TurnReply): void {
    this.replies[turn] = reply
  }
}
