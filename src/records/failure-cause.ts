import type { RequestRecord } from './types.js'

/** Why one request failed and what to change, in words: shared by the preflight and the level verdicts. */
export interface Diagnosis {
  /** What went wrong, in one line. */
  problem: string
  /** What to do about it. */
  hint: string
}

/** What the caller knows of the run, to make a hint concrete; every part is optional. */
export interface FailureContext {
  model?: string
  /** The environment variable the key is read from. */
  keyVariable?: string
  /** The server's model list when it could be fetched. */
  models?: string[] | null
}

const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT/
const TLS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|SSL|certificate/i
/**
 * How servers word a prompt + max_tokens over the model's context: vLLM and OpenAI ("maximum
 * context length"), llama.cpp ("exceeds the available context size" as HTTP 400, or older builds'
 * "Input prompt is too big compared to KV size" as an error event in a 200 stream), TGI ("must be
 * <= ... tokens"), SGLang ("is longer than the model's context length").
 */
const CONTEXT_LENGTH =
  /context (length|size|window)|too (long|big)|too many tokens|max_model_len|KV (cache )?size|must be <= \d+|exceeds? the (maximum|available)/i

/**
 * Tells apart why a request failed: unreachable host, TLS, a refused key, an unknown model, a wrong
 * endpoint, lengths over the model's context, a response that is not SSE, a stream we cannot read,
 * a timeout. Null for a request that did not fail.
 */
export function explainFailure(record: RequestRecord, context: FailureContext = {}): Diagnosis | null {
  const found = failureCause(record, context)
  if (found === null || record.error === null) return null
  return { problem: `${found.cause}: ${record.error.message}`, hint: found.hint }
}

/** The kind of failure in a few words (without the message) and what to change. */
export interface FailureCause {
  cause: string
  hint: string
}

/** explainFailure without the message: for lists that show the messages beside it. */
export function failureCause(record: RequestRecord, context: FailureContext = {}): FailureCause | null {
  const error = record.error
  if (error === null) return null
  const message = error.message
  if (error.class === 'connection' && TLS.test(message)) {
    return {
      cause: 'TLS failure',
      hint: "the server's certificate is not trusted: point NODE_EXTRA_CA_CERTS at its CA file, or fix the certificate",
    }
  }
  if (error.class === 'connection' && UNREACHABLE.test(message)) {
    return {
      cause: 'unreachable host',
      hint: 'check --base-url and that the server is running and reachable',
    }
  }
  if (error.class === 'timeout' && error.timeout === 'connect') {
    return { cause: 'unreachable host', hint: 'check --base-url, the port and any firewall' }
  }
  if (record.status === 401 || record.status === 403) {
    const variable = context.keyVariable === undefined ? 'the API key variable' : `$${context.keyVariable}`
    return {
      cause: `the API key was refused (HTTP ${record.status})`,
      hint: `check the key in ${variable} (or --api-key-env NAME)`,
    }
  }
  if (record.status === 404 && /model/i.test(message)) {
    const models = context.models ?? null
    const list =
      models === null ? '' : ` Models served: ${models.length > 0 ? models.join(', ') : '(none listed)'}.`
    const name = context.model === undefined ? 'model' : `model ${JSON.stringify(context.model)}`
    return {
      cause: `unknown ${name}`,
      hint: `set --model to a model the server serves.${list}`,
    }
  }
  if (record.status === 404) {
    return {
      cause: 'endpoint not found',
      hint: 'check --endpoint and whether --base-url should end in /v1',
    }
  }
  const refused = record.status !== null && record.status >= 400 && record.status < 500
  if ((refused || error.class === 'stream') && CONTEXT_LENGTH.test(message)) {
    return {
      cause: "prompt + max_tokens over the model's context",
      hint: "lower --input-tokens and/or --output-tokens (their sum must fit the server's context per request), or give the server a larger context",
    }
  }
  if (error.class === 'stream' && /not an event stream|not JSON|not a JSON object/.test(message)) {
    return {
      cause: 'the response is not SSE',
      hint: 'is this an OpenAI-compatible endpoint? check --base-url and --endpoint',
    }
  }
  if (error.class === 'stream') {
    return {
      cause: 'the stream cannot be read',
      hint: 'the server answered, but not in the OpenAI streaming format (see requests.jsonl)',
    }
  }
  if (error.class === 'timeout') {
    return {
      cause: 'no answer in time',
      hint: 'raise --timeout, or check that the server is not overloaded',
    }
  }
  if (error.class === 'http_4xx') {
    return {
      cause: `the server refused the request (HTTP ${record.status})`,
      hint: "the request itself is at fault, not the load: read the server's message and fix the setting it names",
    }
  }
  return {
    cause: `${error.class}${record.status === null ? '' : ` (HTTP ${record.status})`}`,
    hint: 'see the message above',
  }
}

/**
 * True when a failure says nothing about load: the server refused the request itself (a 4xx other
 * than 408 Request Timeout and 429 Too Many Requests), the stream could not be read, or the host
 * is unreachable or its certificate not trusted. Timeouts, 429, 408, 5xx and dropped connections
 * are what an overloaded server does, so they are load.
 */
export function isNonLoadFailure(record: RequestRecord): boolean {
  const error = record.error
  if (error === null) return false
  switch (error.class) {
    case 'http_4xx':
      return record.status !== 408
    case 'stream':
      return true
    case 'connection':
      return UNREACHABLE.test(error.message) || TLS.test(error.message)
    default:
      return false
  }
}
