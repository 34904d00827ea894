import type { ChatMessage } from '../protocols/prompt.js'
import { type BodyOptions, buildBody } from './request-body.js'
import type { SessionSpec } from './sessions.js'

/**
 * One session as it runs: the history grows by each user turn and by the reply the server actually
 * generated for it, so turn k's request is turn k-1's request plus two messages, a prefix the
 * server can serve from its cache. Built on the load-generating thread, since a reply only exists
 * there; a session's bodies cannot be serialized ahead like single prompts.
 */
export class SessionConversation {
  private readonly history: ChatMessage[]
  private turn = 0

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

  /** The next turn's request body: the history so far plus the next user message. */
  nextBody(): Buffer {
    const user = this.spec.turns[this.turn] as string
    this.history.push({ role: 'user', content: user })
    return buildBody(this.options, this.history, this.spec.output_tokens[this.turn] as number)
  }

  /** The reply to the turn just sent (empty when it failed or said nothing) joins the history. */
  reply(text: string): void {
    this.history.push({ role: 'assistant', content: text })
    this.turn++
  }
}
