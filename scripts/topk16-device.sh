#!/usr/bin/env bash
# One device run for topk16 (issue 12; topk15-device.sh with alternates and per-shape variants):
# topk_grid_select (single rows of 2^13 to a few million spread over the resident grid) against
# topk_sample_select, main's topk_grid_select and torch.topk, same run.
# Builds this tree (plugin, CLI, the GPU tests named in BUILD_TESTS) into build-gpu, then the
# stages named, in order, each only if it can start before DEADLINE seconds:
#   split   per shape of SPLIT (shape:dtype:variant): ncu (--clock-control none) kernel durations
#           of two runs of `kiln bench`, next to the bench's own time -> split.log
#   tests   TESTS (BINARY[:CATCH_FILTER];... - ';' between entries: a Catch test name has spaces)
#   tests2  the same on TESTS2
#   san     compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on SAN (same form)
#   tune    per shape of TUNE: kiln tune --variants topk_grid_select --no-store -> tune.log
#   sweep   per shape of DEV: `kiln bench topk --shape S --dtype D --variants VARIANTS`, then
#           python3 scripts/bench_torch_topk.py per dtype -> sweep.log
#           (a shape may be S:DTYPE:VARIANTS, e.g. 1x16777216x4096:f16:topk_sample_select where
#           topk_grid_select declines the row)
#   held    the same on HELD -> heldout.log (shapes not read while choosing anything)
#   extra   the same on EXTRA -> extra.log
#   base    (needs BASE=DIR: files that replace plugins/topk's, the base line's) builds the topk
#           plugin of this tree with them into /tmp/base16 (started in the background right after
#           the build), then `kiln bench` of BASE_VARIANTS (default topk_grid_select) with that plugin on DEV and HELD ->
#           base.log (the same CLI, only the plugin differs); on BASE_SHAPES if set
#   alt     the same for each NAME=DIR of ALTS (built to /tmp/alt_NAME beside the base) on
#           ALT_SHAPES -> alt_NAME.log
#   scripts/topk16-device.sh OUT DEADLINE STAGE...
# From a helper's worktree (`run` sends the session's checkout, not the worktree): copy the tree
# (git archive HEAD, plus BASE's folder) into an ignored folder of the checkout, e.g.
# build-topk16-src/, name it in `carry` and start with `cd build-topk16-src &&`.
set -uo pipefail
out=${1:?usage: scripts/topk16-device.sh OUT DEADLINE STAGE...}
deadline=${2:?deadline in seconds}
shift 2
cd "$(dirname "$0")/.."
b=${BUILD_DIR:-build-gpu}
export LD_LIBRARY_PATH=$PWD/$b/lib:${LD_LIBRARY_PATH:-}
plugdir=$PWD/$b/lib/kiln/plugins
kenv() { KILN_CACHE_DIR=$PWD/$b/cache KILN_PLUGIN_PATH=$plugdir "$@"; }
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { [ $SECONDS -lt "$deadline" ] || { say "skipped (deadline): $1"; return 1; }; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$sum"
tests=${BUILD_TESTS:-"test_topk_grid_select_gpu test_topk_sample_select_gpu"}
( cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build $b -j16 --target kiln_cli kiln_topk $tests ) >"$out/build.log" 2>&1 ||
  { say "build failed"; grep -E "error|FAILED" "$out/build.log" | head -30 | tee -a "$sum"; exit 1; }
say "build done at $SECONDS s"
rm -f "$out/build.log"  # `run` brings back 8 files at most: the logs of what worked go
build_alt() {  # DIR FILES_DIR: this tree with FILES_DIR's files in plugins/topk, its topk plugin
  ( rm -rf "$1" && mkdir -p "$1/src" && tar --exclude=./$b --exclude='./build-*' -cf - . | tar -xf - -C "$1/src" &&
    cp "$2"/* "$1/src/plugins/topk/" &&
    cmake -S "$1/src" -B "$1/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build "$1/b" -j8 --target kiln_topk )
}
pids=""
if [ -n "${BASE:-}" ]; then build_alt /tmp/base16 "$BASE" >"$out/base_build.log" 2>&1 & pids="$pids $!"; fi
for a in ${ALTS:-}; do
  build_alt /tmp/alt_${a%%=*} "${a#*=}" >"$out/alt_${a%%=*}_build.log" 2>&1 & pids="$pids $!"
done
V=${VARIANTS:-topk_grid_select,topk_sample_select}
bench_set() {  # LOG SHAPES...
  local log=$1; shift
  : >"$log"
  for sd in "$@"; do left "bench $sd" || continue
    IFS=: read -r s dt vv <<<"$sd"
    local vs=${vv:-$V}
    echo "\$ kiln bench topk --shape $s --dtype ${dt:-f32} --variants $vs --vs topk_sample_select" >>"$log"
    kenv timeout 60 $b/bin/kiln bench topk --shape "$s" --dtype "${dt:-f32}" --variants $vs --vs topk_sample_select \
      --max-seconds-per-row ${ROW_SECONDS:-1} 2>&1 | grep -vE "^\s*$" | tail -6 >>"$log" || echo "(failed)" >>"$log"
  done
  for dt in f32 bf16 f16; do
    local list=""
    for sd in "$@"; do
      IFS=: read -r s d _ <<<"$sd"
      [ "${d:-f32}" = $dt ] && list="$list $s"
    done
    [ -n "$list" ] && [ -z "${NO_TORCH:-}" ] && left "torch $dt" && timeout 90 python3 scripts/bench_torch_topk.py --dtype $dt $list >>"$log" 2>&1
  done
}
for stage in "$@"; do
  say "stage $stage at $SECONDS s"
  case $stage in
    split)
      : >"$out/split.log"
      for e in ${SPLIT:-}; do
        IFS=: read -r s dt var <<<"$e"
        left "split $e" || continue
        echo "\$ ncu kiln bench topk --shape $s --dtype $dt --variants $var" >>"$out/split.log"
        kenv timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'sample|grid|fallback' \
          --launch-skip 10 --launch-count 10 $b/bin/kiln bench topk --shape "$s" --dtype "$dt" --variants "$var" \
          --vs "$var" --runs 5 --warmup 3 2>&1 | grep -E "_kernel|gpu__time_duration|topk_|==ERR|==PROF" | cut -c1-170 | head -60 >>"$out/split.log"
      done ;;
    tests|tests2)  # tests2: the same on TESTS2 (e.g. the slow ones after the benches)
      [ $stage = tests ] && list=${TESTS:-test_topk_grid_select_gpu;test_topk_sample_select_gpu} || list=${TESTS2:-}
      touch "$out/tests.log"
      IFS=';' read -ra entries <<<"$list"
      for e in "${entries[@]}"; do
        IFS=: read -r t f <<<"$e"
        left "$t" || continue
        kenv timeout ${TEST_TIMEOUT:-120} $b/bin/$t ${f:+"$f"} >"$out/t.log" 2>&1
        say "$t ${f:-} rc=$? $(grep -E 'test cases|assertions' "$out/t.log" | tail -2 | tr '\n' ' ')"
        grep -B3 -A14 "FAILED" "$out/t.log" | head -60 >>"$out/tests.log"
      done
      rm -f "$out/t.log"; [ -s "$out/tests.log" ] || rm -f "$out/tests.log" ;;
    san)
      : >"$out/san.log"
      IFS=';' read -ra entries <<<"${SAN:-test_topk_grid_select_gpu}"
      for e in "${entries[@]}"; do
        IFS=: read -r t f <<<"$e"
        for tool in memcheck racecheck; do left "$tool $t" || continue
          KILN_TEST_QUICK=1 kenv timeout ${SAN_TIMEOUT:-90} compute-sanitizer --tool $tool --error-exitcode 9 $b/bin/$t ${f:+"$f"} >"$out/s.log" 2>&1
          say "$tool $t ${f:-} rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions' "$out/s.log" | tail -3 | tr '\n' ' ')"
          grep -m5 -A8 "Invalid\|Race reported\|FAILED\|rror" "$out/s.log" | head -30 >>"$out/san.log"
        done
      done
      rm -f "$out/s.log" ;;
    tune)
      : >"$out/tune.log"
      for sd in ${TUNE:-}; do left "tune $sd" || continue
        IFS=: read -r s dt <<<"$sd"
        echo "\$ kiln tune topk --shape $s --dtype ${dt:-f32} --variants topk_grid_select --no-store --runs 10" >>"$out/tune.log"
        kenv timeout 40 $b/bin/kiln tune topk --shape "$s" --dtype "${dt:-f32}" --variants topk_grid_select --no-store \
          --runs 10 --budget-seconds 8 2>&1 | grep -vE "^\s*$" | tail -14 >>"$out/tune.log"
      done ;;
    sweep) bench_set "$out/sweep.log" ${DEV:-}; say "sweep: $(grep -c '^\$' "$out/sweep.log") benches" ;;
    held) bench_set "$out/heldout.log" ${HELD:-}; say "held-out: written to heldout.log" ;;
    extra) bench_set "$out/extra.log" ${EXTRA:-}; say "extra: $(grep -c '^\$' "$out/extra.log") benches" ;;
    base)
      wait $pids 2>/dev/null; pids=""
      [ -f /tmp/base16/b/lib/kiln/plugins/libkiln_topk.so ] || { say "base build failed"; tail -5 "$out/base_build.log" >>"$sum"; continue; }
      rm -f "$out/base_build.log"
      saveV=$V; V=${BASE_VARIANTS:-topk_grid_select}; plugdir=/tmp/base16/b/lib/kiln/plugins
      NO_TORCH=1 bench_set "$out/base.log" ${BASE_SHAPES:-${DEV:-} ${HELD:-}}
      V=$saveV; plugdir=$PWD/$b/lib/kiln/plugins; say "base: $(grep -c '^\$' "$out/base.log") benches" ;;
    alt)
      wait $pids 2>/dev/null; pids=""
      for a in ${ALTS:-}; do nm=${a%%=*}
        [ -f /tmp/alt_$nm/b/lib/kiln/plugins/libkiln_topk.so ] || { say "alt $nm build failed"; tail -5 "$out/alt_${nm}_build.log" >>"$sum"; continue; }
        rm -f "$out/alt_${nm}_build.log"
        saveV=$V; V=topk_grid_select; plugdir=/tmp/alt_$nm/b/lib/kiln/plugins
        NO_TORCH=1 bench_set "$out/alt_$nm.log" ${ALT_SHAPES:-}
        V=$saveV; plugdir=$PWD/$b/lib/kiln/plugins; say "alt $nm: $(grep -c '^\$' "$out/alt_$nm.log") benches"
      done ;;
    *) say "unknown stage $stage" ;;
  esac
done
say "total $SECONDS s"
