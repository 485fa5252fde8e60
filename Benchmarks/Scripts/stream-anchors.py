#!/usr/bin/env python3
"""Whole-process pairs: `reef validate`, `dump` and `query` against libbson programs on one stream.

The pairs and the stream are those of ../shared/anchors/README.md: a generated BSON stream of
contact and business documents (200 MB by default), and `libbson_stream`, a small C program over
libbson's `bson_reader`. Each pair is timed alternately (reef, anchor, reef, anchor, ...) with the
page cache warm; the table gives the median wall time of each side, the median of the paired
ratios anchor / reef (each reef run with the anchor run next to it; above 1: reef is faster) with
their range, and reef's peak resident memory.

Environment (all optional):
  REEF            the reef binary (default: .build/release/reef, built if missing)
  SHARED          the shared material (default: ../shared beside the repository)
  STREAM          the stream (default: /tmp/reef-anchor-stream-<MB>.bson, generated if missing)
  MEGABYTES       the size of a generated stream (default: 200)
  RUNS            timed runs of each side per pair (default: 5)
  PYTHON          a Python with pymongo's `bson` package, to generate the stream (default: a venv
                  in /tmp/reef-anchor-venv, made with pip if missing)
  PAIRS           a comma-separated subset of: validate, walk, dump, query-city, query-addresses

Run from the repository root: `python3 Benchmarks/Scripts/stream-anchors.py`.
"""

import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
ANCHORS = os.path.join(SHARED, "anchors")
RUNS = int(os.environ.get("RUNS", "5"))
MEGABYTES = int(os.environ.get("MEGABYTES", "200"))


def run_quietly(command, **kwargs):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)


def reef_binary():
    path = os.environ.get("REEF", os.path.join(ROOT, ".build", "release", "reef"))
    if not os.path.exists(path):
        print("building reef (release)...", file=sys.stderr)
        run_quietly(["swift", "build", "-c", "release", "--product", "reef"], cwd=ROOT)
    return path


def anchor_binary():
    path = "/tmp/reef-libbson-stream"
    source = os.path.join(ANCHORS, "libbson_stream.c")
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(source):
        flags = subprocess.run(
            ["pkg-config", "--cflags", "--libs", "libbson-1.0"], check=True, capture_output=True, text=True
        ).stdout.split()
        run_quietly(["cc", "-O2", "-o", path, source] + flags)
    return path


def python_with_bson():
    if "PYTHON" in os.environ:
        return os.environ["PYTHON"]
    venv = "/tmp/reef-anchor-venv"
    python = os.path.join(venv, "bin", "python")
    has_bson = os.path.exists(python) and subprocess.run([python, "-c", "import bson"], capture_output=True).returncode == 0
    if not has_bson:
        print("making a venv with pymongo in %s..." % venv, file=sys.stderr)
        run_quietly([sys.executable, "-m", "venv", venv])
        run_quietly([python, "-m", "pip", "install", "-q", "pymongo"])
    return python


def stream():
    path = os.environ.get("STREAM", "/tmp/reef-anchor-stream-%d.bson" % MEGABYTES)
    if not os.path.exists(path):
        print("generating %s (%d MB)..." % (path, MEGABYTES), file=sys.stderr)
        run_quietly([python_with_bson(), os.path.join(ANCHORS, "gen_stream.py"), path, str(MEGABYTES)])
    return path


def timed(command):
    """Wall seconds and peak resident KiB of one run; the output goes to /dev/null."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=null, stderr=null)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed (%s): %s" % (status, " ".join(command)))
    return wall, usage.ru_maxrss


def pair(reef_command, anchor_command):
    reef_times, anchor_times, memory = [], [], []
    timed(reef_command)  # warm the page cache and the binaries
    timed(anchor_command)
    for i in range(RUNS):
        order = [(reef_command, reef_times), (anchor_command, anchor_times)]
        if i % 2:
            order.reverse()
        for command, times in order:
            wall, peak = timed(command)
            times.append(wall)
            if times is reef_times:
                memory.append(peak)
    reef = statistics.median(reef_times)
    anchor = statistics.median(anchor_times)
    # Each run of one side is paired with the other side's run of the same iteration (back to
    # back, order alternating), so that a slow spell of the shared machine slows both.
    paired = sorted(a / r for r, a in zip(reef_times, anchor_times))
    return reef, anchor, statistics.median(paired), (paired[0], paired[-1]), max(memory)


def main():
    reef = reef_binary()
    anchor = anchor_binary()
    path = stream()
    pairs = [
        ("validate", [reef, "validate", path], [anchor, "validate", path]),
        ("walk", [reef, "validate", path], [anchor, "walk", path]),
        ("dump", [reef, "dump", path, "--format", "canonical"], [anchor, "json", path]),
        (
            "query-city",
            [reef, "query", path, "--filter", '{"address.city": "Los Angeles"}', "--count"],
            [anchor, "scan", path, "address.city", "Los Angeles"],
        ),
        (
            "query-addresses",
            [reef, "query", path, "--filter", '{"addresses.city": "Boston"}', "--count"],
            [anchor, "scan", path, "addresses.city", "Boston"],
        ),
    ]
    wanted = os.environ.get("PAIRS")
    if wanted:
        names = wanted.split(",")
        pairs = [p for p in pairs if p[0] in names]
    size = os.path.getsize(path)
    print("stream: %s, %.1f MB; %d runs per side, alternating; %s" % (path, size / 1e6, RUNS, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    print()
    print("| pair | reef command | reef (s) | anchor (s) | ratio (paired) | range | reef peak RSS |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, reef_command, anchor_command in pairs:
        r, a, ratio, (low, high), peak = pair(reef_command, anchor_command)
        shown = " ".join(arg if " " not in arg and "{" not in arg else "'%s'" % arg for arg in reef_command[1:])
        shown = shown.replace(path, "S")
        print(
            "| %s | `reef %s` vs `libbson_stream %s` | %.3f | %.3f | **%.2fx** | %.2f–%.2f | %.1f MB |"
            % (name, shown, " ".join(anchor_command[1:2]), r, a, ratio, low, high, peak / 1024)
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
