#!/usr/bin/env bash
# Runs every test file. The files are listed by the shell (globstar), not by node: on Node 20 a
# quoted glob that matches nothing passes silently. We refuse to pass with zero test files.
#
# Two lanes, so the suite fits a 2-core machine in minutes:
# - shared: every file not marked otherwise, several files at a time (TEST_CONCURRENCY, default 4).
#   Almost all of them wait on sockets and the simulator's clock, not on the CPU, and each must hold
#   on a busy machine anyway: running beside one another is the load they are written to survive.
# - alone: files holding the line `// test-lane: alone` (a real engine computing on this CPU, whose
#   figures are what the test measures) run one at a time after the shared lane, with nothing beside.
# New files land in the shared lane by themselves; mark a file alone only when its subject is CPU time.
# Files holding `// test-lane: long` (tens of seconds of runs) start first in the shared lane: the
# runner starts files in the order given, and a long file started last would leave the lane ending
# on it alone while the other slots sit idle.
# The test types and lint run beside the build, which must come first: the CLI tests run dist/.
# The test files themselves run from .test-build/ (test/prebuilt/), transpiled once before the lanes.
set -euo pipefail
shopt -s globstar nullglob
cd "$(dirname "$0")/.."

# Types of tests and benches too, and lint/format: a red here fails the suite like a failing test.
# Lint needs no build, so it starts first, beside the build. The test types need dist/'s
# declarations (test/unit/package-entry.test.ts imports the package by its name, which resolves to
# dist/index.d.ts), so they start when the build is done, beside the shared lane.
checks_log="$(mktemp)"
types_log="$(mktemp)"
trap 'rm -f "$checks_log" "$types_log"' EXIT
npx biome check . >"$checks_log" 2>&1 &
checks_pid=$!
if ! npx tsc -p tsconfig.json; then
  wait "$checks_pid" || true # no check left running after the script
  cat "$checks_log"
  exit 1
fi
npx tsc -p tsconfig.test.json --noEmit >"$types_log" 2>&1 &
types_pid=$!
# The test files run from a transpiled copy (test/prebuilt/: esbuild, about a second), not through
# tsx's loader in every test process.
node test/prebuilt/build.mjs

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
shared=("${long[@]}" "${rest[@]}")

status=0
run_lane() {
  local concurrency="$1"
  shift
  [ $# -eq 0 ] && return 0
  node --import "$PWD/test/prebuilt/register.mjs" --test --test-reporter=spec --test-concurrency="$concurrency" "$@" || status=1
}
echo "# shared lane: ${#shared[@]} files (${#long[@]} long ones first), ${TEST_CONCURRENCY:-4} at a time"
run_lane "${TEST_CONCURRENCY:-4}" "${shared[@]}"

checks=0
wait "$checks_pid" || checks=1
wait "$types_pid" || checks=1
cat "$checks_log" "$types_log"
if [ "$checks" -ne 0 ]; then echo "# test types or lint failed (above)" >&2; status=1; fi

echo "# alone lane: ${#alone[@]} files, one at a time"
run_lane 1 "${alone[@]}"
exit "$status"
