#!/usr/bin/env bash
# Re-tunes a shipped database (configs/<gpu>.yaml) on the GPU at hand, from empty: the coverage
# plan (evidence for dispatch on untuned shapes) and the anchors plan, into a fresh cache; then
# measures op()'s regret on the held-out plan with that database alone.  Resumable: run it again
# with the same OUT/cache and the plans continue where they stopped (KILN_RETUNE_SECONDS bounds one
# run's tuning, for leases with a time limit).
#
#   scripts/retune-shipped.sh OUT [tune] [regret]       # default: both
#   cp OUT/tuning.yaml configs/h200.yaml                  # on an H200
#
# Environment: KILN_BUILD_DIR (default build-gpu), KILN_RETUNE_CACHE (default OUT/cache: carry a
# partial tuning.yaml there to resume), KILN_RETUNE_SECONDS (default: no limit), KILN_REGRET_SECONDS
# (kiln bench --regret --time-limit; default: none), KILN_RETUNE_FROM (a database to start from,
# e.g. configs/h200.yaml: its entries whose plugin build is current, and their alternatives' where
# recorded, are kept and skipped, so only the problems of changed plugins are tuned again; used only
# when the cache has no tuning.yaml).
set -uo pipefail
out=$(realpath -m "${1:?usage: scripts/retune-shipped.sh OUT [tune] [regret]}")
shift
stages=${*:-tune regret}
mkdir -p "$out"
cd "$(dirname "$0")/.."
build=$(realpath -m "${KILN_BUILD_DIR:-build-gpu}")
kiln=$build/bin/kiln
export KILN_PLUGIN_PATH=$build/lib/kiln/plugins KILN_LOG_LEVEL=${KILN_LOG_LEVEL:-warn}
cache=$(realpath -m "${KILN_RETUNE_CACHE:-$out/cache}")
mkdir -p "$cache"
if [ -n "${KILN_RETUNE_FROM:-}" ] && [ ! -e "$cache/tuning.yaml" ]; then
  cp "$KILN_RETUNE_FROM" "$cache/tuning.yaml" || exit 1
  echo "starting from $KILN_RETUNE_FROM: its current entries are skipped"
fi
status=0
for stage in $stages; do
  case $stage in
    tune)
      # No shipped layer: every problem is tuned here, none is skipped as already known.
      export KILN_CACHE_DIR=$cache KILN_CONFIG_PATH=
      limit=()
      [ -n "${KILN_RETUNE_SECONDS:-}" ] && limit=(timeout "$KILN_RETUNE_SECONDS")
      t0=$SECONDS
      "${limit[@]}" "$kiln" tune --plan configs/plans/coverage.yaml --runs 10 --finalists 3 >"$out/tune-coverage.log" 2>&1
      rc=$?
      echo "tune coverage: rc=$rc ($((SECONDS - t0)) s); $(tail -n 2 "$out/tune-coverage.log" | tr '\n' ' ')"
      if [ $rc -eq 0 ]; then
        t0=$SECONDS
        "$kiln" tune --plan configs/plans/anchors.yaml >"$out/tune-anchors.log" 2>&1
        rc=$?
        echo "tune anchors: rc=$rc ($((SECONDS - t0)) s); $(tail -n 2 "$out/tune-anchors.log" | tr '\n' ' ')"
      fi
      if [ $rc -eq 0 ] && [ -n "${KILN_RETUNE_FROM:-}" ]; then
        # Entries of a changed plugin that no plan problem re-tuned would stay stale: drop them.
        "$kiln" db prune >"$out/prune.log" 2>&1 || rc=$?
        echo "prune: $(tail -n 1 "$out/prune.log")"
      fi
      [ $rc -eq 0 ] || status=1
      cp "$cache/tuning.yaml" "$out/tuning.yaml" 2>/dev/null && echo "entries: $(head -n 1 "$out/tuning.yaml")"
      ;;
    regret)
      # The new database alone, as users get it (an empty user cache).
      export KILN_CACHE_DIR=$out/regret-cache KILN_CONFIG_PATH=$out/tuning.yaml
      rm -rf "$KILN_CACHE_DIR"
      t0=$SECONDS
      "$kiln" bench --regret --problems configs/plans/heldout.yaml ${KILN_REGRET_SECONDS:+--time-limit "$KILN_REGRET_SECONDS"} --json >"$out/regret.json" 2>"$out/regret.err"
      rc=$?
      echo "regret: rc=$rc ($((SECONDS - t0)) s)"
      [ $rc -eq 0 ] || { status=1; tail -n 5 "$out/regret.err"; }
      python3 scripts/regret_summary.py "$out/regret.json" --vendor-table
      ;;
    *) echo "unknown stage $stage"; status=1 ;;
  esac
done
exit $status
