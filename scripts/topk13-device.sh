#!/usr/bin/env bash
# One device run for topk13 (issue 12): topk_sample_select on f16/bf16, topk_warp_select's
# 16 x 16 x 16 and 32 x 16 x 32 tiles, and a sweep of kiln against torch.topk.
# Builds the topk plugin, the CLI and the topk GPU tests into ../build-topk13-gpu, then the stages
# named, in order, each only if it can start before DEADLINE seconds:
#   tests   TESTS (BINARY[:CATCH_FILTER] ...; default test_topk_sample_select_gpu,
#           test_topk_half_gpu, test_topk_warp_select_gpu)
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on SAN (same form; default
#           test_topk_sample_select_gpu and test_topk_warp_select_gpu)
#   sweep   `kiln bench topk --shape S --dtype D [--variants VARIANTS]` (each variant at its default
#           config, and op())
#           and python3 scripts/bench_torch_topk.py on the development shapes (DEV) -> sweep.log
#   held    the same on the held-out shapes (HELD) -> heldout.log (not read while choosing defaults)
#   tune    kiln tune --no-store of the variant named per entry (TUNE: VARIANT:SHAPE[:DTYPE]) -> tune.log
#   scripts/topk13-device.sh OUT DEADLINE STAGE...
set -uo pipefail
out=${1:?usage: scripts/topk13-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
b=${BUILD_DIR:-../build-topk13-gpu}
export KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$sum"
tests=${BUILD_TESTS:-"test_topk_sample_select_gpu test_topk_half_gpu test_topk_warp_select_gpu"}
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_topk $tests; } \
  >"$out/build.log" 2>&1 || { say "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30 | tee -a "$sum"; exit 1; }
say "build done at $SECONDS s"
# shape[:dtype]
dev=${DEV:-"1x1048576x4096 1x16777216x100 1x268435456x256 64x1048576x64 1024x65536x256 16384x4096x256 3000x10000x128 2000x16384x512 65536x256x16 1x16777216x100:bf16 1x1048576x4096:bf16 1x268435456x256:bf16 64x1048576x64:bf16 1024x65536x256:bf16 16384x4096x256:bf16 4096x8192x64:bf16 1x16777216x100:f16"}
held=${HELD:-"1x33554432x2000 128x500000x300 1x4194304x1024 5000x7000x400 1x50000000x50:bf16 256x200000x500:bf16 1x4194304x2048:bf16 32x3000000x128:f16"}
bench_set() {  # LOG SHAPES...
  local log=$1; shift
  : >"$log"
  for sd in "$@"; do left "bench $sd" || continue
    IFS=: read -r s dt <<<"$sd"
    echo "\$ kiln bench topk --shape $s --dtype ${dt:-f32} ${VARIANTS:+--variants $VARIANTS}" >>"$log"
    timeout 60 $b/bin/kiln bench topk --shape "$s" --dtype "${dt:-f32}" ${VARIANTS:+--variants $VARIANTS} \
      --max-seconds-per-row ${ROW_SECONDS:-3} 2>&1 |
      grep -vE "^\s*$" | tail -12 >>"$log" || echo "(failed)" >>"$log"
  done
  for dt in f32 bf16 f16; do
    local list=""
    for sd in "$@"; do
      IFS=: read -r s d <<<"$sd"
      [ "${d:-f32}" = $dt ] && list="$list $s"
    done
    [ -n "$list" ] && left "torch $dt" && timeout 90 python3 scripts/bench_torch_topk.py --dtype $dt $list >>"$log" 2>&1
  done
}
for stage in "$@"; do
  say "stage $stage at $SECONDS s"
  case $stage in
    tests)
      # TESTS: BINARY[:CATCH_FILTER] entries (default: the three of this branch, whole)
      : >"$out/tests.log"
      for e in ${TESTS:-test_topk_sample_select_gpu test_topk_half_gpu test_topk_warp_select_gpu}; do
        IFS=: read -r t f <<<"$e"
        left "$t" || continue
        timeout ${TEST_TIMEOUT:-120} $b/bin/$t ${f:+"$f"} >"$out/t.log" 2>&1
        say "$t ${f:-} rc=$? $(grep -E 'test cases|assertions' "$out/t.log" | tail -2 | tr '\n' ' ')"
        grep -B3 -A14 "FAILED" "$out/t.log" | head -60 >>"$out/tests.log"
      done
      rm -f "$out/t.log" ;;
    san)
      # SAN: BINARY[:CATCH_FILTER] entries
      : >"$out/san.log"
      for e in ${SAN:-test_topk_sample_select_gpu test_topk_warp_select_gpu}; do
        IFS=: read -r t f <<<"$e"
        for tool in memcheck racecheck; do left "$tool $t" || continue
          KILN_TEST_QUICK=1 timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/$t ${f:+"$f"} >"$out/s.log" 2>&1
          say "$tool $t ${f:-} rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions' "$out/s.log" | tail -3 | tr '\n' ' ')"
          grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/s.log" | head -30 >>"$out/san.log"
        done
      done
      rm -f "$out/s.log" ;;
    sweep) bench_set "$out/sweep.log" $dev; say "sweep: $(grep -c '^\$' "$out/sweep.log") shapes" ;;
    held) bench_set "$out/heldout.log" $held; say "held-out: written to heldout.log" ;;
    tune)
      : >"$out/tune.log"
      for e in ${TUNE:-topk_warp_select:3000x10000x128 topk_warp_select:4096x8192x256 topk_sample_select:1x16777216x100:bf16}; do left "tune $e" || continue
        IFS=: read -r v s dt <<<"$e"
        echo "\$ kiln tune topk --shape $s --dtype ${dt:-f32} --variants $v" >>"$out/tune.log"
        timeout 40 $b/bin/kiln tune topk --shape $s --dtype "${dt:-f32}" --variants $v --force --no-store --runs 10 \
          --budget-seconds ${TUNE_SECONDS:-8} --json >"$out/tune.json" 2>/dev/null
        python3 - "$out/tune.json" <<'PY' >>"$out/tune.log"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("tune: no JSON (%s)" % e); sys.exit(0)
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    print("tune %s: %d configs timed" % (p.get("key", ""), len(rows)))
    for c in rows[:12]:
        print("tune %10.1f us  %s" % (c["median_us"], c.get("config")))
PY
      done
      rm -f "$out/tune.json"
      say "tune: $(grep -c ' us ' "$out/tune.log") configs timed" ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
