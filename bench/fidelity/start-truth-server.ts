import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SERVER = fileURLToPath(new URL('./truth-server.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Starts truth-server.ts in its own process (its CPU is not the client's) and waits until it listens. */
export async function startTruthServer(
  port: number,
  firstTokenMs: number,
  gapMs: number,
  tokens: number,
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', SERVER, String(port), String(firstTokenMs), String(gapMs), String(tokens)],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT },
  )
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      if (data.toString().includes('ready')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`truth server exited ${code}`)))
  })
  return child
}
