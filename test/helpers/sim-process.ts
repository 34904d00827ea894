import type * as Child from '../../src/sim/child.js'

/** The built simulator module (test/run.sh builds dist/ first, as for the CLI tests). */
const BUILT = new URL('../../dist/sim/child.js', import.meta.url).href

/**
 * The simulator in a process of its own, started from the build. Imported from source, the child
 * would be `node --import tsx src/cli/main.ts sim`, loading the whole CLI through tsx: about half a
 * second more of start-up and CPU for every simulator a test starts. Loaded by URL, so the tests'
 * types check without a build.
 */
export const startSimulatorProcess: typeof Child.startSimulatorProcess = async (params, options) => {
  const built = (await import(BUILT)) as typeof Child
  return built.startSimulatorProcess(params, options)
}
