# `kiln` against hostile and careless input (issue 8).  Included from tests/tuner/CMakeLists.txt
# after kiln_cli_test() is defined; the REAL_PLUGINS tests need the family plugins of this tree.
set(hardening_data ${CMAKE_CURRENT_SOURCE_DIR}/data)

# Numeric flags: readable ranges, nan and absurd values refused.
kiln_cli_test(flag_nan_budget ARGS tune tuner_scale --shape 64 --budget-seconds nan EXPECT 2
              ERR "'nan' is not a number in \\[0.001, 10000000\\]")
kiln_cli_test(flag_inf_budget ARGS tune tuner_scale --shape 64 --budget-seconds inf EXPECT 2 ERR "is not a number in")
kiln_cli_test(flag_huge_budget ARGS tune tuner_scale --shape 64 --budget-evals 18446744073709551616 EXPECT 2
              ERR "usage: kiln tune")
kiln_cli_test(flag_runs_range ARGS tune tuner_scale --shape 64 --runs 0 EXPECT 2 ERR "'0' is not a whole number in \\[1, 1000000\\]")
# bench's --iters/--batch/--time-limit were CLI11 PositiveNumbers: a 309-digit bound in the message,
# nan accepted as a time limit, and 2 * --batch overflowing an int (undefined behaviour).
kiln_cli_test(flag_batch_range ARGS bench --overhead tuner_scale --shape 64 --device host --iters 100 --batch 2147483647
              EXPECT 2 ERR "--batch: '2147483647' is not a whole number in \\[1, 1000000\\]")
kiln_cli_test(flag_iters_nan ARGS bench --overhead tuner_scale --shape 64 --iters nan EXPECT 2
              ERR "--iters: 'nan' is not a whole number in \\[2, 1000000000\\]")
kiln_cli_test(flag_time_limit_nan ARGS bench --regret --problems ${hardening_data}/regret_problems.yaml --time-limit nan
              EXPECT 2 ERR "--time-limit: 'nan' is not a number in")
# Counts are whole numbers: `--runs 1e3` (a number in range) reached CLI11's int conversion and
# failed with "Could not convert: --runs = 1e3", and `--runs 1.5` the same; the hidden
# --simulate-devices printed ": Value 0 not in range 0.000000 to <309 digits>".
kiln_cli_test(flag_count_exponent ARGS tune tuner_scale --shape 64 --device host --runs 5e0 --budget-evals 1e1 --no-store
              OUT "chosen: tuner_scale_")
kiln_cli_test(flag_count_fraction ARGS tune tuner_scale --shape 64 --runs 1.5 EXPECT 2
              ERR "--runs: '1.5' is not a whole number in \\[1, 1000000\\]")
# Hex and spaces: "--runs 0x10" ran 16 runs and " 5" 5 (strtod's reading), where --seed refused both.
kiln_cli_test(flag_count_hex ARGS tune tuner_scale --shape 64 --runs 0x10 EXPECT 2
              ERR "--runs: '0x10' is not a whole number in \\[1, 1000000\\]")
kiln_cli_test(flag_count_space ARGS tune tuner_scale --shape 64 --runs " 5" EXPECT 2 ERR "--runs: ' 5' is not a whole number")
kiln_cli_test(flag_number_hex ARGS tune tuner_scale --shape 64 --budget-seconds 0x1p3 EXPECT 2
              ERR "--budget-seconds: '0x1p3' is not a number in")
kiln_cli_test(flag_count_bench_fraction ARGS bench --overhead tuner_scale --shape 64 --device host --iters 100.5 EXPECT 2
              ERR "--iters: '100.5' is not a whole number in \\[2, 1000000000\\]")
kiln_cli_test(flag_simulate_devices_zero ARGS tune --plan ${hardening_data}/pool_plan.yaml --simulate-devices 0 EXPECT 2
              ERR "--simulate-devices 0: expected 1 to 64")
# Seeds: CLI11 read -1 and 2^64 as 2^64 - 1, so different seeds typed were one seed.
kiln_cli_test(seed_negative ARGS tune tuner_scale --shape 64 --seed -1 EXPECT 2
              ERR "--seed: '-1' is not an integer in \\[0, 18446744073709551615\\]")
kiln_cli_test(seed_overflow ARGS verify --seed 18446744073709551616 EXPECT 2 ERR "--seed: '18446744073709551616' is not an integer")
# An empty --devices ran the plan serially on the default device; a device ordinal with a sign or
# a space ("cuda:+0", "cuda: 0") was read as a number.
# (an empty argument does not survive a CMake list, so this one runs through sh)
add_test(NAME cli_devices_empty COMMAND sh -c [=[out=$("$0" tune --plan "$1" --devices '' 2>&1); rc=$?; echo "$out"
[ "$rc" -eq 2 ] && case "$out" in *"bad --devices '': expected all or a list"*) exit 0 ;; esac; exit 1]=]
         $<TARGET_FILE:kiln_cli> ${hardening_data}/pool_plan.yaml)
set_tests_properties(cli_devices_empty PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# op() refuses f32 data off 4 bytes, so explain has no decision to show for it.
kiln_cli_test(explain_align_below_element ARGS explain tuner_scale --shape 64 --device host --align 2 EXPECT 2
              ERR "--align 2: op\\(\\) refuses f32 arguments that are not 4-byte aligned")
# An empty --into (an unset variable in a script) merged into the user database instead.
add_test(NAME cli_db_merge_into_empty COMMAND sh -c [=[out=$("$0" db merge "$1" --into '' 2>&1); rc=$?; echo "$out"
[ "$rc" -eq 2 ] && [ ! -e "$KILN_CACHE_DIR/tuning.yaml" ] && case "$out" in *"bad --into '': expected a database file"*) exit 0 ;; esac; exit 1]=]
         $<TARGET_FILE:kiln_cli> ${CMAKE_CURRENT_SOURCE_DIR}/data/db_a.yaml)
set_tests_properties(cli_db_merge_into_empty PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/into_empty;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# Empty text flags (an unset variable: --dtype "$DTYPE") meant the default without a word, and an
# empty --plan said only "give exactly one of ...": each is refused, named.  Through sh, as above.
add_test(NAME cli_empty_text_flags COMMAND sh -c [=[
check() { want="$1"; shift; out=$("$KILN" "$@" 2>&1); rc=$?
  [ "$rc" -eq 2 ] && case "$out" in *"$want: '' is empty: expected"*) return 0 ;; esac
  echo "FAIL: kiln $* -> exit $rc: $out"; exit 1; }
KILN="$0"
check --plan tune --plan ''
check --from tune --from ''
check --dtype tune tuner_scale --shape 64 --dtype ''
check --device tune tuner_scale --shape 64 --device ''
check --shape explain tuner_scale --shape ''
check --dtype explain tuner_scale --shape 64 --dtype ''
check --device explain tuner_scale --shape 64 --device ''
check --device bench tuner_scale --shape 64 --device ''
check --problems bench --regret --problems ''
check --shape verify tuner_scale --shape ''
check --device demo --device ''
check --op db show --op ''
check --device-key explain tuner_scale --shape 64 --device-key ''
check --device-key db loo --device-key ''
check DIR plugins check ''
check op tune '' --shape 64
check op bench '' --shape 64
check op explain '' --shape 64
check op list ''
check op verify ''
check --strategy tune tuner_scale --shape 64 --strategy ''
check --variants tune tuner_scale --shape 64 --variants ''
check --variants bench tuner_scale --shape 64 --variants ''
check --vs bench tuner_scale --shape 64 --vs ''
check --shard tune --plan x.yaml --shard ''
# `--flag=` is the empty value too: CLI11 took the next argument for it (`--dtype= --shape 64`
# was dtype '--shape' and then "The following argument was not expected: 64").
check --dtype tune tuner_scale --dtype= --shape 64
check --device explain tuner_scale --device= --shape 64
check --shape bench tuner_scale --shape= --device host
check --op db show --op= --json
check --plan tune --plan= --force
check --vs bench tuner_scale --shape 64 --vs= --runs 3
exit 0]=] $<TARGET_FILE:kiln_cli>)
set_tests_properties(cli_empty_text_flags PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# Under --json an empty `--flag=` value is one well-formed JSON error document on stdout naming the
# flag (it was "unknown dtype '--json'": the next argument taken for the value).
if(Python3_Interpreter_FOUND)
  add_test(NAME cli_empty_eq_flags_json COMMAND sh -c [=[
check() { want="$1"; shift; out=$("$KILN" "$@" 2>/dev/null); rc=$?
  if [ "$rc" -eq 2 ] && printf '%s' "$out" | "$PY" -c '
import json, sys
doc = json.loads(sys.stdin.read())
err = doc["error"]
sys.exit(0 if doc["schema_version"] == 2 and err["kind"] == "usage" and err["message"].startswith(sys.argv[1] + ": " + chr(39) * 2 + " is empty: expected") else 1)
' "$want"; then return 0; fi
  echo "FAIL: kiln $* -> exit $rc: $out"; exit 1; }
KILN="$0"; PY="$1"
check --dtype tune tuner_scale --shape 64 --dtype= --json
check --dtype bench tuner_scale --shape 64 --dtype= --json
check --device explain tuner_scale --shape 64 --device= --json
check --shape verify tuner_scale --shape= --json
check --strategy tune tuner_scale --shape 64 --strategy= --json
check --variants bench tuner_scale --shape 64 --variants= --json
check --device-key db loo --device-key= --json
check --dtype tune tuner_scale --shape 64 --dtype= --json=true
exit 0]=] $<TARGET_FILE:kiln_cli> ${Python3_EXECUTABLE})
  set_tests_properties(cli_empty_eq_flags_json PROPERTIES LABELS cpu ENVIRONMENT
    "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
endif()
# A user database its owner made read-only was replaced by the next tune (a rename needs only the
# directory's permission): tune stops before tuning, names the file and leaves it as it was.
add_test(NAME cli_db_read_only_tune COMMAND sh -c [=[d="$0/read_only"; rm -rf "$d" && mkdir -p "$d" &&
cp "$2" "$d/tuning.yaml" && chmod 444 "$d/tuning.yaml" && out=$(KILN_CACHE_DIR="$d" "$1" tune tuner_scale --shape 64 --device host --runs 3 2>&1)
rc=$?; echo "$out"; cmp -s "$2" "$d/tuning.yaml" || exit 1; [ "$rc" -eq 1 ] || exit 1
case "$out" in *chosen*) exit 1 ;; esac
case "$out" in *"$d/tuning.yaml': is read-only (mode 0444)"*) exit 0 ;; esac; exit 1]=]
         ${cli_cache} $<TARGET_FILE:kiln_cli> ${CMAKE_CURRENT_SOURCE_DIR}/data/db_a.yaml)
set_tests_properties(cli_db_read_only_tune PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# Paths with escape sequences (a directory name anyone who can write there picks, a cache dir)
# were printed raw: db show's layers, the tuning database's warnings, "stored in", a problem list
# that cannot be opened, a plugin file that cannot be loaded.  They show as \x1b, never as ESC.
add_test(NAME cli_paths_escaped COMMAND sh -c [=[esc=$(printf '\033'); d="$0/esc_$(printf 'x\033[31my')"; rm -rf "$0"/esc_* && mkdir -p "$d/plugins" &&
ln -s "$d/gone.yaml" "$d/$(printf 'l\033]0;t\007').yaml" && echo "not a library" > "$d/plugins/libkiln_$(printf '\033[2J').so" &&
out=$( { KILN_CACHE_DIR="$d" KILN_CONFIG_PATH="$d" "$1" db show; KILN_CACHE_DIR="$d" "$1" tune tuner_scale --shape 64 --device host --runs 3;
  "$1" tune --from "$d/none.txt"; KILN_PLUGIN_PATH="$d/plugins" "$1" list; "$1" plugins check "$d/plugins";
  KILN_PLUGIN_PATH="$KILN_PLUGIN_PATH:$d/plugins" "$1" demo --device host;
  KILN_PLUGIN_PATH="$(printf 'rel\033[2J')" "$1" list; } 2>&1 ); echo "$out" | cat -v
case "$out" in *"$esc"*) exit 1 ;; esac
for want in 'user layer ' 'stored in ' "problem list '" 'l\x1b]0;t\x07.yaml'"': is a symbolic link" 'libkiln_\x1b[2J.so' 'e.g. $PWD/rel\x1b[2J)'; do
  printf '%s' "$out" | grep -qF -- "$want" || { echo "missing: $want"; exit 1; }; done; exit 0]=]
         ${cli_cache} $<TARGET_FILE:kiln_cli>)
set_tests_properties(cli_paths_escaped PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off;COLUMNS=400")
# A value of 100000 characters (a variable holding a file) was quoted whole: a 100 KB error line.
# A quoted value past 512 characters is shown by its ends, saying how much is left out, on stderr
# and in the --json error; words with spaces (prose) are never cut.
add_test(NAME cli_long_value_shortened COMMAND sh -c [=[long=$(printf '%0100000d' 0 | tr 0 9)
err=$("$0" explain "$long" --shape 5 2>&1 >/dev/null); rc=$?; echo "$err" | head -c 2000
[ "$rc" -eq 2 ] && [ "${#err}" -lt 2000 ] || exit 1
case "$err" in *"unknown op '9"*"...(99488 more bytes)...9"*"'; known ops: tuner_scale"*) ;; *) exit 1 ;; esac
json=$("$0" tune tuner_scale --shape "$long" --json 2>/dev/null); [ "${#json}" -lt 3000 ] || exit 1
case "$json" in *'"message": "tuner_scale: bad extent '"'9"*"more bytes)...9"*"' for n in shape"*) exit 0 ;; esac; exit 1]=]
         $<TARGET_FILE:kiln_cli>)
set_tests_properties(cli_long_value_shortened PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# Output that never reached its file (a full disk behind `kiln tune --csv > out.csv`) exited 0.
if(EXISTS /dev/full)
  add_test(NAME cli_output_write_failure COMMAND sh -c [=[
check() { err=$("$0" "$@" 2>&1 >/dev/full); rc=$?; echo "$err"
  [ "$rc" -ne 0 ] && case "$err" in *"kiln: error: writing to standard output failed"*) return 0 ;; esac
  echo "FAIL: kiln $* > /dev/full -> exit $rc"; exit 1; }
check list --json
check db show
check tune tuner_scale --shape 64 --device host --runs 3 --no-store --csv
check list no_such_op --json
check --version
check tune --help
out=$("$0" list --json 2>&1 >/dev/null) && [ -z "$out" ] || exit 1; exit 0]=] $<TARGET_FILE:kiln_cli>)
  set_tests_properties(cli_output_write_failure PROPERTIES LABELS cpu ENVIRONMENT
    "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
endif()
# An empty plan or problem list tuned nothing and exited 0; bench --regret already refused one.
kiln_cli_test(tune_empty_plan ARGS tune --plan ${hardening_data}/empty_plan.yaml EXPECT 2
              ERR "--plan .*empty_plan.yaml: no problems in the file.*usage: kiln tune")
kiln_cli_test(tune_empty_from ARGS tune --from /dev/null --json EXPECT 2
              OUT "\"kind\": \"usage\",.*--from /dev/null: no problems in the file")
# --align past int said only "--align: 99999999999999999999".
kiln_cli_test(explain_align_huge ARGS explain tuner_scale --shape 64 --device host --align 99999999999999999999 EXPECT 2
              ERR "--align: '99999999999999999999' is not one of 1, 2, 4, 8, 16")
# Every file on the plugin path failed to load: list said "set KILN_PLUGIN_PATH", which was set.
add_test(NAME cli_list_all_plugins_failed COMMAND sh -c [=[d="$0/list_all_failed"; rm -rf "$d" && mkdir -p "$d" &&
echo "not a library" > "$d/libkiln_fake.so" && out=$(KILN_PLUGIN_PATH="$d" "$1" list 2>/dev/null); echo "$out"
case "$out" in *"set KILN_PLUGIN_PATH"*) exit 1 ;; *"1 plugin file(s)"*"kiln plugins check"*) exit 0 ;; esac; exit 1]=]
         ${cli_cache} $<TARGET_FILE:kiln_cli>)
set_tests_properties(cli_list_all_plugins_failed PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# Merging into a file of only comments keeps it as .bak and says where (the copy went unmentioned,
# and before that the comments were lost).
add_test(NAME cli_db_merge_into_notes COMMAND sh -c [=[d="$0/merge_into_notes"; rm -rf "$d" && mkdir -p "$d" &&
printf '# my notes\n' > "$d/notes.txt" && err=$("$1" db merge "$2" --into "$d/notes.txt" 2>&1 >/dev/null); rc=$?; echo "$err"
[ "$rc" -eq 0 ] && [ "$(cat "$d/notes.txt.bak")" = "# my notes" ] && case "$err" in *"kept in '$d/notes.txt.bak'"*) exit 0 ;; esac; exit 1]=]
         ${cli_cache} $<TARGET_FILE:kiln_cli> ${CMAKE_CURRENT_SOURCE_DIR}/data/db_a.yaml)
set_tests_properties(cli_db_merge_into_notes PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# plugins check names a broken link and a directory as the loader does ("cannot open: No such file").
add_test(NAME cli_plugins_check_odd_entries COMMAND sh -c [=[d="$0/check_odd"; rm -rf "$d" && mkdir -p "$d/libkiln_dir.so" &&
ln -s "$d/gone.so" "$d/libkiln_gone.so" && out=$("$1" plugins check "$d" 2>/dev/null); rc=$?; echo "$out"
[ "$rc" -eq 1 ] || exit 1
case "$out" in *"libkiln_gone.so"*"a symbolic link to a file that does not exist ('$d/gone.so')"*) ;; *) exit 1 ;; esac
case "$out" in *"libkiln_dir.so"*"a directory named like a plugin"*) exit 0 ;; esac; exit 1]=]
         ${cli_cache} $<TARGET_FILE:kiln_cli>)
set_tests_properties(cli_plugins_check_odd_entries PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=;KILN_LOG_LEVEL=warn;KILN_TUNE=off;COLUMNS=400")
kiln_cli_test(device_ordinal_sign ARGS explain tuner_scale --shape 64 --device cuda:+0 EXPECT 2
              ERR "bad device 'cuda:\\+0': expected host, cuda or cuda:N")
# --device-key: a GPU has an architecture and at least one SM (0sm was accepted).
kiln_cli_test(device_key_zero_sms ARGS explain tuner_scale --shape 64 --device-key "X|sm_90|0sm" EXPECT 2
              ERR "--device-key 'X\\|sm_90\\|0sm' is not NAME")
# An empty NAME ("|sm_90|1sm") and a control character were taken as a device key (the second
# printed raw); an SM count past int went through sscanf's %d (undefined).  db loo the same.
add_test(NAME cli_device_key_odd COMMAND sh -c [=[
check() { key="$1"; shift; out=$("$KILN" "$@" --device-key "$key" 2>&1); rc=$?
  [ "$rc" -eq 2 ] && case "$out" in *"$(printf '\033')"*) ;; *"is not NAME|sm_XY|Nsm"*|*"--device-key: no entries for"*) return 0 ;; esac
  echo "FAIL: kiln $* --device-key '$key' -> exit $rc: $out" | cat -v; exit 1; }
KILN="$0"
for cmd in "explain tuner_scale --shape 64" "db loo"; do
  check '|sm_90|1sm' $cmd
  check 'X|sm_90|99999999999999999999sm' $cmd
  check 'X|sm_+90|1sm' $cmd
  check "$(printf 'X\033[2J|sm_90|1sm')" $cmd
done; exit 0]=] $<TARGET_FILE:kiln_cli>)
set_tests_properties(cli_device_key_odd PROPERTIES LABELS cpu ENVIRONMENT
  "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR};KILN_CACHE_DIR=${cli_cache}/misc;KILN_CONFIG_PATH=${CMAKE_CURRENT_SOURCE_DIR}/data/loo_db.yaml;KILN_LOG_LEVEL=warn;KILN_TUNE=off")
# A dim given twice in --shape was taken from its last mention.
kiln_cli_test(shape_dim_twice ARGS explain tuner_scale --shape n=64,n=65 --device host EXPECT 2
              ERR "dim 'n' is given twice in shape 'n=64,n=65'.*usage: kiln explain")

# Plans and problem lists that never end.
kiln_cli_test(from_dev_zero ARGS tune --from /dev/zero EXPECT 2 ERR "larger than 16 MiB")
kiln_cli_test(plan_dev_zero ARGS tune --plan /dev/zero EXPECT 2 ERR "plan '/dev/zero' is not a regular file")

# The time cap holds with 100000 runs per candidate (the timing loop was quadratic).
kiln_cli_test(runs_capped ARGS tune tuner_scale --shape 64 --device host --runs 100000
              --max-seconds-per-candidate 0.05 --no-store OUT "chosen: tuner_scale_")
set_tests_properties(cli_runs_capped PROPERTIES TIMEOUT 60)

if(kiln_cli_have_real_plugins)
  # Sizes that overflow int64: a clear error (exit 2), not a crash.
  kiln_cli_test(overflow_square ARGS tune add --shape 3037000500x3037000500 --device host REAL_PLUGINS EXPECT 2
                ERR "add: shape '3037000500x3037000500' is not a valid problem: tensor 'a'.*int64.*usage: kiln tune")
  kiln_cli_test(overflow_rows ARGS tune add --shape 9223372036854775807x2 --device host REAL_PLUGINS EXPECT 2
                ERR "tensor 'a'.*overflow")
  kiln_cli_test(overflow_bytes ARGS tune reduce_sum --shape 4611686018427387904 --device host REAL_PLUGINS EXPECT 2
                ERR "tensor 'x'.*overflow")
  kiln_cli_test(overflow_bench ARGS bench add --shape 3037000500x3037000500 --device host REAL_PLUGINS EXPECT 2
                ERR "tensor 'a'.*usage: kiln bench")
  kiln_cli_test(overflow_explain ARGS explain add --shape 3037000500x3037000500 --device host REAL_PLUGINS EXPECT 2
                ERR "tensor 'a'")
  kiln_cli_test(overflow_verify ARGS verify reduce_sum --shape 4611686018427387904 --device host REAL_PLUGINS EXPECT 2
                ERR "tensor 'x'")
  kiln_cli_test(overflow_plan ARGS tune --plan ${hardening_data}/overflow_plan.yaml REAL_PLUGINS EXPECT 1
                OUT "0 tuned, 0 skipped, 5 failed" ERR "tensor 'a'.*tensor 'a'.*tensor 'x'.*k = 20.*allow_tf32")
  kiln_cli_test(overflow_from ARGS tune --from ${hardening_data}/overflow_problems.txt REAL_PLUGINS EXPECT 1
                OUT "0 tuned, 0 skipped, 4 failed" ERR "tensor 'a'.*tensor 'x'.*k = 0.*largest")
  # A problem that fails for want of memory keeps its line in --json ({"result": null} before).
  # Under AddressSanitizer (CI's sanitizer job) an allocation this size aborts unless the allocator
  # may return null, which is what the test is about; the other options are the job's own.
  kiln_cli_test(unallocatable_plan_json ARGS tune --plan ${hardening_data}/unallocatable_plan.yaml --force --no-store --json
                REAL_PLUGINS EXPECT 1 OUT "\"status\":\"failed\",\"detail\":\"[^\"]*out of [a-z ]*memory" NOT_OUT "null"
                ENV "ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:allocator_may_return_null=1")

  # A missing --shape: the dims and an example with numbers ("e.g. --shape
  # mxnxkxtf32xbatchxtaxtbxc16 with numbers"), the same for tune, bench and explain.
  foreach(cmd tune bench explain)
    kiln_cli_test(shape_missing_${cmd} ARGS ${cmd} gemm --device host REAL_PLUGINS EXPECT 2
                  ERR "gemm: --shape is required: mxnxkxtf32xbatchxtaxtbxc16, e.g. --shape 1000x1000x1000 or m=1000,...; dims left out take their defaults \\(tf32 = 0, batch = 1, ta = 0, tb = 0, c16 = 0\\).*usage: kiln ${cmd}")
  endforeach()

  # Invalid problems are refused by the op's own rules, never tuned.
  kiln_cli_test(topk_k_above_n ARGS tune topk --shape 1x10x20 --device host REAL_PLUGINS EXPECT 2
                ERR "topk: shape '1x10x20' is not a valid problem: topk: k = 20")
  kiln_cli_test(topk_zero_k ARGS tune topk --shape 4x100x0 --device host REAL_PLUGINS EXPECT 2 ERR "k = 0")
  kiln_cli_test(topk_bad_mode ARGS tune topk --shape 4x1000x10x7 --device host REAL_PLUGINS EXPECT 2 ERR "largest")
  kiln_cli_test(gemm_bad_mode ARGS tune gemm --shape 8x8x8x5 --device host REAL_PLUGINS EXPECT 2 ERR "allow_tf32")

  # Problems larger than the memory: refused with the sizes, --force names the way out.
  kiln_cli_test(too_large_tune ARGS tune add --shape 1000000x1000000 --device host REAL_PLUGINS EXPECT 2
                ERR "add f32\\|m=1000000\\|n=1000000: its tensors take 10.9 TiB.*host memory.*--force tries anyway")
  kiln_cli_test(too_large_bench ARGS bench add --shape 1000000x1000000 --device host REAL_PLUGINS EXPECT 2
                ERR "host memory.*--force")
  kiln_cli_test(too_large_verify ARGS verify add --shape 1000000x1000000 --device host REAL_PLUGINS EXPECT 2
                ERR "host memory.*--force")
endif()

# kiln plugins check: each file loaded in a child process; the crashing ones are named.
if(TARGET kiln_fixture_abort AND TARGET kiln_fixture_exit AND TARGET kiln_fixture_good)
  set(plugin_check_dir ${CMAKE_CURRENT_BINARY_DIR}/plugin_check)
  add_test(NAME cli_plugins_check_setup COMMAND ${CMAKE_COMMAND} -DDIR=${plugin_check_dir}
           -DGOOD=$<TARGET_FILE:kiln_fixture_good> -DABORT=$<TARGET_FILE:kiln_fixture_abort>
           -DEXIT=$<TARGET_FILE:kiln_fixture_exit> -P ${CMAKE_CURRENT_SOURCE_DIR}/make_plugin_check_dir.cmake)
  set_tests_properties(cli_plugins_check_setup PROPERTIES LABELS cpu FIXTURES_SETUP cli_plugin_check_dir)
  kiln_cli_test(plugins_check ARGS plugins check ${plugin_check_dir} EXPECT 1 REQUIRES cli_plugin_check_dir
                OUT "libkiln_fixture_abort.so +crashed +killed by SIGABRT.*libkiln_fixture_exit.so +exited +the process ended with status [0-9]+.*libkiln_fixture_good.so +ok +plugin fixture_good 1.2.3: 1 op\\(s\\), 1 variant\\(s\\).*libkiln_notelf.so +not loadable +not an ELF file.*libkiln_truncated.so +not loadable +truncated.*5 plugin file\\(s\\) in 1 directory, 4 with a problem")
  kiln_cli_test(plugins_check_json ARGS plugins check ${plugin_check_dir} --json EXPECT 1 REQUIRES cli_plugin_check_dir
                OUT "\"status\": \"crashed\".*\"failed\": 4")
  kiln_cli_test(plugins_check_ok ARGS plugins check OUT "1 plugin file\\(s\\) in 1 directory, 0 with a problem")
  # A directory named on the command line is relative to where it was typed (the plugin guide's
  # `kiln plugins check build`); it was reported as "relative plugin directory: kiln ignores it".
  kiln_cli_test(plugins_check_relative_dir ARGS plugins check plugin_check WORKDIR ${CMAKE_CURRENT_BINARY_DIR}
                EXPECT 1 REQUIRES cli_plugin_check_dir
                OUT "plugin_check/libkiln_fixture_good.so +ok .*5 plugin file\\(s\\) in 1 directory, 4 with a problem")
endif()

# A plugin that registers nothing (the vendor plugin of a build without CUDA) was reported as
# "plugin direct : 0 op(s)": its name was taken from its registrations.
kiln_cli_test(plugins_check_names_vendor ARGS plugins check REAL_PLUGINS
              OUT "libkiln_vendor.so +ok +plugin vendor 0.1.0: " NOT_OUT "plugin direct")

# Two files that each load alone but claim one plugin name: a Runtime loads the first and skips the
# second, while `kiln plugins check` said "ok" for both (each was checked in a process of its own).
set(plugin_clash_dir ${CMAKE_CURRENT_BINARY_DIR}/plugin_clash)
add_test(NAME cli_plugins_clash_setup COMMAND sh -c "rm -rf \"$0\" && mkdir -p \"$0\" && cp \"$1\" \"$0/libkiln_a.so\" && cp \"$1\" \"$0/libkiln_b.so\""
         ${plugin_clash_dir} ${KILN_TUNER_FIXTURE_DIR}/libkiln_tuner_fixture.so)
set_tests_properties(cli_plugins_clash_setup PROPERTIES LABELS cpu FIXTURES_SETUP cli_plugin_clash_dir)
kiln_cli_test(plugins_check_clash ARGS plugins check ${plugin_clash_dir} EXPECT 1 REQUIRES cli_plugin_clash_dir
              OUT "libkiln_a.so +ok +plugin tuner_fixture .*libkiln_b.so +conflict +alone: plugin tuner_fixture .*; with the others: a plugin named 'tuner_fixture' is already loaded from .*libkiln_a.so.*2 plugin file\\(s\\) in 1 directory, 1 with a problem")

# A relative entry of KILN_PLUGIN_PATH is ignored (the working directory is never searched), and
# says so at the error level; an op it would have provided is then unknown, and that message
# points at the plugins that did not load.
kiln_cli_test(relative_plugin_path ARGS list tuner_scale WORKDIR ${CMAKE_CURRENT_BINARY_DIR}
              ENV "KILN_PLUGIN_PATH=cli_plugins" "KILN_LOG_LEVEL=error" EXPECT 2
              ERR "relative plugin directory ignored.*.PWD/cli_plugins.*unknown op 'tuner_scale'.*1 plugin file\\(s\\) or directories on the plugin path were not loaded")
kiln_cli_test(plugins_check_relative_entry ARGS plugins check WORKDIR ${CMAKE_CURRENT_BINARY_DIR}
              ENV "KILN_PLUGIN_PATH=cli_plugins" EXPECT 1 OUT "cli_plugins +error +relative entry of KILN_PLUGIN_PATH: kiln ignores it")

# A library named where its directory belongs said only "cannot read plugin directory: Not a
# directory", in plugins check and in the loader alike.
kiln_cli_test(plugins_check_file ARGS plugins check ${KILN_TUNER_FIXTURE_DIR}/libkiln_tuner_fixture.so EXPECT 1
              ENV "COLUMNS=400" OUT "libkiln_tuner_fixture.so +error +not a directory: kiln plugins check takes directories and checks the libkiln_\\*.so files in them")
kiln_cli_test(plugin_path_file ARGS list ENV "KILN_PLUGIN_PATH=${KILN_TUNER_FIXTURE_DIR}/libkiln_tuner_fixture.so"
              ERR "libkiln_tuner_fixture.so: not a directory: the plugin path lists directories")

# kiln bench --runs is bounded by the clock as tune's are: --runs 1000000 ran every run (hours on
# a slow kernel).  Each row stops after --max-seconds-per-row (default 20) and says so.
kiln_cli_test(bench_runs_capped ARGS bench tuner_scale --shape 65536 --device host --runs 1000000
              --max-seconds-per-row 0.2 OUT "note: [0-9]+ row\\(s\\) took fewer than --runs 1000000 runs: --max-seconds-per-row 0.2 stopped them")
kiln_cli_test(bench_runs_capped_json ARGS bench tuner_scale --shape 65536 --device host --runs 1000000
              --max-seconds-per-row 0.2 --json OUT "\"samples\": [0-9]+,.*\"runs\": 1000000" NOT_OUT "\"samples\": 1000000")
set_tests_properties(cli_bench_runs_capped cli_bench_runs_capped_json PROPERTIES TIMEOUT 60)
kiln_cli_test(bench_bad_row_cap ARGS bench tuner_scale --shape 64 --max-seconds-per-row 0 EXPECT 2 ERR "max-seconds-per-row")

# `kiln db merge` with no file named its positional "files" ("files is required"); the usage line
# calls it FILE.
kiln_cli_test(db_merge_no_files ARGS db merge EXPECT 2 ERR "FILE is required.*kiln db merge FILE\\.\\.\\.")

# A flag of one bench mode given to another was ignored without a word: `--time-limit 60` on a
# bench of one op ran without a limit, and `--regret ... --csv` printed a table, not CSV.
kiln_cli_test(bench_mode_flag_time_limit ARGS bench tuner_scale --shape 64 --device host --time-limit 60 EXPECT 2
              ERR "--time-limit goes with --regret")
kiln_cli_test(bench_mode_flag_problems ARGS bench --overhead --problems ${hardening_data}/regret_problems.yaml EXPECT 2
              ERR "--problems goes with --regret")
kiln_cli_test(bench_mode_flag_iters ARGS bench tuner_scale --shape 64 --device host --iters 100 EXPECT 2
              ERR "--iters goes with --overhead")
kiln_cli_test(bench_mode_flag_batch ARGS bench --regret --problems ${hardening_data}/regret_problems.yaml --batch 10
              EXPECT 2 ERR "--batch goes with --overhead")
kiln_cli_test(bench_mode_flag_csv ARGS bench --regret --problems ${hardening_data}/regret_problems.yaml --csv EXPECT 2
              ERR "--csv goes with a bench of one op \\(--regret")
kiln_cli_test(bench_mode_flag_csv_overhead ARGS bench --overhead tuner_scale --shape 64 --device host --csv EXPECT 2
              ERR "--csv goes with a bench of one op \\(--overhead")
# Flags of the one-op table those modes never read: `--regret --no-oracle` still used the oracle,
# `--overhead --runs 5` timed the usual 20000 calls.
kiln_cli_test(bench_mode_flag_no_oracle ARGS bench --regret --problems ${hardening_data}/regret_problems.yaml --no-oracle
              EXPECT 2 ERR "--no-oracle goes with a bench of one op \\(--regret does not read it")
kiln_cli_test(bench_mode_flag_runs_overhead ARGS bench --overhead tuner_scale --shape 64 --device host --runs 5 EXPECT 2
              ERR "--runs goes with a bench of one op \\(--overhead does not read it")
