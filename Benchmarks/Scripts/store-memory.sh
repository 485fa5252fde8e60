#!/usr/bin/env bash
# Peak memory of `reef import` of a ~1 GB BSON dump into a new store and of `reef export` of it
# (issue 4: under 128 MB each, by /usr/bin/time's maximum resident set size).
#
#   Benchmarks/Scripts/store-memory.sh
#   SIZE_MB=2048 Benchmarks/Scripts/store-memory.sh
#   REEF=/path/to/other/reef Benchmarks/Scripts/store-memory.sh    # another build, e.g. a baseline
#
# The dump is Examples-model documents (contacts and businesses, unique ObjectId ids in scattered
# order), written by Benchmarks' ReefStoreStream to $STREAM (default
# /tmp/reef-store-<SIZE_MB>mb.bson; reused when present). The import is the CLI's: batches of
# 1,000 documents (or 4 MB) per write transaction into a temporary collection, swapped in at the
# end; the export writes one .bson file from one read transaction. Besides the maximum RSS, the
# script samples the process's /proc/PID/status every 0.1 s for the peak RssAnon (heap, stacks)
# and RssFile (file-backed: mostly the store's memory map). The store and the export go to a
# temporary directory under /tmp, removed at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/memory-sampling.sh"
package="$(dirname "$here")"
root="$(dirname "$package")"
SIZE_MB="${SIZE_MB:-1024}"
LIMIT_MB="${LIMIT_MB:-128}"
STREAM="${STREAM:-/tmp/reef-store-${SIZE_MB}mb.bson}"

if [ -z "${REEF:-}" ]; then
  (cd "$root" && swift build -c release --product reef >/dev/null)
  REEF="$root/.build/release/reef"
fi
if [ ! -f "$STREAM" ]; then
  (cd "$package" && swift build -c release --product ReefStoreStream >/dev/null)
  "$package/.build/release/ReefStoreStream" generate "$STREAM" "$SIZE_MB"
fi
work="$(mktemp -d /tmp/reef-store-memory-XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo "stream: $STREAM, $(stat -c %s "$STREAM") bytes; reef: $REEF"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | max RSS (time -v) | peak RssAnon | peak RssFile | wall time | output |"
echo "|---|---:|---:|---:|---:|---|"
status=0
measure() {
  local label="$1"
  shift
  local log out
  log="$(mktemp)"
  out="$(mktemp)"
  /usr/bin/time -v "$@" >"$out" 2>"$log" &
  local timer=$!
  sample_peak_memory "$timer" 0.1
  local anon=$peak_anon file=$peak_file
  wait "$timer" || { echo "$label failed:"; cat "$log" "$out"; exit 1; }
  local kb wall
  kb=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$log")
  wall=$(sed -n 's/^\s*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  [ "$kb" -ge $((LIMIT_MB * 1024)) ] && status=1
  echo "| $label | $((kb / 1024)) MB | $((anon / 1024)) MB | $((file / 1024)) MB | $wall | $(tr '\n' ' ' <"$out") |"
  rm -f "$log" "$out"
}
measure "reef import (1,000 per transaction)" "$REEF" import "$STREAM" --store "$work/store.reef" --collection contacts
echo "| (store file) | $(($(stat -c %s "$work/store.reef") / 1048576)) MB | | | | |"
measure "reef export (one .bson)" "$REEF" export --store "$work/store.reef" --collection contacts \
  --out "$work/out.bson" --format bson
# The export is in _id order, not the input's: the same documents, so the same number of bytes.
[ "$(stat -c %s "$STREAM")" = "$(stat -c %s "$work/out.bson")" ] || {
  echo "the export's size differs from the input's"
  status=1
}
exit $status
