import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { printable } from '../../src/printable.js'
import { NotTextError, notTextReason, readTextFile, TEXT_PROBE_BYTES } from '../../src/text-file.js'
import { tempDir } from '../helpers/run-config.js'

test('notTextReason: a NUL byte or bytes that are not UTF-8; UTF-8 text, even cut mid-character, is text', () => {
  assert.equal(notTextReason(Buffer.from('héllo {"a": 1}\n')), null)
  // "é" is two bytes: a probe that ends after the first is still text.
  assert.equal(notTextReason(Buffer.from('hé').subarray(0, 2)), null)
  assert.equal(notTextReason(Buffer.from('ab\0c')), 'a NUL byte at byte 3')
  assert.match(notTextReason(Buffer.from([0x61, 0xff, 0x62])) ?? '', /not UTF-8/)
  // UTF-16 (what some Windows tools write) has NULs between ASCII letters.
  assert.match(notTextReason(Buffer.from('{"a"', 'utf16le')) ?? '', /NUL byte/)
})

test('readTextFile: text without its byte-order mark; binary data refused from its first bytes', () => {
  const dir = tempDir()
  const text = join(dir, 'text.jsonl')
  writeFileSync(text, `\uFEFF{"prompt": "${'x'.repeat(TEXT_PROBE_BYTES)}"}\n`)
  assert.equal(readTextFile(text), `{"prompt": "${'x'.repeat(TEXT_PROBE_BYTES)}"}\n`)
  const binary = join(dir, 'binary.bin')
  writeFileSync(binary, Buffer.alloc(TEXT_PROBE_BYTES * 4))
  assert.throws(
    () => readTextFile(binary),
    (error: unknown) => {
      assert.ok(error instanceof NotTextError)
      assert.equal(error.message, 'not a text file (a NUL byte at byte 1)')
      return true
    },
  )
  assert.throws(() => readTextFile(join(dir, 'missing')), { code: 'ENOENT' })
})

test('printable: control characters as \\xNN; line breaks, tabs and other text kept', () => {
  assert.equal(printable('a\0b\x1b[31mc\rd\x7f\u0085'), 'a\\x00b\\x1b[31mc\\x0dd\\x7f\\x85')
  assert.equal(printable('line 1\n\tline 2 é 日本'), 'line 1\n\tline 2 é 日本')
})
