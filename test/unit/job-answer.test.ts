import assert from 'node:assert/strict'
import { test } from 'node:test'
import { answerOf } from '../../src/analysis/answer.js'
import type { JobSaturation } from '../../src/analysis/job-knee.js'

/** A job run's judged fields: levels count jobs (meta.workload.jobs), a request knee at 3. */
function jobRun(
  job: JobSaturation | undefined,
  requestKnee: number | null = 3,
): Parameters<typeof answerOf>[0] {
  return {
    meta: { load: { mode: 'concurrency' }, workload: { jobs: { steps: 3, fan_out: 2, tool_wait_s: 0.5 } } },
    saturation: requestKnee === null ? null : { value: requestKnee, confidence: 'clear' },
    saturation_summary: 'per request (output tokens/s and TTFT): ...',
    capacity: null,
    capacity_summary: null,
    ...(job === undefined ? {} : { job_saturation: job }),
  } as never
}

const ON = 'jobs per hour and JCT p90'

test('a job run answers with the knee of jobs, in jobs', () => {
  const answer = answerOf(
    jobRun({ read_on: ON, value: 2, confidence: 'clear', bracket: null, reason: 'jobs per hour +4%' }),
  )
  assert.deepEqual(
    { value: answer.value, from: answer.from, confidence: answer.confidence },
    { value: 2, from: 'knee', confidence: 'clear' },
  )
  assert.equal(answer.text, 'Capacity: 2 concurrent jobs (the knee of jobs per hour and JCT p90)')
  const hedged = answerOf(
    jobRun({ read_on: ON, value: 2, confidence: 'uncertain', bracket: [2, 4], reason: 'unclear step' }),
  )
  assert.equal(hedged.confidence, 'uncertain')
  assert.equal(
    hedged.text,
    'Capacity: 2 concurrent jobs (the knee of jobs per hour and JCT p90, uncertain: between 2 and 4)',
  )
})

test("jobs placing no knee: the requests' knee, hedged, with why jobs did not; neither: no knee", () => {
  const reason = 'no clear knee: jobs per hour from 2 to 4 +6%, within the noise of 12 and 13 complete jobs'
  const fallback = answerOf(jobRun({ read_on: ON, value: null, confidence: null, bracket: null, reason }))
  assert.equal(fallback.value, 3)
  assert.equal(fallback.confidence, 'uncertain')
  assert.equal(fallback.text, `Capacity: 3 concurrent jobs (the knee of the requests; per job, ${reason})`)
  const none = answerOf(jobRun({ read_on: ON, value: null, confidence: null, bracket: null, reason }, null))
  assert.deepEqual({ value: none.value, from: none.from }, { value: null, from: null })
  assert.equal(none.text, `No knee found: per job, ${reason}`)
})

test('a run without jobs still counts streams', () => {
  const plain = answerOf({
    ...(jobRun(undefined) as object),
    meta: { load: { mode: 'concurrency' } },
  } as never)
  assert.equal(plain.text, 'Capacity: 3 concurrent streams (the knee)')
})
