#!/usr/bin/env bash
# Peak memory and wall time of `reef query` on a store and on a BSON stream of 2 million small
# documents (issue 12, item 4: results stream; the target is 64 MB for --count, an unsorted query
# and a top-10 sort), for two builds in the same run: OLD (a baseline) and NEW.
#
#   OLD=/tmp/old-reef/.build/release/reef Benchmarks/Scripts/query-memory.sh
#   OLD=… NEW=/path/to/reef COUNT=500000 Benchmarks/Scripts/query-memory.sh
#
# NEW defaults to this checkout's release build (built when missing). Build OLD from another
# commit in a worktree of your own (`git worktree add /tmp/old-reef <commit>`, then
# `swift build -c release --product reef` there). The documents are {_id, name, n, city, tags}
# (about 110 bytes of BSON each), generated as Extended JSON lines into $JSONL (default
# /tmp/reef-query-<COUNT>.jsonl; reused when present), imported by NEW into a store, and
# converted into a BSON stream; both live in a temporary directory, removed at the end. Each
# command runs once per build, its output to /dev/null. Besides /usr/bin/time's maximum RSS, the
# script samples /proc/PID/status every 0.05 s for the peak RssAnon (heap, stacks: what a query
# holds) and RssFile (file-backed: mostly the store's memory map, which the kernel reclaims).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/memory-sampling.sh"
root="$(dirname "$(dirname "$here")")"
COUNT="${COUNT:-2000000}"
JSONL="${JSONL:-/tmp/reef-query-${COUNT}.jsonl}"
: "${OLD:?set OLD to the baseline reef binary}"

if [ -z "${NEW:-}" ]; then
  (cd "$root" && swift build -c release --product reef >/dev/null)
  NEW="$root/.build/release/reef"
fi
if [ ! -f "$JSONL" ]; then
  python3 - "$JSONL" "$COUNT" <<'EOF'
import random, sys
path, count = sys.argv[1], int(sys.argv[2])
random.seed(12)
cities = ["Oslo", "Paris", "Rome", "Milan", "Lima", "Quito", "Boston", "Austin", "Kyoto", "Perth"]
words = ["red", "green", "blue", "gold", "iron", "oak", "pine", "salt", "sand", "snow"]
with open(path, "w") as out:
    for i in range(count):
        out.write('{"_id": %d, "name": "name-%07d", "n": %d, "city": "%s", "tags": ["%s", "%s"]}\n' % (
            i, random.randrange(count), random.randrange(1 << 30), random.choice(cities),
            random.choice(words), random.choice(words)))
EOF
fi
work="$(mktemp -d /tmp/reef-query-memory-XXXXXX)"
trap 'rm -rf "$work"' EXIT
"$NEW" import "$JSONL" --store "$work/store.reef" --collection big >/dev/null
"$NEW" export --store "$work/store.reef" --collection big --out "$work/stream.bson" --format bson >/dev/null

echo "documents: $COUNT; store: $(($(stat -c %s "$work/store.reef") / 1048576)) MB; stream: $(($(stat -c %s "$work/stream.bson") / 1048576)) MB"
echo "old: $OLD; new: $NEW"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| query | build | max RSS | peak RssAnon | peak RssFile | wall time | output |"
echo "|---|---|---:|---:|---:|---:|---|"
measure() {
  local label="$1" build="$2" binary="$3"
  shift 3
  local log out
  log="$(mktemp)"
  out="$(mktemp)"
  # --count prints one line, kept for the table; other output goes to /dev/null.
  if [[ " $* " == *" --count "* ]]; then
    /usr/bin/time -v "$binary" query "$@" >"$out" 2>"$log" &
  else
    /usr/bin/time -v "$binary" query "$@" >/dev/null 2>"$log" &
  fi
  local timer=$!
  sample_peak_memory "$timer" 0.05
  local anon=$peak_anon file=$peak_file
  wait "$timer" || { echo "$label ($build) failed:"; cat "$log" "$out"; exit 1; }
  local kb wall
  kb=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$log")
  wall=$(sed -n 's/^\s*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  echo "| $label | $build | $((kb / 1024)) MB | $((anon / 1024)) MB | $((file / 1024)) MB | $wall | $(tr '\n' ' ' <"$out") |"
  rm -f "$log" "$out"
}
both() {
  local label="$1"
  shift
  measure "$label" old "$OLD" "$@"
  measure "$label" new "$NEW" "$@"
}
store=(--store "$work/store.reef" --collection big)
both "store --count" "${store[@]}" --count
both "store --filter n>=2^29 --count" "${store[@]}" --filter '{"n": {"$gte": 536870912}}' --count
both "store, unsorted" "${store[@]}"
both "store --sort n:-1 --limit 10" "${store[@]}" --sort '{"n": -1}' --limit 10
both "store --sort n:1 (no limit)" "${store[@]}" --sort '{"n": 1}' --format bson
both "stream --count" "$work/stream.bson" --count
both "stream --sort n:-1 --limit 10" "$work/stream.bson" --sort '{"n": -1}' --limit 10
both "stream --sort n:1 (no limit)" "$work/stream.bson" --sort '{"n": 1}' --format bson
