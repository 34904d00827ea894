#!/usr/bin/env bash
# Runs every test file. The files are listed by the shell (globstar), not by node: on Node 20 a
# quoted glob that matches nothing passes silently. We refuse to pass with zero test files.
#
# Two lanes, so the suite fits a 2-core machine in minutes:
# - shared: every file not marked otherwise, several files at a time (TEST_CONCURRENCY, default 4).
#   Each mostly waits on sockets and the simulator's clock, but together (with the unit batches and
#   tsc beside them) they keep both cores busy: the suite is about 600 CPU-s, so more at a time does
#   not help. Each must hold on a busy machine anyway: that is the load they are written to survive.
# - alone: files holding the line `// test-lane: alone` (a real engine computing on this CPU, whose
#   figures are what the test measures) run one at a time after the shared lane, with nothing beside.
# New files land in the shared lane by themselves; mark a file alone only when its subject is CPU time.
# Files holding `// test-lane: long` (tens of seconds of runs) start first in the shared lane (which
# takes some doing: see below): a long file started last would leave the lane ending on it alone
# while the other slots sit idle.
# The test files run from .test-build/ and the CLI tests from dist/, both transpiled by esbuild
# before the lanes (test/prebuilt/build.mjs, about a second); tsc checks the types of src/ (writing
# dist/'s declarations) and then of the tests beside the lanes, as lint does.
set -euo pipefail
shopt -s globstar nullglob
cd "$(dirname "$0")/.."

# The test files run from a transpiled copy (test/prebuilt/: esbuild, about a second), not through
# tsx's loader in every test process; dist/'s JavaScript is written the same way (--dist): tsc's
# build took 15-30 s of the suite's critical path, its JavaScript the same per-file transform.
node test/prebuilt/build.mjs --dist

files=(test/**/*.test.ts)
if [ ${#files[@]} -eq 0 ]; then echo "no test files found under test/" >&2; exit 1; fi
alone=()
long=()
rest=()
for file in "${files[@]}"; do
  if grep -qx '// test-lane: alone' "$file"; then
    alone+=("$file")
  elif grep -qx '// test-lane: long' "$file"; then
    long+=("$file")
  else
    rest+=("$file")
  fi
done
# Unit files run in batches, several files to a process: a node process per file costs about 0.35
# CPU-s before its first test, and each file compiles again the modules its neighbours compiled
# (measured side by side on test/unit/: 103 CPU-s a process each, 66 in one). A file that changes its
# process (environment, folder, exit code) or hooks every test of it (a top-level before/after:
# in a batch they would run around its neighbours' tests too) keeps a process of its own. (One that
# needs dist/ or the package by its name batches too: build.mjs --dist writes it before the batches.)
batch_dir=.test-build/batches
mkdir -p "$batch_dir"
own_process='^(before|after|beforeEach|afterEach)\(|process\.env(\.[A-Za-z_]+|\[[^]]+\]) =[^=]|delete process\.env|process\.chdir|process\.exitCode'
batched=()
unbatched=()
for file in "${rest[@]}"; do
  if [[ "$file" == test/unit/* ]] && ! grep -qE "$own_process" "$file"; then batched+=("$file"); else unbatched+=("$file"); fi
done
batches=()
for index in 1 2; do
  batch="$batch_dir/unit-$index.test.mjs"
  : >"$batch"
  for ((i = index - 1; i < ${#batched[@]}; i += 2)); do echo "import '../../${batched[$i]}'" >>"$batch"; done
  batches+=("$batch")
done
# Node's runner sorts the files it is given by path (Node 20), whatever their order on the command
# line: the long files, mostly under test/integration/, ran last, and the lane ended on one of them
# alone (workload-run.test.ts for its last 25 s; seen by sampling the running files). So each file
# of the shared lane is named through a one-line module whose name keeps the lane's order
# (.test-build/lane/NNN-*.mjs: an `import` of the file; still one process per file).
lane_dir=.test-build/lane
mkdir -p "$lane_dir"
shared=()
for file in "${long[@]}" "${unbatched[@]}"; do
  alias="$lane_dir/$(printf '%03d' ${#shared[@]})-$(basename "$file" .ts).mjs"
  echo "import '../../$file'" >"$alias"
  shared+=("$alias")
done

# Types of src/, tests and benches, and lint/format: a red here fails the suite like a failing test.
# Neither holds up a lane: they start first, beside the unit batches (which need neither the build
# nor the pool) and the shared lane. tsc checks src/ and writes only dist/'s declarations (its
# JavaScript is esbuild's, above: nothing a running test reads is rewritten under it); the test
# types are checked against those declarations (tsconfig.test.json references the build's project:
# src/ is not checked twice). `npm run build` writes tsc's own JavaScript again (tsc's incremental
# build knows the last one emitted declarations only).
checks_log="$(mktemp)"
types_log="$(mktemp)"
unit_log="$(mktemp)"
trap 'rm -f "$checks_log" "$types_log" "$unit_log"' EXIT
npx biome check . >"$checks_log" 2>&1 &
checks_pid=$!
node --import "$PWD/test/prebuilt/register.mjs" --test --test-reporter=spec --test-concurrency=2 "${batches[@]}" >"$unit_log" 2>&1 &
unit_pid=$!
{ npx tsc -p tsconfig.json --emitDeclarationOnly && npx tsc -p tsconfig.test.json; } >"$types_log" 2>&1 &
types_pid=$!

# A pool of warm CLI processes (test/prebuilt/cli-pool.mjs) runs the suite's `llmbench run`, `demo`...
# that a test would otherwise start as a fresh node process: about 1.5 CPU-s of module loading and
# compiling each, over a hundred times per suite. Tests about the process itself (signals, start-up,
# file limits, variables Node reads at start) still spawn their own; see runCli in test/helpers/cli.ts.
pool_dir="$(mktemp -d)"
export LLMBENCH_TEST_CLI_POOL="$pool_dir/cli.sock"
# Its stdin is this script's pipe: the pool ends when the script does, however it ends.
exec {pool_in}> >(node test/prebuilt/cli-pool.mjs "$LLMBENCH_TEST_CLI_POOL" >"$pool_dir/log" 2>&1)
trap 'exec {pool_in}>&-; rm -f "$checks_log" "$types_log" "$unit_log"; sleep 0.2; rm -rf "$pool_dir"' EXIT
for _ in $(seq 1 100); do [ -S "$LLMBENCH_TEST_CLI_POOL" ] && break; sleep 0.1; done
[ -S "$LLMBENCH_TEST_CLI_POOL" ] || { echo "the CLI pool did not start:" >&2; cat "$pool_dir/log" >&2; exit 1; }

status=0
run_lane() {
  local concurrency="$1"
  shift
  [ $# -eq 0 ] && return 0
  # TEST_FILE_TIMES=PREFIX also writes each lane's TAP to PREFIX.LANE: every test's wall time (Node 20's
  # TAP names tests, not their files), to see where the suite's minutes go (`grep -E '^ok|^not ok' -A3`).
  local times=()
  if [ -n "${TEST_FILE_TIMES:-}" ]; then
    times=(--test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination="$TEST_FILE_TIMES.$concurrency")
  fi
  node --import "$PWD/test/prebuilt/register.mjs" --test --test-reporter=spec "${times[@]}" --test-concurrency="$concurrency" "$@" || status=1
}
echo "# shared lane: ${#shared[@]} files (${#long[@]} long ones first), ${TEST_CONCURRENCY:-4} at a time"
run_lane "${TEST_CONCURRENCY:-4}" "${shared[@]}"
unit=0
wait "$unit_pid" || unit=1
echo "# unit batches: ${#batched[@]} unit files in ${#batches[@]} processes, started beside the build"
cat "$unit_log"
if [ "$unit" -ne 0 ]; then status=1; fi

checks=0
wait "$checks_pid" || checks=1
wait "$types_pid" || checks=1
cat "$checks_log" "$types_log"
if [ "$checks" -ne 0 ]; then echo "# test types or lint failed (above)" >&2; status=1; fi

echo "# alone lane: ${#alone[@]} files, one at a time"
run_lane 1 "${alone[@]}"
exit "$status"
