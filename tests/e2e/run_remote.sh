#!/usr/bin/env bash
# run_remote.sh - API forwarding end to end on the fake driver (docs/remote.md):
#   1. cushim-serve serves the fake driver; vecadd runs with the drop-in libcuda.so.1 and the remote plugin,
#      no libcuda of its own on its path: its output equals a local run's (the kernel time aside) and the
#      server's fake driver saw the same calls as the local one (plus the cuFuncGetParamInfo the launch
#      needed: the client asks once per function, the server checks once);
#   2. the back end is SIGKILLed mid-session: the client's next call fails with CUDA_ERROR_DEVICE_UNAVAILABLE
#      within seconds (e2e_remote_loss), and the server still serves a new client;
#   3. a client is SIGKILLed mid-session: its back end ends, the server still serves a new client.
# Usage: run_remote.sh BUILD_DIR VECADD LOSS_PROGRAM OUT_DIR
set -u
build=$1 vecadd=$2 loss=$3 out=$4
d=$out/remote
rm -rf "$d" && mkdir -p "$d"
status=0
fail() { echo "run_remote.sh: FAIL: $*"; status=1; }
fake=$build/tests/fake dropin=$build/dropin serve=$build/remote/cushim-serve plugin=$build/plugins/remote.so
sock=$d/s.sock
# the client: the shim as libcuda.so.1, no driver anywhere it could find one
client() {
    env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock,stats=1" "$@"
}
# ... in the background, $! its own pid (exec all the way down: a SIGKILL reaches the program itself)
client_bg() {
    local o=$1 e=$2
    shift 2
    (exec env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock" "$@" > "$o" 2> "$e") &
}
start_server() {   # start_server COUNTS_FILE [--once]
    rm -f "$sock"
    LD_LIBRARY_PATH="$fake" FAKE_CUDA_COUNTS="$1" "$serve" --listen="unix:$sock" ${2:-} >> "$d/serve.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && return 0; sleep 0.05; done
    fail "cushim-serve did not listen"; cat "$d/serve.log"
}
normalize() { sed -E 's/kernel [0-9.]+ ms/kernel T ms/' "$1"; }

# 1. vecadd, remote and local
[ "$(client ldd "$vecadd" | awk '/libcuda.so.1/ {print $3}')" = "$dropin/libcuda.so.1" ] ||
    fail "the client would load $(client ldd "$vecadd" | grep libcuda.so.1)"
start_server "$d/remote.counts" --once
client "$vecadd" 1000 > "$d/remote.out" 2> "$d/remote.err" || fail "vecadd failed remotely: $(cat "$d/remote.err")"
wait "$server" || fail "the server's back end exited with $?"
LD_LIBRARY_PATH="$fake" FAKE_CUDA_COUNTS="$d/local.counts" "$vecadd" 1000 > "$d/local.out" 2> "$d/local.err" ||
    fail "vecadd failed locally"
diff <(normalize "$d/local.out") <(normalize "$d/remote.out") > "$d/out.diff" || fail "outputs differ: $(cat "$d/out.diff")"
grep -q "driver calls, .* round trips" "$d/remote.err" || fail "no stats line: $(cat "$d/remote.err")"
diff <(sort "$d/local.counts") <(grep -v '^cuFuncGetParamInfo' "$d/remote.counts" | sort) > "$d/counts.diff" ||
    fail "the server's driver saw other calls than a local run: $(cat "$d/counts.diff")"
grep -q '^cuFuncGetParamInfo' "$d/remote.counts" || fail "the launch's argument sizes were not asked"

# 2. the back end dies mid-session
start_server "$d/loss.counts"
rm -f "$d/go"
client_bg "$d/loss.out" "$d/loss.err" "$loss" "$d/go"
cl=$!
for _ in $(seq 100); do grep -q ready "$d/loss.out" 2>/dev/null && break; sleep 0.05; done
be=$(pgrep -P "$server" | head -1)
[ -n "$be" ] && kill -9 "$be" || fail "no back end to kill"
touch "$d/go"
wait "$cl" || fail "the client did not fail cleanly: $(cat "$d/loss.out" "$d/loss.err")"
grep -q "lost the connection" "$d/loss.err" || fail "no message about the lost connection: $(cat "$d/loss.err")"
client "$vecadd" 100 > "$d/after1.out" 2>&1 || fail "the server did not serve a client after a back end died"

# 3. a client dies mid-session
rm -f "$d/go2"
client_bg "$d/kill.out" "$d/kill.err" "$loss" "$d/go2"
cl=$!
for _ in $(seq 100); do grep -q ready "$d/kill.out" 2>/dev/null && break; sleep 0.05; done
kill -9 "$cl"
wait "$cl" 2>/dev/null
for _ in $(seq 100); do [ "$(pgrep -P "$server" | wc -l)" = 0 ] && break; sleep 0.05; done
[ "$(pgrep -P "$server" | wc -l)" = 0 ] || fail "the killed client's back end is still running"
client "$vecadd" 100 > "$d/after2.out" 2>&1 || fail "the server did not serve a client after one was killed"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
[ $status = 0 ] && echo "run_remote.sh: vecadd remote = local; back end and client deaths handled"
exit $status
