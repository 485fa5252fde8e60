#!/usr/bin/env bash
# Peak memory and wall time of `reef convert` and `reef import` of a large Extended JSON file
# (issue 14: convert streams JSON, peak RSS < 64 MB whatever the input's size), for two builds in
# the same run: OLD (a baseline) and NEW.
#
#   OLD=/tmp/old-reef/.build/release/reef Benchmarks/Scripts/convert-memory.sh
#   OLD=… NEW=/path/to/reef MEGABYTES=500 ROUNDS=5 Benchmarks/Scripts/convert-memory.sh
#
# NEW defaults to this checkout's release build (built when missing). Build OLD from another
# commit in a worktree of your own. The input is mongoexport's two forms of the same documents,
# generated from DriverBench's tweet, small, flat, full and deep documents (read in place from
# $REEF_SHARED_DIR/benchdata, default ../shared beside the repository), each line with an added
# `_id`: one document per line (default) and `--jsonArray` (one array, a document per line),
# MEGABYTES each (default 91), in a temporary directory removed at the end. Each command runs
# ROUNDS times per build (default 3), alternating old and new; the table gives the median wall
# time and the largest maximum RSS (`/usr/bin/time`). The outputs of both builds are compared.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$(dirname "$here")")"
SHARED="${REEF_SHARED_DIR:-$(dirname "$root")/shared}"
MEGABYTES="${MEGABYTES:-91}"
ROUNDS="${ROUNDS:-3}"
: "${OLD:?set OLD to the baseline reef binary}"

if [ -z "${NEW:-}" ]; then
  (cd "$root" && swift build -c release --product reef >/dev/null)
  NEW="$root/.build/release/reef"
fi
work="$(mktemp -d /tmp/reef-convert-memory-XXXXXX)"
trap 'rm -rf "$work"' EXIT
python3 - "$SHARED/benchdata" "$work" "$((MEGABYTES * 1000000))" <<'PY'
import sys
base, out, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = ["single_and_multi_document/tweet.json", "single_and_multi_document/small_doc.json",
         "extended_bson/flat_bson.json", "extended_bson/full_bson.json", "extended_bson/deep_bson.json"]
bodies = [open(f"{base}/{n}").read().strip()[1:] for n in names]  # without the leading '{'
for name, array in (("lines.json", False), ("array.json", True)):
    with open(f"{out}/{name}", "w") as f:
        written, i = 0, 0
        f.write("[" if array else "")
        while written < target:
            line = ('{"_id":{"$numberLong":"%d"},' % i) + bodies[i % len(bodies)]
            line = (",\n" if array and i else "") + line + ("" if array else "\n")
            f.write(line)
            written += len(line)
            i += 1
        f.write("]\n" if array else "")
PY

echo "input: $(stat -c %s "$work/lines.json") bytes of JSON lines, $(stat -c %s "$work/array.json") bytes of JSON array"
echo "old: $OLD; new: $NEW"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | build | max RSS | wall time (median of $ROUNDS) |"
echo "|---|---|---:|---:|"
# run BUILD BINARY ARGS...: one run; appends "kb seconds" to $work/BUILD.times.
run() {
  local build="$1" binary="$2"
  shift 2
  rm -rf "$work/store.reef"*
  /usr/bin/time -f "%M %e" -o "$work/time" "$binary" "$@" >/dev/null
  cat "$work/time" >>"$work/$build.times"
}
report() {
  local label="$1" build="$2"
  local kb wall
  kb=$(sort -n "$work/$build.times" | tail -1 | cut -d' ' -f1)
  wall=$(cut -d' ' -f2 "$work/$build.times" | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")
  echo "| $label | $build | $((kb / 1024)) MB | $wall s |"
}
both() {
  local label="$1"
  shift
  rm -f "$work/old.times" "$work/new.times"
  for _ in $(seq "$ROUNDS"); do
    run old "$OLD" "$@"
    [[ " $* " == *"/out.bson "* ]] && mv "$work/out.bson" "$work/old.bson"
    run new "$NEW" "$@"
  done
  if [[ " $* " == *"/out.bson "* ]]; then
    cmp -s "$work/old.bson" "$work/out.bson" || { echo "$label: the builds' outputs differ"; exit 1; }
  fi
  report "$label" old
  report "$label" new
}
both "convert lines.json --to bson" convert "$work/lines.json" --to bson -o "$work/out.bson"
both "convert array.json --to bson" convert "$work/array.json" --to bson -o "$work/out.bson"
both "convert lines.json --to relaxed" convert "$work/lines.json" --to relaxed -o /dev/null
both "import lines.json" import "$work/lines.json" --store "$work/store.reef" --collection big
