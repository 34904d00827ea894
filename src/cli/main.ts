#!/usr/bin/env node
import { main } from './dispatch.js'
import { processIo } from './io.js'

/** The process: argv in, exit code out. The only place that sets it (besides a second Ctrl-C). */
main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    processIo.err(
      `llmbench: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    process.exitCode = 1
  },
)
