#!/usr/bin/env bash
# Runs every test file. The files are listed by the shell (globstar), not by node: on Node 20 a
# quoted glob that matches nothing passes silently. We refuse to pass with zero test files.
set -euo pipefail
shopt -s globstar nullglob
cd "$(dirname "$0")/.."
npx tsc -p tsconfig.json
# Types of tests and benches too, and lint/format: a red here fails CI like a failing test.
npx tsc -p tsconfig.test.json --noEmit
npx biome check .
files=(test/**/*.test.ts)
if [ ${#files[@]} -eq 0 ]; then echo "no test files found under test/" >&2; exit 1; fi
exec node --import tsx --test --test-reporter=spec --test-concurrency=1 "${files[@]}"
