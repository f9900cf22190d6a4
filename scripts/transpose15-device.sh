#!/usr/bin/env bash
# One device call for the fifteenth session's transpose work (issue 12): builds the CLI, the
# transpose and vendor plugins and test_transpose_gpu into build-gpu, then (no tuning database)
#   - per TUNE entry (dtype:MxN): every transpose_tiled_multirow config against the vendor,
#     `kiln tune --no-store --force --runs 10 --csv` -> OUT/tune.csv
#   - per HELD entry: `kiln bench` of the defaults against the vendor, median of 20 -> OUT/held.log
#   - test_transpose_gpu, compute-sanitizer memcheck and racecheck on its "[staged]" case
#     (KILN_TEST_QUICK=1), `kiln verify transpose` -> OUT/summary.txt
#   scripts/transpose15-device.sh OUT DEADLINE_SECONDS
set -uo pipefail
out=${1:?usage: scripts/transpose15-device.sh OUT DEADLINE}; dl=${2:-500}
cd "$(dirname "$0")/.."
b=$PWD/build-gpu
( cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_transpose kiln_vendor test_transpose_gpu ) >"$out/build.log" 2>&1 ||
  { echo "build failed"; tail -30 "$out/build.log"; exit 1; }
export LD_LIBRARY_PATH=$b/lib:${LD_LIBRARY_PATH:-}
export KILN_PLUGIN_PATH=$b/lib/kiln/plugins KILN_CACHE_DIR=$b/cache KILN_LOG_LEVEL=error KILN_CONFIG_PATH=
sum=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$sum"
for sd in ${TUNE:-}; do
  IFS=: read -r dt s <<<"$sd"
  [ $SECONDS -lt $dl ] || { echo "skip tune $sd" >>"$sum"; continue; }
  vend=transpose_cublas_geam; [ "$dt" = f32 ] || vend=transpose_cublaslt_transform
  echo "=== $dt $s" >>"$out/tune.csv"
  timeout 60 $b/bin/kiln tune transpose --shape "$s" --dtype "$dt" --variants transpose_tiled_multirow,$vend \
    --no-store --force --runs 10 --csv >>"$out/tune.csv" 2>/dev/null
done
for sd in ${HELD:-}; do
  IFS=: read -r dt s <<<"$sd"
  [ $SECONDS -lt $dl ] || { echo "skip bench $sd" >>"$sum"; continue; }
  echo "\$ kiln bench transpose --shape $s --dtype $dt --variants transpose_tiled_multirow,transpose_skinny --vs vendor --runs 20" >>"$out/held.log"
  timeout 60 $b/bin/kiln bench transpose --shape "$s" --dtype "$dt" --variants transpose_tiled_multirow,transpose_skinny \
    --vs vendor --runs 20 2>&1 | grep -E "^transpose_" >>"$out/held.log"
done
if [ $SECONDS -lt $dl ]; then
  timeout 200 $b/bin/test_transpose_gpu >"$out/t.log" 2>&1
  echo "test_transpose_gpu rc=$? $(tail -2 "$out/t.log" | tr '\n' ' ')" >>"$sum"
fi
for tool in memcheck racecheck; do
  [ $SECONDS -lt $dl ] || continue
  KILN_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_transpose_gpu "[staged]" >"$out/s.log" 2>&1
  echo "$tool [staged] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|assertions' "$out/s.log" | tail -2 | tr '\n' ' ')" >>"$sum"
done
[ $SECONDS -lt $dl ] && { timeout 120 $b/bin/kiln verify transpose --device cuda >"$out/verify.log" 2>&1
  echo "verify rc=$? $(tail -2 "$out/verify.log" | tr '\n' ' ')" >>"$sum"; }
echo "total $SECONDS s" >>"$sum"
