#!/usr/bin/env bash
# One device run for topk_sample_select (issue 12): build the topk plugin, the CLI and the topk
# GPU tests for sm_90; run the tests; compute-sanitizer memcheck and racecheck on
# test_topk_sample_select_gpu (KILN_TEST_QUICK=1); `kiln verify topk`; `kiln bench topk` on the
# issue's shapes against the best earlier variant of each; torch.topk on the same shapes in the
# same run.  Stages run in order of importance and stop starting new ones after DEADLINE seconds.
#   scripts/topk-sample-device.sh OUT [DEADLINE]
set -uo pipefail
out=${1:?usage: scripts/topk-sample-device.sh OUT [DEADLINE]}
deadline=${2:-330}
cd "$(dirname "$0")/.."
b=build-gpu
export KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_topk test_topk_gpu test_topk_half_gpu test_topk_sample_select_gpu; } \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
say "build $SECONDS s"
# (bench shape, the best earlier variant on it)
shapes="1x67108864x100:topk_radix_select 1x268435456x1000:topk_block_merge 1x1048576x4096:topk_radix_select
64x1048576x64:topk_block_merge 1024x65536x256:topk_radix_select 4096x32768x32:topk_block_merge 16384x1024x8:topk_row_select
1x16777216x100:topk_radix_select 1x67108864x2048:topk_radix_select 1x1048576x1:topk_block_merge"
left "test_topk_sample_select_gpu" && { timeout 60 $b/bin/test_topk_sample_select_gpu >"$out/tests.log" 2>&1
  say "test_topk_sample_select_gpu rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ')"; }
left bench && { : >"$out/bench.log"; for sv in $shapes; do
  s=${sv%%:*} vs=${sv##*:}
  echo "\$ kiln bench topk --shape $s --variants topk_sample_select,$vs --vs $vs" >>"$out/bench.log"
  timeout 40 $b/bin/kiln bench topk --shape "$s" --variants "topk_sample_select,$vs" --vs "$vs" >>"$out/bench.log" 2>&1 ||
    echo "(failed: rc=$?)" >>"$out/bench.log"
done; grep -vE "^\s*$" "$out/bench.log" | tee -a "$sum"; }
left torch && { timeout 90 python3 scripts/bench_torch_topk.py $(for sv in $shapes; do printf '%s ' "${sv%%:*}"; done) \
  >"$out/torch.log" 2>&1; say "torch rc=$?"; tee -a "$sum" <"$out/torch.log"; }
left "test_topk_gpu test_topk_half_gpu" && for t in test_topk_gpu test_topk_half_gpu; do
  timeout 90 $b/bin/$t >>"$out/tests.log" 2>&1; say "$t rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ')"; done
for tool in memcheck racecheck; do left "$tool" || continue
  KILN_TEST_QUICK=1 timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_topk_sample_select_gpu \
    >"$out/san_$tool.log" 2>&1
  say "$tool test_topk_sample_select_gpu rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases' "$out/san_$tool.log" | tail -2 | tr '\n' ' ')"
done
left "verify" && { timeout 60 $b/bin/kiln verify topk >"$out/verify.log" 2>&1; say "kiln verify topk rc=$? $(tail -3 "$out/verify.log" | tr '\n' ' ')"; }
# The filter tiles and grids of topk_sample_select on two shapes (no database write).
for shape in 1x67108864x100 4096x32768x32; do left "tune $shape" || continue
  timeout 40 $b/bin/kiln tune topk --shape $shape --variants topk_sample_select --force --no-store --runs 10 \
    --budget-seconds 25 --json >"$out/tune.json" 2>/dev/null
  python3 - "$out/tune.json" <<'PY' | tee -a "$sum"
import json, sys
d = json.load(open(sys.argv[1]))
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    for c in rows[:12]:
        print("tune %s %10.1f us  %s" % (p.get("key", ""), c["median_us"], c.get("config")))
PY
done
say "total $SECONDS s"
