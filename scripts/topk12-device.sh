#!/usr/bin/env bash
# One device run for topk12 (issue 12): topk_warp_select's row-per-block tiles with the bucket
# sort (bucket_sort = 1) against the sixth session's list path (bucket_sort = 0, same build).
# Builds the topk plugin, the CLI and the topk GPU/host tests into ../build-topk12-gpu (outside the
# carried tree, so a warm machine keeps it), then the stages named, in order, each only if it can
# start before DEADLINE seconds:
#   tests   test_topk_host and test_topk_warp_select_gpu (moretests: test_topk_gpu, test_topk_half_gpu)
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on test_topk_warp_select_gpu
#   bench   `kiln bench topk --shape S [--dtype D] --variants topk_warp_select --vs topk_row_select`
#           and python3 scripts/bench_torch_topk.py on the development shapes -> bench.log
#   held    the same on the held-out shapes -> heldout.log (not read while choosing defaults)
#   main    the bench stages' kiln bench with main's topk plugin (MAIN_SRC: a tree with main's
#           plugins/topk, built into ../build-topk12-main-gpu beside ours) -> main.log: the
#           sixth session's code on the same card, same CLI
#   clocks  kiln bench with the stage-clock diagnostic plugin (-DKILN_TOPK_STAGE_CLOCKS, built into
#           ../build-topk12-clk-gpu): cycles a row per stage, block 0, on a few development shapes
#           -> summary.txt
#   tune    kiln tune --no-store of topk_warp_select on two development shapes: every tile, cap
#           and bucket_sort, so bucket_sort 0 against 1 on the same tile in one process -> tune.log
#   scripts/topk12-device.sh OUT DEADLINE STAGE...
set -uo pipefail
out=${1:?usage: scripts/topk12-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
b=${BUILD_DIR:-../build-topk12-gpu}
export KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$sum"
tests="test_topk_host test_topk_warp_select_gpu test_topk_gpu test_topk_half_gpu"
mb=../build-topk12-main-gpu
if [ -n "${MAIN_SRC:-}" ]; then
  { cmake -S "$MAIN_SRC" -B $mb -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
    nice -n 10 cmake --build $mb -j8 --target kiln_topk; } >"$mb.log" 2>&1 &
  main_pid=$!
fi
cb=../build-topk12-clk-gpu
if [[ " $* " == *" clocks "* ]]; then
  { cmake -S . -B $cb -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_CUDA_FLAGS=-DKILN_TOPK_STAGE_CLOCKS && nice -n 10 cmake --build $cb -j8 --target kiln_topk; } >"$cb.log" 2>&1 &
  clk_pid=$!
fi
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_topk $tests; } \
  >"$out/build.log" 2>&1 || { say "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30 | tee -a "$sum"; exit 1; }
say "build done at $SECONDS s"
ws=topk_warp_select rw=topk_row_select
# shape[:dtype].  Development shapes (looked at while choosing defaults), then held-out ones.
dev=${DEV:-"16384x4096x256 16384x4096x128 16384x4096x64 4096x8192x256 16384x2048x100 2000x16384x512 8192x3000x300 1000x12000x200 16384x4096x256:bf16 8192x2048x128:bf16"}
held=${HELD:-"3000x10000x128 8000x6000x100 12000x1500x80 5000x7000x400 1500x16000x300 10000x3000x200 6000x5000x150:bf16 2000x12000x500:bf16"}
bench_set() {  # LOG TORCH(0/1) SHAPES...
  local log=$1 torch=$2; shift 2
  : >"$log"
  for sd in "$@"; do left "bench $sd" || continue
    IFS=: read -r s dt <<<"$sd"
    echo "\$ kiln bench topk --shape $s --dtype ${dt:-f32} --variants $ws --vs $rw" >>"$log"
    timeout 40 $b/bin/kiln bench topk --shape "$s" --dtype "${dt:-f32}" --variants $ws --vs $rw 2>&1 |
      grep -E "topk_|error|Error" >>"$log" || echo "(failed)" >>"$log"
  done
  local f32="" bf16=""
  for sd in "$@"; do case $sd in *:bf16) bf16="$bf16 ${sd%%:*}" ;; *) f32="$f32 ${sd%%:*}" ;; esac; done
  [ "$torch" = 1 ] && left "torch" && {
    [ -n "$f32" ] && timeout 60 python3 scripts/bench_torch_topk.py $f32 >>"$log" 2>&1
    [ -n "$bf16" ] && timeout 40 python3 scripts/bench_torch_topk.py --dtype bf16 $bf16 >>"$log" 2>&1; }
}
for stage in "$@"; do
  say "stage $stage at $SECONDS s"
  case $stage in
    tests|moretests)
      [ $stage = tests ] && : >"$out/tests.log"
      for t in $([ $stage = tests ] && echo test_topk_host test_topk_warp_select_gpu || echo test_topk_gpu test_topk_half_gpu); do
        left "$t" || continue
        timeout ${TEST_TIMEOUT:-120} $b/bin/$t >"$out/t.log" 2>&1
        say "$t rc=$? $(grep -E 'test cases|assertions' "$out/t.log" | tail -2 | tr '\n' ' ')"
        grep -B3 -A14 "FAILED" "$out/t.log" | head -60 >>"$out/tests.log"
      done
      rm -f "$out/t.log" ;;
    san)
      : >"$out/san.log"
      for tool in memcheck racecheck; do left "$tool" || continue
        KILN_TEST_QUICK=1 timeout 75 compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_topk_warp_select_gpu >"$out/s.log" 2>&1
        say "$tool test_topk_warp_select_gpu rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions' "$out/s.log" | tail -3 | tr '\n' ' ')"
        grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/s.log" | head -30 >>"$out/san.log"
      done
      rm -f "$out/s.log" ;;
    bench) bench_set "$out/bench.log" 1 $dev; say "bench: $(grep -c '^\$' "$out/bench.log") shapes" ;;
    held) bench_set "$out/heldout.log" 1 $held; say "held-out: written to heldout.log" ;;
    main)
      [ -n "${main_pid:-}" ] && { wait $main_pid; say "main plugin build rc=$? at $SECONDS s"; }
      if [ -f $mb/lib/kiln/plugins/libkiln_topk.so ]; then
        KILN_PLUGIN_PATH=$PWD/$mb/lib/kiln/plugins bench_set "$out/main.log" 0 ${MAIN_SHAPES:-$dev $held}
        say "main: $(grep -c 'topk_warp_select' "$out/main.log") rows"
      else
        say "main plugin not built"; tail -8 "$mb.log" | tee -a "$sum"
      fi ;;
    clocks)
      [ -n "${clk_pid:-}" ] && { wait $clk_pid; say "clock plugin build rc=$? at $SECONDS s"; }
      if [ -f $cb/lib/kiln/plugins/libkiln_topk.so ]; then
        for sd in ${CLOCKS:-16384x4096x256 16384x4096x64 4096x8192x256 2000x16384x512 16384x4096x256:bf16}; do
          left "clocks $sd" || continue
          IFS=: read -r s dt <<<"$sd"
          line=$(KILN_PLUGIN_PATH=$PWD/$cb/lib/kiln/plugins timeout 40 $b/bin/kiln bench topk --shape "$s" \
            --dtype "${dt:-f32}" --variants $ws --vs $rw 2>&1 | grep -E "stage clocks|topk_warp_select" | tail -2 | tr '\n' ' ')
          say "clocks $sd: $line"
        done
      else
        say "clock plugin not built"; tail -8 "$cb.log" | tee -a "$sum"
      fi ;;
    tune)
      : >"$out/tune.log"
      for s in ${TUNE:-16384x4096x256 16384x4096x64}; do left "tune $s" || continue
        timeout 40 $b/bin/kiln tune topk --shape $s --variants $ws --force --no-store --runs 10 \
          --budget-seconds ${TUNE_SECONDS:-10} --json >"$out/tune.json" 2>/dev/null
        python3 - "$out/tune.json" <<'PY' >>"$out/tune.log"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("tune: no JSON (%s)" % e); sys.exit(0)
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    print("tune %s: %d configs timed" % (p.get("key", ""), len(rows)))
    for c in rows:
        print("tune %10.1f us  %s" % (c["median_us"], c.get("config")))
PY
      done
      rm -f "$out/tune.json"
      say "tune: $(grep -c ' us ' "$out/tune.log") configs timed" ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
grep -E "^\s*topk_warp_select|^\s*topk_row_select|ms|^\\$" "$out/bench.log" 2>/dev/null | cut -c1-160
