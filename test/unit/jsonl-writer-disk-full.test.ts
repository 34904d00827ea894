import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { DiskFullError } from '../../src/records/disk-full.js'
import { JsonlWriter } from '../../src/records/jsonl-writer.js'
import { makeRecord } from '../helpers/records.js'

// /dev/full answers every write with ENOSPC: the disk-full path without root or a mount.
test('a write that finds no space never throws: the writer fails once, names its file, and drops later records', {
  skip: existsSync('/dev/full') ? false : 'no /dev/full on this system',
}, () => {
  const failures: Error[] = []
  const writer = new JsonlWriter('/dev/full', (error) => failures.push(error))
  try {
    writer.append(makeRecord({}))
    assert.doesNotThrow(() => writer.flush())
    assert.equal(failures.length, 1)
    assert.ok(failures[0] instanceof DiskFullError)
    assert.match(failures[0].message, /no space left on device writing \/dev\/full/)
    assert.equal(writer.failure, failures[0])
    writer.append(makeRecord({}))
    writer.flush()
    assert.equal(failures.length, 1, 'told once')
  } finally {
    writer.close()
  }
})
