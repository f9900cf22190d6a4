#!/usr/bin/env bash
# Four shares of a plan tuned by four kiln processes at once, each into its own database, the
# share given four ways: --shard, OpenMPI's, MPICH's (PMI) and Slurm's variables; two of them on
# a worker pool.  Merged, their databases hold exactly the problems that one run over the whole
# plan tunes, and no problem twice.
# usage: pool_shards.sh <kiln> <plan> <work dir>   (KILN_PLUGIN_PATH etc. from the environment)
set -uo pipefail
kiln=$1 plan=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
args=(tune --plan "$plan" --runs 3 --warmup 1 --finalists 2)

KILN_CACHE_DIR=$work/s0 "$kiln" "${args[@]}" --shard 0/4 >"$work/s0.log" 2>&1 &
p0=$!
KILN_CACHE_DIR=$work/s1 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 "$kiln" "${args[@]}" --simulate-devices 2 \
  >"$work/s1.log" 2>&1 &
p1=$!
KILN_CACHE_DIR=$work/s2 PMI_RANK=2 PMI_SIZE=4 "$kiln" "${args[@]}" >"$work/s2.log" 2>&1 &
p2=$!
KILN_CACHE_DIR=$work/s3 SLURM_PROCID=3 SLURM_NTASKS=4 "$kiln" "${args[@]}" --devices host >"$work/s3.log" 2>&1 &
p3=$!
KILN_CACHE_DIR=$work/whole "$kiln" "${args[@]}" --shard 0/1 >"$work/whole.log" 2>&1 &
pw=$!

i=0
for p in $p0 $p1 $p2 $p3; do
  wait "$p" || { cat "$work/s$i.log"; fail "shard $i exited with $?"; }
  grep -q "shard $i/4" "$work/s$i.log" || { cat "$work/s$i.log"; fail "shard $i did not say which share it tuned"; }
  [ -f "$work/s$i/tuning.yaml" ] || { cat "$work/s$i.log"; fail "shard $i wrote no database"; }
  i=$((i + 1))
done
wait "$pw" || { cat "$work/whole.log"; fail "the whole-plan run exited with $?"; }
grep -q "12 tuned, 0 skipped, 0 failed" "$work/whole.log" || { cat "$work/whole.log"; fail "the whole run did not tune 12"; }

merge_out=$(KILN_CACHE_DIR=$work/merged "$kiln" db merge "$work"/s{0,1,2,3}/tuning.yaml 2>&1) ||
  fail "db merge: $merge_out"
echo "$merge_out"
# Disjoint shares: nothing replaced or kept, all 12 added.
echo "$merge_out" | grep -q "12 added, 0 replaced, 0 kept" || fail "the shards overlap or miss problems"

keys() { KILN_CACHE_DIR=$1 "$kiln" db show --json | grep -E '"(device|op|problem)": ' | paste - - - | sort; }
keys "$work/merged" >"$work/merged.keys"
keys "$work/whole" >"$work/whole.keys"
[ "$(wc -l <"$work/whole.keys")" -eq 12 ] || { cat "$work/whole.keys"; fail "expected 12 entries in the whole run"; }
diff "$work/merged.keys" "$work/whole.keys" || fail "the merged shards differ from the whole run"
echo "OK: 4 shards, merged = whole plan (12 problems)"
