import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { SimParams } from '../model/engine.js'

/** The CLI entry, compiled (dist/cli/main.js) or, under tsx, its source. */
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const CLI_MAIN = fileURLToPath(new URL(`../cli/main${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url))

export interface SimulatorProcess {
  url: string
  close(): Promise<void>
}

/**
 * The simulator in a process of its own (`llmbench sim --port 0`), as a real server would be: its
 * timers and writes then never share an event loop with the client whose stamps we measure.
 */
/** Set in a simulator child's environment: it stops when its parent's pipe to its stdin closes. */
export const EXIT_WITH_PARENT = 'LLMBENCH_SIM_EXIT_WITH_PARENT'

export function startSimulatorProcess(
  params: Partial<SimParams>,
  options: { faults?: string; timeoutMs?: number; args?: string[] } = {},
): Promise<SimulatorProcess> {
  // A child that fails says so by exiting (below); one still loading is only slow: on a 2-core
  // machine at load 24 the CLI's modules took over 15 s to load, and `demo` failed on the wait.
  const timeoutMs = options.timeoutMs ?? 60_000
  const args = ['sim', '--host', '127.0.0.1', '--port', '0']
  if (options.faults !== undefined) args.push('--fault', options.faults)
  if (options.args !== undefined) args.push(...options.args)
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) args.push(`--${key.replaceAll('_', '-')}`, String(value))
  }
  // Its stdin is a pipe from this process, never written: it closes when this process ends, however
  // it ends, and the simulator then stops (commands/sim.ts).
  const child = spawn(process.execPath, [...(FROM_SOURCE ? ['--import', 'tsx'] : []), CLI_MAIN, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, [EXIT_WITH_PARENT]: '1' },
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => {
      void close()
      reject(new Error(`simulator did not start within ${timeoutMs / 1000} s: ${stderr}`))
    }, timeoutMs)
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString()
      const match = /listening on (http:\/\/\S+)/.exec(stdout)
      if (match?.[1] === undefined) return
      clearTimeout(timer)
      resolve({ url: match[1], close })
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`simulator exited with code ${code}: ${stderr.trim()}`))
    })
  })
}
