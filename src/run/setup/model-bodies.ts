/**
 * Several models in one run: each model is sent the same prompts as the run's first model, with its
 * own id in the body (the worker threads pick a target's list by its model_index).
 */

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
