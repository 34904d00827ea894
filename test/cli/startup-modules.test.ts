import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { CLI, runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Records every module the child's ESM loader resolves, one URL per stderr line: a resolve hook
 * registered by a preloaded module (both as data: URLs, so nothing is written to disk).
 */
const HOOKS = `data:text/javascript,${encodeURIComponent(
  "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r }",
)}`
const REGISTER = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(HOOKS)})`,
)}`

function modulesLoadedBy(args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REGISTER, CLI, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`llmbench ${args.join(' ')} did not finish in time`))
    }, 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      if (code !== 0) reject(new Error(`llmbench ${args.join(' ')} exited ${code}: ${stderr}`))
      else resolve([...stderr.matchAll(/^LOADED (.+)$/gm)].map((m) => m[1] ?? ''))
    })
  })
}

/** What start-up must not pay for: the tokenizers, the charts, PNG drawing, the HTTP client, live metrics, the simulator. */
const HEAVY = [
  /\/dist\/workload\/tokenizers\.js$/,
  /\/node_modules\/@huggingface\//,
  /\/node_modules\/prom-client\//,
  /\/node_modules\/vega(-lite)?\//,
  /\/node_modules\/@resvg\//,
  /\/node_modules\/undici\//,
  /\/dist\/sim\/server\.js$/,
  /\/dist\/report\/charts\.js$/,
]

for (const args of [
  ['--help'],
  ['--version'],
  ['run', '--help'],
  ['demo', '--help'],
  ['sim', '--help'],
  ['check', '--help'],
]) {
  test(`llmbench ${args.join(' ')} loads no tokenizer, chart library, HTTP client or simulator`, async () => {
    const loaded = await modulesLoadedBy(args)
    assert.ok(
      loaded.some((url) => url.endsWith('/dist/cli/main.js')),
      'the hook saw the CLI load (else the check below proves nothing)',
    )
    const heavy = loaded.filter((url) => HEAVY.some((pattern) => pattern.test(url)))
    assert.deepEqual(heavy, [], `loaded by ${args.join(' ')}`)
  })
}

test('llmbench run --help loads neither the settings table nor zod (its flags come from a table written ahead)', async () => {
  const loaded = await modulesLoadedBy(['run', '--help'])
  assert.ok(
    loaded.some((url) => url.endsWith('/dist/cli/commands/run.js')),
    'the hook saw the run command load',
  )
  // The settings table, the config loader and its schemas, zod: what deriving the flags at start-up loaded.
  const settings = loaded.filter((url) =>
    /\/dist\/config\/(settings|load|schema|source-schemas)\.js$|\/dist\/zod\.js$|\/node_modules\/zod\//.test(
      url,
    ),
  )
  assert.deepEqual(settings, [])
})

test('a run without --metrics-port loads no prom-client, and with o200k no tokenizer package', async () => {
  const dir = tempDir()
  try {
    const loaded = await modulesLoadedBy([
      ...'demo --levels 1 --requests 2 --warmup 0 --quiet --out'.split(' '),
      join(dir, 'run'),
    ])
    assert.ok(
      loaded.some((url) => url.endsWith('/dist/report/charts.js')),
      'the hook saw the whole run, report included (else the check below proves nothing)',
    )
    const unused = loaded.filter((url) =>
      /\/node_modules\/(prom-client|gpt-tokenizer|@huggingface)\//.test(url),
    )
    assert.deepEqual(unused, [])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('llmbench --version and -V print the version of package.json alone', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
  for (const flag of ['--version', '-V']) {
    const result = await runCli([flag])
    assert.equal(result.code, 0, flag)
    assert.equal(result.stdout, `${version}\n`, flag)
    assert.equal(result.stderr, '', flag)
  }
  assert.match((await runCli(['--help'])).stdout, /--version \| -V/)
})
