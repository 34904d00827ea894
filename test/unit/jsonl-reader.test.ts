import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import fc from 'fast-check'
import { forEachLine, readRecords } from '../../src/records/jsonl-reader.js'
import { tempDir } from '../helpers/run-config.js'

function linesOf(path: string, chunkBytes: number): { line: string; number: number; last: boolean }[] {
  const lines: { line: string; number: number; last: boolean }[] = []
  forEachLine(path, (line, number, last) => lines.push({ line, number, last }), chunkBytes)
  return lines
}

test('forEachLine gives the lines split("\\n") gives, for any text and any chunk size (multi-byte characters cut between chunks)', () => {
  const dir = tempDir()
  let file = 0
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.string(), fc.constantFrom('é', '€', '😀', '\n', '\n\n', '"x"')), {
        maxLength: 30,
      }),
      fc.integer({ min: 1, max: 9 }),
      (parts, chunkBytes) => {
        const text = parts.join('')
        const path = join(dir, `${file++}.jsonl`)
        writeFileSync(path, text)
        const expected = text.split('\n')
        const endsWithNewline = expected.at(-1) === ''
        if (endsWithNewline) expected.pop()
        const got = linesOf(path, chunkBytes)
        assert.deepEqual(
          got.map(({ line }) => line),
          expected,
        )
        assert.deepEqual(
          got.map(({ number }) => number),
          expected.map((_, i) => i + 1),
        )
        // Only a last line with no newline after it is "last".
        assert.deepEqual(
          got.map(({ last }) => last),
          expected.map((_, i) => !endsWithNewline && i === expected.length - 1),
        )
      },
    ),
    { numRuns: 300 },
  )
})

test('readRecords: records in order, a torn last line skipped and reported, a malformed middle line named', () => {
  const dir = tempDir()
  const good = join(dir, 'good.jsonl')
  writeFileSync(good, '{"seq":0}\n\n{"seq":1,"text":"é😀"}\n')
  assert.deepEqual(readRecords(good), { records: [{ seq: 0 }, { seq: 1, text: 'é😀' }], tornLastLine: false })

  const torn = join(dir, 'torn.jsonl')
  writeFileSync(torn, '{"seq":0}\n{"seq":1,"te')
  assert.deepEqual(readRecords(torn), { records: [{ seq: 0 }], tornLastLine: true })
  // Cut right after its newline was lost, or with its newline written: the same torn record.
  writeFileSync(torn, '{"seq":0}\n{"seq":1,"te\n')
  assert.deepEqual(readRecords(torn), { records: [{ seq: 0 }], tornLastLine: true })

  const broken = join(dir, 'broken.jsonl')
  writeFileSync(broken, '{"seq":0}\nnot json\n{"seq":2}\n')
  assert.throws(() => readRecords(broken), /broken\.jsonl: line 2 is not a JSON record/)
})

test('readRecords reads a file of several chunks (a line longer than a chunk included)', () => {
  const dir = tempDir()
  const path = join(dir, 'big.jsonl')
  const long = 'x'.repeat(3 << 20)
  const records = [
    { seq: 0, text: long },
    ...Array.from({ length: 20_000 }, (_, seq) => ({ seq: seq + 1, text: 'é' })),
  ]
  writeFileSync(path, `${records.map((record) => JSON.stringify(record)).join('\n')}\n`)
  const read = readRecords(path)
  assert.equal(read.tornLastLine, false)
  assert.equal(read.records.length, records.length)
  assert.equal((read.records[0] as unknown as { text: string }).text, long)
  assert.deepEqual(read.records.at(-1), records.at(-1))
})
