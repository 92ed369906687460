#!/usr/bin/env python3
"""The stated machine models of docs/simulation.md, written as StarPU files.

  simmodel.py platform <starpu-src-sampling-dir> <out-dir> <name> [--cpus N] [--gpu-mem BYTES]
      [--gpu-model TEXT] [--pcie-gbs G] [--pcie-lat-us L]
    A SimGrid platform for one node with many CPU cores and one GPU, derived from StarPU's
    sample platform 'sirocco' (its file layout) with the stated numbers put in: <out-dir>/bus/
    <name>.{platform.xml,platform.v4.xml,bandwidth,latency,affinity,config}.

  simmodel.py platform <sampling-dir> <out-dir> <name> --gpus K [--cpus N] [--gpu-mem BYTES]
      [--pcie-gbs G] [--pcie-lat-us L] [--gpu-link-gbs V] [--gpu-link-lat-us M] [--host-gbs H]
    A node as real ones are built (issue #48): each of its K GPUs (1 to 4, StarPU's simulated
    maximum) has its own host link of G GB/s and L us each way, the links meeting in the host's
    memory (H GB/s, shared); with V > 0 the GPUs also talk directly, each over its own GPU link
    of V GB/s each way shared by its peers (NVLink through a switch), M us; with V = 0 a copy
    between GPUs goes through the host's memory (two host links, StarPU stages it). Written
    whole, not from the sample: what the sample routes through one shared link (every GPU's
    transfer, and a second latency on each) is a node's separate links here.

  simmodel.py models <calibrated-dir> <out-dir> --cpu-gbs C --gpu-gbs G
      [--cpu-lat-us a] [--gpu-lat-us b] [--gpus K] [--only PREFIX]
    Performance models for a simulated host: for every footprint that Tessera's calibrated
    models (<calibrated-dir>/codelets/45/tessera.*) hold, a CPU time and a CUDA time from
    time = bytes moved / bandwidth + latency. The footprints (StarPU's hashes of the tasks'
    buffer sizes) and sizes are taken from the calibrated files, so the models are keyed exactly
    like real ones; only the times are the stated model's. (StarPU appends no host name to a
    symbol that contains a dot, as Tessera's do: one model directory per simulated host.) Bytes moved per task, by kind:
      interior, sum, loop ... : every buffer once (the data size StarPU records)
      halo-pack, boundary    : the face buffers twice (read + write): 2 x (size - one tile)
      constant-ghosts        : latency only (runs once per plan)

  simmodel.py regression <out-dir> SYMBOL... --cpu-gbs C --gpu-gbs G [--cpu-lat-us a]
      [--gpu-lat-us b] [--gpus K] [--kind KIND=CPU_GBS:GPU_GBS ...]
    Models for the named symbols only, each a non-linear regression time = size / bandwidth +
    latency (size, as a simulating Tessera sizes its tasks: every buffer of the task; the face
    bytes moved for halo-pack and boundary; for a time block, the bytes its steps stream, each
    step's widened window and its exchange copies), with no calibrated file: what
    scripts/sim/node.sh writes for the kinds a simulated run asks for. --kind gives one kind its
    own bandwidths (nbody's pairs: a rate of interactions, not of bytes); a GPU field that names
    a kernel of PAIRS_KERNELS (pairs=0.1753:thread-per-target) gives that kernel's GPU curve.

  simmodel.py pairs-check [KERNEL]
    The pairs model of KERNEL (default thread-per-target) against the GPU's measured table
    (docs/gpu.md, nbody-rates): the occupancy model and the simulator's regression at every tile
    side, and whether each is within 20 %; exit 1 if not.

  simmodel.py rescale <model-dir> <out-dir> <summary.txt>
    A copy of a calibrated model directory whose history means are scaled, per task kind, by
    mean / predicted of a run's "per task kind" summary (Tessera's end-of-run table): the
    models as that run's tasks actually took, e.g. on a machine whose load changed between
    calibration and run.
"""
import argparse
import glob
import math
import os
import re
import sys

VERSION = "45"


# ---------------------------------------------------------------- model files

def parse_model(path):
    """{comb description text: [(hash, size)]} of a StarPU 1.3/1.4 history model file."""
    entries = []
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("# hash"):
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("#"):
                f = lines[i].split()
                entries.append((f[0], int(f[1]), int(f[7])))
                i += 1
        else:
            i += 1
    seen = {}
    for h, size, n in entries:
        seen[h] = size
    return sorted(seen.items(), key=lambda e: e[1])


def comb_text(index, devtype, devid, entries, line=None):
    out = ["####################", f"# COMB_{index}", "# number of types devices", "1",
           "####################", "# DEV_0",
           "# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3)", str(devtype),
           "####################", "# DEV_0", "# device id ", str(devid),
           "####################", "# DEV_0", "# number of cores ", "1",
           "##########", "# number of implementations", "1", "#####",
           f"# Model for {'cpu' if devtype == 0 else 'cuda'}{devid}_impl0 (Comb{index})",
           "# number of entries", str(len(entries)),
           "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx",
           "0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            "
           + ("\tnan            \t0\t0              \t0              " if line is None else
              f"\tnan            \t100\t1              \t{line[3] if len(line) > 3 else 10**15}              "),
           "# a\t\tb\t\tc",
           "nan            \tnan            \tnan            " if line is None else
           f"{line[0]:e}\t{(line[2] if len(line) > 2 else 1.0):e}\t{line[1]:e}",
           "# not multiple-regression-base", "0",
           "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn"]
    n = 100
    for h, size, mean, *work in entries:
        dev = 0.02 * mean
        s = mean * n
        s2 = (dev * dev + mean * mean) * n
        flops = work[0] if work else 0.0
        out.append(f"{h}\t{size:<15d}\t{flops:e}\t{mean:e}\t{dev:e}\t{s:e}\t{s2:e}\t{n}")
    out.append("")
    return "\n".join(out)


def kind_of(symbol):
    # tessera.<stencil>.<kind>.<types>
    parts = symbol.split(".")
    return parts[2] if len(parts) > 3 else ""


def bytes_moved(kind, size, tiles):
    if kind in ("halo-pack", "boundary"):
        # the tile this task packs from or unpacks into: the largest field tile below its size
        below = [t for t in tiles if t < size]
        tile = max(below) if below else 0
        return 2.0 * (size - tile)
    if kind == "constant-ghosts":
        return 0.0
    return float(size)


def write_models(args):
    src = os.path.join(args.calibrated, "codelets", VERSION)
    dst = os.path.join(args.out, "codelets", VERSION)
    os.makedirs(dst, exist_ok=True)
    files = sorted(glob.glob(os.path.join(src, "tessera.*")))
    if not files:
        sys.exit(f"simmodel: no calibrated tessera.* models in {src}")
    # One field tile's bytes, per stencil: the interior task's data size over its buffer count.
    interiors = {}
    for path in files:
        symbol = os.path.basename(path)
        if kind_of(symbol) == "interior":
            stencil = symbol.split(".")[1]
            interiors[stencil] = [size for _, size in parse_model(path)]
    written = 0
    for path in files:
        symbol = os.path.basename(path)
        if args.only and not symbol.startswith(args.only):
            continue
        stencil, kind = symbol.split(".")[1], kind_of(symbol)
        nbuf = args.buffers.get(stencil, 2)
        tiles = [s // nbuf for s in interiors.get(stencil, [])]
        entries = parse_model(path)
        if not entries:
            continue
        def times(gbs, lat_us):
            return [(h, size, bytes_moved(kind, size, tiles) / (gbs * 1e9) * 1e6 + lat_us)
                    for h, size in entries]
        def line(gbs, lat_us):  # time = a x size + c, size = every buffer of the task
            return (1e6 / (gbs * 1e9), lat_us) if args.regression else None
        cpu_gbs = args.cpu_gbs / args.slow_cpu
        combs = [comb_text(0, 0, 0, times(cpu_gbs, args.cpu_lat_us), line(cpu_gbs, args.cpu_lat_us))]
        for g in range(args.gpus):
            combs.append(comb_text(g + 1, 1, g, times(args.gpu_gbs, args.gpu_lat_us),
                                   line(args.gpu_gbs, args.gpu_lat_us)))
        text = ("##################\n# Performance Model Version\n" + VERSION + "\n\n"
                "####################\n# COMBs\n# number of combinations\n" + str(len(combs)) + "\n"
                + "".join(combs))
        with open(os.path.join(dst, symbol), "w") as f:
            f.write(text)
        written += 1
    print(f"simmodel: {written} models in {dst}")


# ---------------------------------------------------------------- platform

def write_devices(dst, name, cpus, cuda, opencl):
    """StarPU's affinity file (every CPU near each of the cuda + opencl devices, numbered modulo
    cuda) and its configuration file (the device counts)."""
    with open(os.path.join(dst, f"{name}.affinity"), "w") as f:
        f.write("# GPU\t" + "".join(f"CPU{i}\t" for i in range(cpus)) + "\n")
        for g in range(cuda + opencl):
            f.write(f"{g % cuda}\t" + "\t".join(str(i) for i in range(cpus)) + "\t\n")
    with open(os.path.join(dst, f"{name}.config"), "w") as f:
        f.write(f"# Current configuration\n{cpus} # Number of CPUs\n{cuda} # Number of CUDA devices\n"
                f"{opencl} # Number of OpenCL devices\n0 # Number of MIC devices\n")


def write_platform(args):
    src = os.path.join(args.sampling, "bus")
    dst = os.path.join(args.out, "bus")
    os.makedirs(dst, exist_ok=True)
    base = "sirocco"
    bps = args.pcie_gbs * 1e9
    lat = args.pcie_lat_us * 1e-6

    def platform(text, v4):
        speed = 'speed="2000000000f"' if v4 else 'power="2000000000"'
        cpu_lines = "".join(f'   <host id="CPU{i}" {speed}/>\n' for i in range(args.cpus))
        text = re.sub(r'(   <host id="CPU\d+"[^\n]*\n)+', lambda m: cpu_lines, text, count=1)
        text = re.sub(r'value="Tesla K40m"', f'value="{args.gpu_model}"', text)
        text = re.sub(r'(<prop id="memsize" value=")\d+', lambda m: m.group(1) + str(args.gpu_mem), text)
        # every link that touches a CUDA device, and the shared host link: the stated PCIe
        def link(m):
            ident = m.group(1)
            if "CUDA" in ident or ident == "Host":
                return f'<link id="{ident}" bandwidth="{bps:f}Bps" latency="{lat:f}s"/>'
            return m.group(0)
        text = re.sub(r'<link id="([^"]+)" bandwidth="[^"]+" latency="[^"]+"/>', link, text)
        return text

    for suffix, v4 in (("platform.v4.xml", True), ("platform.xml", False)):
        with open(os.path.join(src, f"{base}.{suffix}")) as f:
            text = f.read()
        with open(os.path.join(dst, f"{args.name}.{suffix}"), "w") as f:
            f.write(platform(text, v4))
    # Bus matrices (MB/s and us) between memory nodes: 0 RAM, 1-4 CUDA, 5-8 OpenCL.
    for suffix, value in (("bandwidth", bps / 1e6), ("latency", args.pcie_lat_us)):
        rows = open(os.path.join(src, f"{base}.{suffix}")).read().splitlines()
        out = [rows[0]]
        for r, row in enumerate(rows[1:]):
            cells = row.split()
            for c, cell in enumerate(cells):
                if cell != "nan" and r != c and (1 <= r <= 4 or 1 <= c <= 4):
                    cells[c] = f"{value:e}"
            out.append("\t".join(cells))
        with open(os.path.join(dst, f"{args.name}.{suffix}"), "w") as f:
            f.write("\n".join(out) + "\n")
    write_devices(dst, args.name, args.cpus, 4, 4)  # the sample's 4 CUDA and 4 OpenCL devices
    print(f"simmodel: platform {args.name} ({args.cpus} CPUs, {args.gpu_model}, PCIe "
          f"{args.pcie_gbs} GB/s {args.pcie_lat_us} us) in {dst}")


def write_node_platform(args):
    """The platform of a node with its own link per GPU (see the module's text)."""
    dst = os.path.join(args.out, "bus")
    os.makedirs(dst, exist_ok=True)
    k, gbs = args.gpus, 1e9
    if not 1 <= k <= 4:
        sys.exit(f"simmodel: --gpus {k}: StarPU simulates 1 to 4 CUDA devices; give 1 to 4")
    peer = args.gpu_link_gbs > 0 or args.pcie_p2p
    cuda = [f"CUDA{g}" for g in range(k)]
    lines = ['<?xml version="1.0"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             ' <config id="General">',
             '   <prop id="network/TCP-gamma" value="-1"></prop>',
             '   <prop id="network/latency-factor" value="1"></prop>',
             '   <prop id="network/bandwidth-factor" value="1"></prop>',
             '   <prop id="network/weight-S" value="0.0"></prop>',
             '   <prop id="network/crosstraffic" value="0"></prop>',
             ' </config>',
             ' <zone id="AS0" routing="Full">',
             '   <host id="MAIN" speed="1f"/>']
    lines += [f'   <host id="CPU{i}" speed="2000000000f"/>' for i in range(args.cpus)]
    for c in cuda:
        lines += [f'   <host id="{c}" speed="2000000000f">',
                  f'     <prop id="model" value="{args.gpu_model}"/>',
                  f'     <prop id="memsize" value="{args.gpu_mem}"/>',
                  f'     <prop id="memcpy_peer" value="{1 if peer else 0}"/>',
                  '   </host>']
    lines.append('   <host id="RAM" speed="1f"/>')

    def link(ident, bw_gbs, lat_us):
        lines.append(f'   <link id="{ident}" bandwidth="{bw_gbs * gbs:f}Bps" '
                     f'latency="{lat_us * 1e-6:f}s"/>')

    link("Host", args.host_gbs, 0)  # the host's memory, every GPU's transfers share it
    for c in cuda:
        link(f"RAM-{c}", args.pcie_gbs, args.pcie_lat_us)
        link(f"{c}-RAM", args.pcie_gbs, args.pcie_lat_us)
        if args.gpu_link_gbs > 0:  # a GPU's own link into the switch, each way; half the latency at each end
            link(f"{c}-out", args.gpu_link_gbs, args.gpu_link_lat_us / 2)
            link(f"{c}-in", args.gpu_link_gbs, args.gpu_link_lat_us / 2)

    def route(src, dst, via):
        lines.append(f'   <route src="{src}" dst="{dst}" symmetrical="NO">')
        lines.extend(f'     <link_ctn id="{v}"/>' for v in via)
        lines.append('   </route>')

    for c in cuda:
        route("RAM", c, ["Host", f"RAM-{c}"])
        route(c, "RAM", [f"{c}-RAM", "Host"])
    for a in cuda:
        for b in cuda:
            if a == b:
                continue
            if args.gpu_link_gbs > 0:
                route(a, b, [f"{a}-out", f"{b}-in"])
            elif args.pcie_p2p:  # one copy through the PCIe switch: both GPUs' links at once
                route(a, b, [f"{a}-RAM", f"RAM-{b}"])
            else:
                route(a, b, [f"{a}-RAM", "Host", f"RAM-{b}"])
    lines += [' </zone>', '</platform>', '']
    for suffix in ("platform.v4.xml", "platform.xml"):
        with open(os.path.join(dst, f"{args.name}.{suffix}"), "w") as f:
            f.write("\n".join(lines))
    # StarPU's bus matrices (MB/s and us; memory nodes 0 RAM, 1..K the GPUs, the rest unused),
    # what its models and Tessera's planner read of the links.
    n = 16
    between_gpus = ((args.gpu_link_gbs, args.gpu_link_lat_us) if args.gpu_link_gbs > 0 else
                    (min(args.pcie_gbs, args.host_gbs), 2 * args.pcie_lat_us))
    for suffix, pick in (("bandwidth", lambda bw, lat: bw * 1e3), ("latency", lambda bw, lat: lat)):
        rows = ["# " + "".join(f"to {c}\t\t" for c in range(n))]
        for r in range(n):
            cells = []
            for c in range(n):
                if r > k or c > k:
                    cells.append("nan")
                elif r == c:
                    cells.append(f"{0:e}")
                elif r == 0 or c == 0:
                    cells.append(f"{pick(args.pcie_gbs, args.pcie_lat_us):e}")
                else:
                    cells.append(f"{pick(*between_gpus):e}")
            rows.append("\t".join(cells))
        with open(os.path.join(dst, f"{args.name}.{suffix}"), "w") as f:
            f.write("\n".join(rows) + "\n")
    write_devices(dst, args.name, args.cpus, k, 0)
    links = (f"GPU links {args.gpu_link_gbs} GB/s {args.gpu_link_lat_us} us"
             if args.gpu_link_gbs > 0 else
             "GPU to GPU peer to peer over PCIe" if args.pcie_p2p else "GPU to GPU through the host")
    print(f"simmodel: platform {args.name} ({args.cpus} CPUs, {k} x {args.gpu_model}, each its "
          f"own PCIe {args.pcie_gbs} GB/s {args.pcie_lat_us} us, host memory {args.host_gbs} "
          f"GB/s, {links}) in {dst}")


# A tile task's work as a calibrated run records it (its flops: points x steps, beside the
# history entry of a tile): one entry of a 256 MiB tile on the cores, timed by the regression,
# from which Tessera reads a core's time a point (tasks/device_classes.cpp,
# model_cpu_point_seconds) where it would otherwise assume one. Only the tile-task kinds, whose
# types are the points' fields (tessera.<stencil>.<kind>.<types>).
WORK_TILE_BYTES = 1 << 28
WORK_BLOCK_STEPS = 4


# A pairs task on a GPU, by CUDA kernel. Measured (docs/gpu.md, "On a GPU node", nbody-rates,
# an H200, GPU-only): a task of a square tile of `side` bodies, microseconds (lowest, highest).
PAIRS_MEASURED = {
    "thread-per-target": [(1024, 153, 213), (4096, 648, 717), (16384, 2463, 2539),
                          (65536, 13794, 13794)],
}
# occupancy (c us, k us a source, fill targets): a task of T targets and S sources takes
# c + k S max(1, T / fill): each target's sources are one chain, so a source costs k for every
# tile below `fill` targets (the GPU not yet full) and more beyond (partition/planner.cpp's
# pairs_task_seconds, the same numbers). regression (a, b, c): the simulator's
# non-linear regression a s^b + c us over a task's s = T S interactions, the size StarPU sizes
# it by, fitted to the table (a square tile's time; a T x S tile is priced as the square tile of
# its interactions).
PAIRS_KERNELS = {
    "thread-per-target": {"occupancy": (20.0, 0.156, 48642.0), "regression": (0.0538, 0.555, 60.0)},
}


def pairs_task_us(kernel, targets, sources):
    c, k, fill = PAIRS_KERNELS[kernel]["occupancy"]
    return c + k * sources * max(1.0, targets / fill)


def pairs_regression_us(kernel, interactions):
    a, b, c = PAIRS_KERNELS[kernel]["regression"]
    return a * interactions ** b + c


def pairs_check(args):
    ok = True
    print("side  measured us        occupancy us  regression us")
    for side, lo, hi in PAIRS_MEASURED[args.kernel]:
        occ = pairs_task_us(args.kernel, side, side)
        reg = pairs_regression_us(args.kernel, side * side)
        within = all(0.8 <= m / lo <= 1.2 and 0.8 <= m / hi <= 1.2 for m in (occ, reg))
        ok = ok and within
        print(f"{side:<5} {lo:>6}-{hi:<6}      {occ:>9.0f}     {reg:>9.0f}   "
              + ("within 20 %" if within else "OFF BY MORE THAN 20 %"))
    sys.exit(0 if ok else 1)


def work_entry(symbol, line):
    kind = kind_of(symbol)
    if not (kind.startswith("interior") or kind.startswith("time-block")):
        return []
    sizes = {"double": 8, "float": 4, "int32": 4, "uint8": 1}
    types = symbol.split(".")[3].split("-") if len(symbol.split(".")) > 3 else []
    if not types or any(t not in sizes for t in types):
        return []
    points = WORK_TILE_BYTES / sum(sizes[t] for t in types)
    # As a calibrated run's history has it: the tile's bytes, the task's time and work. A time
    # block (WORK_BLOCK_STEPS steps here) streams the tile's bytes once a step: the regression at
    # that size is its time.
    steps = WORK_BLOCK_STEPS if kind.startswith("time-block") else 1
    return [("00000000", WORK_TILE_BYTES, line[0] * WORK_TILE_BYTES * steps + line[1],
             points * steps)]


def write_regression(args):
    dst = os.path.join(args.out, "codelets", VERSION)
    os.makedirs(dst, exist_ok=True)
    kinds = {k: tuple(v.split(":")) for k, v in (kv.split("=") for kv in args.kind)}
    for symbol in args.symbols:
        kind = kind_of(symbol)
        cpu_gbs, gpu_gbs = kinds.get(kind, (args.cpu_gbs, args.gpu_gbs))
        line = lambda gbs, lat: (1e6 / (float(gbs) * 1e9), lat)
        if gpu_gbs in PAIRS_KERNELS:  # a kernel's curve: a s^b + c
            a, b, c = PAIRS_KERNELS[gpu_gbs]["regression"]
            # valid up to the largest task measured (StarPU's maxx; the planner reads a GPU's
            # full rate there, tasks/device_classes.cpp)
            gpu_line = (a, c, b, max(side for side, _, _ in PAIRS_MEASURED[gpu_gbs]) ** 2)
        else:
            gpu_line = line(gpu_gbs, args.gpu_lat_us)
        combs = [comb_text(0, 0, 0, work_entry(symbol, line(cpu_gbs, args.cpu_lat_us)),
                           line(cpu_gbs, args.cpu_lat_us))]
        combs += [comb_text(g + 1, 1, g, [], gpu_line) for g in range(args.gpus)]
        with open(os.path.join(dst, symbol), "w") as f:
            f.write("##################\n# Performance Model Version\n" + VERSION + "\n\n"
                    "####################\n# COMBs\n# number of combinations\n" + str(len(combs))
                    + "\n" + "".join(combs))
    print(f"simmodel: {len(args.symbols)} regression models in {dst}")


def rescale(args):
    import shutil
    ratio = {}
    rows = False
    for line in open(args.summary):
        if line.strip().startswith("task kind"):
            rows = True
            continue
        f = line.split()
        if rows and len(f) >= 6 and f[4] != "-":
            try:
                ratio[f[0]] = float(f[3]) / float(f[4])
            except (ValueError, ZeroDivisionError):
                pass
        elif rows and len(f) < 6:
            rows = False
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    shutil.copytree(args.models, args.out)
    for path in glob.glob(os.path.join(args.out, "codelets", VERSION, "tessera.*")):
        r = ratio.get(kind_of(os.path.basename(path)))
        if r is None:
            continue
        lines = open(path).read().splitlines()
        out, table = [], False
        for line in lines:
            f = line.split()
            if line.startswith("# hash"):
                table = True
            elif table and len(f) == 8 and not line.startswith("#"):
                f[3] = f"{float(f[3]) * r:e}"
                f[4] = f"{float(f[4]) * r:e}"
                f[5] = f"{float(f[5]) * r:e}"
                f[6] = f"{float(f[6]) * r * r:e}"
                line = "\t".join(f)
            else:
                table = False
            out.append(line)
        open(path, "w").write("\n".join(out) + "\n")
    print("simmodel: rescaled " + ", ".join(f"{k} x{v:.2f}" for k, v in sorted(ratio.items())))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("platform")
    a.add_argument("sampling")
    a.add_argument("out")
    a.add_argument("name")
    a.add_argument("--cpus", type=int, default=64)
    a.add_argument("--gpu-mem", type=int, default=80 * 2**30)
    a.add_argument("--gpu-model", default="H100-class (modelled)")
    a.add_argument("--pcie-gbs", type=float, default=50.0)
    a.add_argument("--pcie-lat-us", type=float, default=10.0)
    a.add_argument("--gpus", type=int, default=0,
                   help="a node with this many GPUs, each its own host link (0: the sample's "
                        "layout, one shared link, as the calibrated tables of record were made)")
    a.add_argument("--gpu-link-gbs", type=float, default=0.0)
    a.add_argument("--gpu-link-lat-us", type=float, default=2.0)
    a.add_argument("--host-gbs", type=float, default=400.0)
    a.add_argument("--pcie-p2p", action="store_true",
                   help="without GPU links: GPU to GPU in one copy over both GPUs' PCIe links "
                        "(a PCIe switch), not staged through the host's memory")
    m = sub.add_parser("models")
    m.add_argument("calibrated")
    m.add_argument("out")
    m.add_argument("--cpu-gbs", type=float, required=True)
    m.add_argument("--gpu-gbs", type=float, required=True)
    m.add_argument("--cpu-lat-us", type=float, default=2.0)
    m.add_argument("--gpu-lat-us", type=float, default=5.0)
    m.add_argument("--gpus", type=int, default=1)
    m.add_argument("--only", default="")
    m.add_argument("--regression", action="store_true",
                   help="also a non-linear regression, time = size / bandwidth + latency with "
                        "size every buffer of the task, valid for every size: what a simulating "
                        "Tessera uses (its timed kinds are STARPU_NL_REGRESSION_BASED), so that "
                        "tile sizes no calibration has seen (automatic tiles, a moved split) "
                        "have a time")
    m.add_argument("--slow-cpu", type=float, default=1.0,
                   help="CPU times multiplied by this (a slowed CPU class)")
    m.add_argument("--buffers", default="heat3d=2,jacobi2d=3,life=2",
                   help="buffers of each stencil's interior task (fields it reads and writes)")
    g = sub.add_parser("regression")
    g.add_argument("out")
    g.add_argument("symbols", nargs="+")
    g.add_argument("--cpu-gbs", type=float, required=True)
    g.add_argument("--gpu-gbs", type=float, required=True)
    g.add_argument("--cpu-lat-us", type=float, default=2.0)
    g.add_argument("--gpu-lat-us", type=float, default=5.0)
    g.add_argument("--gpus", type=int, default=4)
    g.add_argument("--kind", action="append", default=[])
    c = sub.add_parser("pairs-check")
    c.add_argument("kernel", nargs="?", default="thread-per-target")
    r = sub.add_parser("rescale")
    r.add_argument("models")
    r.add_argument("out")
    r.add_argument("summary")
    args = p.parse_args()
    if args.cmd == "pairs-check":
        pairs_check(args)
    elif args.cmd == "regression":
        write_regression(args)
    elif args.cmd == "rescale":
        rescale(args)
    elif args.cmd == "platform":
        (write_node_platform if args.gpus > 0 else write_platform)(args)
    else:
        args.buffers = {k: int(v) for k, v in (kv.split("=") for kv in args.buffers.split(",") if kv)}
        write_models(args)


if __name__ == "__main__":
    main()
