import type { Scheduler } from '../clock.js'
import type { RequestRecord } from '../records/types.js'
import type { SessionConversation } from '../workload/session-body.js'
import { NO_REPLY, turnReply } from '../workload/tool-turn.js'

/** Where a thread's sessions come from: each call, the next one (distinct across threads and shards). */
export interface SessionSource {
  next(): { id: string; promptId: number; conversation: SessionConversation }
  /** Pause between a turn's reply and the next turn, ms (a user reading and typing). */
  thinkMs: number
}

/**
 * Sends one turn (its retries included) and resolves with its last record, already passed on.
 * `wantedAt` is when the turn was due: the previous turn's end plus the think time.
 */
export type SendTurn = (
  promptId: number,
  body: Buffer,
  wantedAt: number | null,
  stamp: (record: RequestRecord) => void,
) => Promise<RequestRecord>

/**
 * One stream of a closed loop in session mode: it runs one session's turns in order, then the
 * next session, so the level's concurrency counts sessions in flight. A new session starts only
 * while `claim` allows (the level's request budget and deadline); once started, a session runs to
 * its last turn unless the level's deadline passes, the user stops, or a turn fails (its reply is
 * missing, so no later turn could carry the history). Each turn after the first costs one request
 * of the budget (`spend`), so a level of N requests sends at least N and ends on whole sessions.
 */
export async function sessionLoop(
  sessions: SessionSource,
  clock: Scheduler<unknown>,
  claim: () => boolean,
  spend: () => boolean,
  sendTurn: SendTurn,
): Promise<void> {
  let wantedAt: number | null = null
  while (claim()) {
    const { id, promptId, conversation } = sessions.next()
    for (let turn = 0; turn < conversation.turns; turn++) {
      if (turn > 0) {
        if (sessions.thinkMs > 0) {
          await new Promise<void>((resolve) => clock.after(sessions.thinkMs, resolve))
          wantedAt = clock.now()
        }
        // Asked after the pause: a Ctrl-C or the level's end during it sends nothing more.
        if (!spend()) return
      }
      const requested = conversation.spec.output_tokens[turn] as number
      const record = await sendTurn(promptId, conversation.nextBody(), wantedAt, (r) => {
        r.session = id
        r.turn = turn
        // The history's length is the server's to count (usage.prompt_tokens); max_tokens is ours.
        r.requested_output_tokens = requested
      })
      wantedAt = record.end_at
      conversation.reply(record.error === null ? turnReply(record, `call_${promptId}_${turn}`) : NO_REPLY)
      if (record.error !== null) break
    }
  }
}
