import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tooDeep } from '../../src/json-nesting.js'

test('tooDeep: the bracket one level past the limit, with its line; at the limit, null', () => {
  const atLimit = `${'['.repeat(4)}${']'.repeat(4)}`
  assert.equal(tooDeep(atLimit, 4), null)
  const over = `{\n "a": ${'{"a":'.repeat(4)}1${'}'.repeat(5)}`
  assert.deepEqual(tooDeep(over, 4), { offset: over.lastIndexOf('{'), line: 2 })
})

test('tooDeep: brackets in strings (with escaped quotes) and JSONC comments do not count', () => {
  const text = [
    '{',
    '  // [[[[[[ a comment',
    '  /* {{{{{{',
    '     [[[[[[ */',
    '  "a": "[[[[[[\\"[[[[[[",',
    '  "b": [1]',
    '}',
  ].join('\n')
  assert.equal(tooDeep(text, 2), null)
  assert.deepEqual(tooDeep(`${text}\n[[[`, 2), { offset: text.length + 3, line: 8 })
})

test('tooDeep: closers never take the depth below zero; a string left open ends at its line', () => {
  assert.deepEqual(tooDeep(']]]]]][[[', 2), { offset: 8, line: 1 })
  assert.equal(tooDeep('"[[[[[\n]', 2), null)
  assert.deepEqual(tooDeep('"open\n[[[', 2), { offset: 8, line: 2 })
})

test('tooDeep: 200,000 levels are scanned without recursion', () => {
  const deep = '['.repeat(200_000) + ']'.repeat(200_000)
  assert.deepEqual(tooDeep(deep, 128), { offset: 128, line: 1 })
  assert.equal(tooDeep(deep, 200_000), null)
})
