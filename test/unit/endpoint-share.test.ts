import assert from 'node:assert/strict'
import { test } from 'node:test'
import { endpointOf, endpointStreams, recordsOfEndpoint } from '../../src/metrics/endpoint-share.js'
import { recordSchema } from '../../src/records/record-schema.js'
import { makeRecord } from '../helpers/records.js'

test("a record's endpoint: its target's, or 0 in a one-endpoint run (old records stay readable)", () => {
  const old = makeRecord({ seq: 1 })
  const second = makeRecord({ seq: 2, target: { endpoint: 1, model: 0 } })
  const first = makeRecord({ seq: 3, target: { endpoint: 0, model: 1 } })
  assert.equal(endpointOf(old), 0)
  assert.equal(endpointOf(second), 1)
  assert.deepEqual(
    recordsOfEndpoint([old, second, first], 0).map((r) => r.seq),
    [1, 3],
  )
  assert.deepEqual(
    recordsOfEndpoint([old, second, first], 1).map((r) => r.seq),
    [2],
  )
  const schema = recordSchema()
  assert.ok(schema.safeParse(JSON.parse(JSON.stringify(old))).success, 'a record without target')
  assert.ok(schema.safeParse(JSON.parse(JSON.stringify(second))).success, 'a record with a target')
  assert.ok(!schema.safeParse({ ...second, target: { endpoint: -1, model: 0 } }).success, 'a negative index')
  assert.ok(!schema.safeParse({ ...second, target: 'http://a' }).success, 'a target that is not indexes')
})

test("an endpoint's streams are its weight's share of the level's concurrency", () => {
  assert.equal(endpointStreams(8, 1, 4), 2)
  assert.equal(endpointStreams(8, 3, 4), 6)
  assert.equal(endpointStreams(3, 1, 2), 1.5)
  assert.throws(() => endpointStreams(8, 5, 4), /expected 0 ≤ weight ≤ total/)
  assert.throws(() => endpointStreams(8, 0, 0), /total > 0/)
})
