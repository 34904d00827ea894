import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MixedRunsError, recordsOfOneRun } from '../../src/records/run-identity.js'
import { makeRecord } from '../helpers/records.js'

const rec = (seq: number, run?: string, shard?: number) =>
  makeRecord({ seq, ...(run === undefined ? {} : { run }), ...(shard === undefined ? {} : { shard }) })

test('one run per file: ids separate two runs, shards of a merged run keep their own ids', () => {
  const one = [rec(-1, 'a'), rec(0, 'a'), rec(1, 'a')]
  assert.deepEqual(recordsOfOneRun(one, 'a', 'f'), { records: one, ignored: 0 })
  // A merged run: each shard wrote its own id; that is one run.
  const merged = [rec(0, 'a', 0), rec(0, 'b', 1), rec(1, 'a', 0)]
  assert.equal(recordsOfOneRun(merged, 'a', 'f').records.length, 3)
  // Two runs appended: the one the summary names is kept.
  const two = [...one, rec(-1, 'b'), rec(0, 'b'), rec(1, 'b')]
  const kept = recordsOfOneRun(two, 'b', 'f')
  assert.equal(kept.ignored, 3)
  assert.deepEqual(
    kept.records.map((r) => r.run),
    ['b', 'b', 'b'],
  )
  assert.throws(() => recordsOfOneRun(two, 'c', 'f'), MixedRunsError)
  assert.throws(
    () => recordsOfOneRun(two, undefined, 'f'),
    /holds the records of more than one run \(ids a, b\)/,
  )
})

test('records without ids (older versions): a repeated worker sequence number means two runs', () => {
  const old = [rec(-1), rec(0), rec(1), rec(-1), rec(2)]
  assert.equal(recordsOfOneRun(old, undefined, 'f').records.length, 5, 'probes share seq -1')
  assert.throws(
    () => recordsOfOneRun([...old, rec(0)], undefined, 'f'),
    /request 0 of worker 0 appears again as record 6/,
  )
})
