/**
 * The whole-request timeout, ms, from where it is written in seconds: the run's [client] settings
 * (RunConfig.client, from --timeout, client.timeout, llm.timeout_seconds) or a result's meta.client.
 * The one place it changes unit: flags, files and results say seconds, everything that times a
 * request (the client, the open loop's drop rule, error-adjusted figures) works in ms.
 */
export function requestTimeoutMs(settings: { timeout_s: number }): number {
  return settings.timeout_s * 1000
}
