import { hitClientFdLimit, RAISE_FD_LIMIT } from './client-fd-limit.js'
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
  /** What the protocol in use answers with, in words ("an Anthropic Messages stream"); see protocols/wire-protocol.ts. */
  format?: string
  /** The file the failed record is in, for a hint to point at; absent (a check, a preflight) = none was written. */
  recordsIn?: string
}

/** The cause failureCause gives a connection that could not be made. */
export const UNREACHABLE_HOST = 'unreachable host'

const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT/
const TLS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|SSL|certificate/i
const TLS_HANDSHAKE_TIMEOUT = /TLS handshake timeout:/

/**
 * What a TLS failure asks of the user: a certificate issued for another name wants the name it was
 * issued for, an expired one a new certificate; only an untrusted issuer wants NODE_EXTRA_CA_CERTS.
 */
function tlsFailure(message: string): FailureCause {
  if (/ALTNAME|does not match certificate|altnames/i.test(message))
    return {
      cause: 'TLS failure: the certificate is for another host name',
      hint: 'use in --base-url a host name the certificate names (its subject alternative names), or a certificate issued for this one',
    }
  if (/EXPIRED|has expired|NOT_YET_VALID|not yet valid/i.test(message))
    return {
      cause: 'TLS failure: the certificate is expired or not yet valid',
      hint: "renew the server's certificate, or check this machine's clock",
    }
  return {
    cause: 'TLS failure',
    hint: "the server's certificate is not trusted: point NODE_EXTRA_CA_CERTS at its CA file, or fix the certificate",
  }
}
/** The h1 client's words for a proxy that answered a CONNECT with other than 2xx (client/h1/errors.ts). */
const PROXY_REFUSED = /\bproxy \S+ refused the tunnel/
/** The h1 client names the proxy in a failure of the connection to it (client/h1/errors.ts). */
const VIA_PROXY = /\bproxy https?:\/\//
/** Where the proxy is set, and the ways around it. */
const PROXY_SETTINGS = 'HTTP_PROXY/HTTPS_PROXY (or go around it: NO_PROXY, --no-proxy)'
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
  // In order: the first that applies names the cause (a TLS failure is also a closed connection).
  const found =
    reachFailure(record) ??
    refusalFailure(record, context) ??
    streamFailure(record, context) ??
    answerFailure(record)
  if (found !== null) return found
  return {
    cause: `${error.class}${record.status === null ? '' : ` (HTTP ${record.status})`}`,
    hint: 'an answer llmbench does not expect: read the message, and the record in requests.jsonl',
  }
}

/** The server never answered: TLS, our own file limit, a proxy, an unreachable host. */
function reachFailure(record: RequestRecord): FailureCause | null {
  const error = record.error as NonNullable<RequestRecord['error']>
  const message = error.message
  if (error.class === 'connection' && TLS.test(message)) return tlsFailure(message)
  if (error.class === 'timeout' && TLS_HANDSHAKE_TIMEOUT.test(message)) {
    return {
      cause: 'TLS handshake not finished (the host is reachable)',
      hint: 'check that the port speaks TLS (https://), or http:// if it does not, and what sits in between (a proxy or load balancer holding the handshake)',
    }
  }
  if (hitClientFdLimit(record)) {
    return {
      cause: 'too many open files in llmbench (EMFILE/ENFILE), not a server failure',
      hint: RAISE_FD_LIMIT,
    }
  }
  const proxy = proxyFailure(record)
  if (proxy !== null) return proxy
  if (isUnreachable(record)) {
    return {
      cause: UNREACHABLE_HOST,
      hint: 'check --base-url and that the server is running and reachable',
    }
  }
  if (error.class === 'timeout' && error.timeout === 'connect') {
    return { cause: UNREACHABLE_HOST, hint: 'check --base-url, the port and any firewall' }
  }
  return null
}

/** The server answered and refused: the key, the model, the endpoint, the context length. */
function refusalFailure(record: RequestRecord, context: FailureContext): FailureCause | null {
  const error = record.error as NonNullable<RequestRecord['error']>
  const message = error.message
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
  return null
}

/** The answer came but its stream cannot be read, or the server failed it mid-stream. */
function streamFailure(record: RequestRecord, context: FailureContext): FailureCause | null {
  const error = record.error as NonNullable<RequestRecord['error']>
  const message = error.message
  if (error.class === 'stream' && /not an event stream|not JSON|not a JSON object/.test(message)) {
    return {
      cause: 'the response is not SSE',
      hint: 'is this an OpenAI-compatible endpoint? check --base-url and --endpoint',
    }
  }
  if (error.class === 'stream' && streamErrorIsLoad(message)) {
    return {
      cause: 'the server failed the request mid-stream',
      hint: "read the server's message: an error under load (server_error, overloaded, 5xx) means back off; see its logs",
    }
  }
  if (error.class === 'stream') {
    return {
      cause: 'the stream cannot be read',
      hint: `the server answered, but not as ${context.format ?? 'the protocol in use (--protocol) answers'}${context.recordsIn === undefined ? '' : ` (see ${context.recordsIn})`}`,
    }
  }
  return null
}

/** Any other answer: a timeout, a redirect, a size or rate limit, a server error, a dropped connection. */
function answerFailure(record: RequestRecord): FailureCause | null {
  const error = record.error as NonNullable<RequestRecord['error']>
  if (error.class === 'timeout') {
    return {
      cause: 'no answer in time',
      hint: 'raise --timeout, or check that the server is not overloaded',
    }
  }
  if (record.status !== null && record.status >= 300 && record.status < 400) {
    return {
      cause: `redirected (HTTP ${record.status})`,
      hint: 'the endpoint is elsewhere: set --base-url/--endpoint to the location the server names (redirects are not followed: each would send the request twice)',
    }
  }
  if (record.status === 413) {
    return {
      cause: 'request too large (HTTP 413)',
      hint: 'lower --input-tokens (or the dataset prompts), or raise the request-size limit of the server or proxy in front of it',
    }
  }
  if (error.class === 'http_429') {
    return {
      cause: 'rate limited (HTTP 429)',
      hint: 'the server or API limits this key: wait for the limit to reset, use a key with a higher limit, or send less (fewer streams, a lower rate)',
    }
  }
  if (error.class === 'http_5xx') {
    return {
      cause: `the server failed the request (HTTP ${record.status})`,
      hint:
        record.status === 502 || record.status === 503 || record.status === 504
          ? 'a proxy or gateway answered: is the model server behind it up and done loading? check both logs'
          : "the server's own error: read its logs for the cause (model still loading, out of memory, a bad setting)",
    }
  }
  if (error.class === 'connection') {
    return {
      cause: 'the connection was closed without an answer',
      hint: 'the server (or a proxy in front of it) dropped the request: check --base-url (http or https, the port) and the server logs',
    }
  }
  if (error.class === 'http_4xx') {
    return {
      cause: `the server refused the request (HTTP ${record.status})`,
      hint: "the request itself is at fault, not the load: read the server's message and fix the setting it names",
    }
  }
  return null
}

/** A proxy in the way: it refused the tunnel, asked for credentials, or could not be reached. */
function proxyFailure(record: RequestRecord): FailureCause | null {
  const error = record.error as NonNullable<RequestRecord['error']>
  const credentials = `the proxy wants credentials: give them in its URL (http://user:password@host:port) in ${PROXY_SETTINGS}`
  if (record.status === 407) return { cause: 'the proxy asked for credentials (HTTP 407)', hint: credentials }
  if (error.class !== 'connection') return null
  if (PROXY_REFUSED.test(error.message)) {
    return {
      cause: 'the proxy refused the tunnel',
      hint: / 407\b/.test(error.message)
        ? credentials
        : `the proxy will not (or cannot) reach the server: check its policy and ${PROXY_SETTINGS}`,
    }
  }
  if (isUnreachable(record) && VIA_PROXY.test(error.message))
    return { cause: 'unreachable proxy', hint: `check that the proxy runs, and ${PROXY_SETTINGS}` }
  return null
}

/**
 * True when a failure says nothing about load: the server refused the request itself (a 4xx other
 * than 408 Request Timeout and 429 Too Many Requests), the stream could not be read, the server
 * reported in the stream that the request does not fit (see streamErrorIsLoad), or the host is
 * unreachable or its certificate not trusted. Timeouts, 429, 408, 5xx and dropped connections are
 * what an overloaded server does, so they are load. An unreachable host counts here as the set-up's
 * fault; the level summaries count it as load once the server has answered (see failure-causes.ts).
 */
export function isNonLoadFailure(record: RequestRecord): boolean {
  const error = record.error
  if (error === null) return false
  switch (error.class) {
    case 'http_4xx':
      return record.status !== 408
    case 'other':
      // A redirect answers every request the same way, whatever the load.
      return record.status !== null && record.status >= 300 && record.status < 400
    case 'stream':
      return !streamErrorIsLoad(error.message)
    case 'connection':
      return isUnreachable(record) || TLS.test(error.message) || PROXY_REFUSED.test(error.message)
    default:
      return false
  }
}

/** A connection that could not be made at all (refused, unknown host, no route). */
export function isUnreachable(record: RequestRecord): boolean {
  return record.error?.class === 'connection' && UNREACHABLE.test(record.error.message)
}

/** What the client prefixes to an error the server reported inside a 200 stream (stream-client.ts). */
const REPORTED_IN_STREAM = /^error (event )?in stream: /
/** The HTTP-like code an error payload carried, as errorEventMessage writes it ("500 server_error: ..."). */
const LEADING_CODE = /^(\d{3})\b/
/** Error types and words that say the request itself is wrong, whatever the load. */
const REQUEST_AT_FAULT =
  /invalid_request|invalid request|validation|authentication|unauthori[sz]ed|permission|not_found|not found|does not exist/i

/**
 * Whether a failed stream is load. A stream that ended without [DONE] was cut off, and an error the
 * server reported mid-stream (OpenAI's `server_error`, "overloaded", rate limits, code 429 or 5xx,
 * TGI's generation errors) is what a server under load does, so both are load. Not load: lengths
 * over the context (llama.cpp reports them as a code-500 error event, so the words win over the
 * code), a reported error with a 4xx code or words saying the request is wrong, and a stream the
 * client cannot read at all (not SSE, not JSON, oversized).
 */
export function streamErrorIsLoad(message: string): boolean {
  if (CONTEXT_LENGTH.test(message)) return false
  if (message.startsWith('stream ended without [DONE]')) return true
  const reported = REPORTED_IN_STREAM.exec(message)
  if (reported === null) return false
  const payload = message.slice(reported[0].length)
  const code = LEADING_CODE.exec(payload)
  if (code !== null) {
    const status = Number(code[1])
    return status === 408 || status === 429 || status >= 500 || status < 400
  }
  return !REQUEST_AT_FAULT.test(payload)
}
