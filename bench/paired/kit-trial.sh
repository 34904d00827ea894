#!/usr/bin/env bash
# The paired gate on the real engine (issue 38): two llama.cpp servers from ../shared side by side,
# a CPU hog switching on and off every 4 s on the same machine, one `run --paired` and
# `compare DIR` per trial. Prints each trial's exit codes and the gated figures' changes.
#   bench/paired/kit-trial.sh SLOTS_A SLOTS_B [TRIALS]   e.g. 4 4 5 (A/A) or 4 3 5 (one slot fewer)
#   LEVELS=4,6 REQUESTS=32 (the defaults: 2,4,6 and 32) set the run's levels and requests per level.
#   THROTTLE=1/20 stops B's server 1 ms in every 20 (bench/paired/throttle.mjs): a slower engine
#   (alone at c=4, TPOT p50 +10% and +18% in two runs; docs/benchmarks.md). GATE="tpot_p50=5%,..." also judges each folder at those thresholds.
# Needs ../shared (the kit) and a build (npm run build). Not a test: its figures are this machine's.
set -uo pipefail
cd "$(dirname "$0")/../.."
KIT="$(pwd)/../shared/engines/llama.cpp"
[ -x "$KIT/start.sh" ] || { echo "needs the kit at $KIT" >&2; exit 2; }
SLOTS_A="${1:?SLOTS_A}" SLOTS_B="${2:?SLOTS_B}" TRIALS="${3:-3}"
LEVELS="${LEVELS:-2,4,6}" REQUESTS="${REQUESTS:-32}" THROTTLE="${THROTTLE:-}" GATE="${GATE:-}"
for trial in $(seq 1 "$TRIALS"); do
  a=$("$KIT/start.sh" 18901 "$SLOTS_A" | tail -1)
  b=$("$KIT/start.sh" 18902 "$SLOTS_B" | tail -1)
  throttle=""
  if [ -n "$THROTTLE" ]; then
    node bench/paired/throttle.mjs "$b" "${THROTTLE%/*}" "${THROTTLE#*/}" &
    throttle=$!
  fi
  ( while :; do timeout 4 bash -c 'while :; do :; done'; sleep 4; done ) &
  hog=$!
  out="$(mktemp -d)/paired"
  started=$(date +%s)
  node dist/cli/main.js run --base-url http://127.0.0.1:18901/v1 --base-url http://127.0.0.1:18902/v1 \
    --model m --levels "$LEVELS" --requests "$REQUESTS" --input-tokens 48 --output-tokens 32 --ignore-eos --paired \
    --out "$out" >"$out.log" 2>&1
  run=$?
  node dist/cli/main.js compare "$out" >"$out.compare" 2>/dev/null
  gate=$?
  gated=""
  if [ -n "$GATE" ]; then
    node dist/cli/main.js compare "$out" --max-regression "$GATE" >"$out.gated" 2>/dev/null
    gated=", at $GATE exit $?: $(grep -m1 -oE '^\*\*(PASS|FAIL|INCONCLUSIVE)\*\*' "$out.gated") $(grep -m1 -oE '^\*\*[0-9]+ regression\(s\):\*\* .*' "$out.gated")"
  fi
  pkill -P "$hog"; kill $throttle "$hog" "$a" "$b" 2>/dev/null; wait 2>/dev/null
  echo "trial $trial ($SLOTS_A vs $SLOTS_B slots${THROTTLE:+, B stopped $THROTTLE ms}): run exit $run in $(($(date +%s) - started)) s, compare exit $gate: $(grep -m1 -E '^\*\*(PASS|FAIL|INCONCLUSIVE)' "$out.compare")$gated"
  grep -E '^\| [0-9]+ \| (ttft_p50|tpot_p50|tpot_p10|throughput) ' "$out.compare" | cut -d'|' -f2-7,10
  grep -m1 '^\*\*What the pass covers' "$out.compare"
done
