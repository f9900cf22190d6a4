#!/usr/bin/env bash
# One device run for the fourth topk session (issue 12): build the topk plugin, the CLI and the
# topk GPU tests for sm_90, then the stages named (in the order given), each only if it can start
# before DEADLINE seconds:
#   tests   test_topk_sample_select_gpu, test_topk_gpu
#   half    test_topk_half_gpu (topk_row_select and topk_radix_select on f16/bf16)
#   bench   `kiln bench topk --shape S --variants V --vs B` on the issue's shapes and a held-out few
#   torch   python3 scripts/bench_torch_topk.py on the same shapes (same lease)
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on the topk GPU tests
#   verify  kiln verify topk
#   tune    kiln tune --no-store of the filter/row tiles on four shapes (TUNE="variant:shape ..." instead)
#   scripts/topk-fourth-device.sh OUT DEADLINE STAGE...
# SET=fifth (fifth session, topk_warp_select): the many-small-rows shapes instead of the fourth
# session's, topk_warp_select against topk_row_select; the tests stage adds
# test_topk_warp_select_gpu and the san stage runs that test alone (TESTS="t ...", SAN_TESTS="t ..."
# override the lists).
set -uo pipefail
out=${1:?usage: scripts/topk-fourth-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
b=build-gpu
export KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_topk test_topk_gpu test_topk_half_gpu test_topk_sample_select_gpu \
    test_topk_warp_select_gpu; } \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
say "build $SECONDS s"
# shape:variants:baseline.  The issue's shapes, then held-out ones (not looked at while tuning
# defaults): 1 x (2^26 - 1) k = 100, 1 x 2^22 k = 256, 256 x 131072 k = 16, 16384 x 2048 k = 32.
ss=topk_sample_select rs=topk_radix_select bm=topk_block_merge rw=topk_row_select
shapes="1x67108864x100:$ss,$rs:$rs 1x268435456x1000:$ss:$ss 64x1048576x64:$ss,$bm:$bm 4096x32768x32:$ss:$ss
1024x65536x256:$ss:$ss 1x16777216x100:$ss:$ss 1x67108864x2048:$ss:$ss 1x1048576x4096:$ss,$rs:$rs
1x1048576x1:$ss,$bm:$bm 16384x1024x8:$rw:$rw 16384x256x1:$rw:$rw 16384x4096x64:$rw:$rw
1x67108863x100:$ss:$ss 1x4194304x256:$ss,$rs:$rs 256x131072x16:$ss,$bm:$bm 16384x2048x32:$rw:$rw"
tests="test_topk_sample_select_gpu test_topk_gpu"
san_tests="test_topk_sample_select_gpu test_topk_gpu"
if [ "${SET:-fourth}" = fifth ]; then
  # Many small rows (16k rows of 256 to 4096, k 1 to 256); the last four held out (not looked at
  # while choosing topk_warp_select's defaults).
  ws=topk_warp_select
  shapes=""
  for s in 16384x1024x8 16384x4096x64 16384x2048x32 16384x256x1 16384x256x16 16384x512x32 16384x4096x1 \
           16384x1024x64 16384x4096x256 16384x3000x50 10000x1500x20 16384x768x4 20000x2500x2; do
    shapes="$shapes $s:$ws,$rw:$rw"
  done
  tests="test_topk_warp_select_gpu test_topk_gpu test_topk_sample_select_gpu"
  san_tests="test_topk_warp_select_gpu"
fi
tests=${TESTS:-$tests} san_tests=${SAN_TESTS:-$san_tests}
for stage in "$@"; do
  case $stage in
    tests)
      for t in $tests; do left "$t" || continue
        timeout 100 $b/bin/$t >"$out/$t.log" 2>&1
        say "$t rc=$? $(grep -E 'test cases|FAILED|failed' "$out/$t.log" | tail -3 | tr '\n' ' ')"
        grep -B3 -A12 "FAILED" "$out/$t.log" | head -60
      done ;;
    half)
      left test_topk_half_gpu && { timeout 90 $b/bin/test_topk_half_gpu >"$out/half.log" 2>&1
        say "test_topk_half_gpu rc=$? $(tail -2 "$out/half.log" | tr '\n' ' ')"; grep -A12 FAILED "$out/half.log" | head -30; } ;;
    bench)
      : >"$out/bench.log"
      for sv in $shapes; do left "bench ${sv%%:*}" || continue
        s=${sv%%:*} rest=${sv#*:}; vars=${rest%%:*} vs=${rest##*:}
        echo "\$ kiln bench topk --shape $s --variants $vars --vs $vs" >>"$out/bench.log"
        timeout 40 $b/bin/kiln bench topk --shape "$s" --variants "$vars" --vs "$vs" >>"$out/bench.log" 2>&1 ||
          echo "(failed: rc=$?)" >>"$out/bench.log"
      done
      grep -vE "^\s*$" "$out/bench.log" | tee -a "$sum" >/dev/null ;;
    torch)
      left torch && { timeout 100 python3 scripts/bench_torch_topk.py $(for sv in $shapes; do printf '%s ' "${sv%%:*}"; done) \
        >"$out/torch.log" 2>&1; say "torch rc=$?"; tee -a "$sum" <"$out/torch.log" >/dev/null; } ;;
    san)
      for t in $san_tests; do for tool in memcheck racecheck; do left "$tool $t" || continue
        KILN_TEST_QUICK=1 timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/$t >"$out/san.log" 2>&1
        say "$tool $t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases' "$out/san.log" | tail -2 | tr '\n' ' ')"
        grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/san.log" | head -30
      done; done ;;
    verify)
      left verify && { timeout 60 $b/bin/kiln verify topk >"$out/verify.log" 2>&1
        say "kiln verify topk rc=$? $(tail -3 "$out/verify.log" | tr '\n' ' ')"; } ;;
    tune)
      # Every config of a variant on one shape, no database write: which tile and grid is fastest.
      for vs in ${TUNE:-topk_sample_select:4096x32768x32 topk_sample_select:1024x65536x256 topk_row_select:16384x4096x64
                topk_row_select:16384x1024x8}; do left "tune $vs" || continue
        timeout 40 $b/bin/kiln tune topk --shape ${vs#*:} --variants ${vs%%:*} --force --no-store --runs 10 \
          --budget-seconds 20 --json >"$out/tune.json" 2>/dev/null
        python3 - "$out/tune.json" <<'PY' | tee -a "$sum"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("tune: no JSON (%s)" % e); sys.exit(0)
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    for c in rows[:8]:
        print("tune %s %10.1f us  %s" % (p.get("key", ""), c["median_us"], c.get("config")))
PY
      done ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
