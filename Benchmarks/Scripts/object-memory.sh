#!/usr/bin/env bash
# Peak memory and wall time of iterating a million objects of a Results, reading one property
# (issue 13: peak memory at most 64 MB), with GRDB's cursor over the same rows for comparison.
#
#   Benchmarks/Scripts/object-memory.sh             # COUNT=1000000
#   COUNT=100000 Benchmarks/Scripts/object-memory.sh
#   BINARY=/path/to/ReefObjectIterate Benchmarks/Scripts/object-memory.sh   # no build
#
# Builds ReefObjectIterate (release), makes its fixture when missing (a Reef file and a GRDB
# database of COUNT contacts in $REEF_OBJECT_FIXTURES, default /tmp/reef-object-fixtures, the
# same ones ObjectBenchmarks uses), then runs each side once under /usr/bin/time -v, sampling
# /proc/PID/status for the peak RssAnon (heap: what the iteration holds) and RssFile (mostly the
# file's memory map, which the kernel reclaims).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/memory-sampling.sh"
package="$(dirname "$here")"
COUNT="${COUNT:-1000000}"

cd "$package"
if [ -z "${BINARY:-}" ]; then
  swift build -c release --product ReefObjectIterate >/dev/null
  BINARY="$package/.build/release/ReefObjectIterate"
fi
binary="$BINARY"
"$binary" make "$COUNT" >/dev/null

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| side | objects | max RSS | peak RssAnon | peak RssFile | wall time | output |"
echo "|---|---:|---:|---:|---:|---:|---|"
for side in reef grdb; do
  log="$(mktemp)"
  out="$(mktemp)"
  /usr/bin/time -v "$binary" "$side" "$COUNT" >"$out" 2>"$log" &
  timer=$!
  sample_peak_memory "$timer" 0.05
  wait "$timer" || { echo "$side failed:"; cat "$log" "$out"; exit 1; }
  kb=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$log")
  wall=$(sed -n 's/^\s*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  echo "| $side | $COUNT | $((kb / 1024)) MB | $((peak_anon / 1024)) MB | $((peak_file / 1024)) MB | $wall | $(tr '\n' ' ' <"$out") |"
  rm -f "$log" "$out"
done
