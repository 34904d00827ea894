/** Where a command writes: stdout for results, stderr for progress and errors. */
export interface Io {
  out: (text: string) => void
  err: (text: string) => void
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}
