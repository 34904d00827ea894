import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { parseFlags } from '../../src/cli/args.js'
import { COORDINATE_SPEC } from '../../src/cli/commands/coordinate.js'
import { k8sManifestCommand } from '../../src/cli/commands/k8s-manifest.js'
import { MERGE_SPEC } from '../../src/cli/commands/merge.js'
import { RUN_SPEC } from '../../src/cli/commands/run.js'
import { resolveShard } from '../../src/cli/execute-run.js'
import { CliError } from '../../src/cli/exit-codes.js'
import type { Io } from '../../src/cli/io.js'
import { loadRunConfig } from '../../src/config/load.js'
import {
  HOLD_SECONDS,
  K8sManifestError,
  type K8sManifestOptions,
  renderK8sManifest,
} from '../../src/deploy/k8s-manifest.js'
import { parseStartAt } from '../../src/run/plan/start-schedule.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url))
const SETTINGS = join(FIXTURES, 'settings.json')
const TOML = join(FIXTURES, 'config.toml')
const EXAMPLE_FILE = fileURLToPath(new URL('../../deploy/k8s/indexed-job.yaml', import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), 'llmbench-k8s-'))
after(() => rmSync(tmp, { recursive: true, force: true }))
/** A distinctive key: if it shows up in a manifest, it leaked. */
const SECRET = 'sk-llmbench-TEST-k8s-5e1f0c2a9d7b4386-DO-NOT-LEAK'

/**
 * The documented inputs of deploy/k8s/indexed-job.yaml. Change them, or the renderer, and regenerate
 * the file with: UPDATE_K8S_EXAMPLE=1 node --import tsx --test test/unit/k8s-manifest.test.ts
 */
const EXAMPLE: K8sManifestOptions = {
  shards: 4,
  name: 'llmbench-example',
  image: 'registry.example.com/llmbench:0.1.0',
  namespace: 'llmbench',
  configFiles: [
    {
      name: 'config.toml',
      content: [
        '[target]',
        'base_url = "https://llm.example.internal/api"',
        'endpoint = "/v1/chat/completions"',
        'model = "my-model"',
        'api_key_env = "MY_API_KEY"',
        '[load]',
        'mode = "concurrency_gradient"',
        'levels = [64, 128, 256, 512, 1024]',
        'duration_per_level = 60',
        'max_tokens = 512',
        '[client]',
        'stream = true',
        'timeout = 120',
        '',
      ].join('\n'),
    },
  ],
  apiKeySecret: { name: 'llmbench-api-key', key: 'api-key', env: 'MY_API_KEY' },
  startAt: '2030-01-01T12:00:00.000Z',
  resultsClaim: 'llmbench-results',
  // What `llmbench k8s-manifest --cpu 2` adds, since the config leaves workers at auto.
  extraArgs: ['--workers', '2'],
  cpu: '2',
  memory: '2Gi',
}

type Obj = Record<string, unknown>

/** Every document parsed with no errors or warnings, as plain objects. */
function parseManifest(text: string): Obj[] {
  const docs = parseAllDocuments(text)
  assert.ok(Array.isArray(docs), 'expected a YAML stream')
  for (const doc of docs) {
    assert.deepEqual(doc.errors, [], 'YAML errors')
    assert.deepEqual(doc.warnings, [], 'YAML warnings')
  }
  return docs.map((doc) => doc.toJS() as Obj)
}

/** Walks a path of keys and indexes; fails with the path when a step is missing. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let here = value
  for (const step of path) {
    assert.ok(typeof here === 'object' && here !== null, `no ${path.join('.')}`)
    here = (here as Record<string | number, unknown>)[step]
  }
  return here
}

function byKind(docs: Obj[], kind: string, component: string): Obj {
  const found = docs.filter(
    (doc) => doc.kind === kind && at(doc, 'metadata', 'labels', 'app.kubernetes.io/component') === component,
  )
  assert.equal(found.length, 1, `one ${kind} (${component})`)
  return found[0] as Obj
}

const podSpec = (job: Obj): Obj => at(job, 'spec', 'template', 'spec') as Obj
const container = (job: Obj): Obj => at(podSpec(job), 'containers', 0) as Obj
const envOf = (job: Obj): Obj[] => container(job).env as Obj[]
const argsOf = (job: Obj): string[] => container(job).args as string[]

/** Kubernetes' $(VAR) expansion of container args, for one pod's env. */
function expand(args: string[], env: Record<string, string>): string[] {
  return args.map((arg) =>
    arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name) => env[name] ?? whole),
  )
}

function valueAfter(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag)
  return i === -1 ? undefined : args[i + 1]
}

function options(overrides: Partial<K8sManifestOptions> = {}): K8sManifestOptions {
  return { ...EXAMPLE, ...overrides }
}

test('a ConfigMap, an Indexed shard Job and a suspended merge Job, each parsing cleanly', () => {
  for (const shards of [1, 3, 16]) {
    const docs = parseManifest(renderK8sManifest(options({ shards })))
    assert.deepEqual(
      docs.map((doc) => [doc.apiVersion, doc.kind]),
      [
        ['v1', 'ConfigMap'],
        ['batch/v1', 'Job'],
        ['batch/v1', 'Job'],
      ],
    )
    const job = byKind(docs, 'Job', 'shard')
    assert.equal(at(job, 'metadata', 'name'), 'llmbench-example')
    assert.equal(at(job, 'metadata', 'namespace'), 'llmbench')
    assert.equal(at(job, 'spec', 'completionMode'), 'Indexed')
    assert.equal(at(job, 'spec', 'completions'), shards)
    assert.equal(at(job, 'spec', 'parallelism'), shards)
    assert.equal(at(job, 'spec', 'backoffLimit'), 0)
    assert.equal(podSpec(job).restartPolicy, 'Never')
    const env = envOf(job)
    assert.deepEqual(
      env.find((e) => e.name === 'JOB_COMPLETION_INDEX'),
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: {
          fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
        },
      },
    )
    assert.deepEqual(
      env.find((e) => e.name === 'JOB_COMPLETIONS'),
      { name: 'JOB_COMPLETIONS', value: String(shards) },
    )
    const merge = byKind(docs, 'Job', 'merge')
    assert.equal(at(merge, 'spec', 'suspend'), true)
    assert.equal(at(merge, 'metadata', 'name'), 'llmbench-example-merge')
  }
})

test('each index gets its own --shard and --out once Kubernetes expands $(JOB_COMPLETION_INDEX); the merge lists exactly those folders', () => {
  const shards = 5
  const docs = parseManifest(renderK8sManifest(options({ shards })))
  const args = argsOf(byKind(docs, 'Job', 'shard'))
  assert.equal(args[0], 'run')
  assert.equal(valueAfter(args, '--start-at'), EXAMPLE.startAt)
  assert.deepEqual(args.slice(-2), ['--workers', '2'], 'extra args come last')
  const outs = Array.from({ length: shards }, (_, i) => {
    const pod = expand(args, { JOB_COMPLETION_INDEX: String(i) })
    assert.equal(valueAfter(pod, '--shard'), `${i}/${shards}`)
    return valueAfter(pod, '--out')
  })
  assert.deepEqual(
    outs,
    Array.from({ length: shards }, (_, i) => `/results/llmbench-example/shard-${i}`),
  )
  assert.deepEqual(argsOf(byKind(docs, 'Job', 'merge')), [
    'merge',
    ...outs,
    '--out',
    '/results/llmbench-example/merged',
  ])
  // Both Jobs mount the same claim at /results.
  for (const component of ['shard', 'merge']) {
    const job = byKind(docs, 'Job', component)
    const volume = (podSpec(job).volumes as Obj[]).find((v) => v.name === 'results')
    assert.deepEqual(volume, { name: 'results', persistentVolumeClaim: { claimName: 'llmbench-results' } })
    assert.ok(
      (container(job).volumeMounts as Obj[]).some((m) => m.name === 'results' && m.mountPath === '/results'),
    )
  }
})

test("every pod's args, once expanded, are accepted by `llmbench run` itself as shard I of N; the merge Job's by `llmbench merge`", () => {
  const shards = 3
  const job = byKind(parseManifest(renderK8sManifest(options({ shards }))), 'Job', 'shard')
  for (let i = 0; i < shards; i++) {
    const [command, ...rest] = expand(argsOf(job), { JOB_COMPLETION_INDEX: String(i) })
    assert.equal(command, 'run')
    const { flags } = parseFlags(RUN_SPEC, rest)
    assert.deepEqual(resolveShard(flags, {}), { index: i, count: shards })
    // And with --shard gone, the env the pod gets says the same.
    const env = { JOB_COMPLETION_INDEX: String(i), JOB_COMPLETIONS: String(shards) }
    assert.deepEqual(resolveShard({}, env), { index: i, count: shards })
    assert.equal(parseStartAt(flags['start-at'] as string), Date.parse(EXAMPLE.startAt))
  }
  // The merge Job's args, as `llmbench merge` parses them: every shard folder, then --out.
  const [merge, ...mergeArgs] = argsOf(
    byKind(parseManifest(renderK8sManifest(options({ shards }))), 'Job', 'merge'),
  )
  assert.equal(merge, 'merge')
  const parsed = parseFlags(MERGE_SPEC, mergeArgs, true)
  assert.deepEqual(
    parsed.positionals,
    ['shard-0', 'shard-1', 'shard-2'].map((s) => `/results/llmbench-example/${s}`),
  )
  assert.equal(parsed.flags.out, '/results/llmbench-example/merged')
})

test('--coordinator: a Service and a Job for `llmbench coordinate`, told the shard count once; every shard is sent to it instead of --start-at', () => {
  const shards = 3
  const docs = parseManifest(renderK8sManifest(options({ shards, coordinator: true })))
  const service = byKind(docs, 'Service', 'coordinator')
  const coordinator = byKind(docs, 'Job', 'coordinator')
  const job = byKind(docs, 'Job', 'shard')
  // The Service finds the coordinator pod by its labels, on the port the coordinator listens on.
  assert.deepEqual(at(service, 'spec', 'selector'), at(coordinator, 'spec', 'template', 'metadata', 'labels'))
  const [command, ...rest] = argsOf(coordinator)
  assert.equal(command, 'coordinate')
  const parsed = parseFlags(COORDINATE_SPEC, rest)
  assert.equal(parsed.flags.shards, String(shards), 'the shard count, from the one option')
  assert.equal(parsed.flags.host, '0.0.0.0', 'reachable from the shard pods')
  const port = Number(parsed.flags.port)
  assert.equal(at(service, 'spec', 'ports', 0, 'port'), port)
  assert.equal(
    parsed.flags.out,
    '/results/llmbench-example/coordination.json',
    'beside the shards, on the claim',
  )
  assert.equal(at(coordinator, 'spec', 'backoffLimit'), 0)
  assert.equal(podSpec(coordinator).restartPolicy, 'Never')
  for (let i = 0; i < shards; i++) {
    const [run, ...runArgs] = expand(argsOf(job), { JOB_COMPLETION_INDEX: String(i) })
    assert.equal(run, 'run')
    const { flags } = parseFlags(RUN_SPEC, runArgs)
    assert.deepEqual(resolveShard(flags, {}), { index: i, count: shards })
    assert.equal(flags['start-at'], undefined, 'the coordinator starts the levels')
    const url = new URL(flags.coordinator as string)
    assert.equal(url.hostname, at(service, 'metadata', 'name'), 'the Service, by its name in the namespace')
    assert.equal(Number(url.port), port)
  }
  // Names stay DNS labels at the longest job name.
  const long = 'x'.repeat(52)
  const names = parseManifest(renderK8sManifest(options({ name: long, coordinator: true }))).map(
    (doc) => at(doc, 'metadata', 'name') as string,
  )
  for (const name of names) assert.ok(name.length <= 63, name)
  // Without it, no coordinator and the wall-clock schedule as before.
  const plain = parseManifest(renderK8sManifest(options({ shards })))
  assert.equal(plain.filter((doc) => doc.kind === 'Service').length, 0)
  assert.equal(valueAfter(argsOf(byKind(plain, 'Job', 'shard')), '--coordinator'), undefined)
  // A run flag the manifest now owns.
  assert.throws(
    () => renderK8sManifest(options({ extraArgs: ['--coordinator', 'http://elsewhere:1'] })),
    (error: unknown) =>
      error instanceof K8sManifestError && /--coordinator is set by the manifest/.test(error.message),
  )
})

test('the API key arrives only through a secretKeyRef, never as a value', () => {
  const text = renderK8sManifest(options())
  const job = byKind(parseManifest(text), 'Job', 'shard')
  const keyEnv = envOf(job).filter((e) => e.name === 'MY_API_KEY')
  assert.deepEqual(keyEnv, [
    { name: 'MY_API_KEY', valueFrom: { secretKeyRef: { name: 'llmbench-api-key', key: 'api-key' } } },
  ])
  assert.doesNotMatch(text, /kind: Secret/, 'the manifest never carries a Secret of its own')
  const noKey = byKind(parseManifest(renderK8sManifest(options({ apiKeySecret: null }))), 'Job', 'shard')
  assert.deepEqual(
    envOf(noKey).map((e) => e.name),
    ['JOB_COMPLETION_INDEX', 'JOB_COMPLETIONS'],
  )
})

test('config files are shipped verbatim in the ConfigMap, mounted read-only at /config and passed with -c', () => {
  const settings = readFileSync(SETTINGS, 'utf8')
  const toml = readFileSync(TOML, 'utf8')
  const configFiles = [
    { name: 'settings.json', content: settings },
    { name: 'config.toml', content: toml },
  ]
  const docs = parseManifest(renderK8sManifest(options({ configFiles })))
  const configMap = byKind(docs, 'ConfigMap', 'config')
  assert.equal(at(configMap, 'metadata', 'name'), 'llmbench-example-config')
  assert.deepEqual(configMap.data, { 'settings.json': settings, 'config.toml': toml })
  const job = byKind(docs, 'Job', 'shard')
  assert.deepEqual(
    (podSpec(job).volumes as Obj[]).find((v) => v.name === 'config'),
    { name: 'config', configMap: { name: 'llmbench-example-config' } },
  )
  assert.deepEqual(
    (container(job).volumeMounts as Obj[]).find((m) => m.name === 'config'),
    { name: 'config', mountPath: '/config', readOnly: true },
  )
  const args = argsOf(job)
  assert.deepEqual(args.slice(0, 5), ['run', '-c', '/config/settings.json', '-c', '/config/config.toml'])
})

test('resources: requests = limits when given, none otherwise; shards prefer different nodes', () => {
  const job = byKind(parseManifest(renderK8sManifest(options())), 'Job', 'shard')
  assert.deepEqual(container(job).resources, {
    requests: { cpu: '2', memory: '2Gi' },
    limits: { cpu: '2', memory: '2Gi' },
  })
  const bare = byKind(
    parseManifest(renderK8sManifest(options({ cpu: undefined, memory: undefined }))),
    'Job',
    'shard',
  )
  assert.equal(container(bare).resources, undefined)
  const memoryOnly = byKind(parseManifest(renderK8sManifest(options({ cpu: undefined }))), 'Job', 'shard')
  assert.deepEqual(container(memoryOnly).resources, {
    requests: { memory: '2Gi' },
    limits: { memory: '2Gi' },
  })

  const preferred = at(
    podSpec(job),
    'affinity',
    'podAntiAffinity',
    'preferredDuringSchedulingIgnoredDuringExecution',
  ) as Obj[]
  assert.equal(preferred.length, 1)
  assert.equal(at(preferred[0], 'podAffinityTerm', 'topologyKey'), 'kubernetes.io/hostname')
  // The selector must match the shard pods themselves, or it spreads nothing.
  assert.deepEqual(
    at(preferred[0], 'podAffinityTerm', 'labelSelector', 'matchLabels'),
    at(job, 'spec', 'template', 'metadata', 'labels'),
  )
  assert.equal(at(podSpec(job), 'securityContext', 'runAsNonRoot'), true)
  assert.equal(podSpec(job).automountServiceAccountToken, false)
})

test('without a claim: a per-pod emptyDir, a shell that holds the results for kubectl cp, no merge Job', () => {
  const docs = parseManifest(renderK8sManifest(options({ resultsClaim: null })))
  assert.deepEqual(
    docs.map((doc) => doc.kind),
    ['ConfigMap', 'Job'],
  )
  const job = byKind(docs, 'Job', 'shard')
  assert.deepEqual(
    (podSpec(job).volumes as Obj[]).find((v) => v.name === 'results'),
    { name: 'results', emptyDir: {} },
  )
  const command = container(job).command as string[]
  assert.deepEqual([command[0], command[1], command[3]], ['/bin/sh', '-c', 'llmbench'])
  const script = command[2] as string
  assert.match(script, /^node \/app\/dist\/cli\/main\.js "\$@" &$/m)
  assert.match(script, new RegExp(`timeout ${HOLD_SECONDS} `))
  // Kubernetes expands $(NAME) in command too: the script must not contain any.
  assert.ok(!script.includes('$('), 'no $( in the hold script')
  assert.deepEqual(at(container(job), 'readinessProbe', 'exec', 'command'), ['test', '-e', '/results/.done'])
  // The run args are the same as with a claim.
  assert.equal(argsOf(job)[0], 'run')
})

test('strings YAML 1.1 would read as booleans or timestamps are quoted (Kubernetes parses YAML 1.1)', () => {
  const text = renderK8sManifest(options({ extraArgs: ['--model', 'on'] }))
  const docs = parseAllDocuments(text, { version: '1.1' })
  assert.ok(Array.isArray(docs))
  const job = docs[1]?.toJS() as Obj
  for (const arg of argsOf(job)) assert.equal(typeof arg, 'string', `arg ${String(arg)}`)
  assert.equal(valueAfter(argsOf(job), '--start-at'), EXAMPLE.startAt)
  assert.equal(valueAfter(argsOf(job), '--model'), 'on')
  assert.equal(envOf(job).find((e) => e.name === 'JOB_COMPLETIONS')?.value, '4')
})

test('invalid options are rejected with the option named', () => {
  const rejects = (
    overrides: Partial<K8sManifestOptions>,
    field: keyof K8sManifestOptions,
    pattern: RegExp,
  ) =>
    assert.throws(
      () => renderK8sManifest(options(overrides)),
      (error: unknown) =>
        error instanceof K8sManifestError && error.field === field && pattern.test(error.message),
      `${JSON.stringify(overrides)} → ${field}`,
    )
  for (const name of ['Bench', 'bench_1', '-bench', 'bench-', '', 'a.b', 'x'.repeat(53)])
    rejects({ name }, 'name', /DNS-1123 label/)
  assert.doesNotThrow(() => renderK8sManifest(options({ name: 'x'.repeat(52) })))
  rejects({ namespace: 'My NS' }, 'namespace', /DNS-1123/)
  for (const shards of [0, 1001, 2.5, Number.NaN]) rejects({ shards }, 'shards', /integer from 1 to 1000/)
  rejects({ image: 'llm bench' }, 'image', /without spaces/)
  rejects({ startAt: '2030-01-01T12:00:00' }, 'startAt', /with a zone/)
  rejects({ startAt: 'soon' }, 'startAt', /ISO time/)
  rejects(
    { configFiles: [...EXAMPLE.configFiles, ...EXAMPLE.configFiles] },
    'configFiles',
    /both named "config.toml"/,
  )
  rejects({ configFiles: [{ name: 'a/b.toml', content: '' }] }, 'configFiles', /file name/)
  rejects({ configFiles: [{ name: 'big.toml', content: 'x'.repeat(1_000_001) }] }, 'configFiles', /ConfigMap/)
  rejects({ apiKeySecret: { name: 'Key', key: 'k', env: 'K' } }, 'apiKeySecret', /Secret name/)
  rejects({ apiKeySecret: { name: 'key', key: 'k', env: 'MY-KEY' } }, 'apiKeySecret', /environment variable/)
  rejects({ resultsClaim: 'Results!' }, 'resultsClaim', /PersistentVolumeClaim/)
  for (const arg of [
    '--out',
    '--out=/x',
    '--shard=1/2',
    '--start-at',
    '-c',
    '-cother.toml',
    '--config',
    '--fail-on-slo',
  ])
    rejects({ extraArgs: [arg, 'x'] }, 'extraArgs', /is set by the manifest/)
  rejects({ cpu: 'two' }, 'cpu', /CPU quantity/)
  rejects({ memory: '2GB' }, 'memory', /memory quantity/)
})

test('deploy/k8s/indexed-job.yaml is exactly what the renderer makes of its documented inputs', () => {
  const rendered = renderK8sManifest(EXAMPLE)
  if (process.env.UPDATE_K8S_EXAMPLE === '1') writeFileSync(EXAMPLE_FILE, rendered)
  assert.equal(
    readFileSync(EXAMPLE_FILE, 'utf8'),
    rendered,
    'stale example: regenerate with UPDATE_K8S_EXAMPLE=1 node --import tsx --test test/unit/k8s-manifest.test.ts',
  )
  parseManifest(rendered)
  // Its config is one llmbench accepts, with the api_key_env the Secret is exposed as.
  const [file] = EXAMPLE.configFiles
  assert.ok(file !== undefined)
  const path = join(tmp, file.name)
  writeFileSync(path, file.content)
  assert.equal(
    loadRunConfig({ configFiles: [path], flags: {} }).target.api_key_env,
    EXAMPLE.apiKeySecret?.env,
  )
})

// ---------------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------------

function fakeIo(): Io & { stdout: () => string; stderr: () => string } {
  let out = ''
  let err = ''
  return {
    out: (text) => {
      out += text
    },
    err: (text) => {
      err += text
    },
    stdout: () => out,
    stderr: () => err,
  }
}

/** Runs the command with MY_API_KEY set to SECRET, which must not appear anywhere in what it prints. */
async function command(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const before = process.env.MY_API_KEY
  process.env.MY_API_KEY = SECRET
  try {
    const io = fakeIo()
    const code = await k8sManifestCommand(argv, io)
    assert.ok(!io.stdout().includes(SECRET) && !io.stderr().includes(SECRET), 'API key leaked')
    return { code, stdout: io.stdout(), stderr: io.stderr() }
  } finally {
    if (before === undefined) delete process.env.MY_API_KEY
    else process.env.MY_API_KEY = before
  }
}

async function usageError(argv: string[], pattern: RegExp): Promise<void> {
  await assert.rejects(
    () => command(argv),
    (error: unknown) => {
      assert.ok(error instanceof CliError, `expected a CliError, got ${String(error)}`)
      assert.equal(error.exitCode, 2)
      assert.match(error.message, pattern)
      return true
    },
  )
}

test('k8s-manifest with the SPEC settings.json: the key env is its api_key_env, from the default Secret', async () => {
  const before = Date.now()
  const { code, stdout, stderr } = await command(['--shards', '3', '-c', SETTINGS, '--name', 'bench-a'])
  assert.equal(code, 0)
  const docs = parseManifest(stdout)
  assert.deepEqual(byKind(docs, 'ConfigMap', 'config').data, {
    'settings.json': readFileSync(SETTINGS, 'utf8'),
  })
  const job = byKind(docs, 'Job', 'shard')
  assert.equal(at(job, 'spec', 'parallelism'), 3)
  assert.deepEqual(
    envOf(job).find((e) => e.name === 'MY_API_KEY'),
    { name: 'MY_API_KEY', valueFrom: { secretKeyRef: { name: 'llmbench-api-key', key: 'api-key' } } },
  )
  assert.match(container(job).image as string, /^llmbench:\d+\.\d+\.\d+/)
  // No claim given: emptyDir and no merge Job.
  assert.equal(docs.length, 2)
  // The default start is two minutes ahead, so pods have time to be scheduled.
  const startAt = Date.parse(valueAfter(argsOf(job), '--start-at') as string)
  assert.ok(startAt >= before + 119_000 && startAt <= Date.now() + 121_000, `start ${startAt}`)
  assert.match(stderr, /3 shards of "bench-a" start at .* \(in 120 s\)/)
  assert.doesNotMatch(stderr, /note:/)
})

test('k8s-manifest flags: claim, namespace, secret, start time, CPU → --workers, run flags after --', async () => {
  const out = join(tmp, 'job.yaml')
  const { code, stdout, stderr } = await command([
    '--shards',
    '8',
    '-c',
    TOML,
    '-c',
    SETTINGS,
    '--name',
    'bench-b',
    '--namespace',
    'perf',
    '--image',
    'registry.example.com/llmbench:test',
    '--secret',
    'vllm-key:token',
    '--start-at',
    '946684800',
    '--results-claim',
    'shared-results',
    '--cpu',
    '1500m',
    '--memory',
    '1Gi',
    '--out',
    out,
    '--',
    '--levels',
    '8,16',
  ])
  assert.equal(code, 0)
  assert.equal(stdout, `wrote ${out}\n`)
  assert.match(stderr, /note: that leaves under 30 s/, 'a start time in the past is pointed out')
  const docs = parseManifest(readFileSync(out, 'utf8'))
  const job = byKind(docs, 'Job', 'shard')
  assert.equal(at(job, 'metadata', 'namespace'), 'perf')
  assert.equal(container(job).image, 'registry.example.com/llmbench:test')
  // config.toml sets no api_key_env, settings.json does: MY_API_KEY.
  assert.deepEqual(
    envOf(job).find((e) => e.name === 'MY_API_KEY'),
    { name: 'MY_API_KEY', valueFrom: { secretKeyRef: { name: 'vllm-key', key: 'token' } } },
  )
  const args = argsOf(job)
  assert.deepEqual(args.slice(0, 5), ['run', '-c', '/config/config.toml', '-c', '/config/settings.json'])
  assert.equal(valueAfter(args, '--start-at'), '2000-01-01T00:00:00.000Z')
  assert.deepEqual(args.slice(-4), ['--levels', '8,16', '--workers', '1'])
  assert.deepEqual(container(job).resources, {
    requests: { cpu: '1500m', memory: '1Gi' },
    limits: { cpu: '1500m', memory: '1Gi' },
  })
  assert.equal(at(byKind(docs, 'Job', 'merge'), 'metadata', 'namespace'), 'perf')

  // The config's api_key_env defaults to OPENAI_API_KEY; an explicit --workers is kept; --no-secret.
  const plain = await command(['--shards', '2', '-c', TOML, '--cpu', '4', '--', '--workers', '3'])
  const plainJob = byKind(parseManifest(plain.stdout), 'Job', 'shard')
  assert.deepEqual(argsOf(plainJob).slice(-2), ['--workers', '3'])
  assert.ok(envOf(plainJob).some((e) => e.name === 'OPENAI_API_KEY'))
  assert.match(at(plainJob, 'metadata', 'name') as string, /^llmbench-\d{8}-\d{6}$/)
  const open = await command(['--shards', '2', '-c', TOML, '--no-secret'])
  assert.ok(
    !envOf(byKind(parseManifest(open.stdout), 'Job', 'shard')).some(
      (e) => 'valueFrom' in e && e.name !== 'JOB_COMPLETION_INDEX',
    ),
  )
})

test('k8s-manifest points out files the config names by a path the pods cannot see', async () => {
  const outside = await command(['--shards', '2', '-c', SETTINGS, '--', '--dataset', 'data/prompts.jsonl'])
  assert.match(outside.stderr, /note: the config names data\/prompts\.jsonl by path/)
  const onClaim = await command([
    '--shards',
    '2',
    '-c',
    SETTINGS,
    '--',
    '--dataset',
    '/results/prompts.jsonl',
  ])
  assert.doesNotMatch(onClaim.stderr, /note: the config names/)
  const inImage = await command([
    '--shards',
    '2',
    '-c',
    SETTINGS,
    '--',
    '--dataset',
    '/app/datasets/chat-sample.jsonl',
  ])
  assert.doesNotMatch(inImage.stderr, /note: the config names/)
})

test('k8s-manifest usage errors exit 2 and name the flag', async () => {
  await usageError(['-c', SETTINGS], /--shards: required/)
  await usageError(
    ['--shards', 'four', '-c', SETTINGS],
    /--shards: expected an integer from 1 to 1000, got "four"/,
  )
  await usageError(['--shards', '1001', '-c', SETTINGS], /--shards/)
  await usageError(['--shards', '2', '-c', SETTINGS, '--name', 'Bench'], /--name: expected a DNS-1123 label/)
  await usageError(
    ['--shards', '2', '-c', SETTINGS, '--start-at', '2030-01-01T12:00'],
    /--start-at: .*with a zone/,
  )
  await usageError(
    ['--shards', '2', '-c', SETTINGS, '--secret', 'a:b:c'],
    /--secret: expected NAME or NAME:KEY/,
  )
  await usageError(
    ['--shards', '2', '-c', SETTINGS, '--secret', 'a', '--no-secret'],
    /--secret and --no-secret/,
  )
  await usageError(['--shards', '2', '-c', SETTINGS, '--cpu', 'lots'], /--cpu: expected a CPU quantity/)
  await usageError(['--shards', '2', '-c', SETTINGS, '--results-claim', 'No'], /--results-claim/)
  await usageError(
    ['--shards', '2', '-c', SETTINGS, '--', '--out', 'x'],
    /the run flags after --: --out is set by the manifest/,
  )
  await usageError(
    ['--shards', '2', '-c', SETTINGS, '--', '--concurency', '4'],
    /the run flags after --: Unknown option '--concurency'/,
  )
  await usageError(['--shards', '2', '-c', SETTINGS, '--', '--levels', '1,x'], /levels/)
  await usageError(
    ['--shards', '2', '-c', join(FIXTURES, 'broken', 'unknown-keys.toml')],
    /unknown-keys\.toml/,
  )
  await usageError(['--shards', '2', '--bogus'], /Unknown option '--bogus'/)
  // Without base_url and model anywhere, the run in every pod would fail: caught here instead.
  await usageError(['--shards', '2'], /base URL/)
})

test("k8s-manifest refuses an endpoint's own secret header or key variable: the pods would carry it in clear, or lack it", async () => {
  const endpointFile = (entry: string): string => {
    const path = join(tmp, `endpoint-${Math.random().toString(36).slice(2)}.toml`)
    writeFileSync(
      path,
      `[target]\nbase_url = "http://a.test/v1"\nmodel = "m"\napi_key_env = "MY_API_KEY"\nmore_base_urls = [${entry}]\n`,
    )
    return path
  }
  await usageError(
    [
      '--shards',
      '2',
      '-c',
      endpointFile('{ url = "http://b.test/v1", headers = { Authorization = "Bearer sk-in-b" } }'),
    ],
    /the header\(s\) authorization \(endpoint http:\/\/b\.test\/v1\) would be carried in clear/,
  )
  await usageError(
    ['--shards', '2', '-c', endpointFile('{ url = "http://b.test/v1", api_key_env = "B_KEY" }')],
    /endpoint http:\/\/b\.test\/v1 takes its key from \$B_KEY, which the pods would not have \(only \$MY_API_KEY comes from the Secret\)/,
  )
  // An entry naming the run's own variable, or only public headers, is carried as before.
  const same = endpointFile(
    '{ url = "http://b.test/v1", api_key_env = "MY_API_KEY", headers = { "X-Tenant" = "b" } }',
  )
  assert.equal((await command(['--shards', '2', '-c', same])).code, 0)
})

test('k8s-manifest --help lists the flags with their defaults', async () => {
  // Wide enough that no flag's text wraps (a pipe's help is 100 columns wide).
  const columns = process.env.COLUMNS
  process.env.COLUMNS = '400'
  const { code, stdout } = await command(['--help']).finally(() => {
    if (columns === undefined) delete process.env.COLUMNS
    else process.env.COLUMNS = columns
  })
  assert.equal(code, 0)
  assert.match(stdout, /--shards N/)
  assert.match(stdout, /--secret NAME\[:KEY\].*\(default: llmbench-api-key:api-key\)/)
  assert.match(stdout, /--start-at TIME.*\(default: now \+ 2 minutes\)/)
  assert.match(stdout, /--image IMAGE.*\(default: llmbench:\d/)
})
