#!/usr/bin/env bash
# A signal (INT, as Ctrl-C sends, or TERM, as a batch system sends) stops `kiln tune --devices`
# and every worker it started: exit 130, no worker left running.  Running the same command again
# finishes the plan (what was stored is skipped).
# usage: pool_interrupt.sh <kiln> <plan> <work dir> INT|TERM
set -uo pipefail
kiln=$1 plan=$2 work=$3 sig=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; cat "$work/run1.err" 2>/dev/null; exit 1; }
export KILN_CACHE_DIR=$work/cache
args=(tune --plan "$plan" --simulate-devices 2 --runs 3 --warmup 1 --finalists 1 -v)

"$kiln" "${args[@]}" >"$work/run1.out" 2>"$work/run1.err" &
parent=$!
# Wait until both workers run (their pids are printed with -v), then let them get going.
for _ in $(seq 1 100); do
  [ "$(grep -c 'worker on host#.: pid' "$work/run1.err")" -ge 2 ] && break
  sleep 0.1
done
workers=$(sed -n 's/.*worker on host#.: pid \([0-9]*\).*/\1/p' "$work/run1.err")
[ "$(echo "$workers" | wc -w)" -ge 2 ] || fail "the workers did not start"
sleep 1.5
kill -"$sig" "$parent"
wait "$parent"
rc=$?
[ "$rc" -eq 130 ] || fail "exit $rc after SIG$sig, expected 130"
grep -q "stopping the workers" "$work/run1.err" || fail "no word of stopping the workers"
for w in $workers; do
  if kill -0 "$w" 2>/dev/null; then fail "worker $w still runs after the parent exited"; fi
done

"$kiln" "${args[@]}" >"$work/run2.out" 2>"$work/run2.err" || { cat "$work/run2.out" "$work/run2.err"; fail "the resumed run failed"; }
grep -Eq "plan .*: [0-9]+ tuned, [0-9]+ skipped, 0 failed" "$work/run2.out" || fail "no summary in the resumed run"
tuned=$(sed -n 's/^plan .*: \([0-9]*\) tuned, \([0-9]*\) skipped.*/\1/p' "$work/run2.out")
skipped=$(sed -n 's/^plan .*: \([0-9]*\) tuned, \([0-9]*\) skipped.*/\2/p' "$work/run2.out")
[ $((tuned + skipped)) -eq 6 ] || fail "resumed: $tuned tuned + $skipped skipped != 6"
echo "OK: SIG$sig stopped the run and its workers; the rerun tuned $tuned and skipped $skipped"
