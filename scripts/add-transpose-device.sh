#!/usr/bin/env bash
# One device run for add and transpose (issues 9 and 12): build the targets for sm_90, run their
# GPU tests and `kiln verify`, sanitizers, `kiln bench ... --vs vendor` in f32 and bf16, and short
# tunes that time every config beside the vendor baseline in the same process.  Key lines go to
# stdout and to OUT/summary.txt (compact, so a truncated stdout loses nothing); logs (at most five
# files) under the folder given ($OUT on the device machine).
#   scripts/add-transpose-device.sh OUT [tests] [verify] [sanitize] [bench] [tune]
# Environment: KILN_TUNE_SECONDS (budget per tuned problem, default 10), KILN_SANITIZE_TIMEOUT
# (seconds per sanitizer run, default 40), KILN_BUILD_DIR (default build-gpu).
set -uo pipefail
out=${1:?usage: scripts/add-transpose-device.sh OUT [stages]}; shift
stages=${*:-tests tune bench verify sanitize}
cd "$(dirname "$0")/.."
b=${KILN_BUILD_DIR:-$PWD/build-gpu}
case $b in /*) ;; *) b=$PWD/$b ;; esac
export KILN_CACHE_DIR=$b/cache KILN_PLUGIN_PATH=$b/lib/kiln/plugins
t0=$SECONDS
{ cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_elementwise kiln_transpose kiln_vendor test_add_gpu test_transpose_gpu; } \
  >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
echo "build $((SECONDS - t0)) s"
exec > >(tee -a "$out/summary.txt") 2>&1
summary() {  # the tune JSON: the fastest candidates, the default config's time, the vendor's
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d.get("problems", []):
    rows = sorted((c for c in p.get("results") or [] if c.get("median_us")), key=lambda c: c["median_us"])
    vendor = [c for c in rows if "cublas" in c.get("variant", "")]
    default = [c for c in rows if c.get("default_config") or c.get("is_default")]
    shown = []
    for c in rows[:5] + default + vendor:
        if any(c is x for x in shown):
            continue
        shown.append(c)
        cfg = " ".join("%s=%s" % kv for kv in (c.get("config") or {}).items())
        print("  %9.1f us  %s %s%s" % (c["median_us"], c.get("variant"), cfg, "  (default)" if c in default else ""))
PY
}
for s in $stages; do
  t1=$SECONDS
  case $s in
    tests)
      for t in add transpose; do
        timeout 150 $b/bin/test_${t}_gpu >>"$out/tests.log" 2>&1; echo "test_${t}_gpu rc=$? $(tail -2 "$out/tests.log" | tr '\n' ' ')"
      done ;;
    verify)
      for op in add transpose; do
        timeout 40 $b/bin/kiln verify $op --max-configs 4 >>"$out/verify.log" 2>&1; echo "verify $op rc=$? $(tail -1 "$out/verify.log")"
      done ;;
    sanitize)
      # Quick mode (KILN_TEST_QUICK): the large shapes are left out.  racecheck where shared memory is used.
      while read -r tool t filter; do
        KILN_TEST_QUICK=1 timeout "${KILN_SANITIZE_TIMEOUT:-40}" compute-sanitizer --tool $tool --error-exitcode 9 \
          $b/bin/test_${t}_gpu "$filter" >"$out/sanitizer.tmp" 2>&1
        echo "$tool $t '$filter' rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|All tests|failed' "$out/sanitizer.tmp" | tail -2 | tr '\n' ' ')"
        cat "$out/sanitizer.tmp" >>"$out/sanitizer.log"; rm -f "$out/sanitizer.tmp"
      done <<'LIST'
memcheck add every CUDA add*
memcheck transpose transpose: transposed*
racecheck transpose transpose: transposed*
memcheck transpose every CUDA transpose*
LIST
      ;;
    bench)
      while read -r op dtype shape; do
        echo "\$ kiln bench $op --dtype $dtype --shape $shape --vs vendor"
        timeout 40 $b/bin/kiln bench "$op" --dtype "$dtype" --shape "$shape" --vs vendor 2>&1 | grep -E "^(add|transpose)_" |
          sed -E 's/  +/  /g'
      done <<'LIST'
add f32 1x268435456
transpose f32 100x1000000
transpose f32 1000000x100
transpose bf16 100x1000000
LIST
      ;;
    tune)
      while read -r op dtype shape variants; do
        echo "\$ kiln tune $op --dtype $dtype --shape $shape --variants $variants"
        timeout 40 $b/bin/kiln tune "$op" --dtype "$dtype" --shape "$shape" --variants "$variants" --force --no-store --runs 10 \
          --budget-seconds "${KILN_TUNE_SECONDS:-10}" --json >"$out/tune.tmp.json" 2>/dev/null
        summary "$out/tune.tmp.json"
      done <<'LIST'
add f32 16384x16384 add_streaming,add_vectorized,add_cublas_geam
add f32 4096x4096 add_streaming,add_vectorized,add_cublas_geam
add f32 2048x2048 add_streaming,add_vectorized,add_cublas_geam
add f32 1024x1024 add_streaming,add_vectorized,add_cublas_geam
add bf16 16384x16384 add_streaming,add_cublaslt_transform
add bf16 2048x2048 add_streaming,add_cublaslt_transform
transpose f32 16384x16384 transpose_tiled_multirow,transpose_cublas_geam
transpose f32 4097x4099 transpose_tiled_multirow,transpose_cublas_geam
transpose f32 2048x2048 transpose_tiled_multirow,transpose_cublas_geam
transpose bf16 16384x16384 transpose_tiled_multirow,transpose_cublaslt_transform
transpose bf16 4097x4099 transpose_tiled_multirow,transpose_cublaslt_transform
transpose bf16 2048x2048 transpose_tiled_multirow,transpose_cublaslt_transform
LIST
      ;;
  esac
  echo "stage $s $((SECONDS - t1)) s"
done
rm -f "$out/tune.tmp.json"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1
