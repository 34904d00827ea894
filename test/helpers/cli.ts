import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { SIM_MODEL } from '../../src/sim/server.js'

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Commands that draw charts/ and report.html when they end, unless told `--no-charts`. */
const DRAWING = new Set(['run', 'demo', 'report'])

/**
 * A test's arguments as the CLI gets them: `run`, `demo` and `report` told `--no-charts` unless the
 * test reads what is drawn (`charts: true`). Drawing is a second or two of CPU per command (vega,
 * resvg); a hundred-odd runs in the suite drew charts nobody read, on a 2-core machine. What is drawn
 * is the subject of the tests that ask for it (report-html, rendered-folders, and the runs whose
 * report.html they read).
 */
export function cliArgs(args: readonly string[], charts = false): string[] {
  const drawing = DRAWING.has(args[0] ?? '') && !args.includes('--help') && !args.includes('-h')
  return drawing && !charts && !args.includes('--no-charts') ? [...args, '--no-charts'] : [...args]
}

/**
 * Commands whose answers are the subject of their tests, run in the test's own process when the test
 * sets no environment or folder of its own: the same dispatch the CLI's process runs
 * (src/cli/dispatch.ts), without a node process per call (0.5-1 s of module loading each, some
 * hundred and fifty calls per suite). `run` and `demo` get a process (signals, worker threads and the
 * exit the tests of a run are about) unless they only print their help, or the test says the run is
 * refused before it starts (`inProcess: true`); `sim` and `coordinate` serve until stopped.
 */
const IN_PROCESS = new Set([
  'report',
  'compare',
  'predict',
  'merge',
  'check',
  'models',
  'init',
  'k8s-manifest',
])

function inProcessByDefault(args: readonly string[]): boolean {
  return IN_PROCESS.has(args[0] ?? '') || args.includes('--help') || args.includes('-h')
}

/**
 * Runs the CLI: the built CLI as a real child process (killed if it outlives `timeoutMs`), or the
 * command in this process (see IN_PROCESS).
 */
export function runCli(
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv
    cwd?: string
    timeoutMs?: number
    charts?: boolean
    /** true: in this process (a run refused before it starts); false: a child; unset: by command. */
    inProcess?: boolean
  } = {},
): Promise<CliResult> {
  const inProcess =
    options.env === undefined && options.cwd === undefined && (options.inProcess ?? inProcessByDefault(args))
  if (inProcess) return runInProcess(cliArgs(args, options.charts), options.timeoutMs)
  const pool = process.env[CLI_POOL]
  return pool !== undefined && pooled(args) ? runPooled(pool, args, options) : runProcess(args, options)
}

/** Where test/run.sh's pool of warm CLI processes listens (test/prebuilt/cli-pool.mjs); unset: none. */
const CLI_POOL = 'LLMBENCH_TEST_CLI_POOL'

/**
 * Commands a warm process of the pool may run: all but those that serve until stopped. (The pool
 * refuses a job that sets a variable Node reads only as a process starts: NODE_EXTRA_CA_CERTS...)
 */
function pooled(args: readonly string[]): boolean {
  return args[0] !== 'sim' && args[0] !== 'coordinate'
}

/**
 * The command in a warm process of the suite's pool (test/prebuilt/cli-host.mjs): the built CLI's
 * dispatch with this environment and folder, answered when that process is as idle as before (a
 * handle left open holds the answer, as it would hold a process's exit), killed if it outlives
 * `timeoutMs`, as runProcess kills its child.
 */
function runPooled(
  socketPath: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; charts?: boolean },
): Promise<CliResult> {
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...options.env }).filter(([, value]) => value !== undefined),
  )
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath)
    let stdout = ''
    let stderr = ''
    let buffered = ''
    let code: number | null | undefined
    let refused = false
    let failed = false
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`llmbench ${args.join(' ')} did not finish in time\n${stderr}`))
    }, options.timeoutMs ?? 60_000)
    socket.on('data', (data: Buffer) => {
      buffered += data.toString()
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, end)) as {
          kind: string
          text?: string
          code?: number | null
        }
        buffered = buffered.slice(end + 1)
        if (message.kind === 'out') stdout += message.text
        else if (message.kind === 'err') stderr += message.text
        else if (message.kind === 'exit') code = message.code ?? null
        else if (message.kind === 'refused') refused = true
      }
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      // No pool where run.sh said (it ended or never started): the command gets a process of its own.
      const noPool = (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') && code === undefined
      failed = true
      if (noPool) runProcess(args, options).then(resolve, reject)
      else reject(error)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      if (failed) return
      if (refused) runProcess(args, options).then(resolve, reject)
      else if (code === undefined)
        reject(new Error(`llmbench ${args.join(' ')}: the CLI pool closed the job\n${stderr}`))
      else resolve({ code, stdout, stderr })
    })
    socket.write(`${JSON.stringify({ args: cliArgs(args, options.charts), env, cwd: options.cwd })}\n`)
  })
}

/** The dispatch the CLI's process runs, here: its words collected, an internal error as main.ts says it. */
async function runInProcess(args: string[], timeoutMs = 60_000): Promise<CliResult> {
  const { main } = await import('../../src/cli/dispatch.js')
  let stdout = ''
  let stderr = ''
  const io = {
    out: (text: string) => {
      stdout += text
    },
    err: (text: string) => {
      stderr += text
    },
  }
  // An error thrown out of the dispatch is the process's internal error (main.ts): exit 1, said on stderr.
  const answered = main(args, io).catch((error: unknown) => {
    io.err(
      `llmbench: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    return 1
  })
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`llmbench ${args.join(' ')} did not finish in time\n${stderr}`)),
      timeoutMs,
    )
  })
  try {
    return { code: await Promise.race([answered, late]), stdout, stderr }
  } finally {
    clearTimeout(timer)
  }
}

function runProcess(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; charts?: boolean },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...cliArgs(args, options.charts)], {
      env: { ...process.env, ...options.env },
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString()
    })
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`llmbench ${args.join(' ')} did not finish in time\n${stderr}`))
    }, options.timeoutMs ?? 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The CLI as a live child, for tests that signal it mid-run: its exit and its stderr so far. */
export function spawnCli(
  args: string[],
  charts = false,
): {
  child: ReturnType<typeof spawn>
  exited: Promise<number | null>
  stderr: () => string
} {
  const child = spawn(process.execPath, [CLI, ...cliArgs(args, charts)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (data: Buffer) => {
    stderr += data.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  return { child, exited, stderr: () => stderr }
}

/**
 * Arguments of `llmbench run` against the simulator: its model, one worker, the given flags
 * (`true` = a flag without a value), then `extra` (a later flag overrides an earlier one).
 */
export function simRunArgs(
  url: string,
  out: string,
  flags: Record<string, string | number | true>,
  extra: readonly string[] = [],
): string[] {
  const args = ['run', '--base-url', url, '--model', SIM_MODEL, '--workers', '1', '--out', out]
  for (const [name, value] of Object.entries(flags)) {
    args.push(`--${name}`)
    if (value !== true) args.push(String(value))
  }
  return [...args, ...extra]
}
