#!/usr/bin/env bash
# One device run for the histogram work of issue 12 (session hist7): build the histogram plugin,
# the vendor plugin (CUB, the baseline), the CLI and the histogram GPU tests for sm_90, then the
# stages named, in the order given, each only if it can start before DEADLINE seconds:
#   tests   test_histogram_gpu (every CUDA variant and config against the host reference)
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on test_histogram_gpu,
#           for the variants named by SAN_ONLY (default: spill,thread_private, the ones changed)
#   perf    test_histogram_perf_gpu "[perf]": u8 data kinds and sizes, histogram_range bins and
#           sizes, each against CUB in the same run (KILN_HISTPERF_* narrow it, see the test)
#   bench   kiln bench on the issue's shapes against the vendor (CUB)
#   sass    instruction counts of the histogram_spill kernels (cuobjdump)
#   scripts/hist7-device.sh OUT DEADLINE STAGE...
set -uo pipefail
out=${1:?usage: scripts/hist7-device.sh OUT DEADLINE STAGE...}
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
  cmake --build $b -j16 --target kiln_cli kiln_histogram kiln_vendor test_histogram_gpu test_histogram_perf_gpu; } \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
say "build $SECONDS s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader | tee -a "$sum"
for stage in "$@"; do
  case $stage in
    tests)
      left tests && { timeout ${TEST_TIMEOUT:-120} $b/bin/test_histogram_gpu >"$out/tests.log" 2>&1
        say "test_histogram_gpu rc=$? $(grep -E 'test cases|assertions' "$out/tests.log" | tail -2 | tr '\n' ' ')"
        grep -B3 -A14 "FAILED" "$out/tests.log" | head -60; } ;;
    san)
      for tool in memcheck racecheck; do left "$tool" || continue
        KILN_TEST_QUICK=1 KILN_HISTOGRAM_TEST_ONLY=${SAN_ONLY:-spill,thread_private} \
          timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --error-exitcode 9 \
          $b/bin/test_histogram_gpu >"$out/$tool.log" 2>&1
        say "$tool test_histogram_gpu rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases' "$out/$tool.log" | tail -2 | tr '\n' ' ')"
        grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/$tool.log" | head -30
      done ;;
    perf)
      left perf && { timeout ${PERF_TIMEOUT:-90} $b/bin/test_histogram_perf_gpu "[perf]" >"$out/perf.log" 2>&1
        say "test_histogram_perf_gpu rc=$? $(grep -E 'test cases|assertions' "$out/perf.log" | tail -1)"
        grep -B3 -A10 "FAILED" "$out/perf.log" | head -30
        grep "^histperf" "$out/perf.log" | sed 's/^histperf //' | tee -a "$sum" >/dev/null; } ;;
    bench)
      : >"$out/bench.log"
      for a in "histogram --shape 1073741824" "histogram --shape 67108864" "histogram --shape 1048576" \
               "histogram_range --shape 268435456x256" "histogram_range --shape 268435456x64"; do
        left "bench $a" || continue
        echo "\$ kiln bench $a --vs vendor" >>"$out/bench.log"
        timeout 40 $b/bin/kiln bench $a --vs vendor >>"$out/bench.log" 2>&1 || echo "(failed: rc=$?)" >>"$out/bench.log"
      done
      grep -vE "^\s*$" "$out/bench.log" | tee -a "$sum" >/dev/null ;;
    sass)
      so=$(ls $b/lib/kiln/plugins/*histogram*.so | head -1)
      cuobjdump -sass "$so" >"$out/sass.txt" 2>&1
      python3 - "$out/sass.txt" <<'PY' | tee -a "$sum"
import re, sys
fn, counts = None, {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Function : (\S+)", line)
    if m:
        fn = m.group(1); counts[fn] = {}
        continue
    m = re.search(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)", line)
    if fn and m:
        op = m.group(2); counts[fn][op] = counts[fn].get(op, 0) + 1
for fn, c in counts.items():
    if "spill_kernel" in fn or "plain_kernelILi256ELi1" in fn:
        tot = sum(c.values())
        top = " ".join("%s=%d" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1])[:14])
        print("sass %s total=%d %s" % (fn[-60:], tot, top))
PY
      ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
