import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type * as VegaModule from 'vega'
import type { compile as vegaLiteCompile } from 'vega-lite'

export interface VegaLibraries {
  vega: typeof VegaModule
  compile: typeof vegaLiteCompile
}

let loaded: Promise<VegaLibraries> | undefined

/**
 * vega and vega-lite, loaded once. From the single-file builds both packages ship (build/vega.js,
 * build/vega-lite.min.js: the same release, bundled), not their ES modules: those are some hundred
 * files across the vega-* and d3-* packages, and resolving and compiling them one by one cost a run's
 * report 0.3 s of CPU where the two files cost 0.1 s (issue 40). The bundles are UMD scripts: loaded
 * as modules they put `vega` and `vegaLite` on globalThis (vega-lite's takes vega from there), which
 * are taken and removed here. A release without those files falls back to the modules.
 */
export function vegaLibraries(): Promise<VegaLibraries> {
  loaded ??= load()
  return loaded
}

async function load(): Promise<VegaLibraries> {
  const require = createRequire(import.meta.url)
  const vegaBundle = join(dirname(require.resolve('vega')), 'vega.js')
  const vegaLiteBundle = join(dirname(require.resolve('vega-lite')), 'vega-lite.min.js')
  if (!existsSync(vegaBundle) || !existsSync(vegaLiteBundle)) {
    const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')])
    return { vega, compile: vegaLite.compile }
  }
  const global = globalThis as { vega?: typeof VegaModule; vegaLite?: { compile: typeof vegaLiteCompile } }
  const before = { vega: global.vega, vegaLite: global.vegaLite }
  try {
    await import(pathToFileURL(vegaBundle).href)
    await import(pathToFileURL(vegaLiteBundle).href)
    const { vega, vegaLite } = global
    if (vega === undefined || vegaLite === undefined) throw new Error('vega bundles did not load')
    return { vega, compile: vegaLite.compile }
  } finally {
    global.vega = before.vega
    global.vegaLite = before.vegaLite
    if (before.vega === undefined) delete global.vega
    if (before.vegaLite === undefined) delete global.vegaLite
  }
}
