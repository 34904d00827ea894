import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

const KEY = 'sk-test-DISTINCTIVE-123'

/** Answers every request the way `fail` says; counts them. */
async function failingServer(fail: (res: ServerResponse) => void) {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    req.resume()
    req.on('end', () => fail(res))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const CASES: { name: string; fail: (res: ServerResponse) => void; line: RegExp; hint: RegExp }[] = [
  {
    name: 'HTTP 500',
    fail: (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded'),
    line: /preflight failed: the server failed the request \(HTTP 500\): HTTP 500: upstream exploded/,
    hint: /read its logs/,
  },
  {
    name: 'HTTP 502 from a proxy',
    fail: (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'),
    line: /preflight failed: the server failed the request \(HTTP 502\)/,
    hint: /a proxy or gateway answered: is the model server behind it up/,
  },
  {
    name: 'HTTP 429',
    fail: (res) => res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down'),
    line: /preflight failed: rate limited \(HTTP 429\)/,
    hint: /a key with a higher limit/,
  },
  {
    name: 'a connection closed without an answer',
    fail: (res) => res.socket?.destroy(),
    line: /preflight failed: the connection was closed without an answer/,
    hint: /check --base-url \(http or https, the port\)/,
  },
  {
    name: 'HTTP 413',
    fail: (res) => res.writeHead(413, { 'content-type': 'text/plain' }).end('Request Entity Too Large'),
    line: /preflight failed: request too large \(HTTP 413\)/,
    hint: /lower --input-tokens/,
  },
]

for (const { name, fail, line, hint } of CASES) {
  test(`a preflight failing with ${name} is said once, with the fix (exit 3), never "see the message above"`, {
    timeout: 60_000,
  }, async () => {
    const server = await failingServer(fail)
    try {
      const run = await runCli(
        ['run', '--base-url', server.url, '--model', 'm', '--levels', '1', '--out', `${tempDir()}/result`],
        { env: { OPENAI_API_KEY: KEY } },
      )
      assert.equal(run.code, 3, run.stderr)
      assert.match(run.stderr, line)
      assert.match(run.stderr, hint)
      assert.equal(run.stderr.split('preflight failed').length - 1, 1, `said once:\n${run.stderr}`)
      assert.doesNotMatch(run.stderr, /see the message above/)
      assert.ok(!run.stderr.includes(KEY) && !run.stdout.includes(KEY))
      assert.ok(server.requests() >= 1)
    } finally {
      await server.close()
    }
  })
}

/**
 * Issue 36 item 4: a server that answers plain chat but refuses a feature of the run (llama.cpp's
 * "Cannot use tools with stream", its "Unsupported content part type" for images). The run is
 * refused before the load with the server's own words, not measured as "client-bound" or "overloaded".
 */
async function refusingServer(refusal: (body: Record<string, unknown>) => string | null) {
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(404).end()
        return
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>
      const refused = refusal(body)
      if (refused !== null) {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 500, message: refused, type: 'server_error' } }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const word of ['Hi', ' there', '!'])
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: word } }] })}\n\n`)
      res.end(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 3 } })}\n\ndata: [DONE]\n\n`,
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const FEATURE_CASES = [
  {
    flags: ['--tools', 'builtin'],
    refusal: (body: Record<string, unknown>) => ('tools' in body ? 'Cannot use tools with stream' : null),
    words: /the server refused a request with --tools: .*Cannot use tools with stream/,
  },
  {
    flags: ['--images', '1x32x32'],
    refusal: (body: Record<string, unknown>) =>
      JSON.stringify(body.messages).includes('image_url')
        ? 'Unsupported content part type: "image_url"'
        : null,
    words: /the server refused a request with --images: .*Unsupported content part type/,
  },
]

for (const { flags, refusal, words } of FEATURE_CASES) {
  test(`a server refusing ${flags[0]} is told before the load, in its own words (exit 3)`, {
    timeout: 60_000,
  }, async () => {
    const server = await refusingServer(refusal)
    const out = `${tempDir()}/result`
    try {
      const load = ['--levels', '1', '--requests', '4', '--output-tokens', '16']
      const run = await runCli([
        'run',
        '--base-url',
        server.url,
        '--model',
        'm',
        ...load,
        '--out',
        out,
        ...flags,
      ])
      assert.equal(run.code, 3, run.stderr)
      assert.match(run.stderr, words)
      assert.match(run.stderr, new RegExp(`drop ${flags[0]}`))
      assert.ok(!existsSync(`${out}/bench_result.json`), 'no level was run')
    } finally {
      await server.close()
    }
  })
}
