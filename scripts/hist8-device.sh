#!/usr/bin/env bash
# One device run for the histogram work of issue 12 (session hist8): the histogram GPU tests, the
# sanitizers and test_histogram_perf_gpu against CUB.  Uses the binaries under build-gpu when they
# were built before the run (carried: `cmake --build build-gpu --target test_histogram_gpu
# test_histogram_perf_gpu`, Release, sm_90), else builds those two for sm_90.  Stages, in the
# order given, each only if it can start before DEADLINE seconds:
#   tests   test_histogram_gpu, variants named by TEST_ONLY (default spill,thread_private)
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1), variants SAN_ONLY
#   perf    test_histogram_perf_gpu "[perf][histogram]" (u8 only) with the KILN_HISTPERF_* variables
#           as set by the caller; log perf-main.log
#   perf:TAG   as perf, with KILN_HISTPERF_SIZES, _CONFIGS, _KINDS from $SIZES_TAG, $CONFIGS_TAG,
#           $KINDS_TAG (empty: the test's defaults) and _NO4G set when $NO4G_TAG is; log
#           perf-TAG.log; lines of summary.txt start with TAG.  ENV_FILE, if set, is sourced first.
#           RANGE_TAG set: the histogram_range case ("[perf][histogram_range]") instead, bins from
#           $BINS_TAG (added by hist9).
#   ncu:TAG   Nsight Compute (--clock-control none) on one launch of the perf:TAG run: kernels
#           matching $NCU_KERNEL_TAG (regex), $NCU_SKIP_TAG launches skipped (default 3: the
#           warm-ups); a few sections (speed of light, memory and compute pipes, warp stalls,
#           occupancy); log ncu-TAG.log, its key lines in summary.txt (added by hist9).
#   scripts/hist8-device.sh OUT DEADLINE STAGE...
set -uo pipefail
out=${1:?usage: scripts/hist8-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
[ -n "${ENV_FILE:-}" ] && . "$ENV_FILE"
b=build-gpu
export LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
if [ -x $b/bin/test_histogram_gpu ] && [ -x $b/bin/test_histogram_perf_gpu ]; then
  say "prebuilt binaries"
else
  { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build $b -j16 --target test_histogram_gpu test_histogram_perf_gpu; } \
    >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
  say "build $SECONDS s"
fi
ldd $b/bin/test_histogram_perf_gpu | grep "not found" | tee -a "$sum"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader | tee -a "$sum"
# The KILN_HISTPERF_* variables and the Catch2 filter of perf:TAG and ncu:TAG.
tag_env() {
  local sv=SIZES_$1 cv=CONFIGS_$1 kv=KINDS_$1 nv=NO4G_$1 bv=BINS_$1 rv=RANGE_$1
  export KILN_HISTPERF_SIZES=${!sv:-} KILN_HISTPERF_CONFIGS=${!cv:-} KILN_HISTPERF_KINDS=${!kv:-} \
    KILN_HISTPERF_BINS=${!bv:-}
  if [ -n "${!nv:-}" ]; then export KILN_HISTPERF_NO4G=1; else unset KILN_HISTPERF_NO4G; fi
  # Empty means the test's defaults: unset (an empty KILN_HISTPERF_CONFIGS would time nothing).
  local v
  for v in SIZES CONFIGS KINDS BINS; do
    v=KILN_HISTPERF_$v
    [ -n "${!v}" ] || unset "$v"
  done
  filter="[perf][histogram]"
  [ -n "${!rv:-}" ] && filter="[perf][histogram_range]"
}
for stage in "$@"; do
  case $stage in
    tests)
      left tests && { KILN_HISTOGRAM_TEST_ONLY=${TEST_ONLY:-spill,thread_private} timeout ${TEST_TIMEOUT:-60} \
          $b/bin/test_histogram_gpu >"$out/tests.log" 2>&1
        say "test_histogram_gpu (${TEST_ONLY:-spill,thread_private}) rc=$? $SECONDS s $(grep -E 'test cases|assertions' "$out/tests.log" | tail -2 | tr '\n' ' ')"
        grep -B3 -A14 "FAILED" "$out/tests.log" | head -40; } ;;
    san|memcheck|racecheck)
      tools="memcheck racecheck"; [ $stage = san ] || tools=$stage
      for tool in $tools; do left "$tool" || continue
        # racecheck (the slow one) gets what is left before the deadline, at least 10 s
        limit=${SAN_TIMEOUT:-60}
        [ $tool = racecheck ] && limit=$(( deadline - SECONDS > 10 ? deadline - SECONDS : 10 ))
        KILN_TEST_QUICK=1 KILN_HISTOGRAM_TEST_ONLY=${SAN_ONLY:-spill,thread_private} \
          timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 \
          $b/bin/test_histogram_gpu >"$out/$tool.log" 2>&1
        say "$tool test_histogram_gpu rc=$? $SECONDS s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases' "$out/$tool.log" | tail -2 | tr '\n' ' ')"
        grep -m5 -A8 "Invalid\|Race reported\|FAILED" "$out/$tool.log" | head -30
      done ;;
    perf|perf:*)
      tag=main filter="[perf][histogram]"
      [ "$stage" != perf ] && { tag=${stage#perf:}; tag_env "$tag"; }
      left "perf $tag" && { timeout ${PERF_TIMEOUT:-60} $b/bin/test_histogram_perf_gpu "$filter" >"$out/perf-$tag.log" 2>&1
        say "perf $tag rc=$? $SECONDS s $(grep -E 'test cases|assertions' "$out/perf-$tag.log" | tail -1)"
        grep -B3 -A10 "FAILED" "$out/perf-$tag.log" | head -30
        grep "^histperf" "$out/perf-$tag.log" | sed "s/^histperf /$tag /" | tee -a "$sum" >/dev/null; } ;;
    ncu:*)
      tag=${stage#ncu:}; tag_env "$tag"
      kv=NCU_KERNEL_$tag skv=NCU_SKIP_$tag
      left "ncu $tag" && { timeout ${NCU_TIMEOUT:-60} ncu --clock-control none --kernel-name "regex:${!kv:-thread_private}" \
          --launch-skip ${!skv:-3} --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
          --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
          --metrics "regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg" \
          $b/bin/test_histogram_perf_gpu "$filter" >"$out/ncu-$tag.log" 2>&1
        say "ncu $tag rc=$? $SECONDS s"
        grep -E "histogram_|Duration|Throughput|Pipe|Stall|Warp Cycles|Achieved Occupancy|Shared Memory Configuration|Registers Per|Issue Slots|Executed Ipc|stalled|l1tex__|smsp__inst|sm__cycles" \
          "$out/ncu-$tag.log" | sed "s/^/ncu-$tag /" | head -90 >>"$sum"; } ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
