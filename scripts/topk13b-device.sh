#!/usr/bin/env bash
# One device run for topk13b (issue 12): topk_sample_select's select kernel on compact keys,
# against the same plugin built from BASE_SRC (main before the change) and torch.topk, same run.
# Builds this tree (plugin, CLI, topk GPU tests) into ../build-topk13b-gpu and, in parallel, BASE_SRC's
# plugin into ../build-topk13b-base, then the stages named, in order, each only if it can start
# before DEADLINE seconds:
#   tests   TESTS (BINARY[:CATCH_FILTER] ...; default test_topk_sample_select_gpu test_topk_half_gpu)
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on SAN (same form;
#           default test_topk_sample_select_gpu)
#   sweep   per shape of DEV: `kiln bench topk --shape S --dtype D --variants VARIANTS` with this
#           plugin, then with the base plugin; python3 scripts/bench_torch_topk.py -> sweep.log
#   held    the same on HELD -> heldout.log (shapes not read while choosing anything)
#   scripts/topk13b-device.sh OUT DEADLINE STAGE...
set -uo pipefail
out=${1:?usage: scripts/topk13b-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
b=${BUILD_DIR:-../build-topk13b-gpu}
base_src=${BASE_SRC:-../build-src-topk13b-base}
bb=../build-topk13b-base
export LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}
new_env() { KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins "$@"; }
base_env() { KILN_CACHE_DIR=$PWD/$bb/cache KILN_PLUGIN_PATH=$PWD/$bb/lib/kiln/plugins "$@"; }
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$sum"
tests=${BUILD_TESTS:-"test_topk_sample_select_gpu test_topk_half_gpu"}
( cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_topk $tests ) >"$out/build.log" 2>&1 &
newpid=$!
bdir=$(cd "$base_src" && pwd)
( cmake -S "$bdir" -B $bb -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $bb -j16 --target kiln_topk ) >"$out/build-base.log" 2>&1 &
basepid=$!
wait $newpid || { say "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30 | tee -a "$sum"; exit 1; }
wait $basepid || { say "base build failed"; grep -E "error|FAILED" "$out/build-base.log" | head -10 | tee -a "$sum"; }
say "builds done at $SECONDS s"
# shape[:dtype]
dev=${DEV:-"1x1048576x4096 1x16777216x100 1024x65536x256 1x16777216x100:bf16 1x1048576x4096:bf16 1024x65536x256:bf16 64x1048576x64:bf16 1x4194304x1024:bf16 1x16777216x100:f16 1x1048576x4096:f16"}
held=${HELD:-"1x3000000x1000:bf16 16x2097152x512:bf16 512x100000x128:f16 1x67108864x64:bf16 1x4194304x2048 1x10000000x3000:f16 200x300000x2000:bf16"}
bench_set() {  # LOG SHAPES...
  local log=$1; shift
  : >"$log"
  for sd in "$@"; do left "bench $sd" || continue
    IFS=: read -r s dt <<<"$sd"
    for which in new base; do
      echo "\$ [$which] kiln bench topk --shape $s --dtype ${dt:-f32} --variants ${VARIANTS:-topk_sample_select}" >>"$log"
      ${which}_env timeout 60 $b/bin/kiln bench topk --shape "$s" --dtype "${dt:-f32}" --variants ${VARIANTS:-topk_sample_select} \
        --max-seconds-per-row ${ROW_SECONDS:-2} 2>&1 | grep -vE "^\s*$" | tail -8 >>"$log" || echo "(failed)" >>"$log"
    done
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
      : >"$out/tests.log"
      for e in ${TESTS:-test_topk_sample_select_gpu test_topk_half_gpu}; do
        IFS=: read -r t f <<<"$e"
        left "$t" || continue
        new_env timeout ${TEST_TIMEOUT:-120} $b/bin/$t ${f:+"$f"} >"$out/t.log" 2>&1
        say "$t ${f:-} rc=$? $(grep -E 'test cases|assertions' "$out/t.log" | tail -2 | tr '\n' ' ')"
        grep -B3 -A14 "FAILED" "$out/t.log" | head -60 >>"$out/tests.log"
      done
      rm -f "$out/t.log" ;;
    san)
      : >"$out/san.log"
      for e in ${SAN:-test_topk_sample_select_gpu}; do
        IFS=: read -r t f <<<"$e"
        for tool in memcheck racecheck; do left "$tool $t" || continue
          KILN_TEST_QUICK=1 new_env timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/$t ${f:+"$f"} >"$out/s.log" 2>&1
          say "$tool $t ${f:-} rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions' "$out/s.log" | tail -3 | tr '\n' ' ')"
          grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/s.log" | head -30 >>"$out/san.log"
        done
      done
      rm -f "$out/s.log" ;;
    sweep) bench_set "$out/sweep.log" $dev; say "sweep: $(grep -c '^\$' "$out/sweep.log") benches" ;;
    held) bench_set "$out/heldout.log" $held; say "held-out: written to heldout.log" ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
