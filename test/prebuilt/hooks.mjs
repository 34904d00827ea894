// Module hooks that run the suite from .test-build/ (written by build.mjs) while every module keeps
// its .ts URL: import.meta.url, and so every path a test finds beside itself (fixtures, dist/, docs/,
// ../shared), stays what it is under tsx. Imports name '.js' files, as tsc wants; where only the .ts
// exists, resolve answers the .ts, and load hands over its transpiled text.
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BUILD = `${ROOT}.test-build/`
const ROOT_URL = pathToFileURL(ROOT).href
const OWN = /^(src|test|bench)\//

function ownSource(url) {
  if (!url.startsWith(ROOT_URL)) return undefined
  const relative = decodeURIComponent(url.slice(ROOT_URL.length))
  return OWN.test(relative) ? relative : undefined
}

export async function resolve(specifier, context, next) {
  const parent = context.parentURL
  if (
    parent !== undefined &&
    specifier.endsWith('.js') &&
    (specifier.startsWith('.') || specifier.startsWith('file:'))
  ) {
    const url = new URL(specifier, parent).href
    if (ownSource(url) !== undefined && !existsSync(fileURLToPath(url))) {
      const ts = `${url.slice(0, -3)}.ts`
      if (existsSync(fileURLToPath(ts))) return { url: ts, format: 'module', shortCircuit: true }
    }
  }
  return next(specifier, context)
}

export async function load(url, context, next) {
  const relative = url.endsWith('.ts') ? ownSource(url) : undefined
  if (relative === undefined) return next(url, context)
  const built = `${BUILD}${relative.slice(0, -3)}.js`
  if (!existsSync(built))
    throw new Error(
      `${relative} is not in .test-build/: run test/run.sh (it transpiles first), or run the file with node --import tsx`,
    )
  return { format: 'module', source: readFileSync(built, 'utf8'), shortCircuit: true }
}
