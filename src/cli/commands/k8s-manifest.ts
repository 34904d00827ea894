import { readFileSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { displayUrl } from '../../client/redact.js'
import { isSecretHeaderName } from '../../config/headers.js'
import type { MoreEndpoint, RunConfig } from '../../config/types.js'
import {
  APP_DIR,
  CONFIG_DIR,
  checkExtraArgs,
  K8sManifestError,
  type K8sManifestOptions,
  MAX_NAME_LENGTH,
  MAX_SHARDS,
  RESULTS_DIR,
  renderK8sManifest,
} from '../../deploy/k8s-manifest.js'
import { MAX_START_WAIT_MS } from '../../run/plan/start-schedule.js'
import { utcStamp } from '../../run/result-folder.js'
import { isSameEverywhere, parseStartAt as parseRunStartAt } from '../../schedule/start-time.js'
import { TOOL_VERSION } from '../../version.js'
import { type CommandSpec, parseFlags, renderHelp, stringFlag } from '../args.js'
import { CliError, EXIT } from '../exit-codes.js'
import type { Io } from '../io.js'
import { loadConfigOrThrow } from '../load-config.js'
import { configFlags } from '../setting-flags.js'
import { RUN_SPEC } from './run.js'

/**
 * The image this version of the CLI was built into (`docker build -t llmbench:<version> .`). Pinned
 * rather than :latest: the pods must understand the flags this version renders, and Kubernetes
 * re-pulls :latest on every pod, so shards on different nodes could run different builds.
 */
export const DEFAULT_IMAGE = `llmbench:${TOOL_VERSION}`
export const DEFAULT_SECRET = 'llmbench-api-key:api-key'
/**
 * Time from rendering to the shared start: scheduling, pulling the image on nodes that lack it and
 * starting the containers take tens of seconds on a warm cluster; every shard must be waiting before
 * the start, or it starts late and the levels do not line up across shards.
 */
export const DEFAULT_START_DELAY_S = 120
/** A start closer than this is unlikely to find every pod running. */
const MIN_START_DELAY_S = 30

export const K8S_MANIFEST_SPEC: CommandSpec = {
  name: 'k8s-manifest',
  summary:
    'Render the Kubernetes ConfigMap and Indexed Job that run one gradient as N shards on N machines, all starting at one time (see deploy/k8s/README.md).',
  usage: 'llmbench k8s-manifest --shards N -c FILE... [flags] [-- RUN FLAGS...]',
  flags: [
    {
      name: 'shards',
      type: 'string',
      value: 'N',
      help: `pods, one share of every level each (1..${MAX_SHARDS})`,
    },
    {
      name: 'config',
      short: 'c',
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'settings.json or config.toml, embedded in the ConfigMap (repeatable)',
    },
    {
      name: 'name',
      type: 'string',
      value: 'NAME',
      help: `Job name and results folder (DNS-1123 label, at most ${MAX_NAME_LENGTH} characters)`,
      default: 'llmbench-<UTC time>',
    },
    {
      name: 'image',
      type: 'string',
      value: 'IMAGE',
      help: 'llmbench container image',
      default: DEFAULT_IMAGE,
    },
    { name: 'namespace', type: 'string', value: 'NS', help: 'namespace of every object' },
    {
      name: 'secret',
      type: 'string',
      value: 'NAME[:KEY]',
      help: "Secret holding the API key, exposed as the config's api_key_env",
      default: DEFAULT_SECRET,
    },
    { name: 'no-secret', type: 'boolean', help: 'the endpoint needs no API key' },
    {
      name: 'start-at',
      type: 'string',
      value: 'TIME',
      help: 'when every shard starts: ISO time with a zone, or epoch seconds',
      default: `now + ${DEFAULT_START_DELAY_S / 60} minutes`,
    },
    {
      name: 'coordinator',
      type: 'boolean',
      help: 'add `llmbench coordinate` (a Job and a Service): every level starts at one instant for all shards, clock offsets measured; not with --start-at',
    },
    {
      name: 'results-claim',
      type: 'string',
      value: 'PVC',
      help: 'ReadWriteMany claim for /results (adds a merge Job); without it, copy each pod out',
    },
    {
      name: 'cpu',
      type: 'string',
      value: 'CPU',
      help: 'CPU request = limit per pod, e.g. 2 (sets --workers)',
    },
    { name: 'memory', type: 'string', value: 'MEM', help: 'memory request = limit per pod, e.g. 2Gi' },
    { name: 'out', type: 'string', value: 'FILE', help: 'write the manifest here', default: 'stdout' },
  ],
}

/** Which k8s-manifest flag each option comes from, so errors name what the user typed. */
const FLAG_OF: Record<keyof K8sManifestOptions, string> = {
  shards: '--shards',
  name: '--name',
  image: '--image',
  namespace: '--namespace',
  configFiles: '-c/--config',
  apiKeySecret: '--secret',
  startAt: '--start-at',
  coordinator: '--coordinator',
  resultsClaim: '--results-claim',
  extraArgs: 'the run flags after --',
  cpu: '--cpu',
  memory: '--memory',
}

export async function k8sManifestCommand(argv: string[], io: Io): Promise<number> {
  // Everything after the first "--" is passed to `llmbench run` in every pod.
  const split = argv.indexOf('--')
  const own = split === -1 ? argv : argv.slice(0, split)
  const extraArgs = split === -1 ? [] : argv.slice(split + 1)
  const { flags } = parseFlags(K8S_MANIFEST_SPEC, own)
  if (flags.help === true) {
    io.out(renderHelp(K8S_MANIFEST_SPEC))
    return EXIT.ok
  }
  const now = new Date()
  const configPaths = (flags.config as string[] | undefined) ?? []
  const shards = parseShards(stringFlag(flags, 'shards'))
  const coordinated = flags.coordinator === true
  if (coordinated && stringFlag(flags, 'start-at') !== undefined)
    throw new CliError(
      'llmbench k8s-manifest: --coordinator and --start-at: the coordinator starts every level; give one or the other',
      EXIT.usage,
    )
  const startAt = parseStartAt(stringFlag(flags, 'start-at'), now)
  const name = stringFlag(flags, 'name') ?? defaultName(now)
  const runArgs = [...extraArgs]
  if (flags['no-secret'] === true && stringFlag(flags, 'secret') !== undefined)
    throw new CliError('llmbench k8s-manifest: --secret and --no-secret: give one or the other', EXIT.usage)
  try {
    checkExtraArgs(extraArgs)
  } catch (error) {
    throw usageError(error)
  }
  // Load the config as each pod will (files + run flags), so mistakes show up here, once, rather than
  // in N pods after the start time; it also names the variable the API key must arrive in.
  const config = loadConfigOrThrow(configPaths, configFlags(parseRunFlags(extraArgs)))
  refuseClearCredentials(config)
  const cpu = stringFlag(flags, 'cpu')
  // Node's availableParallelism() counts the node's cores, not the pod's CPU limit, so `--workers auto`
  // would start a thread per node core, all squeezed into the limit.
  if (cpu !== undefined && config.run.workers === 'auto') runArgs.push('--workers', String(wholeCores(cpu)))
  const options: K8sManifestOptions = {
    shards,
    name,
    image: stringFlag(flags, 'image') ?? DEFAULT_IMAGE,
    configFiles: configPaths.map((path) => ({ name: basename(path), content: readConfig(path) })),
    apiKeySecret:
      flags['no-secret'] === true
        ? null
        : { ...parseSecret(stringFlag(flags, 'secret') ?? DEFAULT_SECRET), env: config.target.api_key_env },
    startAt: startAt.toISOString(),
    resultsClaim: stringFlag(flags, 'results-claim') ?? null,
    extraArgs: runArgs,
    ...(coordinated ? { coordinator: true } : {}),
  }
  const namespace = stringFlag(flags, 'namespace')
  if (namespace !== undefined) options.namespace = namespace
  if (cpu !== undefined) options.cpu = cpu
  const memory = stringFlag(flags, 'memory')
  if (memory !== undefined) options.memory = memory
  let manifest: string
  try {
    manifest = renderK8sManifest(options)
  } catch (error) {
    throw usageError(error)
  }
  const out = stringFlag(flags, 'out')
  if (out === undefined) io.out(manifest)
  else {
    try {
      writeFileSync(out, manifest)
    } catch (error) {
      throw new CliError(`llmbench k8s-manifest: --out: cannot write ${out}: ${String(error)}`, EXIT.usage)
    }
    io.out(`wrote ${out}\n`)
  }
  const lead = Math.round((startAt.getTime() - now.getTime()) / 1000)
  io.err(
    coordinated
      ? `llmbench k8s-manifest: ${shards} shards of "${name}", each level started by the coordinator\n`
      : `llmbench k8s-manifest: ${shards} shards of "${name}" start at ${options.startAt} (in ${lead} s)\n`,
  )
  for (const file of unshippedFiles(config))
    io.err(
      `note: the config names ${file} by path, but the pods see only /config (the -c files), /results and the image's /app/datasets: put it on the claim and name it by its /results/... path\n`,
    )
  if (!coordinated && lead < MIN_START_DELAY_S)
    io.err(
      `note: that leaves under ${MIN_START_DELAY_S} s to schedule and start every pod; shards that start late are out of step\n`,
    )
  return EXIT.ok
}

/**
 * What the manifest would carry in clear, or not at all, is refused: a key stored in a -c file (a
 * Claude Code settings.json) would land in the ConfigMap; a secret header, the run's or an endpoint's
 * own, in the ConfigMap or the pods' arguments; and an endpoint's own key variable is not in the
 * pods' environment (only the run's comes from the Secret), so that endpoint would be sent no key.
 */
function refuseClearCredentials(config: RunConfig): void {
  const refuse = (message: string): never => {
    throw new CliError(`llmbench k8s-manifest: ${message}`, EXIT.usage)
  }
  const { target } = config
  const stored = target.api_key_file
  if (stored !== null)
    refuse(
      `${stored.file} holds the API key (${stored.path.join('.')}), which the ConfigMap would carry in clear: give a file without it and the key in the Secret (--secret, as $${target.api_key_env})`,
    )
  const entries = target.more_base_urls.filter((entry): entry is MoreEndpoint => typeof entry !== 'string')
  const secretHeaders = [
    ...Object.keys(target.headers).filter(isSecretHeaderName),
    ...entries.flatMap((entry) =>
      Object.keys(entry.headers ?? {})
        .filter(isSecretHeaderName)
        .map((name) => `${name} (endpoint ${displayUrl(entry.url)})`),
    ),
  ]
  if (secretHeaders.length > 0)
    refuse(
      `the header(s) ${secretHeaders.join(', ')} would be carried in clear by the manifest (ConfigMap or pod arguments): send that credential as the API key instead (it comes from the Secret; --auth places it) or leave the header out`,
    )
  const ownKey = entries.find(
    (entry) => entry.api_key_env !== undefined && entry.api_key_env !== target.api_key_env,
  )
  if (ownKey !== undefined)
    refuse(
      `endpoint ${displayUrl(ownKey.url)} takes its key from $${ownKey.api_key_env}, which the pods would not have (only $${target.api_key_env} comes from the Secret): run one manifest per key, or give the endpoints one key`,
    )
}

/** Files the config reads by path (dataset, profile, tokenizer.json) that a pod has neither mounted nor in its image. */
function unshippedFiles(config: RunConfig): string[] {
  const { dataset, profile, tokenizer } = config.workload
  // Presets and built-in encodings are plain words; anything with a slash or an extension is a file.
  const isPath = (value: string | null): value is string => value !== null && /[/\\]|\.\w+$/.test(value)
  const mounted = (path: string) =>
    [CONFIG_DIR, RESULTS_DIR, APP_DIR].some((dir) => path.startsWith(`${dir}/`))
  return [dataset, profile, tokenizer].filter(isPath).filter((path) => !mounted(path))
}

function usageError(error: unknown): CliError {
  if (error instanceof K8sManifestError)
    return new CliError(`llmbench k8s-manifest: ${FLAG_OF[error.field]}: ${error.reason}`, EXIT.usage)
  return new CliError(error instanceof Error ? error.message : String(error), EXIT.usage)
}

function parseShards(text: string | undefined): number {
  if (text === undefined)
    throw new CliError(`llmbench k8s-manifest: --shards: required (1..${MAX_SHARDS})`, EXIT.usage)
  const shards = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new CliError(
      `llmbench k8s-manifest: --shards: expected an integer from 1 to ${MAX_SHARDS}, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  return shards
}

/**
 * --start-at as `run` parses it (ISO time or epoch seconds), with two more checks made here rather than
 * in N pods: an ISO time needs a zone (each node would otherwise read it in its own local time), and
 * `run` refuses a start more than a day away.
 */
function parseStartAt(text: string | undefined, now: Date): Date {
  if (text === undefined) return new Date(now.getTime() + DEFAULT_START_DELAY_S * 1000)
  const ms = parseRunStartAt(text)
  if (ms === null || !isSameEverywhere(text))
    throw new CliError(
      `llmbench k8s-manifest: --start-at: expected an ISO time with a zone (2030-01-01T12:00:00Z) or epoch seconds, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  if (ms - now.getTime() > MAX_START_WAIT_MS)
    throw new CliError(
      `llmbench k8s-manifest: --start-at: ${text} is more than a day away, which \`llmbench run\` refuses: is the date right?`,
      EXIT.usage,
    )
  return new Date(ms)
}

/** "llmbench-20301201-120000": unique per render, so a second run never collides with the first Job. */
function defaultName(now: Date): string {
  // A DNS label: lower case, no "T" or "Z".
  return `llmbench-${utcStamp(now).replace('T', '-').replace('Z', '')}`
}

/** Parses the run flags as `llmbench run` will, so a typo fails here with the flag named. */
function parseRunFlags(extraArgs: string[]): ReturnType<typeof parseFlags>['flags'] {
  try {
    return parseFlags(RUN_SPEC, extraArgs).flags
  } catch (error) {
    // parseFlags speaks as `llmbench run`; keep only its reason, under our own name.
    const message = (
      error instanceof Error ? (error.message.split('\n', 1)[0] ?? '') : String(error)
    ).replace(/^llmbench run: /, '')
    throw new CliError(`llmbench k8s-manifest: the run flags after --: ${message}`, EXIT.usage)
  }
}

function parseSecret(text: string): { name: string; key: string } {
  const [name = '', key = 'api-key', ...rest] = text.split(':')
  if (name === '' || key === '' || rest.length > 0)
    throw new CliError(
      `llmbench k8s-manifest: --secret: expected NAME or NAME:KEY, got ${JSON.stringify(text)}`,
      EXIT.usage,
    )
  return { name, key }
}

/** "2" → 2, "1.5" → 1, "500m" → 1: worker threads for a CPU limit, at least one. */
function wholeCores(cpu: string): number {
  const cores = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) / 1000 : Number(cpu)
  return Number.isFinite(cores) ? Math.max(1, Math.floor(cores)) : 1
}

function readConfig(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new CliError(
      `llmbench k8s-manifest: -c/--config: cannot read ${path}: ${String(error)}`,
      EXIT.usage,
    )
  }
}
