/**
 * A /metrics body of a server holding many models (issue 26, case 3): `models` models, each with
 * vLLM's running and waiting gauges, a generated-tokens counter and a TTFT histogram, plus families
 * the vocabulary does not read. The model under test is `own`, running `ownRunning`; every other
 * model runs 3, so adding every series up gives 3 × (models − 1) + ownRunning.
 */
export function manyModelsExposition(models: number, own: string, ownRunning: number): string {
  const names = [own, ...Array.from({ length: models - 1 }, (_, i) => `tenant-${i}/model-${i}`)]
  const lines: string[] = []
  const family = (name: string, type: string, sample: (model: string, i: number) => string[]): void => {
    lines.push(`# HELP ${name} generated`, `# TYPE ${name} ${type}`)
    names.forEach((model, i) => {
      lines.push(...sample(model, i))
    })
  }
  const label = (model: string): string => `engine="0",model_name="${model}"`
  family('vllm:num_requests_running', 'gauge', (m, i) => [
    `vllm:num_requests_running{${label(m)}} ${i === 0 ? ownRunning : 3}`,
  ])
  family('vllm:num_requests_waiting', 'gauge', (m) => [`vllm:num_requests_waiting{${label(m)}} 0`])
  family('vllm:generation_tokens_total', 'counter', (m, i) => [
    `vllm:generation_tokens_total{${label(m)}} ${i === 0 ? 1000 : 50}`,
  ])
  family('vllm:time_to_first_token_seconds', 'histogram', (m) => [
    `vllm:time_to_first_token_seconds_bucket{${label(m)},le="0.1"} 1`,
    `vllm:time_to_first_token_seconds_bucket{${label(m)},le="+Inf"} 2`,
    `vllm:time_to_first_token_seconds_count{${label(m)}} 2`,
    `vllm:time_to_first_token_seconds_sum{${label(m)}} 0.3`,
  ])
  family('vllm:lora_requests_info', 'gauge', (m) => [
    `vllm:lora_requests_info{${label(m)},running_lora_adapters=""} 1`,
  ])
  return `${lines.join('\n')}\n`
}
