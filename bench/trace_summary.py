#!/usr/bin/env python3
"""Computation versus communication from a Tessera trace (--trace FILE; one process per rank).

Per rank: the wall span of the tasks, busy time per task kind (interior, halo-pack, boundary,
...), idle worker time = span * workers - busy, and the face-buffer traffic StarPU-MPI brought
in. StarPU-MPI's transfers are not tasks: the time they cost the computation shows as idle
workers waiting for remote faces (plus start-up and scheduling gaps), so idle is an upper bound
on the communication not hidden by overlap.
usage: trace_summary.py TRACE [TRACE...]
"""
import json
import sys
from collections import defaultdict

for path in sys.argv[1:]:
    with open(path) as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    by_rank = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_rank[e["pid"]].append(e)
    if not by_rank:
        print(f"{path}: no tasks")
        continue
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
