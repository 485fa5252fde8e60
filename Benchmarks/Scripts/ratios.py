#!/usr/bin/env python3
"""Summarises Reef's benchmark runs as ratios against their anchors.

    python3 Scripts/ratios.py RUN_DIR [RUN_DIR ...]

Each RUN_DIR holds the `*.jmh.json` files of one round of `swift package benchmark --format jmh`
(Scripts/ratios.sh makes them). Every figure is the median (p50) wall-clock time of one operation
(one document); a ratio is anchor time / Reef time, computed within a round, and with several
rounds the median of the rounds' ratios is printed (timings on a shared machine are noisy, ratios
from the same run much less so).

MB/s is reported the way DriverBench scores it: task size / median time, with 1 MB = 1,000,000
bytes, and two task sizes: the bytes the operation actually reads (the .bson file, or the .json
file for parsing) and the DriverBench spec's per-document task size (flat 7,531, deep 2,284,
full 5,734 bytes: its 75.31 / 22.84 / 57.34 MB per 10,000 operations).
"""
import glob
import json
import os
import statistics
import sys

SCALING = 1000  # every benchmark runs an inner loop of 1,000 operations (scalingFactor .kilo)
TIME_UNITS = {"ns": 1.0, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("REEF_SHARED_DIR", os.path.join(here, "..", "..", "..", "shared"))


def file_size(relative):
    try:
        return os.path.getsize(os.path.join(shared, relative))
    except OSError:
        return None


SPEC_BYTES = {"flat": 7531, "deep": 2284, "full": 5734}
BSON_BYTES = {d: file_size(f"benchdata/extended_bson/{d}_bson.bson") for d in SPEC_BYTES}
JSON_BYTES = {d: file_size(f"benchdata/extended_bson/{d}_bson.json") for d in SPEC_BYTES}
CODABLE_BYTES = {
    "tweet": file_size("benchdata/single_and_multi_document/tweet.bson"),
    # flat without its `_id` element (type byte + "_id\0" + 12 bytes).
    "flat": (BSON_BYTES["flat"] or 0) - 17,
    "deep": BSON_BYTES["deep"],
}

# (target, group, Reef implementation, anchor implementation, goal ratio or None, what the bytes are)
PAIRS = [
    ("1a validate vs bson_iter walk", "validate", "reef-validatedLength", "libbson-iter-walk", 1.5, "bson"),
    ("1a validate vs bson_iter walk", "validate", "reef-bytesNoCopy", "libbson-iter-walk", 1.5, "bson"),
    ("1b validate vs bson_validate", "validate", "reef-validatedLength", "libbson-bson_validate", 5.0, "bson"),
    ("1b validate vs bson_validate", "validate", "reef-bytesNoCopy", "libbson-bson_validate", 5.0, "bson"),
    ("2 dotted path + compare", "path", "reef-subscript", "libbson-find_descendant", 2.0, None),
    ("2 dotted path + compare", "path", "reef-element", "libbson-find_descendant", 2.0, None),
    ("2 dotted path + compare", "path", "reef-equals", "libbson-find_descendant", 2.0, None),
    ("3 build", "build", "reef-DocumentBuilder", "libbson-bson_append", 2.0, "bson"),
    ("(build from an op list, no goal)", "build-program", "reef-DocumentBuilder", "libbson-bson_append", None, "bson"),
    ("4a BSON -> canonical EJSON", "ejson-canonical", "reef-extendedJSON",
     "libbson-bson_as_canonical_extended_json", 3.0, "bson"),
    ("4a BSON -> canonical EJSON", "ejson-canonical", "reef-appendExtendedJSON",
     "libbson-bson_as_canonical_extended_json", 3.0, "bson"),
    ("(relaxed EJSON, no goal)", "ejson-relaxed", "reef-extendedJSON", "libbson-bson_as_relaxed_extended_json",
     None, "bson"),
    ("4b EJSON -> BSON", "ejson-parse", "reef-Document-extendedJSON", "libbson-bson_new_from_json", 1.5, "json"),
    ("4b EJSON -> BSON", "ejson-parse", "reef-ExtendedJSONParser-bytes", "libbson-bson_new_from_json", 1.5,
     "json"),
    ("5 Codable decode", "codable-decode", "reef-BSONDecoder", "foundation-JSONDecoder", 5.0, "codable"),
    ("5 Codable decode", "codable-decode", "reef-BSONDecoder-prevalidated", "foundation-JSONDecoder", 5.0,
     "codable"),
    ("5 Codable encode", "codable-encode", "reef-BSONEncoder", "foundation-JSONEncoder", 5.0, "codable"),
    ("7a query scan vs libbson", "scan", "reef-Query", "libbson-find_descendant", 2.0, None),
    ("7b query scan vs decode-then-filter", "scan", "reef-Query", "swift-decode-tree", 10.0, None),
    ("7c sort on a dotted key vs sorting extracted keys", "sort", "reef-SortSpecification", "swift-presorted-keys",
     0.5, None),
    # StoreBenchmarks: ReefStore vs SQLite 3 (C API, WAL). import and commit are paired on wall-clock time
    # (their I/O counts); for commit the ratio is SQLite latency / Reef latency, so >= 1.0 is "Reef not slower".
    ("8a bulk import, one transaction", "import", "reef-insert", "sqlite-insert-blob", 2.0, None),
    ("8b point lookup by _id", "lookup", "reef-documentForID", "sqlite-select-pk", 1.0, None),
    ("(lookup through findOne, no goal)", "lookup", "reef-findOne", "sqlite-select-pk", None, None),
    ("8c durable single-document commit", "commit", "reef-insert-fsync", "sqlite-insert-full", 1.0, None),
    ("(commit, Reef durability .normal vs SQLite FULL, no goal)", "commit", "reef-insert-normal",
     "sqlite-insert-full", None, None),
    ("(commit, Reef durability .normal vs SQLite WAL NORMAL, no goal)", "commit", "reef-insert-normal",
     "sqlite-insert-normal", None, None),
    ("8d indexed equality on address.city", "query-indexed", "reef-find-index", "sqlite-json_extract-index", 1.0,
     None),
    ("8e full-scan equality on address.city", "query-scan", "reef-find-scan", "sqlite-json_extract-scan", 5.0,
     None),
    # ObjectBenchmarks: ReefSwift's object layer vs GRDB 7 (Codable records, WAL, synchronous=FULL) and vs
    # ReefStore's raw documents (issue 13). Inserts and updates are paired on wall clock (the flush counts),
    # the rest on process CPU. "Within 1.5x of raw" is a ratio raw / object layer of at least 1/1.5.
    ("13.1 insert 100k contacts + 25k businesses, one transaction", "object-insert", "reef-add", "grdb-insert", 2.0,
     None),
    ("13.2 read every object by primary key, two properties", "object-read", "reef-object-forPrimaryKey",
     "grdb-fetchOne-key", 1.5, None),
    ("13.3 indexed query address.city, sorted by address.street", "object-query", "reef-filter-sorted",
     "grdb-filter-order", 1.0, None),
    ("13.4 change address.city in U objects (issue: 10k), one transaction", "object-update", "reef-set-address.city",
     "grdb-updateChanges", 1.0, None),
    ("13.5 iterate 1M objects of a Results, one property", "object-iterate", "reef-Results", "grdb-fetchCursor", 1.0,
     None),
    ("13.6a object layer vs raw documents: insert", "object-insert", "reef-add", "store-insert", 1 / 1.5, None),
    ("13.6b object layer vs raw documents: read by _id", "object-read", "reef-object-forPrimaryKey",
     "store-documentForID", 1 / 1.5, None),
    # Issue 15: a Results observer's change set after another thread renamed 1 (goal: 1/100 of running the query
    # again, a ratio of at least 100) and 1,000 of 100,000 contacts, against running the query again.
    ("15 change set of a 100k Results, 1 change", "object-changeset-1", "reef-notify", "requery", 100.0, None),
    ("15 change set of a 100k Results, 1,000 changes (no goal)", "object-changeset-1k", "reef-notify", "requery",
     None, None),
    ("(iterate all values vs bson_iter walk, no goal)", "iterate", "reef-walk-values", "libbson-iter-walk",
     None, "bson"),
]
ALLOCATION_ROWS = [("iterate", "reef-types"), ("iterate", "reef-walk-values")]
DATASETS = ["flat", "deep", "full", "tweet", "address.city", "addresses.city", "1M", "100k", "50k", "20k", "10k"]
# Query groups time one pass over a 100,000-document stream per operation (scaling factor 1).
# So do the store groups except lookup (1,000 lookups per iteration): one import, one commit, one query.
UNSCALED_GROUPS = {"scan", "sort", "import", "commit", "query-indexed", "query-scan",
                   "object-insert", "object-read", "object-query", "object-update", "object-iterate",
                   "object-changeset-1", "object-changeset-1k"}
# Store groups whose pairs record wall-clock ratios (their I/O, the fsync, counts); the others record thread CPU.
WALL_PAIRED_GROUPS = {"import", "commit", "object-insert", "object-update"}


def load_round(directory):
    """{(group, dataset, impl): {"ns": per-op p50 ns, "mallocs": per-op p50 mallocs}}"""
    results = {}
    for path in glob.glob(os.path.join(directory, "*.jmh.json")):
        for entry in json.load(open(path)):
            name = entry["benchmark"].split(".", 3)[-1]  # package.benchmark.<Target>.<name>
            parts = name.split("/")
            if len(parts) == 4 and parts[0] == "ratio":  # ratio/<group>/<dataset>/<reef>~<anchor>
                # The JMH export carries earlier benchmarks' secondary metrics along (the tool reuses one
                # dictionary), so take the kind of paired ratio this group records.
                wanted = "Paired ratio (wall clock)" if parts[1] in WALL_PAIRED_GROUPS else "Paired ratio x1000"
                for label, metric in entry.get("secondaryMetrics", {}).items():
                    if label.startswith(wanted):
                        results[tuple(parts)] = {"paired": metric["scorePercentiles"]["50.0"] / 1000}
                pm = entry.get("primaryMetric", {})
                if tuple(parts) not in results and str(pm.get("scoreUnit", "")).startswith("#"):
                    results[tuple(parts)] = {"paired": pm["scorePercentiles"]["50.0"] / 1000}
                continue
            if len(parts) != 3:
                continue
            metrics = {}
            scaling = 1 if parts[0] in UNSCALED_GROUPS else SCALING
            for label, metric in entry.get("secondaryMetrics", {}).items():
                p50 = metric["scorePercentiles"]["50.0"]
                if label.startswith("Time (wall clock)"):
                    unit = TIME_UNITS.get(metric["scoreUnit"], 1.0) / scaling
                    metrics["ns"] = p50 * unit
                    metrics["min_ns"] = metric["scorePercentiles"]["0.0"] * unit
                elif (label.startswith("Import wall clock") and parts[0] == "import") or label.startswith(
                        "Operation wall clock"):
                    # StoreBenchmarks' imports and ObjectBenchmarks' operations time themselves.
                    metrics["import_ns"] = p50
                    metrics["import_min_ns"] = metric["scorePercentiles"]["0.0"]
                elif label.startswith("Thread CPU") or label.startswith("Process CPU"):
                    # A custom metric in nanoseconds per inner loop (JMH may scale it to a unit).
                    unit = TIME_UNITS.get(metric["scoreUnit"], 1.0) / scaling
                    metrics["cpu_ns"] = p50 * unit
                elif label.startswith("Malloc (total)"):
                    metrics["mallocs"] = p50 / scaling
            if "import_ns" in metrics:
                metrics["ns"], metrics["min_ns"] = metrics.pop("import_ns"), metrics.pop("import_min_ns")
            results[tuple(parts)] = metrics
    return results


def task_bytes(kind, dataset):
    if kind == "bson":
        return BSON_BYTES.get(dataset)
    if kind == "json":
        return JSON_BYTES.get(dataset)
    if kind == "codable":
        return CODABLE_BYTES.get(dataset)
    return None


def fmt_mbs(nbytes, ns):
    if not nbytes or not ns:
        return "–"
    return f"{nbytes / ns * 1000:,.0f}"


def main(dirs):
    rounds = [load_round(d) for d in dirs]
    rounds = [r for r in rounds if r]
    if not rounds:
        print("no results found in", " ".join(dirs))
        return 1
    # The latest measurement of each benchmark (rounds may hold different subsets, e.g. a --filter run).
    latest = {}
    for r in rounds:
        for key, value in r.items():
            if "ns" in value:
                latest[key] = value

    def lookup(r, group, dataset, impl):
        if isinstance(impl, tuple):  # an anchor from another group
            group, impl = impl
        return r.get((group, dataset, impl))

    print(f"Rounds: {len(rounds)}. Ratios = anchor time / Reef time, per round, median over rounds (range in brackets).")
    print("'paired' (judged by 'met'): benchmark ratio/<group>/<dataset>/<reef>~<anchor> alternates a batch of each side")
    print("and records each iteration's anchor/Reef thread-CPU ratio; its median is steady under other load. 'CPU' = ratio of")
    print("the separate benchmarks' median thread CPU times per operation, 'wall' = of their median wall clocks (DriverBench's")
    print("measure; inflated by descheduling on a shared machine). MB/s = task size / median wall time (1 MB = 10^6 bytes); 'file' = bytes actually read")
    print("(.bson, or .json for parsing), 'spec' = DriverBench's task size (flat 7,531 / deep 2,284 / full 5,734 bytes).")
    print("† no paired result: the CPU ratio is judged instead.")
    print()
    print("| target | dataset | Reef | CPU ns/op | MB/s file | MB/s spec | anchor | CPU ns/op | MB/s file "
          "| ratio paired | ratio CPU | ratio wall | goal | met |")
    print("|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|:-:|")
    blocked = []
    # Datasets named by the benchmarks' sizes (e.g. "100k+25k" from ObjectBenchmarks) come after the known ones.
    seen = sorted({key[1] for r in rounds for key in r if len(key) == 3} - set(DATASETS))
    for title, group, reef, anchor, goal, kind in PAIRS:
        for dataset in DATASETS + seen:
            cpu_ratios, wall_ratios, paired = [], [], []
            reef_cpu, anchor_cpu, reef_wall, anchor_wall = [], [], [], []
            for r in rounds:
                pr = r.get(("ratio", group, dataset, f"{reef}~{anchor}"))
                if pr:
                    paired.append(pr["paired"])
                a = lookup(r, group, dataset, anchor)
                b = lookup(r, group, dataset, reef)
                if not (a and b and a.get("ns") and b.get("ns")):
                    continue
                wall_ratios.append(a["ns"] / b["ns"])
                reef_wall.append(b["ns"])
                anchor_wall.append(a["ns"])
                if a.get("cpu_ns") and b.get("cpu_ns"):
                    cpu_ratios.append(a["cpu_ns"] / b["cpu_ns"])
                    reef_cpu.append(b["cpu_ns"])
                    anchor_cpu.append(a["cpu_ns"])
            if not wall_ratios:
                if any(lookup(r, group, dataset, anchor) for r in rounds):
                    blocked.append(f"{title} / {dataset} / {reef}")
                continue
            judged = paired or cpu_ratios or wall_ratios
            ratio = statistics.median(judged)
            spread = f" ({min(judged):.2f}–{max(judged):.2f})" if len(judged) > 1 else ""
            if not paired:
                spread += " †"
            wall = statistics.median(wall_ratios)
            cpu = statistics.median(cpu_ratios) if cpu_ratios else float("nan")
            rc = statistics.median(reef_cpu) if reef_cpu else float("nan")
            ac = statistics.median(anchor_cpu) if anchor_cpu else float("nan")
            rw, aw = statistics.median(reef_wall), statistics.median(anchor_wall)
            nbytes = task_bytes(kind, dataset)
            spec = SPEC_BYTES.get(dataset) if kind in ("bson", "json") else None
            met = "" if goal is None else ("yes" if ratio >= goal else "**no**")
            goal_text = "–" if goal is None else f"≥{goal:.3g}x"
            anchor_name = anchor[1] if isinstance(anchor, tuple) else anchor
            print(
                f"| {title} | {dataset} | {reef} | {rc:,.0f} | {fmt_mbs(nbytes, rw)} | {fmt_mbs(spec, rw)} | "
                f"{anchor_name} | {ac:,.0f} | {fmt_mbs(nbytes, aw)} | **{ratio:.2f}x**{spread} | {cpu:.2f}x | {wall:.2f}x | {goal_text} | {met} |"
            )
    print()
    print("Allocations while iterating (target 6: mallocs per document iteration, goal 0):")
    print()
    print("| benchmark | dataset | mallocs/op (p50) | CPU ns/op |")
    print("|---|---|---:|---:|")
    for group, impl in ALLOCATION_ROWS:
        for dataset in DATASETS:
            m = latest.get((group, dataset, impl))
            if m:
                print(f"| {group}/{impl} | {dataset} | {m.get('mallocs', float('nan')):g} | {m.get('cpu_ns', m.get('ns', 0)):,.0f} |")
    others = sorted(k for k, v in latest.items() if "mallocs" in v and v["mallocs"] > 0)
    if others:
        print()
        print("Mallocs per operation elsewhere (latest round, p50):")
        print()
        for k in others:
            print(f"- {'/'.join(k)}: {latest[k]['mallocs']:g}")
    if blocked:
        print()
        print("Anchor measured but no Reef result (API not implemented yet, or its benchmark was skipped):")
        for b in blocked:
            print(f"- {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["."]))
