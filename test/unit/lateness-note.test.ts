import assert from 'node:assert/strict'
import { test } from 'node:test'
import { summarizeSamples } from '../../src/metrics/distribution.js'
import {
  lateForConnecting,
  type ScheduleFigures,
  scheduleFigures,
} from '../../src/metrics/workload-figures.js'
import { latenessNote } from '../../src/report/workload-notes.js'
import { makeRecord } from '../helpers/records.js'

/** A measured send `lateMs` after its intended time, `connectMs` of it spent connecting. */
const send = (lateMs: number, connectMs?: number) =>
  makeRecord({
    scheduled_at: 0,
    sent_at: lateMs,
    ...(connectMs === undefined ? {} : { connection_wait_ms: connectMs }),
  })

/** A level whose TTFT from the send is `ttftMs` for every request, with this schedule. */
function level(schedule: ScheduleFigures, ttftMs: number) {
  return {
    schedule,
    ttft_ms: summarizeSamples([ttftMs, ttftMs], [50, 95, 99]),
    ttft_ms_from_intended: summarizeSamples([ttftMs + (schedule.lateness_max_ms ?? 0)], [50, 95, 99]),
  }
}

test('a late send is late for its connection when connecting was at least half its wait', () => {
  assert.equal(lateForConnecting({ scheduled_at: 0, sent_at: 1020, connection_wait_ms: 1015 }), true)
  assert.equal(
    lateForConnecting({ scheduled_at: 0, sent_at: 100, connection_wait_ms: 50 }),
    true,
    'exactly half',
  )
  assert.equal(lateForConnecting({ scheduled_at: 0, sent_at: 100, connection_wait_ms: 49.9 }), false)
  assert.equal(lateForConnecting({ scheduled_at: 0, sent_at: 100 }), false, 'older records: no connect time')
  assert.equal(
    lateForConnecting({ scheduled_at: 0, sent_at: 19, connection_wait_ms: 19 }),
    false,
    'not late at all',
  )
})

test('sends late for their connection do not make the client fall behind; its own late sends do', () => {
  const onTime = Array.from({ length: 30 }, () => send(1, 0.5))
  const accept = scheduleFigures([...onTime, send(1020, 1015), send(1030, 1012)], null, null)
  assert.equal(accept.late, 2)
  assert.equal(accept.late_connecting, 2)
  assert.equal(accept.connection_wait_ms_max, 1015)
  assert.equal(accept.fell_behind, false)
  const own = scheduleFigures([...onTime, send(300, 0.4), send(320, 0.3)], null, 4)
  assert.equal(own.late_connecting, 0)
  assert.equal(own.fell_behind, true)
  assert.match(
    own.reason ?? '',
    /2 of 32 requests sent over 20 ms .* with their connection ready \(at most 4 in flight\)/,
  )
})

test('lateness in proportion: a few ms against seconds of TTFT is a note, not an alarm', () => {
  // 20 of 40 sends 28 ms late: over 2% of sends, so the client did fall behind its timer; TTFT is 2.4 s.
  const sends = [
    ...Array.from({ length: 20 }, () => send(1, 0.2)),
    ...Array.from({ length: 20 }, () => send(28, 0.2)),
  ]
  const minor = scheduleFigures(sends, null, null)
  assert.equal(minor.fell_behind, true)
  assert.equal(
    latenessNote(level(minor, 2400)),
    'sends were up to 28 ms late (p95, 1% of TTFT p50 2400 ms): no effect on the figures',
  )
  // The same lateness against a TTFT just under and just over ten times it: the threshold's two sides.
  assert.match(latenessNote(level(minor, 281)) ?? '', /^sends were up to 28 ms late .*no effect/)
  const alarm = latenessNote(level(minor, 279)) ?? ''
  assert.match(
    alarm,
    /^the client fell behind its schedule \(lateness p95 28 ms, 10% of TTFT p50 279 ms\): 20 of 40 requests/,
  )
  assert.match(alarm, /TTFT p99 from the intended time \d+ ms vs 279 ms from the send/)
  assert.doesNotMatch(alarm, /FELL BEHIND/)
})

test("lateness from the server's accept queue is said so, and not blamed on the client", () => {
  const onTime = Array.from({ length: 30 }, () => send(1, 0.5))
  const accept = scheduleFigures(
    [...onTime, ...Array.from({ length: 10 }, (_, i) => send(1010 + i, 1005 + i))],
    null,
    null,
  )
  const note = latenessNote(level(accept, 2000)) ?? ''
  assert.match(
    note,
    /^sends were late \(p95 1\d{3} ms, 5\d% of TTFT p50 2000 ms\); 10 of 10 late sends waited for their connection, up to 1014 ms: the server's accept queue was full/,
  )
  assert.match(note, /not the client's schedule/)
  assert.doesNotMatch(note, /fell behind/)
  // A short connect wait is TCP/TLS set-up, not a full backlog.
  const slowTls = scheduleFigures([...onTime, send(80, 70), send(90, 75)], null, null)
  assert.match(
    latenessNote(level(slowTls, 200)) ?? '',
    /2 of 2 late sends waited for their connection, up to 75 ms: TCP\/TLS set-up/,
  )
})

test('nothing late, nothing said', () => {
  const onTime = scheduleFigures(
    Array.from({ length: 10 }, () => send(2, 0.5)),
    null,
    null,
  )
  assert.equal(latenessNote(level(onTime, 100)), null)
  assert.equal(latenessNote({ ...level(onTime, 100), schedule: null }), null, 'concurrency mode')
})
