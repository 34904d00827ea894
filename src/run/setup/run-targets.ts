import { displayUrl } from '../../client/redact.js'
import type { Endpoint } from '../../client/target.js'
import type { MoreBaseUrl, MoreEndpoint, RunConfig } from '../../config/types.js'
import { joinUrl } from '../../config/url.js'
import type { RunSplitMeta } from '../../metrics/target-levels.js'
import type { TargetWeights } from '../../schedule/target-share.js'
import { planTargetSplit } from '../../schedule/target-split.js'
import type { SplitTarget } from '../../worker/protocol.js'
import { readApiKey, readKeyVariable } from './api-key.js'
import { resolveEndpoint } from './resolve-endpoint.js'

/**
 * The run's endpoints and models, resolved once (issue 37 item 3): each endpoint with its own URL,
 * path, protocol, key and headers, and every (endpoint, model) target with its weight. Everything of
 * a run that sends, splits or shows per endpoint reads this list rather than the config: the
 * preflights, the worker threads (SplitTarget; a record's `target` numbers index it), the scrapes of
 * each server's /metrics, and the result's split, which the report reads.
 *
 * An endpoint given as a plain URL is the run's endpoint at that URL: the same path, key, headers
 * and timeouts (docs/configuration.md "Several endpoints and models"). One given as an entry that
 * names its own api_key_env, headers or env_headers gets those, each field it leaves out being the
 * run's; it is never sent the run's key when it names its own.
 */

export interface ResolvedEndpoint {
  /** 0 = base_url, then more_base_urls in order: a record's target.endpoint. */
  index: number
  /** Where its requests go, with which key and headers; only these differ between endpoints. */
  endpoint: Endpoint
  /** Its share of every level against the other endpoints' (endpoint_weights; 1 each when none). */
  weight: number
}

export interface RunTargets {
  endpoints: ResolvedEndpoint[]
  models: { id: string; weight: number }[]
  /** Every (endpoint, model) pair, numbered endpoint × models + model: the endpoint with the model's id in its body. */
  targets: SplitTarget[]
  /** How each level is shared between the targets (schedule/target-share.ts). */
  weights: TargetWeights
}

/**
 * The run's targets from the config and its first endpoint (resolveEndpoint's, with the run's key);
 * other endpoints' own keys and header variables are read from `env`. An unsendable key is a
 * ConfigError naming its variable. Notes (a variable not set) say which endpoint they are about.
 */
export function resolveTargets(
  config: RunConfig,
  first: Endpoint,
  env: NodeJS.ProcessEnv = process.env,
  note: (line: string) => void = () => {},
): RunTargets {
  const { target } = config
  const others = target.more_base_urls.map((entry) => endpointAt(config, first, entry, env, note))
  const endpoints = withEverySecret([first, ...others])
  const endpointWeights = endpoints.map((_, i) => target.endpoint_weights[i] ?? 1)
  const modelIds = [target.model, ...target.more_models]
  const models = modelIds.map((id, i) => ({ id, weight: target.model_weights[i] ?? 1 }))
  const plan = planTargetSplit(
    endpoints.map((value, i) => ({ value, weight: endpointWeights[i] as number })),
    models.map((model) => ({ value: model.id, weight: model.weight })),
    config.workload.seed,
  )
  return {
    endpoints: endpoints.map((endpoint, index) => ({
      index,
      endpoint,
      weight: endpointWeights[index] as number,
    })),
    models,
    targets: plan.targets.map((t) => ({
      endpoint: { ...t.endpoint, body: { ...t.endpoint.body, model: t.model } },
      endpoint_index: t.endpoint_index,
      model_index: t.model_index,
    })),
    weights: { weights: plan.targets.map((t) => t.weight), cycle: plan.cycle, offset: plan.offset },
  }
}

/** The run's own endpoint (base_url): the probes, the model list and the reads of the server go to it. */
export function firstEndpoint(run: RunTargets): Endpoint {
  return (run.endpoints[0] as ResolvedEndpoint).endpoint
}

/** Several endpoints or models: each level is split between the targets. One target is the run's endpoint alone. */
export function isSplit(run: RunTargets): boolean {
  return run.targets.length > 1
}

/** The split as the result shows it: URLs without credentials, each endpoint's and model's weight. */
export function splitMetaOf(run: RunTargets): RunSplitMeta {
  return {
    endpoints: run.endpoints.map((e) => ({ url: displayUrl(e.endpoint.url), weight: e.weight })),
    models: run.models.map((model) => ({ ...model })),
  }
}

/** The targets with every endpoint's keep-alive set as the probes decided (they probed the first server). */
export function withKeepAlive(targets: readonly SplitTarget[], keepAlive: boolean): SplitTarget[] {
  return targets.map((target) => ({ ...target, endpoint: { ...target.endpoint, keepAlive } }))
}

/** An endpoint beside the first: the first at its URL, with the entry's own key and headers when it names them. */
function endpointAt(
  config: RunConfig,
  first: Endpoint,
  entry: MoreBaseUrl,
  env: NodeJS.ProcessEnv,
  note: (line: string) => void,
): Endpoint {
  const url = typeof entry === 'string' ? entry : entry.url
  const moved = atBaseUrl(first, url, config.target.endpoint)
  if (typeof entry === 'string' || !namesOwnAuth(entry)) return moved
  const own = resolveEndpoint(
    ownConfig(config, entry),
    entry.api_key_env === undefined
      ? readApiKey(config, env)
      : readKeyVariable(entry.api_key_env, env, aboutEndpoint(url, note)),
    env,
    aboutEndpoint(url, note),
  )
  return { ...moved, headers: own.headers, secrets: own.secrets, apiKeyEnv: own.apiKeyEnv }
}

function namesOwnAuth(entry: MoreEndpoint): boolean {
  return entry.api_key_env !== undefined || entry.headers !== undefined || entry.env_headers !== undefined
}

/** The config as the entry's endpoint sees it: its URL, and its key variable and headers in place of the run's. */
function ownConfig(config: RunConfig, entry: MoreEndpoint): RunConfig {
  const { target } = config
  return {
    ...config,
    target: {
      ...target,
      base_url: entry.url,
      api_key_env: entry.api_key_env ?? target.api_key_env,
      // Another tool's stored key is the run's key: an endpoint naming its own variable does not take it.
      api_key_file: entry.api_key_env === undefined ? target.api_key_file : null,
      headers: entry.headers ?? target.headers,
      env_headers: entry.env_headers ?? target.env_headers,
    },
  }
}

/** A note about one endpoint's key or headers names the endpoint (without credentials). */
function aboutEndpoint(url: string, note: (line: string) => void): (line: string) => void {
  return (line) => note(`${line} (endpoint ${displayUrl(url)})`)
}

/** `endpoint` sent to another server: the same path, key and headers at `baseUrl`. */
function atBaseUrl(endpoint: Endpoint, baseUrl: string, path: string): Endpoint {
  const joined = joinUrl(baseUrl, path)
  const url = new URL(joined)
  return {
    ...endpoint,
    url: joined,
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    modelsUrl: joinUrl(baseUrl, '/v1/models'),
  }
}

/**
 * Each endpoint scrubs every endpoint's secrets from what it stores or prints: a server's error may
 * quote any header a gateway in front of it saw, and a message is redacted once, where it is made.
 */
function withEverySecret(endpoints: Endpoint[]): Endpoint[] {
  const secrets = [...new Set(endpoints.flatMap((endpoint) => endpoint.secrets))]
  if (endpoints.every((endpoint) => endpoint.secrets.length === secrets.length)) return endpoints
  return endpoints.map((endpoint) => ({ ...endpoint, secrets }))
}
