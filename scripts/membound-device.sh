#!/usr/bin/env bash
# One device run for issue 12 (memory-bound families): build the needed targets for sm_90, run
# their GPU tests, time the benches of scripts/bench-membound.txt and torch.topk on the same
# shapes, and sweep a few tunes.  Logs under the folder given ($OUT on the device machine).
#   scripts/membound-device.sh OUT [tests] [bench] [torch] [tune] [sanitize]
# Environment: KILN_BENCH_SKIP (an extended regex: bench lines to leave out), KILN_SANITIZE_TESTS
# (default "add transpose topk"), KILN_SANITIZE_TIMEOUT (seconds per test and tool, default 200).
set -uo pipefail
out=${1:?usage: scripts/membound-device.sh OUT [stages]}; shift
stages=${*:-tests bench torch tune}
cd "$(dirname "$0")/.."
b=build-gpu
export KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$PWD/$b/lib/kiln/plugins
t0=$SECONDS
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_elementwise kiln_transpose kiln_topk kiln_histogram kiln_vendor \
    test_add_gpu test_transpose_gpu test_topk_gpu; } >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
echo "build $((SECONDS - t0)) s"
for s in $stages; do
  t1=$SECONDS
  case $s in
    tests)
      for t in add transpose topk; do
        timeout 240 $b/bin/test_${t}_gpu >"$out/test_$t.log" 2>&1; echo "test_${t}_gpu rc=$? $(tail -2 "$out/test_$t.log" | tr '\n' ' ')"
      done ;;
    sanitize)
      for t in ${KILN_SANITIZE_TESTS:-add transpose topk}; do for tool in memcheck racecheck; do
        KILN_TEST_QUICK=1 timeout "${KILN_SANITIZE_TIMEOUT:-200}" compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_${t}_gpu >"$out/san_${t}_$tool.log" 2>&1
        echo "$tool $t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${t}_$tool.log" | tail -1)"
      done; done ;;
    bench)
      : >"$out/bench.log"
      while IFS= read -r line; do
        case $line in ''|\#*) continue ;; esac
        echo "\$ kiln $line" >>"$out/bench.log"
        # shellcheck disable=SC2086
        timeout 120 $b/bin/kiln $line >>"$out/bench.log" 2>&1 || echo "(failed: rc=$?)" >>"$out/bench.log"
      done < <(grep -vE "${KILN_BENCH_SKIP:-^$}" scripts/bench-membound.txt) ;;
    torch)
      shapes=$(grep -E '^bench topk' scripts/bench-membound.txt | sed -E 's/.*--shape ([0-9x]+).*/\1/')
      # shellcheck disable=SC2086
      timeout 200 python3 scripts/bench_torch_topk.py $shapes >"$out/torch_topk.log" 2>&1; echo "torch rc=$?" ;;
    tune)
      : >"$out/tune.log"
      while read -r op shape variants; do
        echo "\$ kiln tune $op --shape $shape --variants $variants" >>"$out/tune.log"
        timeout 60 $b/bin/kiln tune "$op" --shape "$shape" --variants "$variants" --force --no-store --runs 10 --budget-seconds 25 --json \
          >"$out/tune_${op}_$shape.json" 2>>"$out/tune.log"
        python3 - "$out/tune_${op}_$shape.json" >>"$out/tune.log" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d.get("problems", []):
    w = p.get("winner") or {}
    print("winner:", w.get("variant"), w.get("config"), w.get("median_us"))
    cands = p.get("results") or []
    rows = sorted((c for c in cands if c.get("median_us")), key=lambda c: c["median_us"])
    for c in rows[:8]:
        print("   %10.1f us  %s %s" % (c["median_us"], c.get("variant"), c.get("config")))
PY
      done <<'LIST'
topk 1x67108864x100 topk_radix_select
topk 16384x1024x8 topk_row_select
LIST
      ;;
  esac
  echo "stage $s $((SECONDS - t1)) s"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
grep -hE '^\$|median|x [0-9.]+|vs ' "$out/bench.log" 2>/dev/null | tail -150
