// The suite's pool of warm CLI processes (cli-host.mjs), started by test/run.sh beside the lanes:
// `node test/prebuilt/cli-pool.mjs SOCKET`. A test's runCli (test/helpers/cli.ts) sends one job per
// connection, a JSON line {args, env, cwd}, and reads back JSON lines: {kind:'out'|'err', text}, then
// {kind:'exit', code}; or {kind:'refused'} for a job a warm process cannot run as a fresh one would. Each host runs one job at a time; an idle one is reused, else a new one is forked,
// so a job never waits for another. A host that crashed, or whose job's connection closed before the
// answer (the test's timeout), is killed: the next job gets a fresh one. Hosts are recycled after
// MAX_JOBS jobs, so no state grows through a whole suite.
import { fork } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'

const HOST = new URL('./cli-host.mjs', import.meta.url)
const MAX_IDLE = 6
const MAX_JOBS = 40
const socketPath = process.argv[2]
if (!socketPath) {
  console.error('usage: node test/prebuilt/cli-pool.mjs SOCKET')
  process.exit(2)
}

/** @type {{ child: import('node:child_process').ChildProcess, jobs: number, ready: Promise<void> }[]} */
const idle = []
/** Every host alive, busy or idle: the pool's end takes them all. */
const alive = new Set()

function forkHost() {
  const child = fork(HOST, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv: [] })
  const ready = new Promise((resolve, reject) => {
    child.once('message', (message) =>
      message.kind === 'ready' ? resolve() : reject(new Error(message.text)),
    )
    child.once('exit', (code) => reject(new Error(`cli host exited (${code}) before it was ready`)))
  })
  ready.catch(() => {})
  alive.add(child)
  child.once('exit', () => alive.delete(child))
  return { child, jobs: 0, ready }
}

function take() {
  return idle.pop() ?? forkHost()
}

function release(host) {
  if (host.jobs >= MAX_JOBS || idle.length >= MAX_IDLE) host.child.kill('SIGKILL')
  else idle.push(host)
}

async function serve(socket, job) {
  const send = (message) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`)
  }
  const host = take()
  let answered = false
  const finish = (code) => {
    if (answered) return
    answered = true
    send({ kind: 'exit', code })
    socket.end()
  }
  const onOut = (data) => send({ kind: 'out', text: data.toString() })
  const onErr = (data) => send({ kind: 'err', text: data.toString() })
  const onExit = (code, signal) => finish(code ?? (signal === null ? 1 : 128))
  const detach = () => {
    host.child.stdout.off('data', onOut)
    host.child.stderr.off('data', onErr)
    host.child.off('exit', onExit)
    host.child.off('message', onMessage)
  }
  const onMessage = (message) => {
    if (message.kind === 'out' || message.kind === 'err') send(message)
    else if (message.kind === 'refused') {
      // Not a job for a warm process (see cli-host.mjs): the test starts one of its own.
      detach()
      answered = true
      send({ kind: 'refused' })
      socket.end()
      release(host)
    } else if (message.kind === 'done') {
      detach()
      finish(message.code)
      if (message.reusable) release(host)
      else host.child.kill('SIGKILL')
    }
  }
  host.child.stdout.on('data', onOut)
  host.child.stderr.on('data', onErr)
  host.child.once('exit', onExit)
  socket.once('close', () => {
    if (answered) return
    // The test gave up (its timeout) or died: the job is abandoned with its process, as a killed child.
    answered = true
    detach()
    host.child.kill('SIGKILL')
  })
  try {
    await host.ready
  } catch (error) {
    detach()
    send({ kind: 'err', text: `${error.message}\n` })
    finish(1)
    return
  }
  host.jobs++
  host.child.on('message', onMessage)
  host.child.send(job)
}

rmSync(socketPath, { force: true })
const server = createServer((socket) => {
  let buffered = ''
  socket.on('data', (data) => {
    buffered += data.toString()
    const end = buffered.indexOf('\n')
    if (end === -1) return
    socket.removeAllListeners('data')
    void serve(socket, JSON.parse(buffered.slice(0, end)))
  })
  socket.on('error', () => {})
})
server.listen(socketPath, () => process.stdout.write('ready\n'))
const stop = () => {
  for (const child of alive) child.kill('SIGKILL')
  server.close()
  rmSync(socketPath, { force: true })
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
// A pool outliving the suite's script (killed without a word) goes with it.
process.stdin.on('end', stop)
process.stdin.resume()
