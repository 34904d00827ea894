import { displayUrl } from '../client/redact.js'
import type { Endpoint } from '../client/target.js'
import type { RunConfig } from '../config/types.js'
import { joinUrl } from '../config/url.js'
import type { TargetWeights } from '../schedule/target-share.js'
import { planTargetSplit } from '../schedule/target-split.js'
import type { SplitTarget } from '../worker/protocol.js'

/**
 * Several endpoints or models in one run (issue 29): the (endpoint, model) targets the worker
 * threads send to, and how each level is split between them (schedule/target-share.ts). Every
 * endpoint is sent the same requests as the run's own endpoint (its path, key, headers, timeouts),
 * only at its own URL; every model, the same bodies with its own id.
 */
export interface RunSplit {
  targets: SplitTarget[]
  weights: TargetWeights
  /** As the result shows them: URLs without credentials, and each one's weight. */
  endpoints: { url: string; weight: number }[]
  models: { id: string; weight: number }[]
}

/** The run's split, or null for a run of one endpoint and one model. */
export function runSplitOf(config: RunConfig, endpoint: Endpoint): RunSplit | null {
  const { target } = config
  if (target.more_base_urls.length === 0 && target.more_models.length === 0) return null
  const urls = [target.base_url, ...target.more_base_urls]
  const models = [target.model, ...target.more_models]
  const endpointWeights = urls.map((_, i) => target.endpoint_weights[i] ?? 1)
  const modelWeights = models.map((_, i) => target.model_weights[i] ?? 1)
  const endpoints = urls.map((url, i) => (i === 0 ? endpoint : atBaseUrl(endpoint, url, target.endpoint)))
  const plan = planTargetSplit(
    endpoints.map((value, i) => ({ value, weight: endpointWeights[i] as number })),
    models.map((value, i) => ({ value, weight: modelWeights[i] as number })),
    config.workload.seed,
  )
  return {
    targets: plan.targets.map((t) => ({
      endpoint: { ...t.endpoint, body: { ...t.endpoint.body, model: t.model } },
      endpoint_index: t.endpoint_index,
      model_index: t.model_index,
    })),
    weights: { weights: plan.targets.map((t) => t.weight), cycle: plan.cycle, offset: plan.offset },
    endpoints: endpoints.map((e, i) => ({ url: displayUrl(e.url), weight: endpointWeights[i] as number })),
    models: models.map((id, i) => ({ id, weight: modelWeights[i] as number })),
  }
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

/** Each model's bodies: the planned bodies with the model's id in place of the run's first model. */
export function modelBodies(bodies: readonly Buffer[], models: readonly string[]): Buffer[][] {
  return models.map((model, m) =>
    m === 0
      ? [...bodies]
      : bodies.map((body) => {
          const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>
          json.model = model
          return Buffer.from(JSON.stringify(json))
        }),
  )
}
