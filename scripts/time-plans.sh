#!/usr/bin/env bash
# Times `kiln tune --plan` runs from an empty cache and summarises where the time went: the wall
# time of each plan, problems tuned/failed, the slowest problems with their preparation (inputs
# and expected outputs) and search times, and how many took their expected outputs from an
# oracle.  For the issue-14 targets: `--plan default` within 5 minutes on an H200, coverage in a
# few minutes.
#
#   scripts/time-plans.sh OUT [plan...]        # default plans: default coverage
#
# Environment: KILN_BUILD_DIR (default build-gpu), KILN_TUNE_ARGS (extra `kiln tune` flags; the
# coverage and heldout plans add --runs 10 --finalists 3).  Each plan gets its own cache under OUT.
set -uo pipefail
out=${1:?usage: scripts/time-plans.sh OUT [plan...]}
shift
plans=${*:-default coverage}
mkdir -p "$out"
cd "$(dirname "$0")/.."
build=$(realpath -m "${KILN_BUILD_DIR:-build-gpu}")
export KILN_PLUGIN_PATH=$build/lib/kiln/plugins
status=0
for plan in $plans; do
  name=$(basename "$plan" .yaml)  # a shipped plan's name, or a plan file
  extra=()
  case $name in coverage|heldout) extra=(--runs 10 --finalists 3) ;; esac
  export KILN_CACHE_DIR=$out/cache-$name
  rm -rf "$KILN_CACHE_DIR"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$build/bin/kiln" tune --plan "$plan" "${extra[@]}" ${KILN_TUNE_ARGS:-} --json >"$out/$name.json" 2>"$out/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  [ $rc -eq 0 ] || status=1
  python3 - "$out/$name.json" "$name" "$rc" "$t0" "$t1" <<'PY' | tee "$out/$name.summary.txt"
import json, sys
path, plan, rc = sys.argv[1], sys.argv[2], sys.argv[3]
wall = float(sys.argv[5]) - float(sys.argv[4])
try:
    d = json.load(open(path))
except Exception as e:
    print(f"plan {plan}: rc={rc}, {wall:.0f} s, no JSON ({e})"); sys.exit(0)
ps = d["problems"]
oracle = sum(1 for p in ps if str(p.get("expected_source", "")).startswith("oracle"))
print(f"plan {plan}: rc={rc}, wall {wall:.0f} s for {len(ps)} problems "
      f"({d['tuned']} tuned, {d['failed']} failed, {d['not_reached']} not reached); "
      f"{oracle} with oracle expected outputs")
prep = sum(p.get("prepare_seconds", 0) for p in ps)
search = sum(p.get("search_seconds", 0) for p in ps)
print(f"  sum of preparation {prep:.1f} s, of search and re-timing {search:.1f} s, "
      f"other (space, allocation, CLI) {wall - prep - search:.1f} s")
slow = sorted(ps, key=lambda p: p.get("prepare_seconds", 0) + p.get("search_seconds", 0), reverse=True)[:10]
for p in slow:
    print(f"  {p.get('op', '?'):16} {p.get('problem', '?'):44} prep {p.get('prepare_seconds', 0):6.2f} s"
          f"  search {p.get('search_seconds', 0):6.2f} s  {p.get('status', '')}  {str(p.get('expected_source', ''))[:60]}")
PY
done
exit $status
