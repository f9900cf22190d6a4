#!/usr/bin/env bash
# `kiln db merge` whose result would hold more entries than a read accepts (kTuningDbMaxEntries):
# it used to write that file, and the next read refused the whole database.  Now: a clean error
# (exit 1, no crash) naming the file, the count and the limit, and the database merged into is
# left byte for byte as it was, with no temp file beside it.
# usage: db_merge_limit.sh <kiln> <a one-entry database, copied as the target> <work dir>
set -uo pipefail
kiln=$1 seed=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
gen() {  # gen FILE FIRST COUNT: COUNT entries f32|n=FIRST... (valid, in flow style: quick to write)
  {
    printf 'schema: 1\ndevices:\n  "Some GPU|sm_90|132sm":\n    tuner_scale:\n'
    seq "$2" $(($2 + $3 - 1)) |
      awk '{printf "      \"f32|n=%d\": {variant: tuner_scale_unrolled, config: {unroll: 4}, median_us: 1.0}\n", $1}'
  } >"$1"
}
gen "$work/a.yaml" 1000000 25000
gen "$work/b.yaml" 2000000 25000
cp "$seed" "$work/tuning.yaml" || exit 1
# 1 + 25000 + 25000 = 50001 entries, one over the limit.
"$kiln" db merge "$work/a.yaml" "$work/b.yaml" --into "$work/tuning.yaml" >"$work/out.log" 2>"$work/err.log"
rc=$?
cat "$work/err.log"
[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
grep -q "kiln db: error: tuning database '$work/tuning.yaml': not written: it would hold 50001 entries, more than the limit of 50000" \
  "$work/err.log" || fail "the error does not name the file, the count and the limit"
grep -q "internal error" "$work/err.log" && fail "reported as an internal error"
grep -q "merged" "$work/out.log" && fail "reported a merge"
cmp -s "$seed" "$work/tuning.yaml" || fail "the database merged into was changed"
leftovers=$(ls -A "$work" | grep -v -x -e a.yaml -e b.yaml -e tuning.yaml -e tuning.yaml.lock -e out.log -e err.log)
[ -z "$leftovers" ] || fail "files left behind: $leftovers"
echo "ok"
