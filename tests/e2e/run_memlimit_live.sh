#!/bin/sh
# run_memlimit_live.sh PROGRAM PLUGIN LAUNCHER: live limits on a shared memlimit budget ('cushim limit').
# A process holds 32 MiB of its 64 MiB; 'cushim limit REGION' shows 64 MiB configured; '--mem=16MiB' lowers it
# while the process runs: its next allocation is refused, its queries say 16 MiB, nothing it holds is freed
# (the budget still shows 32 MiB in use, and 'cushim usage' the live quota); once it frees, it may allocate under 16 MiB; '--mem=off' gives it back
# its own 64 MiB (e2e_memlimit.c 'live' checks each step). A region every user may write is not changed; a
# budget nobody opened is not created; bad values are usage errors.
set -u
prog=$1 plugin=$2 launcher=$3
out=${E2E_OUT:-${TMPDIR:-/tmp}}/memlimit-live
region=$out.region
rm -rf "$out".* "$region"
mkdir -p "$out.d"
fail() { echo "FAIL: $*"; for f in "$out".show "$out".prog; do [ -f "$f" ] && sed "s|^|  $f: |" "$f"; done; exit 1; }
step() {   # step NAME: wait for the program's file
    i=0
    while [ ! -e "$out.d/$1" ]; do
        i=$((i + 1)); [ $i -lt 1500 ] || fail "the program did not reach '$1'"; sleep 0.02
        kill -0 $pid 2>/dev/null || { [ -e "$out.d/$1" ] || fail "the program ended before '$1'"; }
    done
}
L() { env -u LD_PRELOAD -u CUSHIM_PLUGINS "$launcher" limit "$@"; }
CUSHIM_PLUGINS="$plugin:limit=64MiB,budget=$region" FAKE_CUDA_DEVICES=2 "$prog" live 67108864 "$out.d" >"$out.prog" 2>&1 &
pid=$!
step held
L "$region" >"$out.show" 2>&1 || fail "cushim limit (show) failed"
grep -q "device 0: limit 64MiB (configured), in use 32MiB" "$out.show" || fail "the configured limit is not shown"
L "$region" --mem=16MiB >"$out.show" 2>&1 || fail "cushim limit --mem=16MiB failed"
grep -q "live limits set" "$out.show" || fail "no word that the limits were set"
grep -q "device 0: limit 16MiB (live), configured 64MiB, in use 32MiB" "$out.show" ||
    fail "the live limit, or the 32 MiB still held, is not shown"
# 'cushim usage' (its table and Prometheus text) shows the quota in force: the live one
env -u LD_PRELOAD "$launcher" usage "$region" >"$out.show" 2>&1 || fail "cushim usage failed"
grep -q "^device 0: 33554432 of 16777216 bytes charged" "$out.show" || fail "cushim usage does not show the live limit"
env -u LD_PRELOAD "$launcher" usage --prometheus "$region" >"$out.show" 2>&1 || fail "cushim usage --prometheus failed"
grep -q "^cushim_memlimit_limit_bytes{budget=\"$region\",device=\"0\"} 16777216$" "$out.show" ||
    fail "the Prometheus quota is not the live limit"
: >"$out.d/lowered"
step checked
L "$region" --mem=off >"$out.show" 2>&1 || fail "cushim limit --mem=off failed"
grep -q "device 0: limit 64MiB (configured), in use 8MiB" "$out.show" || fail "--mem=off did not give the configured limit back"
: >"$out.d/dropped"
wait $pid || fail "the program failed ($?)"
grep -q "^live: 0 failures" "$out.prog" || fail "the program's checks"
# who may change a region: one any other user may write is refused, left as it was
chmod 666 "$region"
L "$region" --mem=1MiB >"$out.show" 2>&1 && fail "a region every user may write was changed"
grep -q "not changed" "$out.show" || fail "no reason given for a region every user may write"
chmod 644 "$region"
L "$region" >"$out.show" 2>&1 || fail "cushim limit (show) failed"
grep -q "device 0: limit 64MiB (configured)" "$out.show" || fail "the refused change was written"
# a name nobody opened: nothing created; bad values: usage errors
L "nosuch-live-$$" --mem=1GiB >"$out.show" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "no budget or group 'nosuch-live-$$'" "$out.show" || fail "an unknown budget: exit $rc"
[ ! -e "/dev/shm/cushim-budget-nosuch-live-$$" ] || fail "an unknown budget was created"
L "$region" --mem=lots >"$out.show" 2>&1; rc=$?
[ $rc = 2 ] || fail "--mem=lots: exit $rc, not 2"
L "$region" --bogus >"$out.show" 2>&1; rc=$?
[ $rc = 2 ] || fail "--bogus: exit $rc, not 2"
L >"$out.show" 2>&1; rc=$?
[ $rc = 2 ] || fail "no NAME: exit $rc, not 2"
rm -rf "$out".* "$region"
echo "memlimit live limits: ok"
