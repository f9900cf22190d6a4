#!/usr/bin/env bash
# One device run for issue 9's last items (transpose_skinny's 2-byte pairs; the tuner's drift-robust
# finalist choice at bf16 8192^3): build for sm_90, benches first (the figures), then
# test_transpose_gpu, the gemm tunes against bench, `kiln verify transpose` and compute-sanitizer,
# each stage only if it fits before the deadline.  Key lines to stdout and OUT/summary.txt; logs
# under OUT (at most six files).
#   scripts/skinny-retime-device.sh OUT
# Environment: KILN_DEADLINE_S (seconds from start for the whole script, default 400),
# KILN_BUILD_DIR (default build-gpu).
set -uo pipefail
out=${1:?usage: scripts/skinny-retime-device.sh OUT}
cd "$(dirname "$0")/.."
deadline=${KILN_DEADLINE_S:-400}
b=${KILN_BUILD_DIR:-$PWD/build-gpu}
case $b in /*) ;; *) b=$PWD/$b ;; esac
export KILN_CACHE_DIR=$b/cache KILN_CONFIG_PATH=
# The transpose stages see only these two plugins (the gemm plugin is still being built then).
tp=$b/plugins-transpose
mkdir -p "$tp" "$KILN_CACHE_DIR"
exec > >(tee -a "$out/summary.txt") 2>&1
left() { echo $((deadline - SECONDS)); }
fits() { [ "$(left)" -gt "$1" ] || { echo "skipped: $2 (only $(left) s left)"; return 1; }; }
t0=$SECONDS
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_transpose kiln_vendor test_transpose_gpu; } \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
echo "build $((SECONDS - t0)) s"
ln -sf $b/lib/kiln/plugins/libkiln_transpose.so $b/lib/kiln/plugins/libkiln_vendor.so "$tp/"
# The gemm plugin builds while the transpose stages run.
(cmake --build $b -j12 --target kiln_gemm >"$out/build-gemm.log" 2>&1; echo $? >"$b/gemm.rc") &
gemm_build=$!
k=$b/bin/kiln

echo "== bench transpose (default configs; vendor in the same run)"
while read -r dtype shape; do
  fits 30 "bench $dtype $shape" || continue
  echo "\$ kiln bench transpose --dtype $dtype --shape $shape --vs vendor"
  KILN_PLUGIN_PATH=$tp timeout 40 $k bench transpose --dtype "$dtype" --shape "$shape" --vs vendor 2>&1 |
    grep -E "^(transpose|op|tuned)|vs " | sed -E 's/  +/  /g'
done <<'LIST'
bf16 100x1000000
f16 100x1000000
bf16 1000000x100
f16 1000000x100
f32 100x1000000
f32 1000000x100
LIST

echo "== tune transpose_skinny (every config, vendor in the same process; 10 runs)"
while read -r dtype shape; do
  fits 60 "tune $dtype $shape" || continue
  echo "\$ kiln tune transpose --dtype $dtype --shape $shape --variants transpose_skinny,transpose_cublaslt_transform"
  KILN_PLUGIN_PATH=$tp timeout 30 $k tune transpose --dtype "$dtype" --shape "$shape" \
    --variants transpose_skinny,transpose_cublaslt_transform --force --no-store --runs 10 --budget-seconds 12 --csv 2>/dev/null | python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin)]
hdr = next((r for r in rows if "median_us" in r), None)
if not hdr: sys.exit(print("  no csv"))
i = {h: n for n, h in enumerate(hdr)}
data = sorted((r for r in rows if r is not hdr and len(r) == len(hdr) and r[i["median_us"]]), key=lambda r: float(r[i["median_us"]]))
for r in data[:6] + [r for r in data[6:] if "cublas" in r[i["variant"]]]:
    print("  %9.1f us  %s %s" % (float(r[i["median_us"]]), r[i["variant"]], r[i["config"]]))'
done <<'LIST'
bf16 100x1000000
bf16 1000000x100
LIST

echo "== test_transpose_gpu"
if fits 100 test_transpose_gpu; then
  timeout 90 $b/bin/test_transpose_gpu >"$out/tests.log" 2>&1
  echo "test_transpose_gpu rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ')"
  grep -E "FAILED" -A6 "$out/tests.log" | head -30
fi

echo "== gemm bf16 8192^3 (tb=1, c16=1): tune with the new finalist order, then bench"
if fits 70 "gemm (waiting for its build)"; then
  while kill -0 $gemm_build 2>/dev/null && [ "$(left)" -gt 60 ]; do sleep 2; done
  if [ "$(cat $b/gemm.rc 2>/dev/null)" = 0 ]; then
    echo "gemm build done at $SECONDS s"
    for shape in 8192x8192x8192,tb=1,c16=1 16384x4096x4096,tb=1,c16=1; do
      fits 25 "tune gemm $shape" || continue
      echo "\$ kiln tune gemm --dtype bf16 --shape $shape --variants gemm_cublaslt --force -v"
      timeout 25 $k tune gemm --dtype bf16 --shape "$shape" --variants gemm_cublaslt --force -v 2>&1 |
        sed -n '/finalists, re-timed/,/chosen:/p' | sed -E 's/  +/  /g'
    done
    fits 25 "bench gemm" && {
      echo "\$ kiln bench gemm --dtype bf16 --shape 8192x8192x8192,tb=1,c16=1 --variants gemm_cublaslt --vs vendor"
      # Unfiltered: this line's output was lost to a grep pattern in the first run.
      timeout 25 $k bench gemm --dtype bf16 --shape 8192x8192x8192,tb=1,c16=1 --variants gemm_cublaslt --vs vendor 2>&1 |
        grep -v '^\s*$' | sed -E 's/  +/  /g' | head -20; echo "bench rc=${PIPESTATUS[0]}"; }
    fits 25 "tune gemm (coverage options)" && {
      echo "\$ kiln tune gemm --dtype bf16 --shape 8192x8192x8192,tb=1,c16=1 --variants gemm_cublaslt --force --no-store --runs 10 --finalists 3 -v"
      timeout 25 $k tune gemm --dtype bf16 --shape 8192x8192x8192,tb=1,c16=1 --variants gemm_cublaslt --force --no-store \
        --runs 10 --finalists 3 -v 2>&1 | sed -n '/finalists, re-timed/,/chosen:/p' | sed -E 's/  +/  /g'; }
  else
    echo "gemm build not done (rc $(cat $b/gemm.rc 2>/dev/null || echo running)); $(grep -E 'error' "$out/build-gemm.log" | head -5)"
  fi
fi

echo "== verify and sanitizers"
fits 45 "verify transpose" && {
  KILN_PLUGIN_PATH=$tp timeout 40 $k verify transpose --max-configs 4 >"$out/verify.log" 2>&1
  echo "verify transpose rc=$? $(tail -1 "$out/verify.log")"; }
while read -r tool filter; do
  fits 25 "$tool '$filter'" || continue
  t=$(( $(left) - 15 )); [ $t -gt 60 ] && t=60
  KILN_TEST_QUICK=1 timeout $t compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/test_transpose_gpu "$filter" \
    >"$out/sanitizer.tmp" 2>&1
  echo "$tool '$filter' rc=$? ($t s allowed) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|All tests|failed' "$out/sanitizer.tmp" | tail -2 | tr '\n' ' ')"
  cat "$out/sanitizer.tmp" >>"$out/sanitizer.log"; rm -f "$out/sanitizer.tmp"
done <<'LIST'
memcheck transpose_skinny moves*
racecheck transpose_skinny moves*
memcheck every CUDA transpose*
racecheck transpose: transposed*
LIST
kill $gemm_build 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1
echo "total $SECONDS s"
