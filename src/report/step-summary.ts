import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SUMMARY_FILE } from '../result/folder-layout.js'

/**
 * GitHub Actions shows the Markdown appended to the file named by $GITHUB_STEP_SUMMARY on the job's
 * page: a run in CI puts its summary.md there, so the answer is read without downloading artifacts.
 * Appended, never overwritten: other steps of the job write to the same file. Returns the file
 * written to, or null when the variable is not set.
 */
export function appendStepSummary(dir: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const target = env.GITHUB_STEP_SUMMARY
  if (target === undefined || target === '') return null
  const markdown = readFileSync(join(dir, SUMMARY_FILE), 'utf8')
  appendFileSync(target, markdown.endsWith('\n') ? markdown : `${markdown}\n`)
  return target
}
