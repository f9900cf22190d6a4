#!/usr/bin/env bash
# Device runs of the fourteenth session's add helper (issue 12: add at >= 1.0x cuBLAS geam).
#   scripts/add14-device.sh OUT probe     nvcc-build tests/plugins/elementwise/probe_add_layout.cu,
#                                          time geam beside add_streaming and other access orders
#                                          (OUT/probe.txt), one ncu launch of each (OUT/ncu.txt)
#   scripts/add14-device.sh OUT kiln      build kiln (cli, elementwise, vendor, test_add_gpu), run
#                                          test_add_gpu, memcheck/racecheck (KILN_TEST_QUICK=1) on
#                                          the add_streaming cases beside it, then `kiln bench add
#                                          --vs vendor` over the sweep below and `kiln tune` lines that
#                                          time the former default beside the new one and the vendor
# Logs under OUT (the device tool's $OUT); a short summary is printed last.  ADD14_DEADLINE
# (seconds, default 215): no bench or tune line starts after it.
set -uo pipefail
out=${1:?usage: scripts/add14-device.sh OUT stage...}; shift
cd "$(dirname "$0")/.."
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1
for s in "$@"; do
  case $s in
    probe)
      nvcc -O3 -std=c++17 -arch=sm_90 -I plugins/elementwise tests/plugins/elementwise/probe_add_layout.cu -lcublas \
        -o /tmp/probe_add_layout >"$out/probe_build.log" 2>&1 || { cat "$out/probe_build.log"; exit 1; }
      echo "probe built $((SECONDS - t0)) s"
      timeout 90 /tmp/probe_add_layout time >"$out/probe.txt" 2>&1; echo "probe rc=$? $((SECONDS - t0)) s"
      timeout 120 ncu --clock-control none --cache-control all --launch-skip 1 --launch-count 4 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section LaunchStats --section Occupancy \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        /tmp/probe_add_layout ncu >"$out/ncu.txt" 2>&1; echo "ncu rc=$? $((SECONDS - t0)) s"
      ;;
    kiln)
      b=$PWD/build-gpu
      export KILN_CACHE_DIR=$b/cache KILN_PLUGIN_PATH=$b/lib/kiln/plugins KILN_TUNE=off  # no first-use race in bench
      { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
        cmake --build $b -j16 --target kiln_cli kiln_elementwise kiln_vendor test_add_gpu test_add_host; } \
        >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
      echo "kiln built $((SECONDS - t0)) s"
      $b/bin/test_add_host >"$out/tests.log" 2>&1; echo "test_add_host rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ')"
      # Tests and sanitizers side by side (correctness only; nothing is timed meanwhile).
      timeout 100 $b/bin/test_add_gpu >>"$out/tests.log" 2>&1 &
      pt=$!
      ps=()
      i=0
      while read -r tool filter; do
        i=$((i + 1))
        ( KILN_TEST_QUICK=1 timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_add_gpu "$filter" \
            >"$out/san$i.tmp" 2>&1
          echo "$tool '$filter' rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|All tests|failed|No test' "$out/san$i.tmp" | tail -2 | tr '\n' ' ')" >"$out/san$i.res" ) &
        ps+=($!)
      done <<'LIST'
memcheck add_streaming on misaligned and odd-sized views*
memcheck add_streaming on misaligned half views*
racecheck add_streaming on misaligned and odd-sized views*
LIST
      wait $pt; echo "test_add_gpu rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ') $((SECONDS - t0)) s"
      for p in "${ps[@]}"; do wait $p; done
      cat "$out"/san*.res; cat "$out"/san*.tmp >"$out/sanitizer.log" 2>/dev/null; rm -f "$out"/san*.tmp "$out"/san*.res
      echo "sanitizers done $((SECONDS - t0)) s"
      bench() {  # dtype shape vendor
        echo "\$ kiln bench add --dtype $1 --shape $2 --vs vendor --variants add_streaming,$3"
        timeout 30 $b/bin/kiln bench add --dtype $1 --shape $2 --vs vendor --variants add_streaming,$3 </dev/null 2>&1 |
          tee -a "$out/bench.log" | grep -E "^add_" | sed -E 's/  +/  /g'
      }
      tune() {  # dtype shape vendor: every add_streaming config beside the vendor, one process
        echo "\$ kiln tune add --dtype $1 --shape $2 --variants add_streaming,$3 --force --no-store --runs 10 --warmup 1 --budget-seconds 8"
        timeout 30 $b/bin/kiln tune add --dtype $1 --shape $2 --variants add_streaming,$3 --force --no-store \
          --runs 10 --warmup 1 --budget-seconds 8 --json </dev/null >"$out/tune.json" 2>/dev/null
        python3 - "$out/tune.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    def cfg(c): return " ".join("%s=%s" % kv for kv in sorted((c.get("config") or {}).items()))
    def key(**kw): return " ".join("%s=%s" % kv for kv in sorted(kw.items()))
    marks = {key(block=256, items=4, streaming=0, blocks_per_sm=8): "former default",
             key(block=256, items=1, streaming=0, blocks_per_sm=0): "new default"}
    shown = rows[:4] + [c for c in rows if cfg(c) in marks or "cublas" in c.get("variant", "")]
    seen = set()
    print("  %d candidates timed, stop: %s" % (len(rows), p.get("stop_reason")))
    for c in shown:
        if id(c) in seen: continue
        seen.add(id(c))
        print("  %9.1f us  %s %s  %s" % (c["median_us"], c.get("variant"), cfg(c), marks.get(cfg(c), "")))
    for c in p.get("finalists") or []:
        if c.get("median_us"):
            print("  finalist (interleaved) %9.1f us  %s %s  %s" % (c["median_us"], c.get("variant"), cfg(c), marks.get(cfg(c), "")))
PY
        cat "$out/tune.json" >>"$out/tune.log"
      }
      while read -r what dtype shape; do
        [ $((SECONDS - t0)) -gt "${ADD14_DEADLINE:-215}" ] && { echo "deadline: $what $dtype $shape not run"; continue; }
        vendor=add_cublas_geam; [ $dtype = bf16 ] && vendor=add_cublaslt_transform
        $what $dtype $shape $vendor
      done <<'LIST'
bench f32 16384x16384
bench f32 8192x8192
bench f32 4096x4096
bench f32 2048x2048
bench f32 1024x1024
bench f32 1x268435456
bench f32 12345x6789
bench f32 3x100000007
bench f32 777x5555
tune f32 16384x16384
bench bf16 16384x16384
bench bf16 2048x2048
bench bf16 1x268435456
bench bf16 12345x6789
bench bf16 3x100000007
bench bf16 777x5555
tune f32 2048x2048
bench bf16 8192x8192
bench bf16 4096x4096
bench bf16 1024x1024
tune bf16 16384x16384
LIST
      rm -f "$out/tune.json"
      ;;
  esac
done
echo "==== summary"
[ -f "$out/probe.txt" ] && head -24 "$out/probe.txt"
[ -f "$out/ncu.txt" ] && grep -E "^  [a-zA-Z_].*\(|void |Block Size|Grid Size|Registers Per|Waves Per|dram__bytes|lts__t_sectors|gpu__time_duration|dram__throughput|DRAM Throughput|Memory Throughput|Achieved Occupancy|inst_executed_op|l1tex__t_requests|==PROF==|Error|ERR" "$out/ncu.txt" | head -120
echo "total $((SECONDS - t0)) s"
