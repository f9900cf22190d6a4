#!/usr/bin/env bash
# Times `kiln tune --devices` on one GPU and on all of them (issue 13: 2 GPUs vs 1, target at
# least 1.8x) and compares the winners of the two runs.  Each run tunes into a database of its
# own under OUT, so nothing is skipped.  Needs a CUDA build; run it on a host with 2+ GPUs.
# usage: pool_timing.sh <kiln> <plan> <out dir> [one|all|compare]   (default: all three, in order)
#   one      kiln tune --plan PLAN --devices cuda:0   into OUT/one  (OUT/one.json, OUT/one.err)
#   all      kiln tune --plan PLAN --devices all      into OUT/all
#   compare  wall times, speed-up, and each problem's winner in both runs
set -uo pipefail
kiln=$1 plan=$2 out=$3 stage=${4:-everything}
mkdir -p "$out"

run() {  # run <name> <devices>
  rm -rf "${out:?}/$1"
  KILN_CACHE_DIR=$out/$1 "$kiln" tune --plan "$plan" --devices "$2" --json >"$out/$1.json" 2>"$out/$1.err"
  local rc=$?
  echo "$1 ($2): exit $rc, $(grep -m1 '"wall_seconds"' "$out/$1.json")"
}

# One line per stored entry: device op problem <tab> variant [config] median_us
entries() {
  KILN_CACHE_DIR=$1 KILN_CONFIG_PATH= "$kiln" db show --json | awk '
    function value() { v = $0; sub(/^[^:]*: /, "", v); sub(/,$/, "", v); gsub(/^"|"$/, "", v); return v }
    /^ *"device": /    { d = value() }
    /^ *"op": /        { o = value() }
    /^ *"problem": /   { p = value() }
    /^ *"variant": /   { w = value() }
    /^ *"config": /    { c = value() }
    /^ *"median_us": / { print d " " o " " p "\t" w " [" c "] " value() }' | sort
}

compare() {
  local one all
  one=$(grep -m1 '"wall_seconds"' "$out/one.json" | tr -dc '0-9.')
  all=$(grep -m1 '"wall_seconds"' "$out/all.json" | tr -dc '0-9.')
  echo "wall time: 1 GPU ${one} s, all GPUs ${all} s, speed-up $(awk -v a="$one" -v b="$all" 'BEGIN { printf "%.2f", a / b }')x"
  for r in one all; do
    echo "$r: $(grep -E '"(tuned|skipped|failed|not_reached)": ' "$out/$r.json" | tr -d ' \n')"
  done
  entries "$out/one" >"$out/one.entries"
  entries "$out/all" >"$out/all.entries"
  echo "winners (problem | 1 GPU | all GPUs): a differing winner must be within the tie rule of the other"
  join -t $'\t' -a1 -a2 -e missing -o 0,1.2,2.2 "$out/one.entries" "$out/all.entries" | awk -F '\t' '
    { a = $2; b = $3; sa = a; sb = b; sub(/ [^ ]*$/, "", sa); sub(/ [^ ]*$/, "", sb)
      same = (sa == sb) ? "same" : "DIFFERENT"; n[same]++
      printf "%-9s %s | %s | %s\n", same, $1, a, b }
    END { printf "%d same, %d different\n", n["same"], n["DIFFERENT"] }'
}

case $stage in
  one) run one cuda:0 ;;
  all) run all all ;;
  compare) compare ;;
  everything) run one cuda:0 && run all all && compare ;;
  *) echo "usage: pool_timing.sh <kiln> <plan> <out dir> [one|all|compare]" >&2; exit 2 ;;
esac
