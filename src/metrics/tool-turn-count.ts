import type { RequestRecord } from '../records/types.js'

/**
 * How many turns of a session or job called tools (--tools): those whose calls came as the API's
 * tool-call deltas, the ones a session's next turn answers with the tools' results
 * (workload/tool-turn.ts). A call the engine left in the answer's text is counted by the record's
 * tool_calls but went back as text, so it is no tool-call turn here.
 */
export class ToolTurnCount {
  /** Requests the tool check saw (a run with tools); 0 = no figure. */
  private checked = 0
  private calls = 0

  add(record: RequestRecord): void {
    if (record.tool_calls === undefined) return
    this.checked++
    if (record.tool_calls > 0 && record.tool_call_source === 'deltas') this.calls++
  }

  /** `{tool_call_turns}` when the run had tools, else nothing (the field stays absent). */
  figure(): { tool_call_turns?: number } {
    return this.checked === 0 ? {} : { tool_call_turns: this.calls }
  }
}
