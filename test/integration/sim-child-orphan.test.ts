import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { test } from 'node:test'
import { waitUntil } from '../helpers/wait.js'

/**
 * A simulator started as a child process (sim/child.ts) stops when its parent dies, however it dies:
 * a test cut at its timeout (or a demo killed with SIGKILL) never leaves a server behind. Seen on a
 * machine at load 20–30: two simulators from a timed-out test still serving half an hour later.
 */
test('a simulator child stops when its parent is killed with SIGKILL', { timeout: 60_000 }, async () => {
  const child = new URL('../../dist/sim/child.js', import.meta.url).href
  const parent = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { startSimulatorProcess } = await import(${JSON.stringify(child)}); const sim = await startSimulatorProcess({}); console.log(sim.url); setInterval(() => {}, 1000)`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  parent.stdout.on('data', (data: Buffer) => {
    out += data.toString()
  })
  await waitUntil(() => /http:\/\/\S+/.test(out), 'the simulator listening')
  const url = (/http:\/\/\S+/.exec(out) as RegExpExecArray)[0]
  const answers = async (): Promise<boolean> =>
    fetch(`${url}/models`).then(
      (response) => response.ok,
      () => false,
    )
  assert.equal(await answers(), true, 'the simulator serves while its parent lives')
  parent.kill('SIGKILL')
  // Bounded: 30 s for the pipe to close and the server to stop, even on a busy machine.
  let gone = false
  for (let i = 0; i < 300 && !gone; i++) {
    gone = !(await answers())
    if (!gone) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.ok(gone, `${url} still answers after its parent was killed`)
})
