/**
 * `npm run bench:model -- --kit`: the capacity model's held-out accuracy on the real engine kit
 * (../shared/engines/llama.cpp, issue 39 item 4). For each slot count (4 and 2 unless --slots):
 *   1. start llama.cpp with that many slots (one server at a time, killed after);
 *   2. `llmbench model --calibrate` against it, once (its own budget, printed with the time taken);
 *   3. each held-out workload measured with `llmbench run` (384/24 and 24/160, --ignore-eos), then
 *      `predict --model-file` on the same workload and levels;
 *   4. predicted against measured per level: output tok/s (steady where the level had a steady
 *      window, as the run reports it), TTFT p50, TPOT p50, whether the measured throughput fell
 *      inside the 90% interval; the knee predicted against the run's.
 * Wall-clock, minutes, and it loads the CPU: not a test. Needs `npx tsc -p tsconfig.json` first (runs dist/).
 * Options: --slots 4,2  --requests N (per held-out level, default 16)  --budget-s N  --keep DIR  --reuse
 * (a model file already in --keep is taken as the calibration)
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')
const CLI = join(ROOT, 'dist', 'cli', 'main.js')
const KIT = join(ROOT, '..', 'shared', 'engines', 'llama.cpp', 'start.sh')

interface HeldOut {
  input: number
  output: number
  /** Requests per level: a long output costs more per request. */
  requests: (base: number) => number
}

const WORKLOADS: HeldOut[] = [
  { input: 384, output: 24, requests: (base) => base },
  { input: 24, output: 160, requests: (base) => Math.max(8, Math.round(base * 0.6)) },
]

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()))
    })
  })
}

function cli(args: string[]): string {
  const out = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  process.stderr.write(
    out.stderr
      .split('\n')
      .filter((line) => line.length > 0 && !line.includes('OPENAI_API_KEY'))
      .map((line) => `  | ${line}\n`)
      .join(''),
  )
  if (out.status !== 0 && out.status !== 1) throw new Error(`llmbench ${args[0]} exited ${out.status}`)
  return out.stdout
}

interface Row {
  slots: number
  workload: string
  level: number
  tput: [number, number]
  inside: boolean
  ttft: [number | null, number | null]
  tpot: [number | null, number | null]
}

const rel = (p: number | null, m: number | null) => (p === null || m === null || !(m > 0) ? null : p / m - 1)
const pct = (x: number | null) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`)
const fix = (x: number | null, d = 1) => (x === null ? '–' : x.toFixed(d))

async function oneSlotCount(
  slots: number,
  dir: string,
  base: number,
  budget: string | undefined,
  rows: Row[],
) {
  const port = await freePort()
  const pid = Number(execFileSync('bash', [KIT, String(port), String(slots)], { encoding: 'utf8' }).trim())
  const url = `http://127.0.0.1:${port}`
  const knees: string[] = []
  try {
    const file = join(dir, `model-${slots}.json`)
    console.error(`\n# ${slots} slots: calibrating ${url}`)
    // --reuse: a model file already in --keep is the calibration (a bench cut after it resumes there).
    if (!(process.argv.includes('--reuse') && existsSync(file)))
      cli([
        'model',
        '--calibrate',
        '--url',
        url,
        '--out',
        file,
        ...(budget === undefined ? [] : ['--budget-s', budget]),
      ])
    const model = JSON.parse(readFileSync(file, 'utf8')).server.model as string
    const levels = [...new Set([1, 2, slots, 2 * slots])].sort((a, b) => a - b)
    for (const w of WORKLOADS) {
      const name = `${w.input}/${w.output}`
      const out = join(dir, `run-${slots}-${w.input}x${w.output}`)
      console.error(`# ${slots} slots: held-out ${name} at ${levels.join(',')}`)
      cli([
        'run',
        '--base-url',
        url,
        '--model',
        model,
        '--levels',
        levels.join(','),
        '--requests',
        String(w.requests(base)),
        '--warmup',
        '2',
        '--input-tokens',
        String(w.input),
        '--output-tokens',
        String(w.output),
        '--ignore-eos',
        '--no-control',
        '--out',
        out,
        '--quiet',
      ])
      const prediction = JSON.parse(
        cli([
          'predict',
          '--model-file',
          file,
          '--input-tokens',
          String(w.input),
          '--output-tokens',
          String(w.output),
          '--levels',
          levels.join(','),
          '--json',
        ]),
      )
      const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
      for (const level of result.levels) {
        const p = prediction.levels.find((x: { level: number }) => x.level === level.value)
        if (p === undefined) continue
        const measured =
          level.steady_window !== null ? level.output_tokens_per_s_steady : level.output_tokens_per_s
        rows.push({
          slots,
          workload: name,
          level: level.value,
          tput: [p.output_tokens_per_s.value, measured],
          inside: measured >= p.output_tokens_per_s.low && measured <= p.output_tokens_per_s.high,
          ttft: [p.ttft_ms.p50?.value ?? null, level.ttft_ms.p50 ?? null],
          tpot: [p.tpot_ms.p50?.value ?? null, level.tpot_ms.p50 ?? null],
        })
      }
      knees.push(
        `${name}: knee predicted ${prediction.knee.value ?? 'none'} / measured ${result.saturation?.value ?? 'none'}`,
      )
    }
  } finally {
    process.kill(pid)
  }
  return knees
}

async function main(): Promise<void> {
  const slotCounts = (option('slots') ?? '4,2').split(',').map(Number)
  const base = Number(option('requests') ?? 16)
  const dir = option('keep') ?? mkdtempSync(join(tmpdir(), 'bench-model-kit-'))
  const rows: Row[] = []
  const knees: string[] = []
  for (const slots of slotCounts)
    knees.push(
      ...(await oneSlotCount(slots, dir, base, option('budget-s'), rows)).map((k) => `${slots} slots, ${k}`),
    )
  console.log(
    '| slots | workload | level | output tok/s predicted / measured | error | inside 90% | TTFT p50 ms predicted / measured | error | TPOT p50 ms predicted / measured | error |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const r of rows)
    console.log(
      `| ${r.slots} | ${r.workload} | ${r.level} | ${fix(r.tput[0])} / ${fix(r.tput[1])} | ${pct(rel(...r.tput))} | ${r.inside ? 'yes' : 'no'} | ` +
        `${fix(r.ttft[0], 0)} / ${fix(r.ttft[1], 0)} | ${pct(rel(...r.ttft))} | ${fix(r.tpot[0])} / ${fix(r.tpot[1])} | ${pct(rel(...r.tpot))} |`,
    )
  const abs = (of: (r: Row) => number | null) =>
    rows
      .map(of)
      .filter((x): x is number => x !== null)
      .map(Math.abs)
  const summary = (name: string, xs: number[]) =>
    `${name}: mean |error| ${((xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)) * 100).toFixed(1)}%, worst ${(Math.max(...xs) * 100).toFixed(1)}% (${xs.length} levels)`
  console.log()
  console.log(
    summary(
      'output tok/s',
      abs((r) => rel(...r.tput)),
    ),
  )
  console.log(
    summary(
      'TTFT p50',
      abs((r) => rel(...r.ttft)),
    ),
  )
  console.log(
    summary(
      'TPOT p50',
      abs((r) => rel(...r.tpot)),
    ),
  )
  console.log(
    `measured tok/s inside the 90% interval: ${rows.filter((r) => r.inside).length} of ${rows.length}`,
  )
  for (const k of knees) console.log(k)
  console.log(`(folders and model files in ${dir})`)
}

await main()
