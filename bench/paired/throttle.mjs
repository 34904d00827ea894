// Makes a running process a known share slower, as a slower engine would be: it is stopped for
// `stoppedMs` of every `periodMs` (SIGSTOP, then SIGCONT), so a CPU-bound server such as the kit's
// one-thread llama.cpp computes every step about stoppedMs/periodMs slower, wherever a request is.
// For bench/paired/kit-trial.sh (THROTTLE=1/20: alone at c=4, B's TPOT p50 +10% and +18% in two runs). A relay adding time per token was
// tried first: at 4-6 streams it slowed B's measured TPOT by 1-7% for 3 ms a token (12%), because the
// later ends send the next requests later and B's batches ran smaller, which made its steps faster.
//   node bench/paired/throttle.mjs PID STOPPED_MS PERIOD_MS
const [pid, stoppedMs, periodMs] = process.argv.slice(2).map(Number)
if (![pid, stoppedMs, periodMs].every((n) => Number.isInteger(n) && n > 0) || stoppedMs >= periodMs) {
  console.error('usage: throttle.mjs PID STOPPED_MS PERIOD_MS (integers, STOPPED_MS < PERIOD_MS)')
  process.exit(2)
}
const resume = () => {
  try {
    process.kill(pid, 'SIGCONT')
  } catch {
    process.exit(0) // the process is gone
  }
}
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    resume()
    process.exit(0)
  })
setInterval(() => {
  try {
    process.kill(pid, 'SIGSTOP')
  } catch {
    process.exit(0)
  }
  setTimeout(resume, stoppedMs)
}, periodMs)
