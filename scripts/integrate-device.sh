#!/usr/bin/env bash
# One device call of a session's final integration: the stages named, in order, each started only
# while the deadline allows; every log into OUT/log.txt and a short summary into OUT/summary.txt
# (the device tool brings back at most 8 files).
#
#   scripts/integrate-device.sh OUT DEADLINE_SECONDS STAGE...
#
# Stages:
#   build           configure and build everything for sm_90 (Release) into build-gpu
#   test            ctest -L gpu, then the host suite
#   retune          KILN_RETUNE_FROM=configs/h200.yaml scripts/retune-shipped.sh tune, stopped at
#                   the deadline; resumes from build-retune/tuning.yaml when that is present (carry
#                   it); the database comes back as OUT/tuning.yaml.  Skipped on a GPU that
#                   configs/h200.yaml has no entries for, unless resuming or KILN_RETUNE_ANY_GPU=1.
#                   KILN_RETUNE_UNVERIFIED="ARGS" (when not resuming): start from configs/h200.yaml
#                   less the entries `scripts/unverified_alternatives.py configs/h200.yaml ARGS`
#                   names (e.g. "--ops gemm --dtypes f32"), so those are timed again
#   regret:OPS[@N]  kiln bench --regret over the held-out plan's problems of OPS (comma-separated,
#                   or "all"; from the N-th of them on, to finish a run a deadline cut), with
#                   the database in OUT/tuning.yaml (else configs/h200.yaml) alone; JSON in
#                   OUT/regret-OPS.json, summary by scripts/regret_summary.py
#   tune:OPS[/DTYPES]  re-tune the stale entries of the ops named (comma-separated; dtypes in the
#                   order to tune them, default all): the coverage plan's problems of those ops, then
#                   the anchors', made by scripts/filter_plan.py, `kiln tune --runs 6 --finalists 2`
#                   starting from OUT/tuning.yaml (else build-retune/tuning.yaml when carried, else
#                   configs/h200.yaml) with no shipped layer, so current entries are skipped; stopped
#                   at the deadline less 60 s; the database comes back as OUT/tuning.yaml.  Only on
#                   a GPU configs/h200.yaml has entries for, unless KILN_RETUNE_ANY_GPU=1 (the device
#                   tool may lend an H100 for an H200 request: its entries would be keyed to it)
#   blind:SEED      kiln bench --regret over a fresh blind draw
#                   (scripts/make_blind_plan.py --seed SEED), database as for regret:
#   sanitize:TESTS  compute-sanitizer memcheck and racecheck (KILN_TEST_QUICK=1) on the GPU tests
#                   named (comma-separated, e.g. topk,histogram for test_topk_gpu ...)
#   verify:OPS      kiln verify OP for each op named
set -uo pipefail
out=$(realpath -m "${1:?usage: scripts/integrate-device.sh OUT DEADLINE STAGE...}")
deadline=${2:?deadline in seconds}
shift 2
mkdir -p "$out"
cd "$(dirname "$0")/.."
build=$PWD/build-gpu
kiln=$build/bin/kiln
log=$out/log.txt
sum=$out/summary.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }
left() { echo $((deadline - SECONDS)); }
export KILN_PLUGIN_PATH=$build/lib/kiln/plugins KILN_LOG_LEVEL=${KILN_LOG_LEVEL:-warn}
export KILN_CACHE_DIR=$build/cache  # never the machine's real cache
db() { if [ -s "$out/tuning.yaml" ]; then echo "$out/tuning.yaml"; else echo "$PWD/configs/h200.yaml"; fi; }
status=0
for stage in "$@"; do
  if [ "$(left)" -le 20 ]; then say "skipped (deadline): $stage"; continue; fi
  t0=$SECONDS
  echo "=== $stage" >>"$log"
  case $stage in
    build)
      { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
        timeout "$(left)" cmake --build "$build" -j16; } >"$out/build.tmp" 2>&1
      rc=$?
      grep -E "error|warning|FAILED" "$out/build.tmp" | head -40 >>"$log"
      rm -f "$out/build.tmp"
      say "build: rc=$rc ($((SECONDS - t0)) s)"
      [ $rc -eq 0 ] || { say "build failed: later stages skipped"; exit 1; }
      ;;
    test)
      timeout "$(left)" ctest --test-dir "$build" -L gpu --output-on-failure -j 3 --timeout 400 >"$out/t.tmp" 2>&1
      rc=$?
      cat "$out/t.tmp" >>"$log"
      say "ctest -L gpu: rc=$rc ($((SECONDS - t0)) s) $(grep -E 'tests passed|tests failed' "$out/t.tmp")"
      grep -E "\(Failed\)|\(Timeout\)|\*\*\*" "$out/t.tmp" | head -10 | tee -a "$sum"
      [ $rc -eq 0 ] || status=1
      t0=$SECONDS
      timeout "$(left)" ctest --test-dir "$build" -LE gpu -j 16 >"$out/t.tmp" 2>&1
      rc=$?
      say "ctest -LE gpu: rc=$rc ($((SECONDS - t0)) s) $(grep -E 'tests passed|tests failed' "$out/t.tmp")"
      grep -E "\(Failed\)|\(Timeout\)" "$out/t.tmp" | head -10 | tee -a "$sum"
      rm -f "$out/t.tmp"
      [ $rc -eq 0 ] || status=1
      ;;
    retune)
      # The shipped database is the H200's: on another GPU (the device tool may lend an H100 for
      # an H200 request) nothing in it is current, and the stage would tune every problem from
      # empty, minutes of device time that configs/h200.yaml cannot use.
      gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
      if ! grep -qF "\"$gpu|" configs/h200.yaml && [ -z "${KILN_RETUNE_ANY_GPU:-}" ] && [ ! -s build-retune/tuning.yaml ]; then
        say "retune skipped: configs/h200.yaml has no entries for this GPU ($gpu); KILN_RETUNE_ANY_GPU=1 tunes it from empty"
        continue
      fi
      rt=$build/retune
      mkdir -p "$rt/cache"
      [ -s build-retune/tuning.yaml ] && [ ! -s "$rt/cache/tuning.yaml" ] && cp build-retune/tuning.yaml "$rt/cache/tuning.yaml"
      if [ -n "${KILN_RETUNE_UNVERIFIED:-}" ] && [ ! -s "$rt/cache/tuning.yaml" ]; then
        # shellcheck disable=SC2086
        python3 scripts/unverified_alternatives.py configs/h200.yaml $KILN_RETUNE_UNVERIFIED --write "$rt/cache/tuning.yaml" >>"$log" 2>&1 ||
          { say "retune: unverified_alternatives.py failed"; rm -f "$rt/cache/tuning.yaml"; }
      fi
      KILN_RETUNE_FROM=configs/h200.yaml KILN_RETUNE_CACHE=$rt/cache KILN_RETUNE_SECONDS=$(( $(left) - 15 )) \
        KILN_BUILD_DIR=$build bash scripts/retune-shipped.sh "$rt" tune >>"$log" 2>&1
      rc=$?
      cp "$rt/cache/tuning.yaml" "$out/tuning.yaml"
      tail -n 3 "$rt/tune-coverage.log" >>"$log" 2>/dev/null
      say "retune: rc=$rc ($((SECONDS - t0)) s) $(grep -c '^      "' "$out/tuning.yaml") entries; $(grep -E '^tune|^prune' "$log" | tail -3 | tr '\n' ' ')"
      ;;
    tune:*)
      spec=${stage#tune:}; ops=${spec%%/*}; dtypes=
      case $spec in */*) dtypes=${spec#*/} ;; esac
      gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
      if ! grep -qF "\"$gpu|" configs/h200.yaml && [ -z "${KILN_RETUNE_ANY_GPU:-}" ]; then
        say "tune $spec skipped: configs/h200.yaml has no entries for this GPU ($gpu); KILN_RETUNE_ANY_GPU=1 tunes it"
        continue
      fi
      tc=$build/tune-cache
      mkdir -p "$tc"
      # A warm machine keeps build-gpu between calls: an earlier call's (possibly read-only) copy
      # must not survive a failed cp and be tuned on as if it were the starting database.
      rm -f "$tc/tuning.yaml"
      if [ -s "$out/tuning.yaml" ]; then cp "$out/tuning.yaml" "$tc/tuning.yaml"
      elif [ -s build-retune/tuning.yaml ]; then cp build-retune/tuning.yaml "$tc/tuning.yaml"
      else cp configs/h200.yaml "$tc/tuning.yaml"; fi
      chmod u+w "$tc/tuning.yaml"  # a carried copy may be read-only: kiln tune refuses to replace it
      for src in coverage anchors; do
        plan=$build/tune-$src-${ops//,/-}.yaml
        python3 scripts/filter_plan.py "configs/plans/$src.yaml" --ops "$ops" ${dtypes:+--dtypes "$dtypes"} >"$plan" 2>>"$log"
        [ "$(left)" -gt 80 ] || { say "tune $spec: $src skipped (deadline)"; continue; }
        KILN_CACHE_DIR=$tc KILN_CONFIG_PATH= timeout $(( $(left) - 60 )) "$kiln" tune --plan "$plan" --runs 6 --finalists 2 \
          >"$out/t.tmp" 2>&1
        rc=$?
        tail -n 3 "$out/t.tmp" >>"$log"
        say "tune $spec, $src problems: rc=$rc ($((SECONDS - t0)) s) $(grep -c 'chosen:' "$out/t.tmp") chosen"
      done
      rm -f "$out/t.tmp"
      cp "$tc/tuning.yaml" "$out/tuning.yaml"
      KILN_CACHE_DIR=$tc KILN_CONFIG_PATH= "$kiln" db show >"$out/t.tmp" 2>&1
      say "tune $spec: $(grep -c stale "$out/t.tmp") entries stale or holding stale alternatives; $(head -n 1 "$out/tuning.yaml")"
      rm -f "$out/t.tmp"
      ;;
    blind:*)
      seed=${stage#blind:}
      plan=$build/blind-$seed.yaml
      python3 scripts/make_blind_plan.py --seed "$seed" --out "$plan" >>"$log" 2>&1 || { say "blind $seed: plan failed"; status=1; continue; }
      KILN_CACHE_DIR=$build/blind-cache KILN_CONFIG_PATH=$(db) timeout "$(left)" "$kiln" bench --regret --problems "$plan" \
        --time-limit $(( $(left) > 150 ? $(left) - 90 : $(left) / 2 )) --json >"$out/blind-$seed.json" 2>>"$log"
      rc=$?
      say "blind $seed ($(grep -c '^  - {op:' "$plan") problems, database $(basename "$(db)")): rc=$rc ($((SECONDS - t0)) s)"
      python3 scripts/regret_summary.py "$out/blind-$seed.json" 2>&1 | tail -n 30 | tee -a "$sum"
      ;;
    regret:*)
      ops=${stage#regret:}
      first=1
      case $ops in *@*) first=${ops#*@}; ops=${ops%@*} ;; esac
      plan=$build/heldout-$ops.yaml
      { sed -n '1,/^problems:/p' configs/plans/heldout.yaml
        if [ "$ops" = all ]; then grep -E '^  - \{op:' configs/plans/heldout.yaml
        else grep -E "^  - \{op: ($(echo "$ops" | tr ',' '|')),"  configs/plans/heldout.yaml; fi | tail -n +"$first"; } >"$plan"
      n=$(grep -c '^  - {op:' "$plan")
      KILN_CACHE_DIR=$build/regret-cache KILN_CONFIG_PATH=$(db) timeout "$(left)" "$kiln" bench --regret --problems "$plan" \
        --time-limit $(( $(left) > 150 ? $(left) - 90 : $(left) / 2 )) --json >"$out/regret-${ops//,/-}.json" 2>>"$log"
      rc=$?
      say "regret $ops ($n problems, database $(basename "$(db)")): rc=$rc ($((SECONDS - t0)) s)"
      # --time-limit stops starting problems; one under way may take a minute (a large bf16 gemm):
      # the 90 s margin keeps the timeout from killing the run before it writes its JSON.
      python3 scripts/regret_summary.py "$out/regret-${ops//,/-}.json" 2>&1 | tail -n 30 | tee -a "$sum"
      ;;
    sanitize:*)
      for t in $(echo "${stage#sanitize:}" | tr ',' ' '); do
        for tool in memcheck racecheck; do
          [ "$(left)" -le 30 ] && { say "skipped (deadline): $tool $t"; continue; }
          t1=$SECONDS
          KILN_TEST_QUICK=1 timeout "$(left)" compute-sanitizer --tool $tool --error-exitcode 9 "$build/bin/test_${t}_gpu" >"$out/s.tmp" 2>&1
          rc=$?
          tail -n 5 "$out/s.tmp" >>"$log"
          say "$tool test_${t}_gpu: rc=$rc ($((SECONDS - t1)) s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/s.tmp" | tail -1)"
          [ $rc -eq 0 ] || status=1
        done
      done
      rm -f "$out/s.tmp"
      ;;
    verify:*)
      for op in $(echo "${stage#verify:}" | tr ',' ' '); do
        timeout "$(left)" "$kiln" verify "$op" >"$out/v.tmp" 2>&1
        rc=$?
        tail -n 5 "$out/v.tmp" >>"$log"
        say "verify $op: rc=$rc $(tail -n 1 "$out/v.tmp")"
        [ $rc -eq 0 ] || status=1
      done
      rm -f "$out/v.tmp"
      ;;
    *) say "unknown stage $stage"; status=1 ;;
  esac
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader >>"$sum" 2>&1
exit $status
