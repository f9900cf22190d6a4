#!/usr/bin/env bash
# `kiln db merge --into PATH` writes only where PATH says: it does not create directories (a typo
# in the directory made a new tree nobody reads) and does not follow a symbolic link to nothing
# (the file was created at the link's target, a path the user never named); both are refused with
# exit 2 and an error naming --into, the path and what was expected, and nothing is created.  An
# input with no entries is named in a warning (it merged as "0 added" without a word).
# usage: db_merge_into.sh <kiln> <a database with entries>
set -uo pipefail
kiln=$1 db=$2
work=$(mktemp -d /tmp/kiln-merge-into.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

err=$("$kiln" db merge "$db" --into "$work/new/sub/tuning.yaml" 2>&1 >/dev/null); rc=$?
echo "$err"
[ "$rc" -eq 2 ] || fail "missing directory: exit status $rc, expected 2"
grep -qF "kiln db: error: bad --into '$work/new/sub/tuning.yaml': directory '$work/new/sub' does not exist; kiln db merge does not create directories (expected a database file in an existing directory: create it first)" <<<"$err" ||
  fail "missing directory: the error does not say what was expected"
[ -e "$work/new" ] && fail "a directory was created"

ln -s "$work/elsewhere.yaml" "$work/link.yaml"
err=$("$kiln" db merge "$db" --into "$work/link.yaml" 2>&1 >/dev/null); rc=$?
echo "$err"
[ "$rc" -eq 2 ] || fail "dangling link: exit status $rc, expected 2"
grep -qF "kiln db: error: bad --into '$work/link.yaml': it is a symbolic link to '$work/elsewhere.yaml' that does not exist; kiln db merge does not follow a dangling link (expected an existing database file, or a new file in an existing directory)" <<<"$err" ||
  fail "dangling link: the error does not say what was expected"
[ -e "$work/elsewhere.yaml" ] && fail "the link's target was created"
ls "$work" | grep -q '\.lock$' && fail "a lock file was created"

: >"$work/empty.yaml"
err=$("$kiln" db merge "$work/empty.yaml" "$db" --into "$work/tuning.yaml" 2>&1 >/dev/null); rc=$?
echo "$err"
[ "$rc" -eq 0 ] || fail "empty input: exit status $rc, expected 0"
grep -qF "kiln: warning: '$work/empty.yaml' holds no entries; nothing is merged from it" <<<"$err" ||
  fail "empty input: no warning naming it"
grep -qF "'$db' holds no entries" <<<"$err" && fail "warned about an input with entries"
[ -s "$work/tuning.yaml" ] || fail "the merge into an existing directory wrote nothing"

# JSON `skipped` counts bad entries left out; a comments-only input has none (it counted 1).
printf '# notes, not a database\n' >"$work/notes.yaml"
out=$("$kiln" db merge "$work/notes.yaml" --into "$work/tuning.yaml" --json 2>/dev/null); rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "comments-only input: exit status $rc, expected 0"
grep -qF '"skipped": 0' <<<"$out" || fail "comments-only input: skipped is not 0"
echo "OK"
