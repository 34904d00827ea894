/**
 * Renders the Kubernetes objects that run one llmbench run as N shards on N machines: a ConfigMap with
 * the user's config files and an Indexed Job whose pod I runs `llmbench run --shard I/N`, all starting
 * at one wall-clock time, or (coordinator) at each level's instant given by `llmbench coordinate`, run
 * as a Job of one pod behind a Service. With a shared (ReadWriteMany) claim, a second, suspended Job merges the shard
 * folders once they are all done. Only namespaced objects a namespace editor may create: no RBAC, no
 * cluster-scoped kinds.
 *
 * Pure: options in, multi-document YAML out. Nothing here talks to a cluster.
 */
import { Document, isMap } from 'yaml'
import { ISO_WITH_ZONE } from '../schedule/start-time.js'

export interface K8sManifestOptions {
  /** Parallelism = completions = shards. */
  shards: number
  /** Prefix of every object's name; a DNS-1123 label of at most MAX_NAME_LENGTH characters. */
  name: string
  image: string
  namespace?: string
  /** The user's settings.json / config.toml, shipped in a ConfigMap and mounted at /config. */
  configFiles: { name: string; content: string }[]
  /** `env` is the variable the config's api_key_env names; its value comes from the Secret, never inline. */
  apiKeySecret: { name: string; key: string; env: string } | null
  /** ISO time with a zone, passed to every shard as --start-at; unused with a coordinator. */
  startAt: string
  /**
   * Render `llmbench coordinate` as a Job of one pod behind a Service, and give every shard
   * `--coordinator` instead of `--start-at`: levels start at one instant, offsets measured. Absent = off.
   */
  coordinator?: boolean
  /** A ReadWriteMany PersistentVolumeClaim mounted at /results; null: a per-pod emptyDir, copied out by hand. */
  resultsClaim: string | null
  /** Further flags for `llmbench run`. */
  extraArgs: string[]
  cpu?: string
  memory?: string
}

/** Names the option at fault, so the CLI can name its flag instead. */
export class K8sManifestError extends Error {
  constructor(
    readonly field: keyof K8sManifestOptions,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`)
    this.name = 'K8sManifestError'
  }
}

/** Paths inside the pod. The Dockerfile's ENTRYPOINT and WORKDIR agree with them. */
export const CONFIG_DIR = '/config'
export const RESULTS_DIR = '/results'
/** The installed package in the image: dist/ and the sample datasets/. */
export const APP_DIR = '/app'
const CLI_ENTRY = `${APP_DIR}/dist/cli/main.js`
/** The image's non-root user (the `node` user of the node:20 images). */
const RUN_AS_UID = 1000

export const MAX_SHARDS = 1000
/**
 * Kubernetes allows 63 characters in a label, but an Indexed Job's pods get the hostname
 * `<job>-<index>` (a label too), and we add `-config` and `-merge`: 52 (as for CronJobs) leaves room.
 */
export const MAX_NAME_LENGTH = 52
/** A ConfigMap holds at most 1 MiB, metadata included; leave some of it to the metadata. */
const MAX_CONFIG_BYTES = 1_000_000
/** How long a pod without a shared claim keeps its results for `kubectl cp` before it exits. */
export const HOLD_SECONDS = 3600

/** Flags the manifest sets itself: given again, they would fight over the shard's identity or output. */
const OWNED_FLAGS: Record<string, string> = {
  '-c': 'the config files are embedded with -c/--config and mounted at /config',
  '--config': 'the config files are embedded with -c/--config and mounted at /config',
  '--out': 'each shard writes /results/<name>/shard-<index>',
  '--shard': 'each pod is given its own --shard <index>/<shards>',
  '--start-at': 'set it with --start-at of k8s-manifest',
  '--coordinator': 'set it with --coordinator of k8s-manifest (the coordinator Service)',
  // With backoffLimit 0, one pod exiting 1 fails the Job, and the Job controller then stops every
  // other shard mid-run. A shard's figures are also only its share of the load.
  '--fail-on-slo': 'a shard exiting 1 would stop the other shards; gate on the merged result instead',
  '--history': "a shard's summary is only its share of the load; keep history of the merged result",
}

/** Throws a K8sManifestError when the extra run flags include one the manifest owns. */
export function checkExtraArgs(extraArgs: string[]): void {
  for (const arg of extraArgs) {
    const flag = arg.startsWith('--') ? arg.split('=', 1)[0] : arg.startsWith('-c') ? '-c' : undefined
    const why = flag === undefined ? undefined : OWNED_FLAGS[flag as string]
    if (why !== undefined) throw new K8sManifestError('extraArgs', `${flag} is set by the manifest: ${why}`)
  }
}

export function renderK8sManifest(options: K8sManifestOptions): string {
  validate(options)
  const docs = [configMapDoc(options)]
  if (options.coordinator === true) docs.push(coordinatorServiceDoc(options), coordinatorJobDoc(options))
  docs.push(shardJobDoc(options))
  if (options.resultsClaim !== null) docs.push(mergeJobDoc(options, options.resultsClaim))
  // YAML 1.1 is what Kubernetes' parser speaks: stringified under it, strings such as "on", "y" or an ISO
  // time are quoted, so they reach the API server as strings, not as booleans or timestamps.
  const body = docs.map((doc) => doc.toString({ lineWidth: 0 })).join('---\n')
  return `${header(options)}${body}`
}

// ---------------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------------

type Component = 'config' | 'shard' | 'merge' | 'coordinator'

function labels(options: K8sManifestOptions, component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'llmbench',
    'app.kubernetes.io/instance': options.name,
    'app.kubernetes.io/component': component,
  }
}

function metadata(options: K8sManifestOptions, name: string, component: Component): Record<string, unknown> {
  return {
    name,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    labels: labels(options, component),
  }
}

const configMapName = (options: K8sManifestOptions): string => `${options.name}-config`
export const mergeJobName = (name: string): string => `${name}-merge`
/** The coordinator's Job and Service: a short suffix, as the Service name is a DNS label (63 at most). */
export const coordinatorName = (name: string): string => `${name}-coord`
/** The port `llmbench coordinate` listens on by default; the Service exposes it. */
export const COORDINATOR_PORT = 7878
const shardDir = (name: string, index: string): string => `${RESULTS_DIR}/${name}/shard-${index}`

function configMapDoc(options: K8sManifestOptions): Document {
  const data: Record<string, string> = {}
  for (const file of options.configFiles) data[file.name] = file.content
  return yamlDoc({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(options, configMapName(options), 'config'),
    data,
  })
}

function shardJobDoc(options: K8sManifestOptions): Document {
  const { shards, name } = options
  const doc = yamlDoc({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(options, name, 'shard'),
    spec: {
      completionMode: 'Indexed',
      completions: shards,
      parallelism: shards,
      backoffLimit: 0,
      template: {
        metadata: { labels: labels(options, 'shard') },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: POD_SECURITY,
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    labelSelector: { matchLabels: labels(options, 'shard') },
                    topologyKey: 'kubernetes.io/hostname',
                  },
                },
              ],
            },
          },
          containers: [shardContainer(options)],
          volumes: [
            { name: 'config', configMap: { name: configMapName(options) } },
            resultsVolume(options.resultsClaim),
          ],
        },
      },
    },
  })
  explainShardJob(doc, options)
  return doc
}

/** `llmbench run` as every pod runs it: one argument list, each pod's shard filled in by Kubernetes. */
function shardRunArgs(options: K8sManifestOptions): string[] {
  const { shards, name } = options
  // Kubernetes expands $(VAR) in args from the container's env, so one pod template gives every pod
  // its own shard and folder.
  const index = '$(JOB_COMPLETION_INDEX)'
  return [
    'run',
    ...options.configFiles.flatMap((file) => ['-c', `${CONFIG_DIR}/${file.name}`]),
    '--shard',
    `${index}/${shards}`,
    ...(options.coordinator === true
      ? ['--coordinator', `http://${coordinatorName(name)}:${COORDINATOR_PORT}`]
      : ['--start-at', options.startAt]),
    '--out',
    shardDir(name, index),
    ...options.extraArgs,
  ]
}

/** The shard container's environment: its index and count, and the API key from its Secret. */
function shardEnv(options: K8sManifestOptions): Record<string, unknown>[] {
  const env: Record<string, unknown>[] = [
    {
      // Indexed Jobs set this already; declaring it ourselves keeps $(JOB_COMPLETION_INDEX) in args
      // defined whatever the cluster version does (the Job controller then leaves ours alone).
      name: 'JOB_COMPLETION_INDEX',
      valueFrom: {
        fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
      },
    },
    { name: 'JOB_COMPLETIONS', value: String(options.shards) },
  ]
  if (options.apiKeySecret !== null) {
    const { name: secret, key, env: variable } = options.apiKeySecret
    env.push({ name: variable, valueFrom: { secretKeyRef: { name: secret, key } } })
  }
  return env
}

/** The one container of a shard pod: llmbench run, its config and results mounted. */
function shardContainer(options: K8sManifestOptions) {
  const held = options.resultsClaim === null
  return {
    name: 'llmbench',
    image: options.image,
    // Without a shared claim the results die with the container, so a small shell keeps it alive
    // after the run until they are copied out; with a claim, the image's entrypoint runs as it is.
    ...(held ? { command: ['/bin/sh', '-c', HOLD_SCRIPT, 'llmbench'] } : {}),
    args: shardRunArgs(options),
    env: shardEnv(options),
    ...resources(options),
    ...(held
      ? { readinessProbe: { exec: { command: ['test', '-e', `${RESULTS_DIR}/.done`] }, periodSeconds: 5 } }
      : {}),
    volumeMounts: [
      { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
      { name: 'results', mountPath: RESULTS_DIR },
    ],
    securityContext: CONTAINER_SECURITY,
  }
}

/** The comments on the Job that say why it is built the way it is (retries, spread, resources). */
function explainShardJob(doc: Document, options: K8sManifestOptions): void {
  comment(
    doc,
    ['spec', 'completionMode'],
    ' Pod I of N runs `llmbench run --shard I/N`: its share of every level.',
  )
  comment(
    doc,
    ['spec', 'backoffLimit'],
    [
      ' Never retry: a retried shard would replay its share on top of the shards still running, so the',
      ' server would see more load than the run records, and the merge would count that share twice.',
    ].join('\n'),
  )
  comment(
    doc,
    ['spec', 'template', 'spec', 'restartPolicy'],
    ' Never restart in place either, for the same reason.',
  )
  comment(
    doc,
    ['spec', 'template', 'spec', 'affinity'],
    [
      ' One shard per machine when there are enough: shards on one node share its cores and NIC, and',
      " the client-bound limit is the node's, not the pod's. Preferred, not required, so that more",
      ' shards than nodes still schedule instead of waiting past --start-at.',
    ].join('\n'),
  )
  if (options.cpu !== undefined || options.memory !== undefined)
    comment(
      doc,
      ['spec', 'template', 'spec', 'containers', 0, 'resources'],
      [
        ' Requests = limits: a Guaranteed pod is evicted last, and with the static CPU manager whole',
        ' cores are its own. CPU throttling would show up as event-loop delay, which llmbench reports.',
      ].join('\n'),
    )
}

/** The coordinator's address inside the namespace: shards reach it by the Service's name. */
function coordinatorServiceDoc(options: K8sManifestOptions): Document {
  return yamlDoc({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(options, coordinatorName(options.name), 'coordinator'),
    spec: {
      selector: labels(options, 'coordinator'),
      ports: [{ name: 'coordinate', port: COORDINATOR_PORT, targetPort: COORDINATOR_PORT, protocol: 'TCP' }],
    },
  })
}

/**
 * `llmbench coordinate` in one pod, told the shard count once. Never restarted: a new coordinator
 * would not know the levels already started, and the shards, having lost theirs, have stopped (exit 6).
 * Its report goes to its log (--json), and with a claim to coordination.json beside the shards.
 */
function coordinatorJobDoc(options: K8sManifestOptions): Document {
  const { name, shards } = options
  const claim = options.resultsClaim
  const doc = yamlDoc({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(options, coordinatorName(name), 'coordinator'),
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: labels(options, 'coordinator') },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: POD_SECURITY,
          containers: [
            {
              name: 'coordinate',
              image: options.image,
              args: [
                'coordinate',
                '--shards',
                String(shards),
                '--host',
                '0.0.0.0',
                '--port',
                String(COORDINATOR_PORT),
                '--json',
                ...(claim === null ? [] : ['--out', `${RESULTS_DIR}/${name}/coordination.json`]),
              ],
              ports: [{ containerPort: COORDINATOR_PORT, name: 'coordinate' }],
              ...(claim === null ? {} : { volumeMounts: [{ name: 'results', mountPath: RESULTS_DIR }] }),
              securityContext: CONTAINER_SECURITY,
            },
          ],
          ...(claim === null ? {} : { volumes: [resultsVolume(claim)] }),
        },
      },
    },
  })
  comment(
    doc,
    ['spec', 'backoffLimit'],
    ' Never retried: a new coordinator would not know the levels already started.',
  )
  return doc
}

/**
 * The merge runs once every shard is done. Kubernetes has no "after that Job" ordering, so it is
 * created suspended and resumed by hand (`kubectl patch ... suspend:false`) after `kubectl wait`: no
 * polling, no RBAC, and a shard that is missing is an error rather than a smaller merge.
 */
function mergeJobDoc(options: K8sManifestOptions, claim: string): Document {
  const { name, shards } = options
  const folders = Array.from({ length: shards }, (_, i) => shardDir(name, String(i)))
  const doc = yamlDoc({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(options, mergeJobName(name), 'merge'),
    spec: {
      suspend: true,
      backoffLimit: 0,
      template: {
        metadata: { labels: labels(options, 'merge') },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: POD_SECURITY,
          containers: [
            {
              name: 'merge',
              image: options.image,
              args: ['merge', ...folders, '--out', `${RESULTS_DIR}/${name}/merged`],
              ...resources(options),
              volumeMounts: [{ name: 'results', mountPath: RESULTS_DIR }],
              securityContext: CONTAINER_SECURITY,
            },
          ],
          volumes: [resultsVolume(claim)],
        },
      },
    },
  })
  comment(
    doc,
    ['spec', 'suspend'],
    [
      ' Created suspended: resume it once the shard Job is complete, with',
      ` kubectl patch job/${mergeJobName(name)}${nsFlag(options)} --type=merge -p '{"spec":{"suspend":false}}'`,
    ].join('\n'),
  )
  return doc
}

function resultsVolume(claim: string | null): Record<string, unknown> {
  return claim === null
    ? { name: 'results', emptyDir: {} }
    : { name: 'results', persistentVolumeClaim: { claimName: claim } }
}

function resources(options: K8sManifestOptions): { resources?: Record<string, unknown> } {
  const amounts: Record<string, string> = {}
  if (options.cpu !== undefined) amounts.cpu = options.cpu
  if (options.memory !== undefined) amounts.memory = options.memory
  return Object.keys(amounts).length === 0 ? {} : { resources: { requests: amounts, limits: { ...amounts } } }
}

/** Meets the "restricted" Pod Security Standard, so namespaces that enforce it accept the pods. */
const POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: RUN_AS_UID,
  runAsGroup: RUN_AS_UID,
  // Makes a claim that supports ownership changes writable by that user.
  fsGroup: RUN_AS_UID,
  seccompProfile: { type: 'RuntimeDefault' },
}
const CONTAINER_SECURITY = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }

/**
 * Without a shared claim: run llmbench, then keep the pod (and its emptyDir) alive until someone has
 * copied the results out and created /results/.copied, or HOLD_SECONDS pass. /results/.done makes the
 * pod Ready, so `kubectl wait --for=condition=Ready` says when to copy. SIGTERM is passed on to
 * llmbench (a shell as PID 1 would ignore it), which then writes its partial results as on Ctrl-C.
 * No "$(" anywhere: Kubernetes would try to expand it as $(VAR).
 */
const HOLD_SCRIPT = [
  `node ${CLI_ENTRY} "$@" &`,
  'pid=$!',
  `trap 'stopping=1; kill -TERM "$pid" 2>/dev/null' TERM INT`,
  'wait "$pid"',
  'code=$?',
  '# A signal ends `wait` early; wait again for the real exit status.',
  'while kill -0 "$pid" 2>/dev/null; do wait "$pid"; code=$?; done',
  '[ -n "$stopping" ] && exit "$code"',
  `touch ${RESULTS_DIR}/.done`,
  `echo "llmbench: exit $code; results kept until ${RESULTS_DIR}/.copied exists (at most ${HOLD_SECONDS} s)" >&2`,
  `timeout ${HOLD_SECONDS} sh -c 'until [ -e ${RESULTS_DIR}/.copied ]; do sleep 2; done' &`,
  'wait "$!"',
  'exit "$code"',
  '',
].join('\n')

// ---------------------------------------------------------------------------------------------------
// YAML
// ---------------------------------------------------------------------------------------------------

function yamlDoc(value: unknown): Document {
  return new Document(value, { version: '1.1' })
}

/** Puts a comment above the key at `path` (the last element is the key). */
function comment(doc: Document, path: (string | number)[], text: string): void {
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true)
  if (!isMap(parent)) throw new Error(`no map at ${path.slice(0, -1).join('.')}`)
  const pair = parent.items.find((item) => (item.key as { value?: unknown } | null)?.value === path.at(-1))
  if (pair === undefined || typeof pair.key !== 'object' || pair.key === null)
    throw new Error(`no key at ${path.join('.')}`)
  ;(pair.key as { commentBefore?: string }).commentBefore = text
}

const nsFlag = (options: K8sManifestOptions): string =>
  options.namespace !== undefined ? ` -n ${options.namespace}` : ''

/** What to do with the file, with this manifest's own names filled in. */
function header(options: K8sManifestOptions): string {
  const { name, shards, startAt } = options
  const ns = nsFlag(options)
  const shardSelector = `app.kubernetes.io/instance=${name},app.kubernetes.io/component=shard`
  const lines =
    options.coordinator === true
      ? [
          `llmbench: one run as ${shards} shards (Indexed Job "${name}"), each level started at one instant by the coordinator (Job and Service "${coordinatorName(name)}").`,
          'Rendered by `llmbench k8s-manifest`; the guide is deploy/k8s/README.md in the llmbench repository.',
          `  kubectl apply${ns} -f THIS_FILE`,
          `The coordinator's account: kubectl logs${ns} job/${coordinatorName(name)}`,
        ]
      : [
          `llmbench: one run as ${shards} shards (Indexed Job "${name}"), all starting at ${startAt}.`,
          'Rendered by `llmbench k8s-manifest`; the guide is deploy/k8s/README.md in the llmbench repository.',
          `Apply it before ${startAt}: a shard that starts later than that starts late.`,
          `  kubectl apply${ns} -f THIS_FILE`,
        ]
  if (options.resultsClaim !== null) {
    lines.push(
      `  kubectl wait${ns} --for=condition=complete job/${name} --timeout=24h`,
      `  kubectl patch${ns} job/${mergeJobName(name)} --type=merge -p '{"spec":{"suspend":false}}'`,
      `  kubectl wait${ns} --for=condition=complete job/${mergeJobName(name)} --timeout=1h`,
      `Results on claim ${options.resultsClaim}: ${RESULTS_DIR}/${name}/shard-<i>, merged in ${RESULTS_DIR}/${name}/merged.`,
    )
  } else {
    lines.push(
      `  kubectl wait${ns} --for=condition=Ready pod -l ${shardSelector} --timeout=24h`,
      `Then, within ${HOLD_SECONDS} s, for each pod: kubectl cp${ns} POD:${RESULTS_DIR}/${name}/shard-<i> ./${name}/shard-<i>`,
      `  and kubectl exec${ns} POD -- touch ${RESULTS_DIR}/.copied (the pod then exits);`,
      `  then: llmbench merge ./${name}/shard-* --out ./${name}/merged`,
    )
  }
  return `${lines.map((line) => `# ${line}`).join('\n')}\n`
}

// ---------------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------------

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
/** ConfigMap and Secret keys. */
const DATA_KEY = /^[-._a-zA-Z0-9]+$/
/** Stricter than Kubernetes: the name must also work as a shell variable for llmbench to read. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const CPU_QUANTITY = /^(\d+(\.\d+)?|\d+m)$/
const MEMORY_QUANTITY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/

function validate(options: K8sManifestOptions): void {
  const fail = (field: keyof K8sManifestOptions, reason: string): never => {
    throw new K8sManifestError(field, reason)
  }
  const got = (value: unknown): string => JSON.stringify(value) ?? String(value)
  const { shards, name, namespace, image, startAt } = options
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    fail('shards', `expected an integer from 1 to ${MAX_SHARDS}, got ${got(shards)}`)
  if (!DNS_LABEL.test(name) || name.length > MAX_NAME_LENGTH)
    fail(
      'name',
      `expected a DNS-1123 label of at most ${MAX_NAME_LENGTH} characters (lowercase letters, digits and "-", starting and ending with a letter or digit), got ${got(name)}`,
    )
  if (namespace !== undefined && (!DNS_LABEL.test(namespace) || namespace.length > 63))
    fail('namespace', `expected a DNS-1123 label of at most 63 characters, got ${got(namespace)}`)
  if (image.trim() === '' || /\s/.test(image))
    fail('image', `expected an image reference without spaces, got ${got(image)}`)
  const seen = new Set<string>()
  let bytes = 0
  for (const file of options.configFiles) {
    if (!DATA_KEY.test(file.name) || file.name.length > 253)
      fail('configFiles', `expected a file name of letters, digits, ".", "-" and "_", got ${got(file.name)}`)
    if (seen.has(file.name))
      fail('configFiles', `two config files are both named ${got(file.name)}: rename one`)
    seen.add(file.name)
    bytes += Buffer.byteLength(file.content)
  }
  if (bytes > MAX_CONFIG_BYTES)
    fail(
      'configFiles',
      `expected at most ${MAX_CONFIG_BYTES} bytes in all (a ConfigMap's limit), got ${bytes}`,
    )
  if (options.apiKeySecret !== null) {
    const { name: secret, key, env } = options.apiKeySecret
    if (!DNS_SUBDOMAIN.test(secret) || secret.length > 253)
      fail('apiKeySecret', `expected a Secret name (DNS-1123 subdomain), got ${got(secret)}`)
    if (!DATA_KEY.test(key)) fail('apiKeySecret', `expected a Secret key, got ${got(key)}`)
    if (!ENV_NAME.test(env))
      fail('apiKeySecret', `expected an environment variable name (api_key_env), got ${got(env)}`)
  }
  if (!ISO_WITH_ZONE.test(startAt) || Number.isNaN(Date.parse(startAt)))
    fail('startAt', `expected an ISO time with a zone, like 2030-01-01T12:00:00Z, got ${got(startAt)}`)
  const claim = options.resultsClaim
  if (claim !== null && (!DNS_SUBDOMAIN.test(claim) || claim.length > 253))
    fail('resultsClaim', `expected a PersistentVolumeClaim name (DNS-1123 subdomain), got ${got(claim)}`)
  checkExtraArgs(options.extraArgs)
  if (options.cpu !== undefined && !CPU_QUANTITY.test(options.cpu))
    fail('cpu', `expected a CPU quantity like 2, 1.5 or 500m, got ${got(options.cpu)}`)
  if (options.memory !== undefined && !MEMORY_QUANTITY.test(options.memory))
    fail('memory', `expected a memory quantity like 512Mi or 2Gi, got ${got(options.memory)}`)
}
