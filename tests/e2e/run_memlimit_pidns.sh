#!/bin/sh
# run_memlimit_pidns.sh PROGRAM PLUGIN USAGE_BIN: one memlimit budget shared by a process and another in a PID
# namespace of its own (unshare --pid --fork: containers sharing /dev/shm). A holds 3 of the budget's 4 MiB; B,
# in its own namespace, asks for 3 MiB and must be refused - it must not take A's slot for a dead one and
# reclaim it (liveness is the slot's lock, plugins/common/region.h, never a pid) - and A's slot is still alive
# after B has gone. Then A is killed: a process in its own namespace takes the whole budget (A's usage
# reclaimed across namespaces), is killed in turn, and one in A's namespace takes it again. ctest sets
# LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes).
set -u
prog=$1 plugin=$2 usage=$3
# the shim (and, in the sanitizer stage, its runtime) only for the programs: unshare and the tools run plain
preload=${LD_PRELOAD:-}
unset LD_PRELOAD
unshare --pid --fork true 2>/dev/null || { echo "SKIP: unshare --pid --fork is not permitted here"; exit 77; }
out=${E2E_OUT:-${TMPDIR:-/tmp}}/memlimit-pidns.$$
region=$out.region
fail() { echo "FAIL: $*"; for f in "$out".a "$out".b "$out".t "$out".c "$out".d; do [ -f "$f" ] && sed "s|^|  $f: |" "$f"; done; exit 1; }
export CUSHIM_PLUGINS="$plugin:limit=4MiB,budget=$region" FAKE_CUDA_DEVICES=2
rm -f "$region"
LD_PRELOAD=$preload "$prog" hold 4194304 3145728 >"$out.a" 2>&1 &
pa=$!
trap 'kill -KILL $pa 2>/dev/null; rm -f "$out".* "$region"' EXIT
i=0
while ! grep -q held "$out.a" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 500 ] || fail "the holder did not start"; sleep 0.02
done
# B: its own PID namespace; 3 MiB more than the budget has left
unshare --pid --fork --kill-child env LD_PRELOAD="$preload" "$prog" hold 4194304 3145728 >"$out.b" 2>&1 &
pb=$!
i=0
while ! grep -q held "$out.b" 2>/dev/null; do   # 'hold' prints 'held' after its allocation, failed or not
    i=$((i + 1)); [ $i -lt 500 ] || fail "the second process did not start"; sleep 0.02
done
kill -KILL $pb 2>/dev/null
wait $pb 2>/dev/null
grep -q "FAIL .*hold: cuMemAlloc" "$out.b" || fail "the process in its own PID namespace took the live holder's memory"
[ "$(grep -c FAIL "$out.b")" = 1 ] || fail "the second process failed otherwise"
"$usage" "$region" >"$out.t" 2>&1 || fail "cushim-usage failed"
grep -Eq "^[0-9]+ +$pa +[^ ]+ +alive +0 +3145728 " "$out.t" || fail "the holder's slot is not alive with its 3 MiB"
# A killed: its 3 MiB are reclaimed by a process in another PID namespace (the slot's lock went with A), which
# takes the whole 4 MiB; killed in turn, its 4 MiB are reclaimed by one in A's namespace
kill -KILL $pa 2>/dev/null
wait $pa 2>/dev/null
unshare --pid --fork --kill-child env LD_PRELOAD="$preload" "$prog" hold 4194304 4194304 >"$out.c" 2>&1 &
pc=$!
i=0
while ! grep -q held "$out.c" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 500 ] || fail "the third process did not start"; sleep 0.02
done
kill -KILL $pc 2>/dev/null
wait $pc 2>/dev/null
grep -q FAIL "$out.c" && fail "the killed holder's 3 MiB were not reclaimed from another PID namespace"
LD_PRELOAD=$preload "$prog" hold 4194304 4194304 >"$out.d" 2>&1 &
pd=$!
i=0
while ! grep -q held "$out.d" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 500 ] || fail "the fourth process did not start"; sleep 0.02
done
kill -KILL $pd 2>/dev/null
wait $pd 2>/dev/null
grep -q FAIL "$out.d" && fail "a holder killed in its own PID namespace: its 4 MiB were not reclaimed"
echo PASS
