#!/usr/bin/env bash
# run_remote_delay.sh - the remote plugin's delay_us (a simulated network distance, docs/plugins/remote.md) on the
# fake driver through cushim-serve (unix socket), the client with no driver on its path:
#   1. every synchronous round trip takes at least delay_us (a lower bound only: no upper timing bound in CI),
#      each round trip is delayed exactly once (the plugin's count of delays equals its count of round trips), and
#      the shared memory is off (no call by doorbell: a server at a distance shares none);
#   2. batched asynchronous calls are not delayed one by one: 3 steps of 9000 launches and a synchronisation
#      (27000 calls in 27 batches, 8 sent ahead before their replies are awaited) are delayed once per round
#      trip, a handful in all - messages counted, not time;
#   3. without delay_us nothing is delayed (no count line), and a negative delay_us refuses the plugin's load.
# Usage: run_remote_delay.sh BUILD_DIR PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_delay
rm -rf "$d" && mkdir -p "$d"
status=0
fail() { echo "run_remote_delay.sh: FAIL: $*"; status=1; }
sock=$d/s.sock delay=20000
client() {   # client OPTIONS ARGS...
    local o=$1
    shift
    env -u LD_PRELOAD LD_LIBRARY_PATH="$build/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 CUSHIM_LOG=info \
        CUSHIM_PLUGINS="$build/plugins/remote.so:server=unix:$sock,stats=1$o" "$prog" "$@"
}
LD_LIBRARY_PATH="$build/tests/fake" "$build/remote/cushim-serve" --listen="unix:$sock" > "$d/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || { fail "cushim-serve did not listen: $(cat "$d/serve.log")"; exit 1; }
stat_of() {   # stat_of FILE WORDS: the number before WORDS in the stats line
    sed -nE "s/.*[ (]([0-9]+) $2.*/\1/p" "$1" | head -1
}
delays_of() { sed -nE 's/.*delay_us=[0-9]+: ([0-9]+) round trips delayed.*/\1/p' "$1"; }

# 1. synchronous round trips
client ",delay_us=$delay" sync 5 > "$d/sync.out" 2> "$d/sync.err" || fail "sync: $(cat "$d/sync.err")"
min=$(sed -nE 's/^sync 5 min_us ([0-9]+)$/\1/p' "$d/sync.out")
[ -n "$min" ] && [ "$min" -ge "$delay" ] || fail "a synchronous round trip took ${min:-?} us, under delay_us=$delay"
trips=$(stat_of "$d/sync.err" "round trips to") delays=$(delays_of "$d/sync.err")
[ -n "$trips" ] && [ "$trips" -ge 5 ] && [ "$delays" = "$trips" ] ||
    fail "sync: ${delays:-no} delays for ${trips:-?} round trips: $(cat "$d/sync.err")"
[ "$(stat_of "$d/sync.err" "calls by doorbell")" = 0 ] || fail "sync: calls by doorbell with delay_us: $(cat "$d/sync.err")"

# 2. batched launches
client ",delay_us=$delay" steps 3 9000 > "$d/steps.out" 2> "$d/steps.err" || fail "steps: $(cat "$d/steps.err")"
grep -q '^steps 3 9000$' "$d/steps.out" || fail "steps: $(cat "$d/steps.out")"
trips=$(stat_of "$d/steps.err" "round trips to") delays=$(delays_of "$d/steps.err")
async=$(stat_of "$d/steps.err" "asynchronous") batches=$(stat_of "$d/steps.err" "batches")
[ "${async:-0}" -ge 27000 ] && [ "${batches:-0}" -ge 27 ] ||
    fail "steps: the launches were not batched: $(grep 'driver calls' "$d/steps.err")"
[ -n "$delays" ] && [ "$delays" = "$trips" ] && [ "$delays" -le 25 ] ||
    fail "steps: ${delays:-no} delays for ${trips:-?} round trips, $async batched calls (at most 25 expected): $(cat "$d/steps.err")"

# 3. no delay_us: nothing delayed; a negative one: refused
client "" steps 1 100 > "$d/none.out" 2> "$d/none.err" || fail "no delay: $(cat "$d/none.err")"
grep -q "round trips delayed" "$d/none.err" && fail "no delay_us, yet delays: $(cat "$d/none.err")"
[ "$(stat_of "$d/none.err" "calls by doorbell")" -ge 1 ] 2>/dev/null ||
    fail "no delay: the doorbell was not used (shared memory is on by default): $(cat "$d/none.err")"
client ",delay_us=-5" sync 1 > "$d/neg.out" 2> "$d/neg.err" && fail "delay_us=-5 was accepted"
grep -q "delay_us=-5: give 0 to 10000000 microseconds" "$d/neg.err" || fail "delay_us=-5: no clear error: $(cat "$d/neg.err")"

kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
[ $status = 0 ] && echo "run_remote_delay.sh: round trips delayed by at least delay_us, once each; batched calls not one by one"
exit $status
