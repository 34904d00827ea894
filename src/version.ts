import { readFileSync } from 'node:fs'

/** The package version, read once from package.json (two levels up from src/ and dist/ alike). */
export const TOOL_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version
