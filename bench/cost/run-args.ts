/**
 * The `llmbench run` both cost benches time (run.ts, end-of-run.ts): one closed-loop level of
 * `streams` streams against the truth server, no preflight or scraping, 8 prompt tokens and
 * `tokens` output tokens per request, nothing on the terminal.
 */
export function runArgs(options: {
  cli: string
  port: number
  streams: number
  requests: number
  tokens: number
  workers: string
  out: string
  json: boolean
}): string[] {
  return [
    options.cli,
    'run',
    '--base-url',
    `http://127.0.0.1:${options.port}/v1`,
    '--model',
    'truth',
    '--levels',
    String(options.streams),
    '--requests',
    String(Math.max(1, options.requests)),
    '--warmup',
    '0',
    '--no-preflight',
    '--no-server-metrics',
    '--workers',
    options.workers,
    '--input-tokens',
    '8',
    '--output-tokens',
    String(options.tokens),
    ...(options.json ? ['--json'] : []),
    '--quiet',
    '--out',
    options.out,
  ]
}
