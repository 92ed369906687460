#!/usr/bin/env python3
"""Markdown tables and plots of the simulation experiments (docs/simulation.md).
  tables.py validation <validation.csv>
  tables.py hybrid <hybrid.csv> <plot.svg>
  tables.py weak <weak.csv> <plot.svg>
  tables.py hetero <hetero.csv>
  tables.py node <node.csv>
  tables.py planner <planner.csv>
  tables.py multi-gpu <multi-gpu.csv>
  tables.py predicted <run.log> <gpu-only|cpu-only|both> <choice>
"""
import csv
import re
import sys


def validation(path):
    rows = list(csv.DictReader(open(path)))
    matched = "matched_s" in rows[0] if rows else False
    print("| app | CPU workers | scheduler | measured s (median; min-max) | simulated s | simulated vs measured |"
          + (" last measured s | simulated, run-matched models | vs last |" if matched else ""))
    print("|---|---|---|---|---|---|" + ("---|---|---|" if matched else ""))
    for r in rows:
        err = float(r["error_pct"])
        mark = "" if abs(err) <= 15 else " (miss)"
        line = (f"| {r['app']} | {r['workers']} | {r['sched']} | {float(r['measured_s']):.3f} "
                f"({float(r['measured_min_s']):.3f}-{float(r['measured_max_s']):.3f}) | "
                f"{float(r['simulated_s']):.3f} | {err:+.1f} %{mark} |")
        if matched:
            e2 = float(r["matched_error_pct"])
            line += (f" {float(r['last_s']):.3f} | {float(r['matched_s']):.3f} | {e2:+.1f} %"
                     f"{'' if abs(e2) <= 15 else ' (miss)'} |")
        print(line)


def hybrid(path, plot):
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        by.setdefault((r["platform"], r["app"], r["tile"]), []).append(r)
    print("| platform | app | tile | CPU-only s | GPU-only s | best hand-set s (fraction) "
          "| best automatic s (scheduler) | automatic vs best hand-set | automatic vs GPU-only "
          "| goal (within 3 %, ahead of GPU-only) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (platform, app, tile), rs in by.items():
        sec = lambda r: float(r["seconds"])
        pick = lambda mode: [r for r in rs if r["mode"] == mode]
        if not (pick("fraction") and pick("auto") and pick("gpu-only") and pick("cpu-only")):
            continue
        best = min(pick("fraction"), key=sec)
        auto = min(pick("auto"), key=sec)
        gpu, cpu = sec(pick("gpu-only")[0]), sec(pick("cpu-only")[0])
        vb, vg = 100 * (sec(auto) - sec(best)) / sec(best), 100 * (sec(auto) - gpu) / gpu
        met = "met" if vb <= 3 and sec(auto) < gpu else "missed"
        print(f"| {platform} | {app} | {tile} | {cpu:.4f} | {gpu:.4f} | {sec(best):.4f} ({best['fraction']}) "
              f"| {sec(auto):.4f} ({auto['sched']}) | {vb:+.1f} % | {vg:+.1f} % | {met} |")
    for (platform, app, tile), rs in by.items():
        fractions = [r for r in rs if r["mode"] == "fraction"]
        best = min(fractions, key=lambda r: float(r["seconds"])) if fractions else None
        gpu_only = next((r for r in rs if r["mode"] == "gpu-only"), None)
        print(f"\n**{platform}, {app}, tile {tile}** (simulated seconds; prediction)\n")
        print("| run | scheduler | GPU fraction | simulated s | vs best hand-set | vs GPU-only |")
        print("|---|---|---|---|---|---|")
        for r in rs:
            s = float(r["seconds"])
            vb = f"{100 * (s - float(best['seconds'])) / float(best['seconds']):+.1f} %" if best else ""
            vg = f"{100 * (s - float(gpu_only['seconds'])) / float(gpu_only['seconds']):+.1f} %" if gpu_only else ""
            print(f"| {r['mode']} | {r['sched']} | {r['fraction']} | {s:.4f} | {vb} | {vg} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(no matplotlib: plot not drawn)", file=sys.stderr)
        return
    keys = list(by)
    fig, axes = plt.subplots(1, len(keys), figsize=(5 * len(keys), 4), squeeze=False)
    for ax, key in zip(axes[0], keys):
        rs = by[key]
        fr = sorted((float(r["fraction"]), float(r["seconds"])) for r in rs if r["mode"] == "fraction")
        ax.plot([f for f, _ in fr], [s for _, s in fr], "o-", color="black", label="hand-set --gpu-fraction")
        styles = {"dmda": "tab:blue", "dmdas": "tab:orange", "heteroprio": "tab:green"}
        for r in rs:
            if r["mode"] == "auto":
                ax.axhline(float(r["seconds"]), color=styles.get(r["sched"], "gray"), ls="--",
                           label=f"automatic ({r['sched']})")
        ax.set_title(f"{key[0]}: {key[1]}, tile {key[2]}\n(simulated: a prediction)", fontsize=9)
        ax.set_xlabel("fraction of tiles on the GPU")
        ax.set_ylabel("simulated seconds")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot)


def weak(path, plot):
    rows = list(csv.DictReader(open(path)))
    order = {n: i for i, n in enumerate(dict.fromkeys(r["network"] for r in rows))}
    rows.sort(key=lambda r: (order[r["network"]], r["sched"] != "dmdas", int(r["nodes"])))
    print("| nodes | scheduler | network (per node link) | steps | simulated s | weak-scaling efficiency "
          "| halo time of a middle rank s | lost to 1 node s | overlap |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        overlap = f"{100 * float(r['overlap']):.0f} %" if r["overlap"] else "-"
        if r["overlap"] and float(r["exposed_s"]) > float(r["comm_s"]):
            overlap = "- (loss > halo time)"
        print(f"| {r['nodes']} | {r['sched']} | {r['network']} | {r['steps']} | {float(r['seconds']):.4f} "
              f"| {100 * float(r['efficiency']):.1f} % | {float(r['comm_s']):.4f} | {float(r['exposed_s']):.4f} "
              f"| {overlap} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    networks = list(dict.fromkeys(r["network"] for r in rows))
    for net in networks:
        for sched, label in (("dmdas", "with rank-edge priorities (dmdas)"), ("dmda", "without (dmda)")):
            rs = sorted((r for r in rows if r["sched"] == sched and r["network"] == net),
                        key=lambda r: int(r["nodes"]))
            if rs:
                ax.plot([int(r["nodes"]) for r in rs], [float(r["efficiency"]) for r in rs],
                        "o-" if net == networks[0] else "s--", label=f"{label}, {net}")
    ax.axhline(0.9, color="gray", ls=":", label="90 % goal")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("simulated nodes")
    ax.set_ylabel("weak-scaling efficiency")
    ax.set_ylim(0, 1.2)
    ax.set_title("heat3d weak scaling (simulated: a prediction)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot)


def hetero(path):
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        by.setdefault((r["platform"], r["app"], r["grid"]), []).append(r)
    sec = lambda r: float(r["seconds"])
    print("| platform | app | grid | CPU-only s | GPU-only s | best hand-set s (fraction) "
          "| automatic s (split) | automatic vs min(CPU, GPU) | automatic vs best hand-set "
          "| goal (<= min, within 3 %) | automatic + rebalancing s (split, moves) "
          "| rebalancing vs automatic |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    perturbed = []
    for (platform, app, grid), rs in by.items():
        one = lambda mode: next((r for r in rs if r["mode"] == mode), None)
        fr = [r for r in rs if r["mode"] == "fraction"]
        cpu, gpu, auto, static = one("cpu-only"), one("gpu-only"), one("auto"), one("static")
        if not (fr and cpu and gpu and auto and static):
            continue
        best = min(fr, key=sec)
        single = min(sec(cpu), sec(gpu))
        vs_single = 100 * (sec(static) - single) / single
        vs_best = 100 * (sec(static) - sec(best)) / sec(best)
        met = "met" if sec(static) <= single and vs_best <= 3 else "missed"
        print(f"| {platform} | {app} | {grid} | {sec(cpu):.4f} | {sec(gpu):.4f} "
              f"| {sec(best):.4f} ({best['fraction']}) | {sec(static):.4f} ({static['split']}) "
              f"| {vs_single:+.1f} % | {vs_best:+.1f} % | {met} "
              f"| {sec(auto):.4f} ({auto['split']}, {auto['moves']}) "
              f"| {100 * (sec(auto) - sec(static)) / sec(static):+.1f} % |")
        pf, pa = one("perturbed-fraction"), one("perturbed-auto")
        if pf and pa:
            perturbed.append((platform, app, grid, pf, pa))
    if perturbed:
        print("\n**CPU cores at half speed from step 50** (the best fixed fraction above, against "
              "the automatic run with rebalancing; goal: automatic at least 10 % ahead)\n")
        print("| platform | app | grid | best fixed fraction s (fraction) "
              "| automatic s (final split, rebalances) | automatic ahead by | goal |")
        print("|---|---|---|---|---|---|---|")
        for platform, app, grid, pf, pa in perturbed:
            ahead = 100 * (sec(pf) - sec(pa)) / sec(pf)
            print(f"| {platform} | {app} | {grid} | {sec(pf):.4f} ({pf['fraction']}) "
                  f"| {sec(pa):.4f} ({pa['split']}, {pa['moves']}) | {ahead:+.1f} % "
                  f"| {'met' if ahead >= 10 else 'missed'} |")
    print("\nAll runs (simulated seconds; split: the GPU part is below that plane):\n")
    print("| platform | app | run | GPU fraction | simulated s | final split | rebalances |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['platform']} | {r['app']} | {r['mode']} | {r['fraction']} | {sec(r):.4f} "
              f"| {r['split']} | {r['moves']} |")


def node(path):
    rows = list(csv.DictReader(open(path)))
    print("| app | run | measured s | simulated s | simulated / measured | within 25 % "
          "| simulated run chose | measured run chose | arguments |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m, s = float(r["measured_s"]), float(r["simulated_s"])
        ratio = s / m
        ok = "yes" if 0.75 <= ratio <= 1.25 else "**no**"
        chose = r["measured_choice"]
        if chose and not r["choice"].startswith(chose):
            ok = "other choice"  # the current code chose otherwise than the measured (older) one
        print(f"| {r['app']} | {r['run']} | {m:.6g} | {s:.6g} | {ratio:.2f} | {ok} "
              f"| {r['choice']} | {chose} | `{r['arguments']}` |")


def predicted_ms(placement, run, choice):
    """The predicted step (ms) of what a run chose, from its placement line ("tessera: tiles of
    ...", "tessera: placement of ..." for given tiles; commas may be semicolons, as steady_row writes them): a merged GPU part's own step
    where one GPU part ran whole, else the line's GPU-only, CPU-only or split figure by the
    run's choice (z<N/M: a split where 0 < N < M; nbody: "the GPU part"). None where it has
    none (CPU-only runs print no placement line)."""
    def ms(t):
        m = re.fullmatch(r"([\d.]+) (us|ms)", t or "")
        return float(m.group(1)) / (1000 if m.group(2) == "us" else 1) if m else None
    alts = re.search(r"predicted step: GPU-only ([^,;]+)[,;] CPU-only ([^,;)]+)"
                     r"(?:[,;] split at \w+ \d+: ([\d.]+ (?:us|ms)))?", placement)
    if not alts:
        return None
    cut = re.fullmatch(r"[xyz]<(\d+)/(\d+)", choice.split(";")[0].strip())
    split = ("the GPU part" in placement if not cut
             else 0 < int(cut.group(1)) < int(cut.group(2)))
    if run == "cpu-only" or (cut and int(cut.group(1)) == 0):
        return ms(alts.group(2))
    if run == "both" and split:
        return ms(alts.group(3))
    merged = re.search(r"its predicted step ([\d.]+ (?:us|ms))", placement)
    return ms(merged.group(1)) if merged else ms(alts.group(1))


def thousand_steps(r):
    """A steady_row's run of 1000 steps: its first STEPS steps (the first upload with them),
    then the rest at the steady step."""
    steps = float(r["steps"])
    return float(r["simulated_s"]) + (1000 - steps) * float(r["steady_ms_per_step"]) / 1000


def multi_gpu(path):
    """Issue #48's multi-GPU table (multi-gpu.sh): per app and workers, on each node, the steady
    step, its speed-up over one GPU (steady; over 1000 steps) and the placement line's predicted
    step (its ratio to the steady step)."""
    rows = list(csv.DictReader(open(path)))
    nodes = list(dict.fromkeys(r["node"] for r in rows))
    head = "| app | workers |" + "".join(
        f" {n} ms/step | vs 1 GPU (steady; 1000 steps) | predicted |" for n in nodes)
    print(head + "\n|---|---|" + "---|---|---|" * len(nodes))
    cell = {(r["node"], r["app"], r["workers"]): r for r in rows}
    within = counted = 0
    for app in dict.fromkeys(r["app"] for r in rows):
        for workers in dict.fromkeys(r["workers"] for r in rows if r["app"] == app):
            line = f"| {app} | {workers} |"
            for n in nodes:
                r, one = cell.get((n, app, workers)), cell.get((n, app, "1-gpu"))
                if r is None or r["status"] != "0":
                    line += f" {'failed ' + r['status'] if r else ''} | | |"
                    continue
                step = float(r["steady_ms_per_step"])
                vs = ""
                if one and one is not r:
                    vs = (f"{float(one['steady_ms_per_step']) / step:.2f}x; "
                          f"{thousand_steps(one) / thousand_steps(r):.2f}x")
                run = "both" if "cpus" in workers else "gpu-only"
                p = predicted_ms(r["placement"], run, "")
                pred = ""
                if p is not None:
                    counted += 1
                    within += abs(p / step - 1) <= 0.25
                    pred = f"{p:.4g} ({p / step:.2f})"
                line += f" {step:.4g} | {vs} | {pred} |"
            print(line)
    print(f"\n{within} of {counted} predictions within 25 % of the steady step.")


def planner(path):
    """Issue #40's check: both >= 0.98x the faster single device with the same tiles; nbody's
    both also >= 0.85x the sum of the two throughputs (planner.sh)."""
    rows = list(csv.DictReader(open(path)))
    sec = lambda r: float(r["simulated_s"])
    by = {}
    for r in rows:
        by.setdefault((r["app"], r["tiles"]), {})[r["run"]] = r
    print("| app | tiles | steps | GPU-only s | CPU-only s | both s | both chose "
          "| best single / both (>= 0.98) | sum of throughputs / both (nbody, >= 0.85) "
          "| result | default tiles' best single / both |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    passed = total = 0
    for (app, tiles), rs in by.items():
        if not all(k in rs for k in ("gpu-only", "cpu-only", "both")):
            continue
        g, c, b = sec(rs["gpu-only"]), sec(rs["cpu-only"]), sec(rs["both"])
        best = min(g, c)
        ok = best / b >= 0.98
        vs_sum = ""
        if app == "nbody":
            s = 1 / (1 / g + 1 / c)
            vs_sum = f"{s / b:.3f}"
            ok = ok and s / b >= 0.85
        total += 1
        passed += ok
        vs_default = ""  # explicit tiles against the single devices with the library's tiles
        d = by.get((app, "default"), {})
        if tiles != "default" and "gpu-only" in d and "cpu-only" in d:
            vs_default = f"{min(sec(d['gpu-only']), sec(d['cpu-only'])) / b:.3f}"
        print(f"| {app} | {tiles} | {rs['both']['steps']} | {g:.6g} | {c:.6g} | {b:.6g} "
              f"| {rs['both']['choice']} | {best / b:.3f} ({'GPU' if g <= c else 'CPU'}) "
              f"| {vs_sum} | {'PASS' if ok else '**FAIL**'} | {vs_default} |")
    print(f"\n{passed} of {total} pass.\n")
    print("All runs (simulated seconds; predicted: the placement line's step for what the run "
          "chose, per step, against the simulated mean step; CPU-only runs print none):\n")
    print("| app | tiles | run | steps | simulated s | run chose | predicted ms/step "
          "| predicted / simulated | arguments |")
    print("|---|---|---|---|---|---|---|---|---|")
    within = counted = 0
    for r in rows:
        p = r.get("predicted_ms", "")
        ratio = ""
        if p:
            x = float(p) / (1000 * sec(r) / float(r["steps"]))
            counted += 1
            within += abs(x - 1) <= 0.25
            ratio = f"{x:.2f}" + ("" if abs(x - 1) <= 0.25 else " (miss)")
        print(f"| {r['app']} | {r['tiles']} | {r['run']} | {r['steps']} | {sec(r):.6g} "
              f"| {r['choice']} | {p} | {ratio} | `{r['arguments']}` |")
    print(f"\n{within} of {counted} predictions within 25 % of the simulated step.")


if __name__ == "__main__":
    if sys.argv[1] == "validation":
        validation(sys.argv[2])
    elif sys.argv[1] == "hybrid":
        hybrid(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "weak":
        weak(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "hetero":
        hetero(sys.argv[2])
    elif sys.argv[1] == "node":
        node(sys.argv[2])
    elif sys.argv[1] == "planner":
        planner(sys.argv[2])
    elif sys.argv[1] == "multi-gpu":
        multi_gpu(sys.argv[2])
    elif sys.argv[1] == "predicted":
        log = open(sys.argv[2]).read()
        line = next((l for l in log.splitlines()
                     if l.startswith(("tessera: tiles of", "tessera: placement of"))), "")
        p = predicted_ms(line, sys.argv[3], sys.argv[4])
        print("" if p is None else f"{p:.4g}")
