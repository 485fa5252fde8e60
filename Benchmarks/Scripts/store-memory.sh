#!/usr/bin/env bash
# Peak memory of a streaming import of a ~1 GB BSON dump into a store and of its export
# (issue 4: under 128 MB). `reef import` / `reef export` are not in this tree yet, so this runs
# ReefStoreStream (Sources/ReefStoreStream), which does the same at the Store level: a
# BSONStreamReader into batches of 1,000 documents per write transaction, and one read
# transaction's TransactionCollection.forEach into a BSONStreamWriter.
#
#   Benchmarks/Scripts/store-memory.sh
#   SIZE_MB=2048 Benchmarks/Scripts/store-memory.sh
#
# The dump is Examples-model documents (contacts and businesses, unique ObjectId ids), written to
# $STREAM (default /tmp/reef-store-<SIZE_MB>mb.bson; reused when present). The store and the
# export go to a temporary directory under /tmp, removed at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$(dirname "$here")"
SIZE_MB="${SIZE_MB:-1024}"
LIMIT_MB="${LIMIT_MB:-128}"
STREAM="${STREAM:-/tmp/reef-store-${SIZE_MB}mb.bson}"

(cd "$package" && swift build -c release --product ReefStoreStream >/dev/null)
tool="$package/.build/release/ReefStoreStream"
[ -f "$STREAM" ] || "$tool" generate "$STREAM" "$SIZE_MB"
work="$(mktemp -d /tmp/reef-store-memory-XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo "stream: $STREAM, $(stat -c %s "$STREAM") bytes"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| command | max RSS (time -v) | wall time | tool's own report |"
echo "|---|---:|---:|---|"
status=0
measure() {
  local label="$1"
  shift
  local log report
  log="$(mktemp)"
  report="$(/usr/bin/time -v "$@" 2>"$log")" || { echo "$label failed:"; cat "$log"; exit 1; }
  local kb wall
  kb=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$log")
  wall=$(sed -n 's/^\s*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  [ "$kb" -ge $((LIMIT_MB * 1024)) ] && status=1
  echo "| $label | $((kb / 1024)) MB | $wall | $report |"
  rm -f "$log"
}
measure "import (1,000 per transaction)" "$tool" import "$STREAM" "$work/store.reef"
echo "| (store file) | $(( $(stat -c %s "$work/store.reef") / 1048576 )) MB | | |"
measure "export (forEach)" "$tool" export "$work/store.reef" "$work/out.bson"
# The export is in _id order, not the input's: the same documents, so the same number of bytes.
[ "$(stat -c %s "$STREAM")" = "$(stat -c %s "$work/out.bson")" ] || { echo "the export's size differs from the input's"; status=1; }
exit $status
