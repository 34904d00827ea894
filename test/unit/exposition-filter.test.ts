import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ExpositionFilter, type FilterOutcome } from '../../src/server-metrics/exposition-filter.js'
import { parseExposition } from '../../src/server-metrics/prometheus-text.js'
import { mapScrape, VOCABULARY_FAMILIES } from '../../src/server-metrics/vocabulary.js'
import { manyModelsExposition } from '../helpers/big-exposition.js'

/** Real scrapes of each engine: see test/fixtures/metrics/README.md. */
const DIR = fileURLToPath(new URL('../fixtures/metrics/', import.meta.url))

/** The text through the filter in chunks of `size` characters (lines torn across chunks). */
function filtered(text: string, model: string | null, size = 97): FilterOutcome {
  const filter = new ExpositionFilter(VOCABULARY_FAMILIES, model)
  for (let i = 0; i < text.length; i += size) filter.push(text.slice(i, i + size))
  return filter.end()
}

const valuesOf = (text: string) => mapScrape(parseExposition(text)).values

test('every engine recording: the vocabulary reads the same values from the cut as from the whole body', () => {
  for (const file of readdirSync(DIR).filter((name) => name.endsWith('.prom'))) {
    const text = readFileSync(join(DIR, file), 'utf8')
    // The recordings' own model (vLLM, SGLang, TensorRT-LLM: Qwen3 / Llama; Dynamo's frontend in lower case).
    const model = /model(?:_name)?="([^"]+)"/.exec(text)?.[1] ?? null
    const whole = valuesOf(text)
    const cut = filtered(text, model === null ? null : model.toUpperCase())
    if (Object.keys(whole.sources).length === 0) continue
    assert.deepEqual(valuesOf(cut.text), whole, file)
    assert.ok(cut.kept < cut.lines, `${file}: ${cut.kept} of ${cut.lines} lines kept`)
    assert.equal(cut.other_model_lines, 0, file)
  }
})

test("several models on one server: only the run's model's series; none of it: all, and said", () => {
  const text = manyModelsExposition(50, 'Qwen/Qwen3-0.6B', 2)
  const own = filtered(text, 'qwen/qwen3-0.6b')
  assert.equal(own.model_matched, true)
  assert.equal(own.other_model_lines, 49 * 7, 'running, waiting, tokens, 4 histogram lines per other model')
  const values = valuesOf(own.text)
  assert.equal(values.gauges.running, 2)
  assert.equal(values.counters.generation_tokens, 1000)
  assert.equal(values.histograms.server_ttft?.count, 2)
  // The run sends a name no series carries (a served-model-name alias): every series is kept and added.
  const none = filtered(text, 'alias')
  assert.equal(none.model_matched, false)
  assert.equal(valuesOf(none.text).gauges.running, 2 + 49 * 3)
  // The run's model unknown: no filter.
  assert.equal(valuesOf(filtered(text, null).text).gauges.running, 2 + 49 * 3)
})

test('a body with none of the vocabulary keeps nothing but its head, which tells metrics from a page', () => {
  const other = filtered('# TYPE node_load1 gauge\nnode_load1 0.5\n', 'm')
  assert.equal(other.kept, 0)
  assert.doesNotThrow(() => parseExposition(other.head))
  const page = filtered('<html><body>login</body></html>\n', 'm')
  assert.equal(page.kept, 0)
  assert.throws(() => parseExposition(page.head))
})
