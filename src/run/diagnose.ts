import type { RequestRecord } from '../records/types.js'

export interface Diagnosis {
  /** What went wrong, in one line. */
  problem: string
  /** What to do about it. */
  hint: string
}

const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT/
const TLS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|SSL|certificate/i

/**
 * Tells apart why a check or preflight request failed: unreachable host, TLS, a refused key, an
 * unknown model, a wrong endpoint, a response that is not SSE, a stream we cannot read, a timeout.
 * `models` is the server's model list when it could be fetched.
 */
export function diagnose(
  record: RequestRecord,
  model: string,
  keyVariable: string,
  models: string[] | null,
): Diagnosis | null {
  const error = record.error
  if (error === null) return null
  const message = error.message
  if (error.class === 'connection' && TLS.test(message)) {
    return {
      problem: `TLS failure: ${message}`,
      hint: "the server's certificate is not trusted: point NODE_EXTRA_CA_CERTS at its CA file, or fix the certificate",
    }
  }
  if (error.class === 'connection' && UNREACHABLE.test(message)) {
    return {
      problem: `unreachable host: ${message}`,
      hint: 'check --base-url and that the server is running and reachable',
    }
  }
  if (error.class === 'timeout' && error.timeout === 'connect') {
    return { problem: `unreachable host: ${message}`, hint: 'check --base-url, the port and any firewall' }
  }
  if (record.status === 401 || record.status === 403) {
    return {
      problem: `the API key was refused (HTTP ${record.status}): ${message}`,
      hint: `check the key in $${keyVariable} (or --api-key-env NAME)`,
    }
  }
  if (record.status === 404 && /model/i.test(message)) {
    const list =
      models === null ? '' : ` Models served: ${models.length > 0 ? models.join(', ') : '(none listed)'}.`
    return {
      problem: `unknown model ${JSON.stringify(model)}: ${message}`,
      hint: `set --model to a model the server serves.${list}`,
    }
  }
  if (record.status === 404) {
    return {
      problem: `endpoint not found: ${message}`,
      hint: 'check --endpoint and whether --base-url should end in /v1',
    }
  }
  if (error.class === 'stream' && /not an event stream|not JSON|not a JSON object/.test(message)) {
    return {
      problem: `the response is not SSE: ${message}`,
      hint: 'is this an OpenAI-compatible endpoint? check --base-url and --endpoint',
    }
  }
  if (error.class === 'stream') {
    return {
      problem: `the stream cannot be read: ${message}`,
      hint: 'the server answered, but not in the OpenAI streaming format (see requests.jsonl)',
    }
  }
  if (error.class === 'timeout') {
    return {
      problem: `no answer in time: ${message}`,
      hint: 'raise --timeout, or check that the server is not overloaded',
    }
  }
  return {
    problem: `${error.class}${record.status === null ? '' : ` (HTTP ${record.status})`}: ${message}`,
    hint: 'see the message above',
  }
}
