import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A short, valid OpenAI chat stream with usage: what a preflight or calibration probe needs. */
function answer(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  const chunk = (body: object): string => `data: ${JSON.stringify(body)}\n\n`
  res.end(
    chunk({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] }) +
      chunk({
        id: 'x',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
      }) +
      'data: [DONE]\n\n',
  )
}

/**
 * A loopback server that answers its first `answered` POSTs and then holds every later one
 * (headers never sent): a test can signal the CLI while it waits in a known phase.
 */
export async function startHoldingServer(
  answered: number,
  options: {
    /** Count and hold GETs too (a shard's clock reading, GET /v1/models); by default they get a 404. */
    holdGets?: boolean
  } = {},
): Promise<{
  url: string
  /** Resolves once a request is being held. */
  holding: Promise<void>
  requests: () => number
  close: () => Promise<void>
}> {
  let requests = 0
  let onHold: () => void = () => {}
  const holding = new Promise<void>((resolve) => {
    onHold = resolve
  })
  const server = createServer((req, res) => {
    req.resume()
    // By default only the model's endpoint is held and counted: the GETs that read what the server
    // says about itself (/props, /v1/models, ...) find nothing here.
    if (req.method === 'GET' && options.holdGets !== true) {
      res.writeHead(404).end()
      return
    }
    requests++
    if (requests <= answered) answer(res)
    else onHold()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    holding,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
