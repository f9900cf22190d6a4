#!/usr/bin/env bash
# One device run for issue 12's transpose part on odd, rectangular and skinny f32 shapes: build for
# sm_90, then the stages named on the command line in that order, each only if it fits before the
# deadline.  Key lines to stdout and OUT/summary.txt; CSVs and logs under OUT (at most six files).
#   scripts/transpose-odd-device.sh OUT [staged] [tests] [tune] [bench] [heldout] [sanitize] [verify]
#     staged    test_transpose_gpu "[staged]" (tiled_multirow's tile orders and per-problem defaults)
#     tests     the whole test_transpose_gpu
#     tune      every config of tiled_multirow and transpose_skinny and cuBLAS geam on a few shapes
#               (`kiln tune --no-store --csv`): the evidence behind the defaults; top lines printed
#     bench     `kiln bench transpose --shape S --variants transpose_tiled_multirow,transpose_skinny
#               --vs vendor` (default configs, op()'s choice, geam in the same run) over the sweep
#     heldout   the same over shapes not looked at while choosing the defaults
#     sanitize  compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on "[staged]"
#     verify    kiln verify transpose
#     ncu       Nsight Compute: DRAM/L2 traffic and launch shapes of multirow and geam at odd shapes
# Environment: KILN_DEADLINE_S (seconds for the whole script, default 225), KILN_BUILD_DIR
# (default build-gpu).
set -uo pipefail
out=${1:?usage: scripts/transpose-odd-device.sh OUT [stages...]}
shift
cd "$(dirname "$0")/.."
deadline=${KILN_DEADLINE_S:-225}
b=${KILN_BUILD_DIR:-$PWD/build-gpu}
case $b in /*) ;; *) b=$PWD/$b ;; esac
export KILN_CACHE_DIR=$b/cache KILN_CONFIG_PATH=
tp=$b/plugins-transpose
mkdir -p "$tp" "$KILN_CACHE_DIR"
exec > >(tee -a "$out/summary.txt") 2>&1
left() { echo $((deadline - SECONDS)); }
fits() { [ "$(left)" -gt "$1" ] || { echo "skipped: $2 (only $(left) s left)"; return 1; }; }
t0=$SECONDS
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_transpose kiln_vendor test_transpose_gpu; } \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
echo "build $((SECONDS - t0)) s"
ln -sf $b/lib/kiln/plugins/libkiln_transpose.so $b/lib/kiln/plugins/libkiln_vendor.so "$tp/"
k=$b/bin/kiln
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1

# Squares, odd extents, and short sides 8..256 against 10^6 both ways (non-powers of two too).
sweep="2048x2048 4096x4096 8192x8192 16384x16384 4097x4099 12345x6789 3001x5003 8191x8193
8x1000000 24x1000000 32x1000000 48x1000000 64x1000000 100x1000000 128x1000000 200x1000000 256x1000000
1000000x8 1000000x24 1000000x32 1000000x48 1000000x64 1000000x100 1000000x128 1000000x200 1000000x256
16x1000000 1000000x16 20x1000000 1000000x20 33x100003 100003x33"
heldout="5000x7001 6789x12345 96x500000 500000x160 777x20001 20001x40 40x300007 12x2000000
bf16:4097x4099 bf16:100x1000000 bf16:1000000x100 bf16:16384x16384"

bench_list() {  # $1: label, rest: shapes
  local label=$1
  shift
  echo "== bench ($label): default configs (for the problem); * = op()'s choice with no database; ratio = vendor time / variant time"
  for item in "$@"; do  # [dtype:]shape
    local dtype=f32 shape=$item
    case $item in *:*) dtype=${item%%:*} shape=${item#*:} ;; esac
    fits 12 "bench $item" || continue
    KILN_PLUGIN_PATH=$tp timeout 30 $k bench transpose --dtype "$dtype" --shape "$shape" \
      --variants transpose_tiled_multirow,transpose_skinny --vs vendor --runs 10 --csv 2>/dev/null | tee -a "$out/bench.csv" | python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin)]
if len(rows) < 2: sys.exit(print("  %s: no csv" % sys.argv[1]))
h = {k: i for i, k in enumerate(rows[0])}
cells = []
for r in rows[1:]:
    if len(r) != len(rows[0]) or r[0] == "op": continue
    name = r[h["variant"]].replace("transpose_", "") + ("*" if r[h["dispatched"]] == "1" else "")
    if r[h["median_us"]]:
        cells.append("%s %.1f us %s" % (name, float(r[h["median_us"]]), ("%.2fx" % float(r[h["ratio"]])) if r[h["ratio"]] else ""))
    else:
        cells.append("%s %s" % (name, r[h["outcome"]]))
print("  %-19s %s" % (sys.argv[1], " | ".join(cells)))' "$item"
  done
}

for stage in "$@"; do
  case $stage in
    staged)
      fits 30 "test [staged]" && {
        timeout 60 $b/bin/test_transpose_gpu "[staged]" >"$out/tests.log" 2>&1
        echo "test_transpose_gpu [staged] rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ')"
        grep -E "FAILED" -A8 "$out/tests.log" | head -30; } ;;
    tests)
      fits 40 "test_transpose_gpu" && {
        t=$(( $(left) - 10 )); [ $t -gt 110 ] && t=110
        timeout $t $b/bin/test_transpose_gpu >>"$out/tests.log" 2>&1
        echo "test_transpose_gpu rc=$? ($t s allowed) $(tail -2 "$out/tests.log" | tr '\n' ' ')"
        grep -E "FAILED" -A8 "$out/tests.log" | head -30; } ;;
    tune)
      echo "== tune: every config of tiled_multirow, skinny and geam (10 runs), fastest 6, the defaults, geam"
      while read -r shape variants; do
        fits 20 "tune $shape" || continue
        KILN_PLUGIN_PATH=$tp timeout 25 $k tune transpose --shape "$shape" \
          --variants "$variants",transpose_cublas_geam --force --no-store --runs 10 \
          --budget-seconds 14 --csv 2>/dev/null </dev/null | tee -a "$out/tune.csv" | python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin)]
hdr = next((r for r in rows if "median_us" in r), None)
if not hdr: sys.exit(print("  %s: no csv" % sys.argv[1]))
i = {h: n for n, h in enumerate(hdr)}
data = sorted((r for r in rows if r is not hdr and len(r) == len(hdr) and r[i["median_us"]]), key=lambda r: float(r[i["median_us"]]))
print("  %s: %d timed" % (sys.argv[1], len(data)))
show = data[:6] + [r for r in data[6:] if "geam" in r[i["variant"]] or r[i["default_config"]] == "1"]
for r in show:
    print("  %9.1f us  %s %s%s" % (float(r[i["median_us"]]), r[i["variant"]].replace("transpose_", ""), r[i["config"]],
                                  " (default)" if r[i["default_config"]] == "1" else ""))' "$shape"
      done <<'LIST'
4097x4099 transpose_tiled_multirow
16384x16384 transpose_tiled_multirow
128x1000000 transpose_skinny,transpose_tiled_multirow
1000000x100 transpose_skinny,transpose_tiled_multirow
12345x6789 transpose_tiled_multirow
24x1000000 transpose_skinny,transpose_tiled_multirow
LIST
      ;;
    bench) bench_list sweep $sweep ;;
    heldout) bench_list held-out $heldout ;;
    sanitize)
      for tool in memcheck racecheck; do
        fits 25 "$tool [staged]" || continue
        t=$(( $(left) - 15 )); [ $t -gt 90 ] && t=90
        KILN_TEST_QUICK=1 timeout $t compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_transpose_gpu "[staged]" \
          >"$out/sanitizer.tmp" 2>&1
        echo "$tool [staged] rc=$? ($t s allowed) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|All tests|failed' "$out/sanitizer.tmp" | tail -2 | tr '\n' ' ')"
        tail -c 20000 "$out/sanitizer.tmp" >>"$out/sanitizer.log"; rm -f "$out/sanitizer.tmp"
      done ;;
    verify)
      fits 30 "verify transpose" && {
        t=$(( $(left) - 5 )); [ $t -gt 60 ] && t=60
        KILN_PLUGIN_PATH=$tp timeout $t $k verify transpose --max-configs 4 >"$out/verify.log" 2>&1
        echo "verify transpose rc=$? $(tail -1 "$out/verify.log")"; } ;;
    ncu)
      # DRAM and L2 traffic and launch shapes of multirow, skinny and geam (what the vendor runs).
      nc=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      [ -n "$nc" ] || { echo "ncu: not found"; continue; }
      for shape in ${KILN_NCU_SHAPES:-4097x4099}; do
        fits 30 "ncu $shape" || continue
        KILN_PLUGIN_PATH=$tp timeout 40 $nc --csv --print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_read.sum,lts__t_requests_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__block_size,launch__grid_size,launch__registers_per_thread \
          $k bench transpose --shape "$shape" --variants transpose_tiled_multirow --vs vendor --runs 1 --warmup 0 \
          >"$out/ncu.tmp" 2>/dev/null
        echo "== ncu $shape (rc $?): kernel, block, grid, regs, time us, DRAM read/write MB, L2 read/write sectors and requests, active warps"
        python3 - "$out/ncu.tmp" <<'PY'
import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1], errors="replace") if l.startswith('"')))
if not rows: sys.exit(print("  no csv"))
h = {k: i for i, k in enumerate(rows[0])}
kern = {}
for r in rows[1:]:
    if len(r) != len(rows[0]): continue
    k = kern.setdefault(r[h["ID"]], {"name": r[h["Kernel Name"]][:70]})
    k[r[h["Metric Name"]]] = r[h["Metric Value"]].replace(",", "")
seen = set()
for i, k in sorted(kern.items(), key=lambda x: int(x[0])):
    key = (k["name"], k.get("launch__grid_size"))
    if key in seen: continue
    seen.add(key)
    f = lambda m, d=1.0: "%.1f" % (float(k.get(m, "nan")) / d)
    print("  %-70s b%s g%s r%s %s us  dram %s/%s MB  l2 %s/%s Msec %s/%s Mreq  warps %s%%" % (k["name"], k.get("launch__block_size"), k.get("launch__grid_size"),
          k.get("launch__registers_per_thread"), f("gpu__time_duration.sum", 1e3), f("dram__bytes_read.sum", 1e6),
          f("dram__bytes_write.sum", 1e6), f("lts__t_sectors_op_read.sum", 1e6), f("lts__t_sectors_op_write.sum", 1e6),
          f("lts__t_requests_op_read.sum", 1e6), f("lts__t_requests_op_write.sum", 1e6), f("sm__warps_active.avg.pct_of_peak_sustained_active")))
PY
        head -c 3000 "$out/ncu.tmp" | grep -v '^"' | head -5
        rm -f "$out/ncu.tmp"
      done ;;
    *) echo "unknown stage $stage" ;;
  esac
done
echo "total $SECONDS s"
