#!/bin/sh
# run_region_owner.sh PROGRAM PLUGIN USAGE_BIN: a memlimit budget region that another user can write is never
# joined (root included), and anyone may read one with 'cushim usage'. As root, acting as 'nobody' with setpriv:
#  1. nobody plants /dev/shm/cushim-budget-NAME; root's process with budget=NAME refuses it with one line and
#     keeps a budget of its own (before: root joined it, and nobody could truncate it - SIGBUS - or write its
#     counters - denying root memory); the file stays as nobody left it;
#  2. root's own file writable by every user (0666), or by its group (0664) with no budget_group= naming it, is
#     refused the same way; budget_group= naming a group this user is not in is refused;
#  3. a region root's process made is 0644: nobody reads it with cushim-usage (before: opened read-write,
#     "Permission denied").
# ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes).
set -u
prog=$1 plugin=$2 usage=$3
# the shim (and, in the sanitizer stage, its runtime) only for the program: mktemp, setpriv and the rest run plain
preload=${LD_PRELOAD:-}
unset LD_PRELOAD
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (to act as another user)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
name=e2e-owner-$$
region=/dev/shm/cushim-budget-$name
tmp=$(mktemp -d) || exit 1
chmod 755 "$tmp"
trap 'rm -rf "$tmp" "$region"' EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/out" ] && sed 's/^/  out: /' "$tmp/out"; exit 1; }
export FAKE_CUDA_DEVICES=2 CUSHIM_LOG=warn
run() { # run OPTIONS: the program under the budget; it must work (a budget of its own)
    LD_PRELOAD=$preload CUSHIM_PLUGINS="$plugin:limit=1GiB,budget=$name$1" "$prog" table 1073741824 >"$tmp/out" 2>&1 ||
        fail "the program failed with budget=$name$1"
}

# 1. planted by another user
rm -f "$region"
as_nobody sh -c ": > '$region'" || fail "nobody cannot create $region"
run ""
grep -q "belongs to uid 65534, not to this user" "$tmp/out" || fail "another user's region was not refused"
[ "$(stat -c %s "$region")" = 0 ] || fail "root's process joined and sized nobody's region"
rm -f "$region"

# 2. writable by others
: > "$region" && chmod 666 "$region"
run ""
grep -q "is writable by every user (mode 666)" "$tmp/out" || fail "a region every user may write was not refused"
[ "$(stat -c %s "$region")" = 0 ] || fail "a region every user may write was joined"
chmod 664 "$region"
run ""
grep -q "is writable by its group (mode 664)" "$tmp/out" || fail "a group-writable region was not refused"
run ",budget_group=65534"
grep -q "this user is not in group 65534" "$tmp/out" || fail "a group this user is not in was accepted"
rm -f "$region"

# 3. root's region, read by another user
run ""
! grep -q "budget region" "$tmp/out" || fail "root's own region was refused"
[ "$(stat -c %a "$region")" = 644 ] || fail "the region was made with mode $(stat -c %a "$region"), not 644"
cp "$usage" "$tmp/cushim-usage" && chmod 755 "$tmp/cushim-usage"
as_nobody "$tmp/cushim-usage" "$name" >"$tmp/out" 2>&1 || fail "nobody cannot read root's region with cushim-usage"
grep -q "^device 0: 0 of 1073741824 bytes charged" "$tmp/out" || fail "cushim-usage as nobody printed no device total"
as_nobody sh -c ": > '$region'" 2>/dev/null && fail "nobody could write root's region"
echo PASS
