#!/usr/bin/env python3
"""check_pinning.py: every task of a tile ran on the worker its tile was placed on (a trace).

check_pinning.py TRACE --gpus K [--placement gpu|split] [--multi-grid] [--unpinned TASK...]
                 [--buses none|numa]
check_pinning.py --self-test   (its own cases: a right trace passes, each wrong one fails)

TRACE: a run's --trace file in split emulation with K stand-in GPUs on each rank
(TESSERA_EMULATED_CUDA=split:K, docs/gpu.md). Per rank it requires:
  - K workers of the CUDA class (the stand-ins);
  - every task of a tile pinned (`pinned_worker`: the worker tasks::Submitter pinned it to from
    its tile's placement) and run on that worker; TASK ("stencil:kind", e.g. mg-coarse:task, a
    team task) may be unpinned, but not with --placement gpu: it is left out of the checks below;
  - per tile one and the same worker for all its tasks (every task kind of the applications has
    a CUDA body, so a tile on the CUDA class has all its tasks on one stand-in); with
    --multi-grid (several grids number their tiles alike, each placed on its own: MG's levels),
    one worker per tile number and class;
  - the tiles on the CUDA class spread over every stand-in where there are at least K of them
    (a rank's GPU tiles all on one of its GPUs fail);
  - --placement gpu: every tile on a stand-in; split: tiles on both classes (over the ranks),
    where there are two tile numbers or more;
  - --buses: the buses data crossed (counters `bus <from>-><to>` with bytes), per rank. none:
    every worker in memory node 0 and no bus crossed. numa (hwloc's two NUMA nodes, a memory
    node each): some stand-in in a node of its own (the topology took effect), data crossed
    both ways between node 0 and each other node where a tile's task ran, and no other bus.
Prints one line of counts and exits 0, or up to 20 faults and exits 1.
"""
import argparse
import json
import sys
from collections import defaultdict


def workers_by_rank(doc):
    """{(rank, worker id): "cpu" or "cuda"} from the trace's metadata."""
    arch = {}
    for r in doc.get("otherData", {}).get("tessera_ranks", []):
        for w in r["workers"]:
            arch[(r["rank"], w["id"])] = w["arch"]
    return arch


def tile_workers(doc, arch, args, faults):
    """{(rank, tile[, class]): workers its pinned tasks ran on}, and the tasks counted."""
    workers = defaultdict(set)
    tasks = 0
    for e in doc["traceEvents"]:
        a = e.get("args", {})
        if e.get("ph") != "X" or a.get("tile", -1) < 0:
            continue
        where = f"rank {a['rank']} tile {a['tile']}: task {a['task']}"
        pinned = a.get("pinned_worker", -1)
        if pinned < 0:
            # A team task keeps its team of CPU workers, but one whose tile the placement put on
            # a GPU runs that GPU's body there, pinned as the tile's other tasks.
            if e["name"] not in args.unpinned or args.placement == "gpu":
                faults.append(f"{where} not pinned (ran on worker {a['worker']})")
            continue
        tasks += 1
        if pinned != a["worker"]:
            faults.append(f"{where} pinned to worker {pinned}, ran on {a['worker']}")
        key = (a["rank"], a["tile"])
        if args.multi_grid:
            key += (arch.get((a["rank"], a["worker"])),)
        workers[key].add(a["worker"])
    return workers, tasks


def check_buses(doc, ranks, mode, faults):
    """Per rank, the buses with bytes in the trace's counters against `mode` (none, numa)."""
    crossed = defaultdict(set)
    ran = defaultdict(set)  # rank -> memory nodes of the workers that ran a tile's task
    node = {}
    for r in doc.get("otherData", {}).get("tessera_ranks", []):
        for w in r["workers"]:
            node[(r["rank"], w["id"])] = w.get("memory_node", 0)
    for e in doc["traceEvents"]:
        name, a = e.get("name", ""), e.get("args", {})
        if e.get("ph") == "C" and name.startswith("bus ") and a.get("bytes", 0):
            crossed[e.get("pid")].add(name[len("bus "):])
        if e.get("ph") == "X" and a.get("tile", -1) >= 0:
            ran[a["rank"]].add(node.get((a["rank"], a["worker"]), 0))
    for rank in ranks:
        nodes = {n for (r, _), n in node.items() if r == rank}
        expected = set()
        if mode == "numa":
            if nodes <= {0}:
                faults.append(f"rank {rank}: every worker in memory node 0, no NUMA node of "
                              "the stand-ins' own")
            for n in sorted(ran[rank] - {0}):
                expected |= {f"NUMA 0->NUMA {n}", f"NUMA {n}->NUMA 0"}
        elif nodes - {0}:
            faults.append(f"rank {rank}: workers in memory nodes {sorted(nodes)}, not 0 alone")
        if crossed[rank] != expected:
            faults.append(f"rank {rank}: data crossed the buses {sorted(crossed[rank])}, "
                          f"not {sorted(expected)}")


def check(doc, args):
    faults = []
    arch = workers_by_rank(doc)
    ranks = sorted({rank for rank, _ in arch})
    if not ranks:
        return ["no workers in the trace's otherData.tessera_ranks"], ""
    for rank in ranks:
        stand_ins = sorted(w for (r, w), a in arch.items() if r == rank and a == "cuda")
        if len(stand_ins) != args.gpus:
            faults.append(f"rank {rank}: stand-in GPUs {stand_ins}, not {args.gpus}")
    workers, tasks = tile_workers(doc, arch, args, faults)
    if tasks == 0:
        return faults + ["no pinned task of a tile in the trace"], ""
    on_gpu = defaultdict(dict)  # rank -> {tile: stand-in}
    on_cpu = defaultdict(int)
    for key, ws in sorted(workers.items()):
        rank, tile = key[0], key[1]
        if len(ws) != 1:
            faults.append(f"rank {rank} tile {tile}: tasks on workers {sorted(ws)}, not one")
            continue
        w = next(iter(ws))
        if arch.get((rank, w)) == "cuda":
            on_gpu[rank][tile] = w
        else:
            on_cpu[rank] += 1
    for rank in ranks:
        used = set(on_gpu[rank].values())
        if len(on_gpu[rank]) >= args.gpus and len(used) < args.gpus:
            faults.append(f"rank {rank}: its tiles on the CUDA class (tile: worker "
                          f"{on_gpu[rank]}) use {len(used)} of its {args.gpus} stand-ins")
        if args.placement == "gpu" and on_cpu[rank]:
            faults.append(f"rank {rank}: {on_cpu[rank]} tiles on CPU workers, placement gpu")
    if args.buses is not None:
        check_buses(doc, ranks, args.buses, faults)
    gpu_tiles = sum(map(len, on_gpu.values()))
    several = len({key[1] for key in workers}) > 1
    if args.placement == "split" and several and (gpu_tiles == 0 or sum(on_cpu.values()) == 0):
        faults.append("placement split: tiles on one class only")
    return faults, (f"pinning: {tasks} pinned tasks of {len(workers)} tiles on {len(ranks)} "
                    f"rank(s), {gpu_tiles} on {args.gpus} stand-in GPUs each, every tile's tasks "
                    "on its one pinned worker")


def self_test():
    """Each fault on a made-up trace of 2 stand-ins and a CPU worker, 4 tiles of 2 tasks."""
    def trace(runs, pinned=None, buses=(), nodes=(0, 0, 0)):
        doc = {"otherData": {"tessera_ranks": [{"rank": 0, "workers": [
            {"id": 0, "arch": "cuda", "memory_node": nodes[0]},
            {"id": 1, "arch": "cuda", "memory_node": nodes[1]},
            {"id": 2, "arch": "cpu", "memory_node": nodes[2]}]}]},
            "traceEvents": []}
        for tile, workers in enumerate(runs):
            for k, w in enumerate(workers):
                p = w if pinned is None else pinned[tile][k]
                doc["traceEvents"].append({"ph": "X", "name": "s:interior", "args": {
                    "task": f"s:interior tile={tile}", "tile": tile, "rank": 0, "worker": w,
                    "pinned_worker": p}})
        for bus in buses:
            doc["traceEvents"].append({"ph": "C", "name": f"bus {bus}", "pid": 0,
                                       "args": {"bytes": 4096, "transfers": 1}})
        return doc
    numa = ["NUMA 0->NUMA 1", "NUMA 1->NUMA 0"]
    two_nodes = (0, 1, 0)  # stand-in 1 in a NUMA node of its own
    cases = [  # (trace, placement, the fault expected ("" none)[, the --unpinned tasks])
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]]), "gpu", ""),
        (trace([[0, 0], [1, 1], [2, 2], [2, 2]]), "split", ""),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], [[0, 0], [1, 1], [0, 1], [1, 1]]), "gpu",
         "pinned to worker 1, ran on 0"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], [[0, 0], [1, 1], [0, -1], [1, 1]]), "gpu",
         "not pinned"),
        (trace([[0, 1], [1, 1], [0, 0], [1, 1]]), "gpu", "tasks on workers [0, 1], not one"),
        (trace([[0, 0], [0, 0], [0, 0], [0, 0]]), "gpu", "use 1 of its 2 stand-ins"),
        (trace([[0, 0], [1, 1], [2, 2], [1, 1]]), "gpu", "tiles on CPU workers, placement gpu"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]]), "split", "tiles on one class only"),
        # s:interior listed as a team task (--unpinned): its team on the CPU in a split, but
        # pinned where the planner put every tile on a GPU.
        (trace([[0, 0], [1, 1], [2, 2], [2, 2]], [[0, 0], [1, 1], [2, -1], [2, -1]]), "split",
         "", ["s:interior"]),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], [[0, 0], [1, 1], [-1, -1], [1, 1]]), "gpu",
         "not pinned", ["s:interior"]),
        # --buses numa: both ways to the node where tiles ran, none where none ran there, and
        # the topology in effect; --buses none: one memory node, nothing crossed.
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], buses=numa, nodes=two_nodes), "gpu", "", [],
         "numa"),
        (trace([[0, 0], [2, 2], [2, 2], [2, 2]], nodes=two_nodes), "split", "", [], "numa"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], nodes=two_nodes), "gpu",
         "data crossed the buses [], not ['NUMA 0->NUMA 1', 'NUMA 1->NUMA 0']", [], "numa"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], buses=numa[:1], nodes=two_nodes), "gpu",
         "data crossed the buses ['NUMA 0->NUMA 1'], not", [], "numa"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]]), "gpu", "no NUMA node of the stand-ins' own", [],
         "numa"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]]), "gpu", "", [], "none"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], buses=numa), "gpu", "not []", [], "none"),
        (trace([[0, 0], [1, 1], [0, 0], [1, 1]], nodes=two_nodes), "gpu", "not 0 alone", [],
         "none"),
    ]
    failed = 0
    for doc, placement, expected, *more in cases:
        args = argparse.Namespace(gpus=2, placement=placement, multi_grid=False,
                                  unpinned=more[0] if more else [],
                                  buses=more[1] if len(more) > 1 else None)
        faults, _ = check(doc, args)
        found = any(expected in f for f in faults) if expected else not faults
        if not found:
            failed += 1
            print(f"self-test: expected {expected or 'no fault'}, found {faults}")
    print(f"self-test: {len(cases) - failed} of {len(cases)} cases as expected")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--gpus", type=int, required=True)
    p.add_argument("--placement", choices=["gpu", "split"])
    p.add_argument("--multi-grid", action="store_true")
    p.add_argument("--unpinned", nargs="*", default=[])
    p.add_argument("--buses", choices=["none", "numa"])
    args = p.parse_args()
    with open(args.trace) as f:
        doc = json.load(f)
    faults, summary = check(doc, args)
    for f in faults[:20]:
        print(f"check_pinning: {f}", file=sys.stderr)
    if faults:
        print(f"check_pinning: {len(faults)} faults in {args.trace}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
