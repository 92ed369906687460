#!/usr/bin/env bash
# Phase 2 of the GPU check, on the GPU node: runs what scripts/gpu-pack.sh packed, in under
# 8 minutes, from the unpacked archive (nothing is compiled here):
#   tar -xzf tessera-gpu.tar.gz && bash tessera-gpu/src/scripts/gpu-run.sh
# Steps, in order of value, each under its own timeout and all within BUDGET seconds (default
# 450): probe, the cuda.* tests, every application CPU-only / GPU-only / both with checksums
# compared, both with a CPU worker fewer (both-cores), bench_heat3d_gpu, the link one way and
# both ways (bus), a grid larger than the GPU (ooc, then its steady step and bus bytes:
# ooc-steady), the multi-GPU table's one-GPU rows (one-gpu), nbody's pairs task by tile size
# (nbody-rates), compute-sanitizer memcheck and racecheck on a small heat3d, an FxT trace with
# its bus transfers. Each step appends to one summary, summary.txt, and the logs are archived
# (logs.tgz) after each step, so a run cut short still returns what it had. Output goes
# to $OUT when set, else ./gpu-run-results. STEPS="probe apps ..." runs only those.
# A step that would start after the budget is spent is skipped, so the run ends within about
# BUDGET + 5 s. Every packed program is checked for libraries that neither the node nor the pack
# has (ldd). Without a GPU every step says so and is skipped (the probe still runs: it checks
# that the carried programs and libraries load); NCPU (default: cores - 1) sets the CPU-only
# runs' workers.
set -uo pipefail

pack=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)  # tessera-gpu/
B=$pack/build
out=${OUT:-$PWD/gpu-run-results}
logs=$out/logs
mkdir -p "$logs"
S=$out/summary.txt
budget=${BUDGET:-450}
t0=$SECONDS
ncpu=${NCPU:-$(($(nproc) > 1 ? $(nproc) - 1 : 1))}

archive() { tar -czf "$out/logs.tgz" -C "$logs" . 2>/dev/null; }
say() { echo "$*" | tee -a "$S"; }
step() { archive; say "== [$((SECONDS - t0)) s] $*"; }
want() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }
# Seconds a command may take: its own limit, cut to what is left of the budget (at least 1).
limit() {
  local left=$((budget - (SECONDS - t0)))
  [ "$left" -lt "$1" ] && echo $((left > 1 ? left : 1)) || echo "$1"
}
over() { [ $((SECONDS - t0)) -ge "$budget" ]; }
run() {  # run <seconds> <log> <command...>: timeout, then the status in the summary's words
  local s=$1 log=$2
  shift 2
  local l
  l=$(limit "$s")
  timeout -k 5 "$l" "$@" > "$log" 2>&1
  local rc=$?
  case $rc in 124 | 137) echo "timed out after $l s" ;; 0) echo "ok" ;; *) echo "rc=$rc" ;; esac
  return $rc
}

: > "$S"
step "tessera-gpu at $pack, results in $out"
{
  nvidia-smi; nproc; free -g; head -3 /etc/os-release; ldd --version | head -1
  command -v nvcc cmake ctest compute-sanitizer; lscpu | head -20
} > "$logs/env.txt" 2>&1

# The CTest files name this pack's build and source trees by the packing machine's paths.
if [ -f "$pack/paths.txt" ]; then
  old_build=$(sed -n 's/^build=//p' "$pack/paths.txt")
  old_src=$(sed -n 's/^src=//p' "$pack/paths.txt")
  find "$B" \( -name CTestTestfile.cmake -o -name '*_tests.cmake' -o -name '*_include.cmake' \) \
    -exec sed -i -e "s|$old_build|$B|g" -e "s|$old_src|$pack/src|g" {} +
  echo "build=$B" > "$pack/paths.txt.new" && echo "src=$pack/src" >> "$pack/paths.txt.new"
  mv "$pack/paths.txt.new" "$pack/paths.txt"
fi

# Libraries: a carried one only where the node's loader does not know the name (the node's own
# are used first); CUDA's from the node's toolkit, else from Python's nvidia-* packages.
mkdir -p "$pack/missing"
for l in "$pack"/lib/*; do
  [ -e "$l" ] || continue
  n=$(basename "$l")
  ldconfig -p | grep -q "^[[:space:]]*$n " || { ln -sf "$l" "$pack/missing/$n"; echo "carried: $n" >> "$logs/libraries.txt"; }
done
pylibs=$(find /usr/lib /usr/local/lib /opt "$HOME/.local" -path '*site-packages/nvidia/*/lib' -type d 2>/dev/null | tr '\n' ':')
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$pack/starpu/lib:/usr/local/cuda/lib64:${pylibs}$pack/missing${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STARPU_HOME=$out/starpu-home  # performance models: fresh, written where results go
mkdir -p "$STARPU_HOME"
# Every packed program must load: a library that neither the node nor the pack has is named here.
for f in $(cd "$B" && find . -type f -perm -u+x ! -name '*.sh' | sort); do
  ldd "$B/$f" 2>&1 | grep 'not found' | sed "s|^|missing library for ${f#./}: |" | tee -a "$S"
done

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say "GPUs: ${gpus:-0} ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1))"
no_gpu() { [ "${gpus:-0}" -eq 0 ] && say "  skipped: no GPU on this machine (nvidia-smi lists none)"; }
# A step that would start after the budget is spent says so instead (a run started late would
# still get its 1 s and 5 s to die, and the run must end within 8 minutes).
no_time() { over && say "  skipped: the budget ($budget s) is spent"; }

if want probe; then
  step "probe: tessera_cuda_probe"
  r=$(run 60 "$logs/probe.log" "$B/tests/tessera_cuda_probe")
  say "  probe: $r: $(tail -n 2 "$logs/probe.log" | tr '\n' ' ' | cut -c1-300)"
fi

if want tests; then
  step "the cuda.* tests"
  if ! no_gpu && ! no_time; then
    if command -v ctest >/dev/null; then
      r=$(run 150 "$logs/ctest-cuda.log" ctest --test-dir "$B" -R '^cuda\.' --output-on-failure --timeout 90 -j1)
      say "  ctest -R ^cuda\\.: $r"
      grep -E 'Test +#|tests passed|Skipped|Failed|\*\*\*' "$logs/ctest-cuda.log" | tail -n 40 >> "$S"
    else  # no CMake on the node: the test program, one case at a time, each with a timeout
      say "  no ctest on this node: test_cuda case by case"
      for c in $("$B/tests/test_cuda" --gtest_list_tests 2>/dev/null |
                 awk '/^[^ ]/ {s=$1} /^  / {print s $1}'); do
        over && { say "  budget spent: the remaining cases not run"; break; }
        r=$(run 60 "$logs/test_cuda-$c.log" "$B/tests/test_cuda" --gtest_filter="$c")
        say "  $c: $r"
      done
    fi
  fi
fi

# What the runs of one application must agree on: checksum=..., airfoil's rms=..., or NPB's last
# norm or checksum (mg and ft run without --quiet to print them).
result_of() {
  grep -oE 'checksum=[^ ]+|rms=[^ ]+|L2 Norm is +[^ ]+|Checksum *= *[^ ]+ +[^ ]+|VERIFICATION [A-Z]+' "$1" | tail -n 1 | tr -s ' ' _
}
if want apps; then
  step "applications: CPU-only ($ncpu workers) / GPU-only / both, results compared"
  if ! no_gpu && ! no_time; then
    while read -r app args; do
      over && { say "  budget spent: the remaining applications not run"; break; }
      name=$(basename "$app")
      [ -x "$B/apps/$app" ] || { say "  $name: not in this pack (GPU_TARGETS)"; continue; }
      results=()
      for w in "cpu:--ncpu $ncpu --ncuda 0" "gpu:--ncpu 0 --ncuda 1" "both:--ncuda 1"; do
        # shellcheck disable=SC2086
        r=$(run 40 "$logs/app-$name-${w%%:*}.log" "$B/apps/$app" $args ${w#*:})
        res=$(result_of "$logs/app-$name-${w%%:*}.log")
        secs=$(grep -oE 'seconds=[^ ]+' "$logs/app-$name-${w%%:*}.log" | tail -n 1)
        say "  $name [${w%%:*}] $r ${secs:-} ${res:-no result}"
        results+=("${res:-none-${w%%:*}}")
      done
      if [ "${results[0]}" = "${results[1]}" ] && [ "${results[0]}" = "${results[2]}" ]; then
        say "  $name: the three agree bit for bit"
      elif [ "$name" = ft ] && [ "$(cat "$logs"/app-ft-*.log | grep -c 'VERIFICATION SUCCESSFUL')" = 3 ]; then
        say "  ft: the last bits differ (cuFFT's arithmetic, apps/ft/line_batch.hpp); NPB verifies all three"
      else
        say "  $name: DIFFER: ${results[*]}"
      fi
    done <<'LIST'
heat3d/heat3d --size 256 256 256 --steps 20 --quiet
jacobi2d/jacobi2d --size 8192 8192 --steps 100 --quiet
life/life --size 8192 8192 --steps 100 --quiet
cardiac/cardiac2d --size 2048 2048 --steps 50 --quiet
cardiac/cardiac3d --size 256 256 128 --steps 20 --quiet
cloudsim/cloudsim --size 2048 2048 --steps 50 --quiet
nbody/nbody --size 16384 --steps 4 --quiet
airfoil/airfoil --mesh-size 200 300 --iterations 50 --quiet
mg/mg --class A
ft/ft --class A
LIST
    # nbody GPU-only in the 16 tiles of 1024 the measurements file ran (its 103 GFLOP/s): the
    # default GPU-only run above is the planner's one tile, every body in one launch (--tile
    # alone would be merged into one tile too: --keep-gpu-tiles keeps the 16).
    if ! over; then
      r=$(run 40 "$logs/app-nbody-gpu-16-tiles.log" "$B/apps/nbody/nbody" --size 16384 --tile 1024 \
          --keep-gpu-tiles --steps 4 --ncpu 0 --ncuda 1 --quiet)
      say "  nbody [gpu, 16 tiles] $r $(grep -oE '(GFLOP/s|checksum)=[^ ]+' "$logs/app-nbody-gpu-16-tiles.log" | tr '\n' ' ')"
    fi
  fi
fi

if want both-cores; then
  # On the H200 some "both" runs (every tile on the GPU, as GPU-only) were slower than GPU-only:
  # cardiac3d 0.76-0.79x, FT 0.35-0.75x. Whether a core for the program's thread is what they
  # lack (15 polling CPU workers, the CUDA worker's thread and the program's: 17 on 16 cores):
  # GPU-only, both, and both with a CPU worker fewer, interleaved, three rounds; and the default
  # (no worker counts given), which leaves a core to the program's thread where CUDA workers run.
  step "both with a core left: GPU-only / both / both with one CPU worker fewer / the default"
  if ! no_gpu && ! no_time; then
    for round in 1 2 3; do
      while read -r app args; do
        over && break 2
        line="  round $round $(basename "$app"):"
        for w in "gpu:--ncpu 0 --ncuda 1" "both:--ncpu $ncpu --ncuda 1" \
                 "fewer:--ncpu $((ncpu > 1 ? ncpu - 1 : 1)) --ncuda 1" "default:"; do
          l=$logs/cores-$(basename "$app")-${w%%:*}-$round.log
          # shellcheck disable=SC2086
          r=$(run 40 "$l" "$B/apps/$app" $args ${w#*:})
          line+=" ${w%%:*} $(grep -oE 'seconds=[^ ]+' "$l" | tail -n 1 | cut -d= -f2)${r#ok}"
        done
        say "$line"
      done <<'LIST'
cardiac/cardiac3d --size 256 256 128 --steps 20 --quiet
ft/ft --class A
airfoil/airfoil --mesh-size 200 300 --iterations 50 --quiet
heat3d/heat3d --size 256 256 256 --steps 20 --quiet
LIST
    done
    l=$logs/cores-heat3d-default-workers.log
    r=$(run 40 "$l" "$B/apps/heat3d/heat3d" --size 256 256 256 --steps 20)
    say "  the default's workers ($r): $(grep -oE '[0-9]+ CPU [^,]*CUDA workers' "$l" | head -n 1)"
  fi
fi

if want bench; then
  step "bench_heat3d_gpu 512^3"
  if ! no_gpu && ! no_time; then
    r=$(run 90 "$logs/bench_heat3d_gpu.log" "$B/bench/bench_heat3d_gpu")
    say "  bench_heat3d_gpu: $r"
    grep -E '^(bench|copy|kernel|gpu|auto|fraction|ratio|tessera: tiles)' "$logs/bench_heat3d_gpu.log" >> "$S"
  fi
fi

if want bus; then
  # Whether the link's two ways each keep one way's rate at once (the planner prices a streamed
  # grid's upload and write-back so): 1 GiB of pinned memory each way, alone and together.
  step "bus: host<->GPU one way and both ways at once"
  if ! no_gpu && ! no_time; then
    r=$(run 30 "$logs/bus.log" "$B/bench/bench_bus_duplex")
    say "  bench_bus_duplex: $r"
    grep '^bus' "$logs/bus.log" >> "$S"
  fi
fi

if want ooc; then
  # Issue #47: a grid larger than the GPU, which STARPU_LIMIT_CUDA_MEM makes a 4 GiB one:
  # heat3d 1024^3 (17 GB) GPU-only streams through it; its checksum must be the CPU-only run's
  # (both in 16 steps, a depth that divides them) and the placement line says "streamed".
  step "out-of-core: heat3d 1024^3 on a GPU limited to 4 GiB"
  if ! no_gpu && ! no_time; then
    for w in gpu cpu; do
      case $w in gpu) wk=(--ncpu 0 --ncuda 1) ;; cpu) wk=(--ncpu "$ncpu" --ncuda 0) ;; esac
      r=$(STARPU_LIMIT_CUDA_MEM=4096 run 120 "$logs/ooc-heat3d-$w.log" "$B/apps/heat3d/heat3d" \
            --size 1024 1024 1024 --steps 16 "${wk[@]}")
      say "  heat3d 1024^3 [$w] $r $(grep -oE '(MLUPS|checksum)=[^ ]+' "$logs/ooc-heat3d-$w.log" | tr '\n' ' ')"
    done
    grep -m1 -h 'streamed' "$logs/ooc-heat3d-gpu.log" >> "$S" || say "  (no streamed placement line)"
  fi
fi

# The steady step of a run: runs of n and 2n steps (the first pass, which fills the GPU, left
# out by the difference), each line of the summary with the placement line's predicted step.
# steady <name> <seconds a run> <n> <binary> <args...> (@K@ in an argument: the run's steps)
steady() {
  local name=$1 s=$2 n=$3 bin=$4 a b k r
  shift 4
  for k in "$n" $((2 * n)); do
    r=$(run "$s" "$logs/$name-$k.log" "$B/apps/$bin" --steps "$k" "${@//@K@/$k}")
    say "  $name $k steps: $r $(grep -oE '(seconds|checksum)=[^ ]+' "$logs/$name-$k.log" | tr '\n' ' ')"
  done
  a=$(grep -oE 'seconds=[^ ]+' "$logs/$name-$n.log" | tail -n 1 | cut -d= -f2)
  b=$(grep -oE 'seconds=[^ ]+' "$logs/$name-$((2 * n)).log" | tail -n 1 | cut -d= -f2)
  [ -n "$a" ] && [ -n "$b" ] && say "  $name steady: $(awk -v a="$a" -v b="$b" -v n="$n" \
    'BEGIN { printf "%.3f ms a step", (b - a) / n * 1000 }')"
  grep -m1 -hE '^tessera: (tiles|placement)' "$logs/$name-$n.log" | cut -c1-400 >> "$S"
}

if want ooc-steady; then
  # Issue #47 on a real bus: the streamed step over 4 and 8 visits of the depth the 16-step run
  # chose, and the bytes moved each way, from the runs' traces (STARPU_BUS_STATS says 0 in a run
  # that records: Tessera's recorder reads and resets StarPU's counters); the simulation's: 35.4
  # ms at depth 14 on a 50 GB/s link (docs/simulation.md, "Grids larger than the GPU").
  step "out-of-core steady state: heat3d 1024^3 GPU-only on 4 GiB, 4 and 8 visits, bus bytes"
  if ! no_gpu && ! no_time; then
    depth=$(grep -m1 -oE '[0-9]+ steps a visit' "$logs/ooc-heat3d-gpu.log" 2>/dev/null | cut -d' ' -f1)
    STARPU_LIMIT_CUDA_MEM=4096 steady ooc-steady 90 $((4 * ${depth:-16})) heat3d/heat3d \
      --size 1024 1024 1024 --ncpu 0 --ncuda 1 --trace "$logs/ooc-steady-@K@.json"
    # Each bus's bytes (the trace's counters hold the total so far), the steady bytes a step.
    n=$((4 * ${depth:-16}))
    python3 - "$n" "$logs/ooc-steady-$n.json" "$logs/ooc-steady-$((2 * n)).json" <<'PY' | tee -a "$S"
import json, sys
n, runs = int(sys.argv[1]), []
for f in sys.argv[2:]:
    try:
        ev = json.load(open(f))["traceEvents"]
    except (OSError, ValueError, KeyError):
        sys.exit(print(f"  ooc-steady bus: no trace {f}"))
    bus = {}
    for e in ev:
        if e.get("ph") == "C" and e.get("name", "").startswith("bus "):
            bus[e["name"]] = max(bus.get(e["name"], 0), e["args"].get("bytes", 0))
    runs.append((bus, ev))
# The two runs may choose other plans (their models differ): the longer run alone, from the end
# of its second pass (the first fills the GPU, and visits waited 100-120 ms in both on the H200)
# to its last, the step from its blocks' ends and each way's bytes from the bus counters there.
ev = runs[1][1]
ends = {}
for e in ev:
    if e.get("ph") == "X" and "time-block" in e.get("name", ""):
        s = e["args"]["step"]
        ends[s] = max(ends.get(s, 0), e["ts"] + e["dur"])
passes = sorted(ends)
if len(passes) < 4:
    sys.exit(print(f"  ooc-steady: {len(passes)} passes in {sys.argv[3]}, too few"))
first, last = passes[1], passes[-1]
steps = last - first
print(f"  ooc-steady passes 3-{len(passes)}: {(ends[last] - ends[first]) / steps / 1e3:.2f} ms a "
      f"step ({passes[1] - passes[0]} steps a visit), each pass: "
      + " ".join(f"{(ends[b] - ends[a]) / (b - a) / 1e3:.1f}" for a, b in zip(passes, passes[1:])))
for name in sorted(runs[1][0]):
    at = [max([e["args"].get("bytes", 0) for e in ev if e.get("ph") == "C" and
               e.get("name") == name and e["ts"] <= t] or [0]) for t in (ends[first], ends[last])]
    print(f"  ooc-steady {name}: {(at[1] - at[0]) / steps / 1e9:.3f} GB a step")
PY
  fi
fi

if want one-gpu; then
  # Issue #48's one-GPU rows (docs/simulation.md, "Several GPUs": heat3d 6.267, jacobi2d 4.964,
  # cardiac3d 2.96, nbody 754.1 ms a step simulated on the H100's calibration), on this GPU.
  step "one GPU: the multi-GPU table's one-GPU rows, steady step"
  if ! no_gpu && ! no_time; then
    steady heat3d-1024 60 100 heat3d/heat3d --size 1024 1024 1024 --ncpu 0 --ncuda 1 --quiet
    steady jacobi2d-32768 60 100 jacobi2d/jacobi2d --size 32768 32768 --ncpu 0 --ncuda 1 --quiet
    steady cardiac3d-512 60 100 cardiac/cardiac3d --size 512 512 512 --ncpu 0 --ncuda 1 --quiet
    steady nbody-65536 60 4 nbody/nbody --size 65536 --ncpu 0 --ncuda 1 --quiet
  fi
fi

if want nbody-rates; then
  # The pair kernel's rate by tile side (issue 71; docs/gpu.md's nbody-rates table): a pairs
  # task's mean time GPU-only, its G interactions/s (side^2 / mean) and the share of the GPU's
  # FP64 vector peak at 20 flops an interaction (FP64_PEAK_TFLOPS, else by the GPU's name: H100
  # and H200 SXM 34, H100 PCIe 25.6); and #48's CPU+GPU rows.
  step "nbody: a pairs task's time by tile size, GPU-only; CPU+GPU against GPU-only"
  if ! no_gpu && ! no_time; then
    gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
    case "$gpu_name" in
      *H100*PCIe*) peak=25.6 ;;
      *H100* | *H200*) peak=34 ;;
      *) peak=0 ;;
    esac
    peak=${FP64_PEAK_TFLOPS:-$peak}
    for n in 1024 4096 16384 65536; do
      for t in 1024 4096 16384 65536; do
        [ "$t" -le "$n" ] || continue
        over && break 2
        l=$logs/nbody-$n-tile-$t.log
        r=$(run 40 "$l" "$B/apps/nbody/nbody" --size "$n" --tile "$t" --keep-gpu-tiles --steps 8 \
            --ncpu 0 --ncuda 1)
        mean=$(awk '$1 == "pairs" { print $4 }' "$l" | head -n 1)
        rate=$(awk -v t="$t" -v m="${mean:-0}" -v p="$peak" 'BEGIN {
          if (m <= 0) { print "no pairs tasks"; exit }
          g = t * t / m / 1e3
          printf "%.1f us a task, %.1f G interactions/s", m, g
          if (p > 0) printf ", %.1f %% of FP64 peak (%s TFLOP/s)", g * 20 / (p * 1e3) * 100, p }')
        say "  nbody $n tile $t [gpu, ${gpu_name:-unknown GPU}]: $r $(grep -oE 'seconds=[^ ]+' "$l") $rate"
      done
    done
    for n in 4096 16384; do
      for w in "gpu:--ncpu 0 --ncuda 1" "both:--ncuda 1"; do
        l=$logs/nbody-$n-${w%%:*}.log
        # shellcheck disable=SC2086
        r=$(run 40 "$l" "$B/apps/nbody/nbody" --size "$n" --steps 50 ${w#*:})
        say "  nbody $n [${w%%:*}] 50 steps: $r $(grep -oE 'seconds=[^ ]+' "$l") $(grep -m1 -oE 'split=[^ ]+|tiles=[^ ]+' "$l" | tr '\n' ' ')"
      done
    done
  fi
fi

if want sanitize; then
  step "compute-sanitizer memcheck and racecheck, heat3d 48x40x32, GPU-only"
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)
  if [ -z "$cs" ]; then
    say "  skipped: no compute-sanitizer on this node"
  elif ! no_gpu && ! no_time; then
    for tool in memcheck racecheck; do
      over && break
      r=$(run 60 "$logs/$tool-heat3d.log" "$cs" --tool "$tool" --error-exitcode 1 "$B/apps/heat3d/heat3d" \
          --size 48 40 32 --tile 48 40 8 --steps 5 --ncpu 0 --ncuda 1 --quiet)
      say "  $tool: $r $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$logs/$tool-heat3d.log" | tr '\n' ' ')"
    done
  fi
fi

if want fxt; then
  step "FxT trace: heat3d 256^3, 20 steps, CPU + GPU, StarPU's paje.trace"
  if ! no_gpu && ! no_time; then
    rm -rf "$out/fxt" && mkdir -p "$out/fxt"
    r=$(run 60 "$logs/heat3d-fxt.log" "$B/apps/heat3d/heat3d" --size 256 256 256 --steps 20 --ncuda 1 \
        --fxt "$out/fxt")
    say "  heat3d --fxt: $r"
    if [ -f "$out/fxt/paje.trace" ]; then
      # Bus transfers are Paje links (StarPU's "Link" events: one per data transfer, with its bytes).
      say "  paje.trace: $(wc -l < "$out/fxt/paje.trace") lines, $(grep -c 'StartLink' "$out/fxt/paje.trace" 2>/dev/null || echo 0) StartLink, $(grep -c 'EndLink' "$out/fxt/paje.trace" 2>/dev/null || echo 0) EndLink events"
      grep -m 20 'Link' "$out/fxt/paje.trace" > "$logs/paje-links-sample.txt"
      gzip -f "$out/fxt/paje.trace"
    else
      say "  no paje.trace written: $(tail -n 2 "$logs/heat3d-fxt.log" | tr '\n' ' ')"
    fi
  fi
fi

step "done in $((SECONDS - t0)) s"
archive
