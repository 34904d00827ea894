import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { CLI, cliArgs } from './cli.js'

/**
 * Test hosts on one machine: a network namespace per host, each with its own address, made by the
 * test with `ip netns` and veth pairs, removed however the test ends. A hub namespace (the
 * coordinator and the server) holds a bridge that every host's veth pair joins: the hub is
 * 10.242.0.1 to every host (one URL for all, as one server is to real hosts), host i is 10.242.0.(i+2).
 * Needs root (CAP_NET_ADMIN) and iproute2.
 */
export interface TestHosts {
  hub: string
  /** The hub's address, as every host reaches it. */
  hubAddress: string
  /** Namespace of each host and its address. */
  hosts: { ns: string; address: string }[]
  /** Deletes every namespace (and with them the veth pairs); safe to call twice. */
  remove(): void
}

/** Why namespaces cannot be made here, or null when they can. */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return 'network namespaces are Linux only'
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'making network namespaces needs root (CAP_NET_ADMIN)'
  const probe = `llmbench-probe-${process.pid}`
  try {
    ip('netns', 'add', probe)
    ip('netns', 'del', probe)
    return null
  } catch (error) {
    return `ip netns add failed: ${String(error).split('\n')[0]}`
  }
}

const HUB_ADDRESS = '10.242.0.1'

/**
 * Whatever a test leaves when it is cut short (a timeout abandons its body, and its `finally` with it):
 * the processes killed and the namespaces removed as the test process exits.
 */
const leftover = { processes: new Set<ChildProcess>(), namespaces: new Set<string>() }
process.once('exit', () => {
  for (const child of leftover.processes) child.kill('SIGKILL')
  for (const ns of leftover.namespaces) {
    try {
      ip('netns', 'del', ns)
    } catch {
      // Already gone.
    }
  }
})

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 })
}

export function makeHosts(count: number, tag: string): TestHosts {
  // Short names: interface names have at most 15 characters.
  const id = `${tag}${process.pid % 100_000}`
  const hub = `llmbench-${id}-hub`
  const made: string[] = []
  const remove = (): void => {
    for (const ns of made.splice(0).reverse()) {
      leftover.namespaces.delete(ns)
      try {
        ip('netns', 'del', ns)
      } catch {
        // Already gone.
      }
    }
  }
  try {
    ip('netns', 'add', hub)
    made.push(hub)
    leftover.namespaces.add(hub)
    ip('-n', hub, 'link', 'set', 'lo', 'up')
    const bridge = `br${id}`
    ip('-n', hub, 'link', 'add', bridge, 'type', 'bridge')
    ip('-n', hub, 'addr', 'add', `${HUB_ADDRESS}/24`, 'dev', bridge)
    ip('-n', hub, 'link', 'set', bridge, 'up')
    const hosts = Array.from({ length: count }, (_, i) => {
      const ns = `llmbench-${id}-h${i}`
      ip('netns', 'add', ns)
      made.push(ns)
      leftover.namespaces.add(ns)
      ip('-n', ns, 'link', 'set', 'lo', 'up')
      const hubSide = `v${id}a${i}`
      const hostSide = `v${id}b${i}`
      ip('link', 'add', hubSide, 'netns', hub, 'type', 'veth', 'peer', 'name', hostSide, 'netns', ns)
      const address = `10.242.0.${i + 2}`
      ip('-n', hub, 'link', 'set', hubSide, 'master', bridge)
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', hostSide)
      ip('-n', hub, 'link', 'set', hubSide, 'up')
      ip('-n', ns, 'link', 'set', hostSide, 'up')
      return { ns, address }
    })
    return { hub, hubAddress: HUB_ADDRESS, hosts, remove }
  } catch (error) {
    remove()
    throw error
  }
}

/** The built CLI in a namespace: its exit, its output so far; killed by `kill` or when the test ends. */
export interface NsProcess {
  child: ChildProcess
  exited: Promise<number | null>
  stdout: () => string
  stderr: () => string
}

export function spawnCliIn(ns: string, args: string[], env: NodeJS.ProcessEnv = {}): NsProcess {
  // `ip netns exec` execs node in place: the child's pid is node's, and a signal to it reaches node.
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, CLI, ...cliArgs(args)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (data: Buffer) => {
    stdout += data.toString()
  })
  child.stderr?.on('data', (data: Buffer) => {
    stderr += data.toString()
  })
  leftover.processes.add(child)
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      leftover.processes.delete(child)
      resolve(code)
    }),
  )
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}
