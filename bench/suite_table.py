#!/usr/bin/env python3
"""The benchmark suite's JSON lines (bench/run.sh) as Markdown tables, for docs/performance.md:
one row per application case, then the task-path rows.
    python3 bench/suite_table.py build/bench-suite.jsonl [more.jsonl ...] > section.md
Several files (invocations of the same suite) give each case's range: min-max of the ratio."""
import json
import sys
from collections import OrderedDict


def main(paths):
    cases, tasks = OrderedDict(), OrderedDict()
    for path in paths:
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("bench") == "app":
                key = (r["app"], r.get("size_class", "-"), r["grid"], r["tile"],
                       r.get("tiles_per_worker", "-"), r.get("steps_per_exchange", 1))
                cases.setdefault(key, []).append(r)
            elif r.get("bench") == "tasks":
                tasks.setdefault((r["variant"], r["sched"]), []).append(r)

    def span(values, fmt):
        lo, hi = min(values), max(values)
        return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else fmt.format(lo) + "–" + fmt.format(hi)

    print("| app | size | grid | tile | tiles/worker | steps/exchange | OpenMP MLUPS | Tessera MLUPS "
          "| Tessera/OpenMP speed | efficiency | roofline | equal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (app, size, grid, tile, tpw, spe), rows in cases.items():
        roof = [r["roofline"] for r in rows if r.get("roofline") is not None]
        eff = [100 * r["efficiency"] for r in rows if r.get("efficiency") is not None]
        print(f"| {app} | {size} | {grid} | {tile} | {tpw} | {spe} "
              f"| {span([r['omp_mlups'] for r in rows], '{:.0f}')} "
              f"| {span([r['tessera_mlups'] for r in rows], '{:.0f}')} "
              f"| {span([r['ratio'] for r in rows], '{:.2f}')} "
              f"| {span(eff, '{:.0f} %') if eff else '–'} "
              f"| {span(roof, '{:.2f}') if roof else '–'} "
              f"| {'yes' if all(r['equal'] for r in rows) else 'NO'} ({rows[0]['equality']}) |")
    if tasks:
        print("\n| task path | scheduler | submit µs/task | total µs/task | total vs bare StarPU |")
        print("|---|---|---|---|---|")
        for (variant, sched), rows in tasks.items():
            print(f"| {variant} | {sched} | {span([r['submit_us'] for r in rows], '{:.2f}')} "
                  f"| {span([r['total_us'] for r in rows], '{:.2f}')} "
                  f"| {span([r['vs_starpu'] for r in rows], '{:.2f}')} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
