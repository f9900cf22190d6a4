#!/usr/bin/env bash
# Everything a GPU machine can check, in one command: build for sm_90, the GPU tests, the whole
# test suite, `kiln verify`, compute-sanitizer on the GPU tests, and benchmarks against the vendor
# baselines.  Logs go to the folder given as the first argument.
#
#   scripts/gpu-check.sh OUT [stage...]
#   stages: build test demo verify tune sanitize bench (default: all but tune)
#
# Environment: KILN_BUILD_DIR (default build-gpu), KILN_JOBS (default nproc),
# KILN_BENCH_FILE (bench commands, default scripts/bench-anchors.txt), KILN_SANITIZE_TESTS (names
# of the GPU tests to sanitize, e.g. "histogram topk"; default all), KILN_SANITIZE_TIMEOUT
# (seconds per test and tool, default 900), KILN_VERIFY_TIMEOUT (default 300).
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUT [build|test|verify|sanitize|bench ...]}
shift
stages=${*:-build test demo verify sanitize bench}
mkdir -p "$out"
cd "$(dirname "$0")/.."
build=$(realpath -m "${KILN_BUILD_DIR:-build-gpu}")
jobs=${KILN_JOBS:-$(nproc)}
status=0
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
run_stage() {  # name command...
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "stage $name: rc=$rc ($((SECONDS - t0)) s)"
  [ $rc -eq 0 ] || status=1
  return $rc
}
export KILN_CACHE_DIR=$build/cache   # never touch the machine's real cache
export KILN_PLUGIN_PATH=$build/lib/kiln/plugins

for stage in $stages; do
  case $stage in
    build)
      if ! run_stage configure cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 ||
         ! run_stage build cmake --build "$build" -j "$jobs"; then
        grep -E "error|Error|FAILED" "$out"/configure.log "$out"/build.log 2>/dev/null | head -20
        note "build failed: later stages skipped"
        exit 1
      fi
      ;;
    test)
      run_stage test_gpu ctest --test-dir "$build" -L gpu --output-on-failure -j 4
      grep -E "tests passed|tests failed|Skipped|Failed|\*\*\*" "$out/test_gpu.log" | tail -20 | tee -a "$summary"
      run_stage test_all ctest --test-dir "$build" -LE gpu --output-on-failure -j "$jobs"
      grep -E "tests passed|tests failed" "$out/test_all.log" | tee -a "$summary"
      ;;
    demo)
      run_stage demo "$build/bin/kiln" demo
      tail -n 20 "$out/demo.log" | tee -a "$summary"
      ;;
    verify)
      run_stage verify timeout "${KILN_VERIFY_TIMEOUT:-300}" "$build/bin/kiln" verify
      tail -n 40 "$out/verify.log" | tee -a "$summary"
      ;;
    tune)
      # The issue's three tuner benchmarks: an exhaustive 4096^3 gemm tune within 60 s, the same
      # winner on a second run, and op() in a fresh process dispatching the tuned choice.
      : >"$out/tune.log"
      for i in 1 2; do
        t0=$SECONDS
        "$build/bin/kiln" tune gemm --shape 4096x4096x4096 --force --json >"$out/tune$i.json" 2>>"$out/tune.log"
        rc=$?
        winner=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["problems"][0]; w=p["winner"]; print(w["variant"], w["config"], "%.1f us" % w["median_us"], "evaluations:", p["evaluations"])' "$out/tune$i.json" 2>&1)
        note "tune gemm 4096^3 exhaustive run $i: rc=$rc $((SECONDS - t0)) s, winner: $winner"
      done
      "$build/bin/kiln" explain gemm --shape 4096x4096x4096 >>"$out/tune.log" 2>&1
      cat "$out/tune.log" | tee -a "$summary"
      ;;
    sanitize)
      # One log for all (the device tool brings back few files); each test under memcheck and
      # racecheck, with the tool's summary line noted.  KILN_TEST_QUICK keeps every variant and
      # config but skips the large sizes, which racecheck would take hours over.
      : >"$out/sanitize.log"
      for t in "$build"/bin/test_*_gpu; do
        [ -x "$t" ] || continue
        if [ -n "${KILN_SANITIZE_TESTS:-}" ]; then  # e.g. "histogram topk": test_<name>_gpu only
          case " $KILN_SANITIZE_TESTS " in *" $(basename "$t" | sed 's/^test_//; s/_gpu$//') "*) ;; *) continue ;; esac
        fi
        # test_tuner_gpu launches an invalid block size on purpose (scale_cuda_badcfg, to test
        # that the tuner rejects it): that API error is the test, not a fault.
        api=()
        [ "$(basename "$t")" = test_tuner_gpu ] && api=(--report-api-errors no)
        for tool in memcheck racecheck; do
          t0=$SECONDS
          KILN_TEST_QUICK=1 timeout "${KILN_SANITIZE_TIMEOUT:-900}" \
            compute-sanitizer --tool $tool "${api[@]}" --error-exitcode 9 "$t" >"$out/sanitize.tmp" 2>&1
          rc=$?
          cat "$out/sanitize.tmp" >>"$out/sanitize.log"
          note "$tool $(basename "$t"): rc=$rc ($((SECONDS - t0)) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize.tmp" | tail -1)"
          [ $rc -eq 0 ] || status=1
        done
      done
      rm -f "$out/sanitize.tmp"
      ;;
    bench)
      bench_file=${KILN_BENCH_FILE:-scripts/bench-anchors.txt}
      : >"$out/bench.log"
      while IFS= read -r line; do
        case $line in ''|\#*) continue ;; esac
        echo "\$ kiln $line" >>"$out/bench.log"
        # shellcheck disable=SC2086
        "$build/bin/kiln" $line >>"$out/bench.log" 2>&1 || { echo "(failed: rc=$?)" >>"$out/bench.log"; status=1; }
      done <"$bench_file"
      note "stage bench: see bench.log"
      ;;
    *) note "unknown stage $stage"; status=1 ;;
  esac
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
cat "$summary"
exit $status
