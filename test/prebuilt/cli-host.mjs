// One warm CLI process of the suite's pool (cli-pool.mjs): the built CLI's dispatch (dist/cli/dispatch.js),
// loaded once, runs one command at a time with the environment, folder and arguments each job brings,
// as `node dist/cli/main.js ARGS` would. What the suite saves is the module loading and compiling of a
// fresh process (about 1.5 CPU-s per `run` on the 2-core machine; a warm run costs about 0.6).
// A command is answered only when this process is as idle as before it: a handle it left open (a
// socket, a timer) would keep a real process from exiting, so the answer waits for it as the exit
// would, and the job times out in the pool if it never closes.
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const { main } = await import(new URL('../../dist/cli/dispatch.js', import.meta.url).href)

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP']
const listeners = () => STOP_SIGNALS.map((signal) => process.listenerCount(signal))
// What keeps this process alive, requests in passing (a close, a read: CloseReq, FSReqCallback) aside:
// they end by themselves; a socket, a timer, a server, a worker do not.
const resources = () =>
  process
    .getActiveResourcesInfo()
    .filter((kind) => kind !== 'TTYWrap' && !kind.endsWith('Req') && kind !== 'FSReqCallback')
    .sort()
    .join(',')

let busy = false
let sendText = null
// Words written to the process's own streams (not through io) belong to the job running, as in a process.
for (const [stream, kind] of [
  [process.stdout, 'out'],
  [process.stderr, 'err'],
]) {
  stream.write = (chunk, encoding, callback) => {
    if (sendText !== null) sendText(kind, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())
    const done = typeof encoding === 'function' ? encoding : callback
    if (typeof done === 'function') done()
    return true
  }
}

// Taken once the job channel is open (below): what this process holds when it has nothing to do.
let idleResources = ''
let idleListeners = ''

// Variables Node reads only as a process starts (NODE_EXTRA_CA_CERTS, NODE_OPTIONS, UV_THREADPOOL_SIZE):
// a job that sets them otherwise than this process started with needs a process of its own.
const startVariables = (env) =>
  JSON.stringify(
    Object.entries(env)
      .filter(([key]) => /^(NODE|UV)_/.test(key) && key !== 'NODE_TEST_CONTEXT')
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )
const ownStartVariables = startVariables(process.env)

function setEnvironment(env) {
  for (const key of Object.keys(process.env)) delete process.env[key]
  Object.assign(process.env, env)
}

async function settled() {
  // As a process's exit would: wait until nothing of the job keeps the loop alive.
  while (resources() !== idleResources) await new Promise((resolve) => setTimeout(resolve, 10).unref())
}

process.on('message', async (job) => {
  if (busy) {
    process.send({ kind: 'fatal', text: 'cli-host: a second job while one runs' })
    return
  }
  if (startVariables(job.env) !== ownStartVariables) {
    process.send({ kind: 'refused' })
    return
  }
  busy = true
  sendText = (kind, text) => process.send({ kind, text })
  const io = { out: (text) => sendText('out', text), err: (text) => sendText('err', text) }
  setEnvironment(job.env)
  process.chdir(job.cwd ?? ROOT)
  process.exitCode = undefined
  let code
  try {
    code = await main(job.args, io)
  } catch (error) {
    io.err(
      `llmbench: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    code = 1
  }
  await settled()
  const leftListeners = listeners().join(',')
  sendText = null
  busy = false
  // A command that left a signal listener behind would answer the next job's signals: not reusable.
  process.send({ kind: 'done', code, reusable: leftListeners === idleListeners })
})
idleResources = resources()
idleListeners = listeners().join(',')
process.send({ kind: 'ready' })
