import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { renderMarkdown } from '../../src/report/markdown.js'
import type { BenchResult } from '../../src/result/bench-result.js'

/** A stored result (test/fixtures/rendered/README.md), its outside text replaced with HTML. */
function resultWithHtml(): BenchResult {
  const path = fileURLToPath(new URL('../fixtures/rendered/conc/expected/bench_result.json', import.meta.url))
  const result = JSON.parse(readFileSync(path, 'utf8')) as BenchResult
  result.meta.target.model = '<img src=x onerror=alert(1)>'
  result.meta.target.base_url = 'http://127.0.0.1:1/<b>'
  const level = result.levels.at(-1) as BenchResult['levels'][0]
  level.failed = 1
  level.errors.http_5xx = 1
  level.error_messages = [{ message: '<script>alert(2)</script> & more', count: 1, numbers_vary: false }]
  level.notes = ['<iframe src=evil>']
  return result
}

test('summary.md shows the model name, URL, server messages and notes as text, never as HTML', () => {
  const markdown = renderMarkdown(resultWithHtml())
  for (const tag of ['<img', '<b>', '<script', '<iframe'])
    assert.ok(!markdown.includes(tag), `${tag} in summary.md:\n${markdown}`)
  assert.match(markdown, /^# llmbench: &lt;img src=x onerror=alert\(1\)>$/m)
  assert.match(markdown, /&lt;script>alert\(2\)&lt;\/script> & more/)
  assert.match(markdown, /note: &lt;iframe src=evil>/)
})
