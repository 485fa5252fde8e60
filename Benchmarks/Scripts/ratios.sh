#!/usr/bin/env bash
# Runs Reef's benchmarks and prints a table of ratios against their anchors (libbson, Foundation,
# SQLite).
#
#   Benchmarks/Scripts/ratios.sh                 # one round of every target but StoreBenchmarks
#   TARGETS=StoreBenchmarks Benchmarks/Scripts/ratios.sh   # ReefStore against SQLite 3 (not in the default TARGETS)
#   ROUNDS=3 Benchmarks/Scripts/ratios.sh        # three rounds; ratios are the median of the rounds
#   FILTER='validate/.*' Benchmarks/Scripts/ratios.sh
#   TARGETS='CoreBenchmarks' Benchmarks/Scripts/ratios.sh
#
# Each target runs on its own, so a target that fails (an API still in progress) does not stop
# the others. Results: $OUT (default /tmp/reef-bench-ratios), one folder per round, and the
# table in $OUT/ratios.md.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$(dirname "$here")"
root="$(dirname "$package")"
ROUNDS="${ROUNDS:-1}"
OUT="${OUT:-/tmp/reef-bench-ratios}"
TARGETS="${TARGETS:-CoreBenchmarks ExtendedJSONBenchmarks CodableBenchmarks QueryBenchmarks}"
FILTER="${FILTER:-}"
export REEF_SHARED_DIR="${REEF_SHARED_DIR:-$(cd "$root/.." && pwd)/shared}"

rm -rf "$OUT"
mkdir -p "$OUT"
cd "$package" || exit 1

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM" | tee "$OUT/machine.txt"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); reef commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null) (+ working tree)" | tee -a "$OUT/machine.txt"

failed=()
for round in $(seq 1 "$ROUNDS"); do
  dir="$OUT/round-$round"
  mkdir -p "$dir"
  for target in $TARGETS; do
    echo "== round $round/$ROUNDS: $target"
    args=(--target "^${target}\$" --no-progress --format jmh --path "$dir")
    [ -n "$FILTER" ] && args+=(--filter "$FILTER")
    if swift package --allow-writing-to-directory "$dir" benchmark "${args[@]}" >"$dir/$target.log" 2>&1; then
      # One jmh file per run; keep each target's under its own name.
      [ -f "$dir/Current_run.jmh.json" ] && mv "$dir/Current_run.jmh.json" "$dir/$target.jmh.json"
    else
      failed+=("round $round: $target (see $dir/$target.log)")
      [ -f "$dir/Current_run.jmh.json" ] && mv "$dir/Current_run.jmh.json" "$dir/$target.jmh.json"
    fi
    grep -h "reef benchmarks:" "$dir/$target.log" | sort -u || true
  done
done

echo
python3 "$here/ratios.py" "$OUT"/round-* | tee "$OUT/ratios.md"
if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "Targets that failed:"
  printf -- '- %s\n' "${failed[@]}"
  exit 1
fi
