#!/usr/bin/env bash
# Peak memory and throughput of `reef validate`, `reef dump` and unsorted `reef query` over a ~1 GB
# BSON stream. Goal: peak resident memory under 64 MB for each, whatever the stream's size.
#
#   Benchmarks/Scripts/stream-memory.sh            # builds the release reef if needed
#   SIZE_MB=2048 REEF_BIN=/path/to/reef Benchmarks/Scripts/stream-memory.sh
#
# The stream is DriverBench's flat, deep and full documents, tweet.bson and small_doc.bson
# concatenated over and over, with large_doc.bson (2.5 MB, one document) every ~100 MB, written to
# $STREAM (default /tmp/reef-stream-<SIZE_MB>mb.bson; reused when it already has the right size).
# Nothing is written into the repository.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$(dirname "$here")")"
SIZE_MB="${SIZE_MB:-1024}"
LIMIT_MB="${LIMIT_MB:-64}"
STREAM="${STREAM:-/tmp/reef-stream-${SIZE_MB}mb.bson}"
SHARED="${REEF_SHARED_DIR:-$(cd "$root/.." && pwd)/shared}"
REEF_BIN="${REEF_BIN:-$root/.build-bench-root/release/reef}"

if [ ! -d "$SHARED/benchdata" ]; then
  echo "stream-memory: $SHARED/benchdata not found (set REEF_SHARED_DIR); skipping" >&2
  exit 0
fi

if [ ! -x /usr/bin/time ]; then
  echo "stream-memory: installing GNU time" >&2
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time
fi

if [ ! -x "$REEF_BIN" ]; then
  echo "stream-memory: building reef (release) into $root/.build-bench-root" >&2
  (cd "$root" && swift build -c release --product reef --scratch-path "$root/.build-bench-root")
fi

python3 - "$SHARED" "$STREAM" "$SIZE_MB" <<'EOF'
import os, sys
shared, path, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
target = size_mb * 1_000_000
if os.path.exists(path) and os.path.getsize(path) >= target:
    sys.exit(0)
def read(p):
    with open(os.path.join(shared, "benchdata", p), "rb") as f:
        return f.read()
small = b"".join(read(p) for p in [
    "extended_bson/flat_bson.bson", "extended_bson/deep_bson.bson", "extended_bson/full_bson.bson",
    "single_and_multi_document/tweet.bson", "single_and_multi_document/small_doc.bson"])
large = read("single_and_multi_document/large_doc.bson")
block = small * (1_000_000 // len(small) + 1)  # ~1 MB of small documents
written = 0
with open(path + ".tmp", "wb") as out:
    while written < target:
        if written % 100_000_000 < len(block):
            out.write(large)
            written += len(large)
        out.write(block)
        written += len(block)
os.replace(path + ".tmp", path)
EOF
bytes=$(stat -c %s "$STREAM")
echo "stream: $STREAM, $bytes bytes ($(python3 -c "print(round($bytes/1e6))") MB)"
echo "reef: $REEF_BIN"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(date -u +%Y-%m-%dT%H:%MZ)"
echo

status=0
measure() {
  local label="$1"
  shift
  local log
  log="$(mktemp)"
  set +e
  /usr/bin/time -v "$@" >/dev/null 2>"$log"
  local code=$?
  set -e
  local rss_kb seconds
  rss_kb=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$log")
  seconds=$(sed -n 's/^\s*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log" |
    awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  local verdict="ok"
  if [ "$code" != 0 ]; then
    verdict="FAILED (exit $code: $(grep -v '^\s' "$log" | grep -v 'Command being timed' | head -3 | tr '\n' ' '))"
    status=1
  elif [ "$rss_kb" -ge $((LIMIT_MB * 1024)) ]; then
    verdict="OVER the ${LIMIT_MB} MB goal"
    status=1
  fi
  awk -v label="$label" -v kb="$rss_kb" -v s="$seconds" -v b="$bytes" -v v="$verdict" \
    'BEGIN { printf "| %-28s | %8.1f MB | %7.2f s | %8.0f MB/s | %s |\n", label, kb / 1024, s, b / 1e6 / s, v }'
  rm -f "$log"
}

echo "| command | peak RSS | wall time | throughput | verdict (goal < ${LIMIT_MB} MB) |"
echo "|---|---:|---:|---:|---|"
measure "reef validate" "$REEF_BIN" validate "$STREAM"
measure "reef dump (relaxed)" "$REEF_BIN" dump "$STREAM"
measure "reef dump --format canonical" "$REEF_BIN" dump --format canonical "$STREAM"
measure "reef query --filter (matches)" "$REEF_BIN" query "$STREAM" --filter '{"text": {"$exists": true}}'
measure "reef query --where --count" "$REEF_BIN" query "$STREAM" --where 'user.followers_count > 100' --count
measure "cat (I/O floor)" cat "$STREAM"
exit $status
