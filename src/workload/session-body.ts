import type { ChatMessage } from '../protocols/prompt.js'
import { type BodyOptions, buildBody } from './request-body.js'
import type { SessionSpec } from './sessions.js'
import { assistantMessage, inputMessages, type TurnReply } from './tool-turn.js'

/**
 * One session as it runs: the history grows by each user turn and by the reply the server actually
 * generated for it, so turn k's request is turn k-1's request plus two messages, a prefix the
 * server can serve from its cache. A reply that called tools is followed by the tools' results in
 * place of the next user message (tool-turn.ts). Built on the load-generating thread, since a reply
 * only exists there; a session's bodies cannot be serialized ahead like single prompts.
 */
export class SessionConversation {
  private readonly history: ChatMessage[]
  private turn = 0
  /** The last reply, which the next turn's input answers (its tool calls, if any). */
  private last: TurnReply | null = null

  constructor(
    readonly spec: SessionSpec,
    private readonly options: BodyOptions,
  ) {
    this.history = [...spec.preamble]
  }

  get turns(): number {
    return this.spec.turns.length
  }

  /** The index of the turn the next body is for. */
  get next(): number {
    return this.turn
  }

  /** The next turn's request body: the history so far plus the next input (a user message, or the tools' results). */
  nextBody(): Buffer {
    const input = this.spec.turns[this.turn] as string
    this.history.push(...inputMessages(this.last, input))
    return buildBody(this.options, this.history, this.spec.output_tokens[this.turn] as number)
  }

  /** The reply to the turn just sent (empty when it failed or said nothing) joins the history. */
  reply(reply: TurnReply): void {
    this.history.push(assistantMessage(reply))
    this.last = reply
    this.turn++
  }
}
