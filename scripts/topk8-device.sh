#!/usr/bin/env bash
# One device run for topk8 (issue 12): topk_warp_select's row-per-block tiles sort lists of more
# than 128 keys with the stages of stride <= 32 in registers, and take k = 1 on aligned rows by
# 16-byte loads straight into registers.  Uses the binaries in build-gpu/ when they are there
# (built elsewhere for sm_90 and carried: bin/ and lib/ only), else builds the topk plugin, the CLI
# and the GPU tests named in TESTS.  Then the stages named, in the order given, each only if it can
# start before DEADLINE seconds:
#   tests   the four topk GPU tests
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on the warp_select and
#           sample_select tests (the two variants changed)
#   bench   `kiln bench topk --shape S [--dtype D] --variants V --vs B` on the sweep below
#   torch   python3 scripts/bench_torch_topk.py on the same shapes (f32, then bf16), same run
#   tune    kiln tune --no-store of topk_warp_select on a few shapes (TUNE="variant:shape ..." instead)
#   verify  kiln verify topk
#   scripts/topk8-device.sh OUT DEADLINE STAGE...
set -uo pipefail
out=${1:?usage: scripts/topk8-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
b=build-gpu
export KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
tests="test_topk_warp_select_gpu"
if [ -x $b/bin/kiln ] && [ -f $b/lib/kiln/plugins/libkiln_topk.so ]; then
  say "prebuilt binaries: $(ls $b/bin | tr '\n' ' ')"
else
  { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build $b -j16 --target kiln_cli kiln_topk $tests; } \
    >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
  say "build $SECONDS s"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$sum"
# shape:variants:baseline[:dtype].  Development part (looked at while choosing defaults), then the
# held-out part (marked): not looked at until the defaults were fixed.
ws=topk_warp_select rw=topk_row_select ss=topk_sample_select rs=topk_radix_select
dev_shapes="16384x4096x256 16384x4096x128 16384x2048x100 16384x4096x1 16384x4096x64 4096x8192x256"
held_shapes="8000x6000x100 10000x3000x200 16384x3072x1 3000x10000x128 16384x1500x80"
shapes=""
for s in $dev_shapes $held_shapes; do shapes="$shapes $s:$ws:$rw"; done
bf_shapes="16384x4096x256:$ws:$rw:bf16"
bf_shapes=${BF_SHAPES:-$bf_shapes}
shapes=${SHAPES:-$shapes}
tests=${TESTS:-$tests}
for stage in "$@"; do
  say "stage $stage at $SECONDS s"
  case $stage in
    tests)
      for t in $tests; do left "$t" || continue
        timeout ${TEST_TIMEOUT:-90} $b/bin/$t >"$out/tests-$t.log" 2>&1
        say "$t rc=$? $(grep -E 'test cases|FAILED|failed' "$out/tests-$t.log" | tail -3 | tr '\n' ' ')"
        grep -B3 -A12 "FAILED" "$out/tests-$t.log" | head -40
      done ;;
    san)
      for t in ${SAN_TESTS:-test_topk_warp_select_gpu}; do for tool in memcheck racecheck; do
        left "$tool $t" || continue
        KILN_TEST_QUICK=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/$t >"$out/san.log" 2>&1
        say "$tool $t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases' "$out/san.log" | tail -2 | tr '\n' ' ')"
        grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/san.log" | head -30
      done; done ;;
    bench)
      : >"$out/bench.log"
      for sv in $shapes $bf_shapes; do left "bench $sv" || continue
        IFS=: read -r s vars vs dt <<<"$sv"
        echo "\$ kiln bench topk --shape $s --dtype ${dt:-f32} --variants $vars --vs $vs" >>"$out/bench.log"
        timeout 40 $b/bin/kiln bench topk --shape "$s" --dtype "${dt:-f32}" --variants "$vars" --vs "$vs" >>"$out/bench.log" 2>&1 ||
          echo "(failed: rc=$?)" >>"$out/bench.log"
      done
      grep -vE "^\s*$" "$out/bench.log" | tee -a "$sum" >/dev/null ;;
    torch)
      left torch && {
        timeout 60 python3 scripts/bench_torch_topk.py $(for sv in $shapes; do printf '%s ' "${sv%%:*}"; done) >"$out/torch.log" 2>&1
        say "torch rc=$?"
        timeout 30 python3 scripts/bench_torch_topk.py --dtype bf16 $(for sv in $bf_shapes; do printf '%s ' "${sv%%:*}"; done) >>"$out/torch.log" 2>&1
        say "torch bf16 rc=$?"; tee -a "$sum" <"$out/torch.log" >/dev/null; } ;;
    tune)
      # Every config of a variant on one shape, no database write: which tile and cap is fastest.
      for vs in ${TUNE:-$ws:16384x4096x64 $ws:16384x2048x32 $ws:16384x4096x256 $ws:5000x5000x5}; do
        left "tune $vs" || continue
        timeout 40 $b/bin/kiln tune topk --shape ${vs#*:} --variants ${vs%%:*} --force --no-store --runs 10 \
          --budget-seconds ${TUNE_SECONDS:-12} --json >"$out/tune.json" 2>/dev/null
        python3 - "$out/tune.json" <<'PY' | tee -a "$sum"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("tune: no JSON (%s)" % e); sys.exit(0)
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    for c in rows[:14]:
        print("tune %s %10.1f us  %s" % (p.get("key", ""), c["median_us"], c.get("config")))
PY
      done ;;
    verify)
      left verify && { timeout 60 $b/bin/kiln verify topk >"$out/verify.log" 2>&1
        say "kiln verify topk rc=$? $(tail -3 "$out/verify.log" | tr '\n' ' ')"; } ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
