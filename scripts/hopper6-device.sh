#!/usr/bin/env bash
# gemm_wgmma stream-k on an H200 in one command (sixth session, issue 10): build the gemm and vendor
# plugins, the CLI and test_gemm_wgmma_gpu; run the test; compute-sanitizer memcheck and racecheck on
# the new rows (KILN_TEST_QUICK=1); then `kiln bench gemm ... --variants gemm_wgmma --vs vendor` over
# the LLM sweep (design and held-out shapes) and the square shapes, summarised per set.
#
#   scripts/hopper6-device.sh OUT [stage...]    stages: build test sanitize bench square sass
#                                               (default: build test sanitize bench square)
#   DEADLINE (seconds from the start, default 280): no stage or bench row starts after it, and
#   each is cut at what is left, so the script ends before the device call's timeout.
#   TEST_FILTER narrows the test stage (Catch2 tags); SAN_TESTS the sanitizer's ("[streamk]").
#   DESIGN / HELDOUT / SQUARE: the shape lists (m x n x k,tb=T); BENCH_RUNS the timed runs per row.
set -uo pipefail
out=${1:?usage: scripts/hopper6-device.sh OUT [stage...]}
shift
stages=${*:-build test sanitize bench square}
mkdir -p "$out"
cd "$(dirname "$0")/.."
start=$SECONDS
deadline=${DEADLINE:-280}
left() { echo $((deadline - (SECONDS - start))); }
B=$(realpath -m "${KILN_BUILD_DIR:-build-gpu}")
S="$out/summary.txt"
note() { echo "$*" | tee -a "$S"; }
export KILN_CACHE_DIR=$B/cache KILN_PLUGIN_PATH=$B/lib/kiln/plugins KILN_CONFIG_PATH=
K=$B/bin/kiln
T=$B/bin/test_gemm_wgmma_gpu
# Time-limited run: never past the deadline, at most $1 seconds.
run_for() {
  local cap=$1 l
  shift
  l=$(left)
  [ "$l" -le 5 ] && { note "deadline: skipped $*"; return 124; }
  [ "$cap" -gt "$l" ] && cap=$l
  timeout "$cap" "$@"
}
bench_set() {  # set-name shapes...
  local set=$1
  shift
  for sh in "$@"; do
    [ "$(left)" -le 8 ] && { note "deadline: bench $set $sh not run"; continue; }
    run_for 40 "$K" bench gemm --dtype "${DTYPE:-bf16}" --shape "$sh,c16=1" --variants gemm_wgmma --vs vendor \
      --csv --runs "${BENCH_RUNS:-20}" 2>>"$out/bench.err" | tail -n +2 | sed "s/^/$set,/" >>"$out/bench.csv" ||
      note "bench $sh: rc=$?"
  done
}
for stage in $stages; do
  t0=$SECONDS
  case $stage in
    build)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
      cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
        run_for 400 cmake --build "$B" -j16 --target kiln_cli kiln_gemm kiln_vendor test_gemm_wgmma_gpu >>"$out/build.log" 2>&1
      rc=$?
      note "build: rc=$rc ($((SECONDS - t0)) s)"
      if [ $rc -ne 0 ]; then grep -E "error|FAILED" "$out/build.log" | head -30 | tee -a "$S"; exit 1; fi
      rm -f "$out/build.log"  # at most 8 files come back from the device tool
      ;;
    test)
      run_for "${TEST_TIMEOUT:-150}" "$T" ${TEST_FILTER:+"$TEST_FILTER"} >"$out/test.log" 2>&1
      note "test_gemm_wgmma_gpu ${TEST_FILTER:-(all)}: rc=$? ($((SECONDS - t0)) s)"
      grep -E "test cases|assertions|FAILED|failed|REQUIRE|CHECK" "$out/test.log" | head -20 | tee -a "$S"
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        t1=$SECONDS
        KILN_TEST_QUICK=1 run_for "${SAN_TIMEOUT:-60}" compute-sanitizer --tool $tool --error-exitcode 3 "$T" \
          "${SAN_TESTS:-[streamk]}" >"$out/san-$tool.log" 2>&1
        note "compute-sanitizer $tool ${SAN_TESTS:-[streamk]}: rc=$? ($((SECONDS - t1)) s)"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions" "$out/san-$tool.log" | tail -3 | tee -a "$S"
      done
      ;;
    bench)  # LLM-style bf16 shapes, C bf16: the default config against cuBLASLt's default, same run
      # Design: the fifth session's 16 design shapes (I looked at these while writing the model).
      # Held out: its 16 held-out shapes plus new ones (not looked at while choosing the defaults).
      DESIGN=${DESIGN:-"1x4096x4096,tb=1 16x4096x4096,tb=1 128x11008x4096,tb=1 512x4096x11008,tb=1
        1x28672x8192,tb=1 16x8192x28672,tb=1 128x5120x5120,tb=1 512x14336x4096,tb=1 1x11008x4096,tb=0
        16x14336x4096,tb=0 128x4096x4096,tb=0 512x8192x8192,tb=0 2048x14336x4096,tb=1 8192x4096x4096,tb=1
        2048x4096x11008,tb=0 16384x5120x5120,tb=1"}
      HELDOUT=${HELDOUT:-"1x4096x11008,tb=1 7x14336x4096,tb=1 4x5120x5120,tb=1 8x28672x4096,tb=0 12x4096x14336,tb=1
        1x4096x11008,tb=0 1x28672x5120,tb=1 32x5120x14336,tb=1 96x11008x4096,tb=1 333x4096x5120,tb=1
        1000x5120x5120,tb=1 64x8192x28672,tb=1 96x11008x4096,tb=0 2048x14336x5120,tb=0 512x28672x4096,tb=1
        4096x5120x14336,tb=1 256x14336x5120,tb=1 700x8192x4096,tb=0 3000x11008x4096,tb=1 1500x4096x14336,tb=1"}
      # shellcheck disable=SC2086
      bench_set design $DESIGN
      # shellcheck disable=SC2086
      bench_set heldout $HELDOUT
      note "bench stage: $((SECONDS - t0)) s"
      ;;
    square)  # the issue's square shapes, bf16 and f16, C in the input type
      SQUARE=${SQUARE:-"4096x4096x4096,tb=1 8192x8192x8192,tb=1"}
      # shellcheck disable=SC2086
      DTYPE=bf16 bench_set square-bf16 $SQUARE
      # shellcheck disable=SC2086
      DTYPE=f16 bench_set square-f16 $SQUARE
      note "square stage: $((SECONDS - t0)) s"
      ;;
    sass)  # local loads / stores in the gemm kernels (spills), next to their wgmma count
      so=$(find "$B" -name 'libkiln_gemm*.so' | head -1)
      cuobjdump -sass "$so" 2>/dev/null | awk '/Function :/ {f=$3} /HGMMA/ {h[f]++} /LDL|STL/ {l[f]++}
        END {for (f in l) if (f ~ /gemm_wgmma_kernel/) print "sass", l[f], "local ld/st,", h[f], "HGMMA:", substr(f, 1, 140)}' |
        tee -a "$S"
      ;;
  esac
done
# Per set: every row, the ratio (cuBLASLt / gemm_wgmma, > 1 is faster), geomean, min, rows below 0.85.
if [ -s "$out/bench.csv" ]; then
  python3 - "$out/bench.csv" <<'PYEOF' | tee -a "$S"
import csv, math, sys
rows, order = {}, []
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 15 or not r[9]:
        continue
    key = (r[0], r[2])
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key][r[4]] = (float(r[9]), r[5])
sets = {}
for key in order:
    v = rows[key]
    w = v.get("gemm_wgmma")
    others = {k: x for k, x in v.items() if k != "gemm_wgmma"}
    if not w or not others:
        print(f"{key[0]} {key[1]}: missing a variant ({', '.join(v)})")
        continue
    name, c = min(others.items(), key=lambda kv: kv[1][0])
    ratio = c[0] / w[0]
    sets.setdefault(key[0], []).append(ratio)
    cfg = " ".join(x for x in w[1].split() if x.split("=")[0] in ("BM", "BN", "stages", "consumers", "pingpong", "splits", "swap", "streamk"))
    print(f"{key[0]} {key[1]}: wgmma {w[0]:.1f} us [{cfg}] {name} {c[0]:.1f} us ratio {ratio:.3f}")
def gm(rs):
    return math.exp(sum(math.log(x) for x in rs) / len(rs))
for name, rs in sets.items():
    print(f"{name}: {len(rs)} shapes, geomean {gm(rs):.3f}, min {min(rs):.3f}, below 0.85: {sum(x < 0.85 for x in rs)}")
llm = [x for n, rs in sets.items() if not n.startswith("square") for x in rs]
if llm:
    print(f"LLM all: {len(llm)} shapes, geomean {gm(llm):.3f}, min {min(llm):.3f}, below 0.85: {sum(x < 0.85 for x in llm)}")
PYEOF
fi
note "total: $((SECONDS - start)) s"
