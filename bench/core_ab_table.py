#!/usr/bin/env python3
"""scripts/device-ab.sh's core part as one table: core_bench ran in processes of the old and the
new bundle in turn (old, new, old, new); each row of cudakit (`_cudakit`, `_listened`, ...) is
set beside the raw CUDA call of the same benchmark (`_raw`) timed in the same process.

The raw calls are the same code in both bundles, so how far they move from process to process is
the run's noise; cudakit's overhead over the raw call, taken process by process, is what the two
bundles' code changes. A row is "within noise" unless the old and the new processes' overheads
lie further apart than either side's own spread.
    python3 bench/core_ab_table.py ab_core.txt"""
import re
import statistics
import sys

from report import core_bench_times

RUN = re.compile(r"^-- (\S+)")


def parse(lines):
    """[(bundle, {case: {way: ns}})] in the order the processes ran (report.core_bench_times reads
    each process's rows)."""
    runs = []
    for line in lines:
        start = RUN.match(line)
        if start:
            runs.append((start.group(1).rstrip("/").rsplit("/", 1)[-1], []))
        elif runs:
            runs[-1][1].append(line)
    return [(bundle, core_bench_times("\n".join(rows), ways=r"cudakit\w*?|listened|raw"))
            for bundle, rows in runs]


def compare(runs):
    """One dict per cudakit way of a benchmark measured beside its raw call: each side's times and
    overheads (cudakit over raw, per process) and the verdict."""
    if len(runs) < 2:
        raise SystemExit(f"core_ab_table: want processes of two bundles, found {len(runs)}")
    old_name, new_name = runs[0][0], runs[1][0]
    old = [r for name, r in runs if name == old_name]
    new = [r for name, r in runs if name == new_name]
    rows = []
    for case, ways in runs[0][1].items():
        for way in ways:
            if way == "raw":
                continue
            sides = []
            for processes in (old, new):
                both = [p[case] for p in processes if way in p.get(case, {}) and "raw" in p[case]]
                sides.append(([t[way] for t in both], [t[way] / t["raw"] for t in both]))
            (old_ns, old_over), (new_ns, new_over) = sides
            if not old_over or not new_over:
                continue
            # Apart only where the gap between the two ranges is wider than either range itself:
            # with two or three processes a side, ranges that merely miss each other say nothing.
            noise = max(max(old_over) - min(old_over), max(new_over) - min(new_over))
            if min(new_over) - max(old_over) > noise:
                verdict = f"new slower by {min(new_over) / max(old_over) - 1:.1%} at least"
            elif min(old_over) - max(new_over) > noise:
                verdict = f"new faster by {1 - max(new_over) / min(old_over):.1%} at least"
            else:
                verdict = "within noise"
            rows.append({"benchmark": f"BM_{case}_{way}", "old_ns": old_ns, "new_ns": new_ns,
                         "old_over_raw": old_over, "new_over_raw": new_over, "verdict": verdict})
    return old_name, new_name, rows


def table(old_name, new_name, rows):
    spread = lambda values, f: "-".join(f(v) for v in (min(values), max(values)))  # noqa: E731
    ns = lambda v: f"{v:,.0f}"  # noqa: E731
    ratio = lambda v: f"{v:.3f}"  # noqa: E731
    out = [f"old {old_name}, new {new_name}: ns per call (range over processes), and over the raw call "
           "in the same process",
           "", "| benchmark | old ns | new ns | new/old (medians) | old over raw | new over raw | |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        medians = statistics.median(r["new_ns"]) / statistics.median(r["old_ns"])
        cells = [r["benchmark"], spread(r["old_ns"], ns), spread(r["new_ns"], ns), f"{medians:.3f}",
                 spread(r["old_over_raw"], ratio), spread(r["new_over_raw"], ratio), r["verdict"]]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: core_ab_table.py AB_CORE.TXT")
    with open(sys.argv[1]) as f:
        print(table(*compare(parse(f))))
