#!/usr/bin/env python3
"""Computation versus communication from Tessera traces, and two runs side by side.

trace_summary.py TRACE [TRACE...]
  Per rank of each trace (--trace FILE; one process per rank): the wall span of the tasks,
  busy time per task kind (interior, halo-pack, boundary, ...), idle worker time = span *
  workers - busy, and the face-buffer traffic StarPU-MPI brought in. StarPU-MPI's transfers
  are not tasks: the time they cost the computation shows as idle workers waiting for remote
  faces (plus start-up and scheduling gaps), so idle is an upper bound on the communication
  not hidden by overlap.

trace_summary.py --compare A.json B.json --html PAGE.html [--names A B]
  One self-contained HTML page comparing two runs (two schedulers, two tilings, 1 and 2
  ranks): makespan, critical path, area bound and efficiency (the traces' metadata), time per
  task kind, busy time per worker class, and per-step times, each with B - A and B / A.
"""
import argparse
import html
import json
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    return events, other


def summarise(path):
    events, _ = load(path)
    by_rank = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_rank[e["pid"]].append(e)
    if not by_rank:
        print(f"{path}: no tasks")
        return
    mpi = {e["pid"]: e["args"] for e in events if e.get("ph") == "C" and e["name"].startswith("mpi ")}
    for rank, tasks in sorted(by_rank.items()):
        start = min(e["ts"] for e in tasks)
        end = max(e["ts"] + e["dur"] for e in tasks)
        workers = len({e["tid"] for e in tasks})
        busy = defaultdict(float)
        for e in tasks:
            busy[e["cat"]] += e["dur"]  # the task kind, from its tag
        span = end - start
        idle = span * workers - sum(busy.values())
        kinds = " ".join(f"{k}={v / 1e3:.1f}ms" for k, v in sorted(busy.items()))
        received = mpi.get(rank)
        traffic = f" received={received['transfers']}msgs/{received['bytes']}B" if received else ""
        print(f"{path} rank {rank}: span={span / 1e3:.1f}ms workers={workers} {kinds} "
              f"idle={idle / 1e3:.1f}ms ({100 * idle / (span * workers):.0f}% of worker time){traffic}")


def figures(path):
    """What the compare page shows of one trace, all times in ms."""
    events, other = load(path)
    arch = {}
    workers = defaultdict(int)
    for r in other.get("tessera_ranks", []):
        for w in r["workers"]:
            arch[(r["rank"], w["id"])] = w["arch"]
            workers[w["arch"]] += 1
    kinds, classes = defaultdict(float), defaultdict(float)
    steps = defaultdict(lambda: [float("inf"), float("-inf")])
    tasks = 0
    for e in events:
        if e.get("ph") != "X":
            continue
        tasks += 1
        kinds[e["cat"]] += e["dur"] / 1e3
        classes[arch.get((e["pid"], e["tid"]), "?")] += e["dur"] / 1e3
        step = e.get("args", {}).get("step", -1)
        if step is not None and step >= 0:
            s = steps[step]
            s[0] = min(s[0], e["ts"])
            s[1] = max(s[1], e["ts"] + e["dur"])
    b = other.get("tessera_bounds", {})
    bounds = {
        "makespan ms": b.get("makespan_us", float("nan")) / 1e3,
        "critical path ms": b.get("critical_path_us", float("nan")) / 1e3,
        "area bound ms": b.get("area_bound_us", float("nan")) / 1e3,
        "efficiency %": 100 * b.get("efficiency", float("nan")),
        "tasks": tasks,
        "ranks": len(other.get("tessera_ranks", [])),
    }
    for a, n in sorted(workers.items()):
        bounds[f"{a} workers"] = n
    return {
        "bounds": bounds,
        "kinds": dict(kinds),
        "classes": {f"{a} busy ms": v for a, v in classes.items()},
        "steps": {k: (v[1] - v[0]) / 1e3 for k, v in steps.items()},
    }


STYLE = """body{font:14px/1.4 sans-serif;margin:1.5em;color:#222}h1{font-size:1.3em}
h2{font-size:1.1em;margin-top:1.5em}table{border-collapse:collapse}td,th{padding:2px 10px;
text-align:right}td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f4f4f4}
.better{color:#38761d}.worse{color:#cc4125}.bar{vertical-align:middle}"""


def compare_table(table_id, title, rows, names, lower_is_better=True):
    def cell(v):
        return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
    out = [f"<h2>{html.escape(title)}</h2>",
           f'<table id="{table_id}"><tr><th></th><th>{html.escape(names[0])}</th>'
           f"<th>{html.escape(names[1])}</th><th>B - A</th><th>B / A</th><th></th></tr>"]
    for key, a, b in rows:
        diff = ratio = None
        cls = ""
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            diff = b - a
            ratio = b / a if a else None
            if diff and lower_is_better is not None:
                cls = "better" if (diff < 0) == lower_is_better else "worse"
        # Two bars of the same scale: A above B.
        top = max([abs(x) for x in (a, b) if isinstance(x, (int, float))] + [1e-12])
        bars = "".join(
            f'<rect y="{i * 7}" height="6" width="{150 * abs(x) / top:.1f}" fill="{c}"/>'
            for i, (x, c) in enumerate(((a, "#4a7fb5"), (b, "#e69138"))) if isinstance(x, (int, float)))
        out.append(f'<tr class="compare-row"><td>{html.escape(str(key))}</td><td>{cell(a)}</td>'
                   f'<td>{cell(b)}</td><td class="{cls}">{cell(diff)}</td>'
                   f'<td>{"-" if ratio is None else f"{ratio:.3f}"}</td>'
                   f'<td><svg class="bar" width="150" height="13">{bars}</svg></td></tr>')
    out.append("</table>")
    return "\n".join(out)


def compare(a_path, b_path, page, names):
    a, b = figures(a_path), figures(b_path)
    def rows(key):
        keys = sorted(set(a[key]) | set(b[key]), key=lambda k: (isinstance(k, str), k))
        return [(k, a[key].get(k), b[key].get(k)) for k in keys]
    bound_rows = [(k, a["bounds"].get(k), b["bounds"].get(k))
                  for k in dict.fromkeys(list(a["bounds"]) + list(b["bounds"]))]
    parts = [
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Tessera: two runs compared"
        f"</title><style>{STYLE}</style></head><body>",
        "<h1>Tessera: two runs compared</h1>",
        f"<p>A: {html.escape(names[0])} ({html.escape(a_path)})<br>B: {html.escape(names[1])} "
        f"({html.escape(b_path)})</p>",
        compare_table("compare-bounds", "Makespan, bounds and efficiency", bound_rows, names, None),
        "<p>Bars: A (blue) above B (orange), on one scale per row. Green: B lower, red: B higher."
        "</p>",
        compare_table("compare-kinds", "Time per task kind (ms, summed over tasks)", rows("kinds"), names),
        compare_table("compare-classes", "Busy time per worker class (ms)", rows("classes"), names),
        compare_table("compare-steps", "Per step: first task start to last task end (ms, over every rank)",
                      rows("steps"), names),
        "</body></html>\n",
    ]
    with open(page, "w") as f:
        f.write("\n".join(parts))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("traces", nargs="*")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    p.add_argument("--html", help="the compare page to write")
    p.add_argument("--names", nargs=2, metavar=("A", "B"), help="labels of the two runs")
    args = p.parse_args()
    if args.compare:
        if not args.html:
            p.error("--compare needs --html PAGE")
        compare(*args.compare, args.html, args.names or args.compare)
        return
    if not args.traces:
        p.error("give traces to summarise, or --compare A B --html PAGE")
    for path in args.traces:
        summarise(path)


if __name__ == "__main__":
    sys.exit(main())
