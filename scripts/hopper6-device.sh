#!/usr/bin/env bash
# gemm_wgmma against cuBLASLt on an H200 (or whatever card the device tool gives) in one command
# (sixth session, issue 10; it measured the stream-k experiment, whose code and "[streamk]" tests
# live in branch hopper6's history): build the gemm and vendor plugins, the CLI and
# test_gemm_wgmma_gpu; run the test; compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1);
# then `kiln bench` or `kiln tune` rows over the LLM sweep (design and held-out shapes) and the
# square shapes, summarised per set.
#
#   scripts/hopper6-device.sh OUT [stage...]    stages: build test sanitize bench square tune sass ncu
#                                               (default: build test sanitize bench square)
#   ncu (eighth session, hopper8): Nsight Compute on cuBLASLt's kernel and gemm_wgmma's default
#   kernel per NCU_SHAPES item (MxNxK,tb=T, bf16, C bf16): names (cuBLASLt's encode its tile and
#   cluster), grid, cluster, registers, shared memory, speed of light, tensor pipe, stalls.
#   tune: `kiln tune --no-store --csv` per TUNE_SHAPES item (set:MxNxK,tb=T): every gemm_wgmma row
#   and cuBLASLt algo, so both the default's and the tuned ratio come out (oracle-checked: no
#   host reference of the whole product, which `kiln bench` computes and which costs tens of
#   seconds of host time at 4096^3 and up).
#   TUNE_EXTRA: more set:MxNxK,tb=T items, tuned after TUNE_SHAPES (or its default list).
#   PREBUILT: a build folder (bin/, lib/) carried in; the build stage only checks that it runs.
#   DEADLINE (seconds from the start, default 280): no stage or bench row starts after it, and
#   each is cut at what is left, so the script ends before the device call's timeout.
#   TEST_FILTER narrows the test stage (Catch2 tags); SAN_TESTS the sanitizer's ("[splitk]").
#   DESIGN / HELDOUT / SQUARE: the shape lists (m x n x k,tb=T); BENCH_RUNS the timed runs per row.
set -uo pipefail
out=${1:?usage: scripts/hopper6-device.sh OUT [stage...]}
shift
stages=${*:-build test sanitize bench square}
mkdir -p "$out"
cd "$(dirname "$0")/.."
start=$SECONDS
deadline=${DEADLINE:-280}
left() { echo $((deadline - (SECONDS - start))); }
B=$(realpath -m "${PREBUILT:-${KILN_BUILD_DIR:-build-gpu}}")
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
S="$out/summary.txt"
note() { echo "$*" | tee -a "$S"; }
export KILN_CACHE_DIR=$B/cache KILN_PLUGIN_PATH=$B/lib/kiln/plugins KILN_CONFIG_PATH=
K=$B/bin/kiln
T=$B/bin/test_gemm_wgmma_gpu
# Time-limited run: never past the deadline, at most $1 seconds.
run_for() {
  local cap=$1 l
  shift
  l=$(left)
  [ "$l" -le 5 ] && { note "deadline: skipped $*"; return 124; }
  [ "$cap" -gt "$l" ] && cap=$l
  timeout "$cap" "$@"
}
bench_set() {  # set-name shapes...
  local set=$1
  shift
  for sh in "$@"; do
    [ "$(left)" -le 8 ] && { note "deadline: bench $set $sh not run"; continue; }
    run_for 40 "$K" bench gemm --dtype "${DTYPE:-bf16}" --shape "$sh,c16=1" --variants gemm_wgmma --vs vendor \
      --csv --runs "${BENCH_RUNS:-20}" 2>>"$out/bench.err" | tail -n +2 | sed "s/^/$set,/" >>"$out/bench.csv" ||
      note "bench $sh: rc=$?"
  done
}
for stage in $stages; do
  t0=$SECONDS
  case $stage in
    build)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
      # A build carried in (PREBUILT: bin/ and lib/ built on the 2-core host for sm_90) saves the
      # device minutes; it is used when it starts here, else everything is built.
      if [ -n "${PREBUILT:-}" ] && LD_LIBRARY_PATH="$(realpath -m "$PREBUILT")/lib:${LD_LIBRARY_PATH:-}" \
        KILN_PLUGIN_PATH="$(realpath -m "$PREBUILT")/lib/kiln/plugins" "$(realpath -m "$PREBUILT")/bin/kiln" devices >"$out/prebuilt.log" 2>&1; then
        note "build: prebuilt $PREBUILT runs here ($((SECONDS - t0)) s)"
        continue
      fi
      [ -n "${PREBUILT:-}" ] && { note "prebuilt $PREBUILT does not run here:"; tail -3 "$out/prebuilt.log" | tee -a "$S"; }
      cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
        run_for 400 cmake --build "$B" -j16 --target kiln_cli kiln_gemm kiln_vendor test_gemm_wgmma_gpu >>"$out/build.log" 2>&1
      rc=$?
      note "build: rc=$rc ($((SECONDS - t0)) s)"
      if [ $rc -ne 0 ]; then grep -E "error|FAILED" "$out/build.log" | head -30 | tee -a "$S"; exit 1; fi
      rm -f "$out/build.log"  # at most 8 files come back from the device tool
      ;;
    test)
      run_for "${TEST_TIMEOUT:-150}" "$T" ${TEST_FILTER:+"$TEST_FILTER"} >"$out/test.log" 2>&1
      note "test_gemm_wgmma_gpu ${TEST_FILTER:-(all)}: rc=$? ($((SECONDS - t0)) s)"
      grep -E "test cases|assertions|FAILED|failed|REQUIRE|CHECK" "$out/test.log" | head -20 | tee -a "$S"
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        t1=$SECONDS
        KILN_TEST_QUICK=1 run_for "${SAN_TIMEOUT:-60}" compute-sanitizer --tool $tool --error-exitcode 3 "$T" \
          "${SAN_TESTS:-[splitk]}" >"$out/san-$tool.log" 2>&1
        note "compute-sanitizer $tool ${SAN_TESTS:-[splitk]}: rc=$? ($((SECONDS - t1)) s)"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions" "$out/san-$tool.log" | tail -3 | tee -a "$S"
      done
      ;;
    bench)  # LLM-style bf16 shapes, C bf16: the default config against cuBLASLt's default, same run
      # Design: the fifth session's 16 design shapes (I looked at these while writing the model).
      # Held out: its 16 held-out shapes plus new ones (not looked at while choosing the defaults).
      DESIGN=${DESIGN:-"1x4096x4096,tb=1 16x4096x4096,tb=1 128x11008x4096,tb=1 512x4096x11008,tb=1
        1x28672x8192,tb=1 16x8192x28672,tb=1 128x5120x5120,tb=1 512x14336x4096,tb=1 1x11008x4096,tb=0
        16x14336x4096,tb=0 128x4096x4096,tb=0 512x8192x8192,tb=0 2048x14336x4096,tb=1 8192x4096x4096,tb=1
        2048x4096x11008,tb=0 16384x5120x5120,tb=1"}
      HELDOUT=${HELDOUT:-"1x4096x11008,tb=1 7x14336x4096,tb=1 4x5120x5120,tb=1 8x28672x4096,tb=0 12x4096x14336,tb=1
        1x4096x11008,tb=0 1x28672x5120,tb=1 32x5120x14336,tb=1 96x11008x4096,tb=1 333x4096x5120,tb=1
        1000x5120x5120,tb=1 64x8192x28672,tb=1 96x11008x4096,tb=0 2048x14336x5120,tb=0 512x28672x4096,tb=1
        4096x5120x14336,tb=1 256x14336x5120,tb=1 700x8192x4096,tb=0 3000x11008x4096,tb=1 1500x4096x14336,tb=1"}
      # shellcheck disable=SC2086
      bench_set design $DESIGN
      # shellcheck disable=SC2086
      bench_set heldout $HELDOUT
      note "bench stage: $((SECONDS - t0)) s"
      ;;
    square)  # the issue's square shapes, bf16 and f16, C in the input type
      SQUARE=${SQUARE:-"4096x4096x4096,tb=1 8192x8192x8192,tb=1"}
      # shellcheck disable=SC2086
      DTYPE=bf16 bench_set square-bf16 $SQUARE
      # shellcheck disable=SC2086
      DTYPE=f16 bench_set square-f16 $SQUARE
      note "square stage: $((SECONDS - t0)) s"
      ;;
    tune)  # every gemm_wgmma row and every cuBLASLt algo per shape (first timings, same process, oracle
      # checks): the default's ratio (cuBLASLt algo 0 / gemm_wgmma's default) and the tuned one (best
      # cuBLASLt algo / best gemm_wgmma row).  Order: the issue's shapes first, so a deadline cuts
      # the held-out tail, not them.
      # The issue's squares, then its rows below 0.85x, the other design shapes, the held-out ones
      # (the fifth session's plus seven new, none looked at while choosing defaults) and 8192^3.
      TUNE_SHAPES=${TUNE_SHAPES:-"square-bf16:4096x4096x4096,tb=1 square-f16:4096x4096x4096,tb=1
        heldout:1000x5120x5120,tb=1 heldout:333x4096x5120,tb=1 design:128x5120x5120,tb=1 design:128x4096x4096,tb=0
        design:512x4096x11008,tb=1 heldout:512x28672x4096,tb=1 design:1x4096x4096,tb=1 design:16x4096x4096,tb=1
        design:128x11008x4096,tb=1 design:1x28672x8192,tb=1 design:16x8192x28672,tb=1 design:512x14336x4096,tb=1
        design:1x11008x4096,tb=0 design:16x14336x4096,tb=0 design:512x8192x8192,tb=0 design:2048x14336x4096,tb=1
        design:8192x4096x4096,tb=1 design:2048x4096x11008,tb=0 design:16384x5120x5120,tb=1
        heldout:1x4096x11008,tb=1 heldout:7x14336x4096,tb=1 heldout:4x5120x5120,tb=1 heldout:8x28672x4096,tb=0
        heldout:12x4096x14336,tb=1 heldout:1x4096x11008,tb=0 heldout:1x28672x5120,tb=1 heldout:32x5120x14336,tb=1
        heldout:96x11008x4096,tb=1 heldout:64x8192x28672,tb=1 heldout:96x11008x4096,tb=0 heldout:2048x14336x5120,tb=0
        heldout:4096x5120x14336,tb=1 heldout:256x14336x5120,tb=1 heldout:700x8192x4096,tb=0
        heldout:3000x11008x4096,tb=1 heldout:1500x4096x14336,tb=1 square-bf16:8192x8192x8192,tb=1
        square-f16:8192x8192x8192,tb=1"}
      for item in $TUNE_SHAPES ${TUNE_EXTRA:-}; do  # TUNE_EXTRA: more set:shape items after the list
        set=${item%%:*} sh=${item#*:}
        [ "$(left)" -le 10 ] && { note "deadline: tune $set $sh not run"; continue; }
        dt=bf16
        case $set in *f16*) [ "${set%bf16*}" = "$set" ] && dt=f16 ;; esac
        run_for 45 "$K" tune gemm --dtype "$dt" --shape "$sh,c16=1" --variants gemm_wgmma,gemm_cublaslt \
          --no-store --csv --runs "${TUNE_RUNS:-10}" --finalists 1 >"$out/.tune.tmp" 2>>"$out/tune.err" ||
          note "tune $sh: rc=$?"
        [ -s "$out/tune.csv" ] || head -1 "$out/.tune.tmp" | sed 's/^/set,/' >"$out/tune.csv"
        tail -n +2 "$out/.tune.tmp" | sed "s/^/$set,/" >>"$out/tune.csv"
      done
      rm -f "$out/.tune.tmp"
      note "tune stage: $((SECONDS - t0)) s"
      ;;
    ncu)  # which kernel cuBLASLt runs and what limits gemm_wgmma's (one launch of each, cold L2)
      NCU_SHAPES=${NCU_SHAPES:-"700x8192x4096,tb=0 1000x5120x5120,tb=1 128x5120x5120,tb=1 4096x4096x4096,tb=1"}
      # Only the metrics this ncu knows (an unknown one fails the whole profile).
      want=${NCU_METRICS:-sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum}
      known=$(timeout 30 ncu --query-metrics --chip gh100 2>/dev/null | awk '{print $1}')
      metrics=
      for m in ${want//,/ }; do
        grep -qx "${m%%.*}" <<<"$known" && metrics=${metrics:+$metrics,}$m
      done
      note "ncu metrics: ${metrics:-none} (of $want)"
      for sh in $NCU_SHAPES; do
        [ "$(left)" -le 20 ] && { note "deadline: ncu $sh not run"; continue; }
        echo "=== ncu $sh" >>"$out/ncu.log"
        run_for 90 ncu --clock-control none --kernel-name regex:'nvjet|wgmma|sm90|cutlass|xmma|splitK|reduce' \
          --launch-count "${NCU_LAUNCHES:-4}" --section LaunchStats --section Occupancy --section SpeedOfLight \
          --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
          --section SchedulerStats ${metrics:+--metrics "$metrics"} \
          "$K" bench gemm --dtype bf16 --shape "$sh,c16=1" --variants gemm_wgmma --vs vendor --runs 1 --warmup 0 \
          >>"$out/ncu.log" 2>&1 || note "ncu $sh: rc=$?"
      done
      # The lines that tell the story, per profiled kernel.
      grep -E "^=== ncu|^  [a-zA-Z_].*\(.*\)x\(|Duration|Compute \(SM\) Throughput|^ +Memory Throughput|DRAM Throughput|L2 Hit Rate|Cluster Size|Grid Size|Block Size|Registers Per|Dynamic Shared|Waves Per SM|gmma|sector_hit|dram__bytes|Issued Warp|No Eligible|Warp Cycles Per Issued|Achieved Occupancy" \
        "$out/ncu.log" | awk 'length > 200 {$0 = substr($0, 1, 110) " ... " substr($0, length - 80)} 1' | tee -a "$S"
      note "ncu stage: $((SECONDS - t0)) s"
      ;;
    sass)  # local loads / stores in the gemm kernels (spills), next to their wgmma count
      so=$(find "$B" -name 'libkiln_gemm*.so' | head -1)
      cuobjdump -sass "$so" 2>/dev/null | awk '/Function :/ {f=$3} /HGMMA/ {h[f]++} /LDL|STL/ {l[f]++}
        END {for (f in l) if (f ~ /gemm_wgmma_kernel/) print "sass", l[f], "local ld/st,", h[f], "HGMMA:", substr(f, 1, 140)}' |
        tee -a "$S"
      ;;
  esac
done
# Per set: every row, the ratio (cuBLASLt / gemm_wgmma, > 1 is faster), geomean, min, rows below 0.85.
if [ -s "$out/bench.csv" ]; then
  python3 - "$out/bench.csv" <<'PYEOF' | tee -a "$S"
import csv, math, sys
rows, order = {}, []
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 15 or not r[9]:
        continue
    key = (r[0], r[2])
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key][r[4]] = (float(r[9]), r[5])
sets = {}
for key in order:
    v = rows[key]
    w = v.get("gemm_wgmma")
    others = {k: x for k, x in v.items() if k != "gemm_wgmma"}
    if not w or not others:
        print(f"{key[0]} {key[1]}: missing a variant ({', '.join(v)})")
        continue
    name, c = min(others.items(), key=lambda kv: kv[1][0])
    ratio = c[0] / w[0]
    sets.setdefault(key[0], []).append(ratio)
    cfg = " ".join(x for x in w[1].split() if x.split("=")[0] in ("BM", "BN", "stages", "consumers", "pingpong", "splits", "swap", "streamk"))
    print(f"{key[0]} {key[1]}: wgmma {w[0]:.1f} us [{cfg}] {name} {c[0]:.1f} us ratio {ratio:.3f}")
def gm(rs):
    return math.exp(sum(math.log(x) for x in rs) / len(rs))
for name, rs in sets.items():
    print(f"{name}: {len(rs)} shapes, geomean {gm(rs):.3f}, min {min(rs):.3f}, below 0.85: {sum(x < 0.85 for x in rs)}")
llm = [x for n, rs in sets.items() if not n.startswith("square") for x in rs]
if llm:
    print(f"LLM all: {len(llm)} shapes, geomean {gm(llm):.3f}, min {min(llm):.3f}, below 0.85: {sum(x < 0.85 for x in llm)}")
PYEOF
fi
# Per tuned shape: the default and the best of each, ratios, and geomeans per set.
if [ -s "$out/tune.csv" ]; then
  python3 - "$out/tune.csv" <<'PYEOF' | tee -a "$S"
import csv, math
import sys
by = {}
order = []
for r in csv.DictReader(open(sys.argv[1])):
    if not r.get("median_us"):
        continue
    key = (r["set"], r["problem"])
    if key not in by:
        by[key] = []
        order.append(key)
    by[key].append(r)
def short(cfg):
    return " ".join(x for x in cfg.split() if x.split("=")[0] in ("BM", "BN", "stages", "consumers", "pingpong", "group", "splits", "swap", "streamk", "algo"))
sets = {}
for key in order:
    rows = by[key]
    w = [r for r in rows if r["variant"] == "gemm_wgmma"]
    c = [r for r in rows if r["variant"] == "gemm_cublaslt"]
    if not w or not c:
        print(f"{key[0]} {key[1]}: missing a variant")
        continue
    t = lambda r: float(r["median_us"])
    wb, cb = min(w, key=t), min(c, key=t)
    wd = [r for r in w if r["default_config"] == "1"]
    cd = [r for r in c if r["default_config"] == "1"]
    d_ratio = t(cd[0]) / t(wd[0]) if wd and cd else float("nan")
    b_ratio = t(cb) / t(wb)
    sets.setdefault(key[0], []).append((d_ratio, b_ratio))
    dflt = f"default {t(wd[0]):.1f} us [{short(wd[0]['config'])}]" if wd else "default not timed"
    print(f"{key[0]} {key[1].split('|tf32')[0]}: {dflt} best {t(wb):.1f} us [{short(wb['config'])}] | cuBLASLt algo0 "
          f"{t(cd[0]) if cd else float('nan'):.1f} best {t(cb):.1f} [{short(cb['config'])}] | default ratio {d_ratio:.3f} tuned ratio {b_ratio:.3f}")
def gm(xs):
    xs = [x for x in xs if x == x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
allp = []
for name, rs in sets.items():
    d = [x[0] for x in rs]
    b = [x[1] for x in rs]
    allp += rs if not name.startswith("square") else []
    print(f"{name}: {len(rs)} shapes, default geomean {gm(d):.3f} min {min(d):.3f}, tuned geomean {gm(b):.3f} min {min(b):.3f}, "
          f"tuned below 0.85: {sum(x < 0.85 for x in b)}")
if allp:
    d = [x[0] for x in allp]
    b = [x[1] for x in allp]
    print(f"LLM all: {len(allp)} shapes, default geomean {gm(d):.3f} min {min(d):.3f}, tuned geomean {gm(b):.3f} min {min(b):.3f}, "
          f"tuned below 0.85: {sum(x < 0.85 for x in b)}")
PYEOF
fi
note "total: $((SECONDS - start)) s"
