#!/usr/bin/env bash
# Device runs of the fourteenth session's add helper (issue 12: add at >= 1.0x cuBLAS geam).
#   scripts/add14-device.sh OUT probe     nvcc-build tests/plugins/elementwise/probe_add_layout.cu,
#                                          time geam beside add_streaming and other access orders
#                                          (OUT/probe.txt), one ncu launch of each (OUT/ncu.txt)
# Logs under OUT (the device tool's $OUT); a short summary is printed last.
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
  esac
done
echo "==== summary"
[ -f "$out/probe.txt" ] && cat "$out/probe.txt"
[ -f "$out/ncu.txt" ] && grep -E "^  [a-zA-Z_].*\(|void |Block Size|Grid Size|Registers Per|Waves Per|dram__bytes|lts__t_sectors|gpu__time_duration|dram__throughput|DRAM Throughput|Memory Throughput|Achieved Occupancy|inst_executed_op|l1tex__t_requests|==PROF==|Error|ERR" "$out/ncu.txt" | head -120
echo "total $((SECONDS - t0)) s"
