#!/usr/bin/env bash
# run_remote.sh - API forwarding end to end on the fake driver (docs/remote.md):
#   1. cushim-serve serves the fake driver; vecadd runs with the drop-in libcuda.so.1 and the remote plugin,
#      no libcuda of its own on its path: its output equals a local run's (the kernel time aside) and the
#      server's fake driver saw the same calls as the local one (plus the cuFuncGetParamInfo the launch
#      needed: the client asks once per function, the server checks once);
#   2. the back end is SIGKILLed mid-session: the client's next call fails with CUDA_ERROR_DEVICE_UNAVAILABLE
#      within seconds (e2e_remote_loss), and the server still serves a new client;
#   3. a client is SIGKILLed mid-session: its back end ends, the server still serves a new client;
#   4. the fast paths (e2e_remote_fast): vecadd's round trips (29; 36 before batching and pipelined asks), chunked copies around the
#      chunk size and of 256 MiB (through the shared area, the default on a unix socket, and with shm=0 through
#      the socket: byte-exact both ways, the same calls on the server), batches (order, an error at the next synchronous call, fork, the flush at
#      exit), a current context per client thread, and cached answers equal to the server's with only what cannot
#      change kept.
# Usage: run_remote.sh BUILD_DIR VECADD LOSS_PROGRAM OUT_DIR FAST_PROGRAM
set -u
build=$1 vecadd=$2 loss=$3 out=$4 fast=$5
d=$out/remote
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
# the client: the shim as libcuda.so.1, no driver anywhere it could find one
client() {
    env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock,stats=1${opts:-}" "$@"
}
# ... in the background, $! its own pid (exec all the way down: a SIGKILL reaches the program itself)
client_bg() {
    local o=$1 e=$2
    shift 2
    (exec env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock" "$@" > "$o" 2> "$e") &
}
start_server() {   # start_server COUNTS_FILE [--once]
    serve_fakes "${2:-}" FAKE_CUDA_COUNTS="$1"
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
stat_of() {   # stat_of FILE WORDS: the number before WORDS in the stats line
    sed -nE "s/.*[ (]([0-9]+) $2.*/\1/p" "$1" | head -1
}
count_of() {   # count_of COUNTS_FILE API
    awk -v n="$2" '$1 == n { print $2 }' "$1"
}
trips=$(stat_of "$d/remote.err" "round trips") async=$(stat_of "$d/remote.err" "asynchronous")
[ "${trips:-99}" -le 29 ] && [ "${async:-0}" -ge 3 ] ||
    fail "vecadd: $(grep 'driver calls' "$d/remote.err") (expected at most 29 round trips: 36 before batching and the pipelined parameter asks)"
# on this host the synchronous calls ring the shared area's doorbell (those with nothing else in flight)
[ "$(stat_of "$d/remote.err" "calls by doorbell")" -ge 20 ] 2>/dev/null ||
    fail "vecadd: few calls by doorbell: $(grep 'driver calls' "$d/remote.err")"

# 4. fast paths
chunk=$((8 << 20))
start_server "$d/copies.counts" --once
client "$fast" copies $chunk > "$d/copies.out" 2> "$d/copies.err" || fail "chunked copies: $(cat "$d/copies.err")"
wait "$server" || fail "the copies' back end exited with $?"
[ "$(count_of "$d/copies.counts" cuMemcpyHtoD_v2)" = 48 ] && [ "$(count_of "$d/copies.counts" cuMemcpyDtoH_v2)" = 48 ] ||
    fail "the server ran $(count_of "$d/copies.counts" cuMemcpyHtoD_v2) HtoD and $(count_of "$d/copies.counts" cuMemcpyDtoH_v2) DtoH calls, not 48 each (8 copies of 1, 1, 2, 4 chunks and one of 32)"
[ "$(stat_of "$d/copies.err" "copy chunks")" = 88 ] && [ "$(stat_of "$d/copies.err" "through shared memory")" = 96 ] ||
    fail "copy chunks (88, all 96 calls through shared memory): $(grep 'driver calls' "$d/copies.err")"
# the same copies through the socket (shm=0): byte-exact too, the same calls on the server, none through the area
start_server "$d/copies-sock.counts" --once
opts=,shm=0 client "$fast" copies $chunk > "$d/copies-sock.out" 2> "$d/copies-sock.err" ||
    fail "chunked copies, shm=0: $(cat "$d/copies-sock.err")"
wait "$server" || fail "the copies' back end (shm=0) exited with $?"
# (but the area's registration with the driver, asked once, through the real function)
[ "$(count_of "$d/copies.counts" cuMemHostRegister_v2)" = 1 ] && [ -z "$(count_of "$d/copies-sock.counts" cuMemHostRegister_v2)" ] ||
    fail "the shared area was registered $(count_of "$d/copies.counts" cuMemHostRegister_v2) times, not once (shm=0: $(count_of "$d/copies-sock.counts" cuMemHostRegister_v2), not at all)"
diff <(grep -v ^cuMemHostRegister_v2 "$d/copies.counts" | sort) <(sort "$d/copies-sock.counts") > "$d/copies.diff" ||
    fail "the server ran other calls with shm=0: $(cat "$d/copies.diff")"
[ "$(stat_of "$d/copies-sock.err" "copy chunks")" = 88 ] && [ "$(stat_of "$d/copies-sock.err" "through shared memory")" = 0 ] &&
    [ "$(stat_of "$d/copies-sock.err" "calls by doorbell")" = 0 ] ||
    fail "copy chunks with shm=0 (88, none through shared memory): $(grep 'driver calls' "$d/copies-sock.err")"
# over TCP (a token), the option on: no shared area, the copies through the socket as with shm=0
tok=$d/token port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
LD_LIBRARY_PATH="$fake" FAKE_CUDA_COUNTS="$d/copies-tcp.counts" "$serve" --listen="tcp://127.0.0.1:$port" \
    --token-file="$tok" --once > "$d/tcp.log" 2>&1 &
tcpserver=$!
for _ in $(seq 100); do grep -q listening "$d/tcp.log" && break; sleep 0.05; done
env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
    CUSHIM_PLUGINS="$plugin:server=tcp://127.0.0.1:$port,token_file=$tok,stats=1" "$fast" copies $chunk $((32 << 20)) \
    > "$d/copies-tcp.out" 2> "$d/copies-tcp.err" || fail "chunked copies over TCP: $(cat "$d/copies-tcp.err")"
wait "$tcpserver" || fail "the TCP copies' back end exited with $?"
# the last copy 32 MiB here: 4 chunks each way instead of 32
[ "$(count_of "$d/copies-tcp.counts" cuMemcpyHtoD_v2)" = 20 ] && [ "$(stat_of "$d/copies-tcp.err" "copy chunks")" = 32 ] &&
    [ "$(stat_of "$d/copies-tcp.err" "through shared memory")" = 0 ] && [ "$(stat_of "$d/copies-tcp.err" "calls by doorbell")" = 0 ] &&
    [ -z "$(count_of "$d/copies-tcp.counts" cuMemHostRegister_v2)" ] ||
    fail "TCP: other calls than through the socket, or shared memory: $(grep '^remote:' "$d/copies-tcp.err")"
# pinned host memory: the program's own regions shared with the back end, each copy one call (zero copy);
# the same output as a local run's, and with shm=0 (this process's heap, the copies through the socket)
start_server "$d/pinned.counts" --once
client "$fast" pinned > "$d/pinned.out" 2> "$d/pinned.err" || fail "pinned: $(cat "$d/pinned.err")"
wait "$server" || fail "the pinned copies' back end exited with $?"
LD_LIBRARY_PATH="$fake" "$fast" pinned > "$d/pinned-local.out" 2>&1 || fail "pinned locally: $(cat "$d/pinned-local.out")"
diff "$d/pinned-local.out" "$d/pinned.out" > "$d/pinned.diff" || fail "pinned: outputs differ: $(cat "$d/pinned.diff")"
[ "$(stat_of "$d/pinned.err" "zero-copy")" = 24 ] && [ "$(stat_of "$d/pinned.err" "through shared memory")" = 0 ] ||
    fail "pinned: 24 zero-copy calls expected (12 synchronous, 12 on a stream): $(grep '^remote:' "$d/pinned.err")"
[ "$(count_of "$d/pinned.counts" cuMemcpyHtoD_v2)" = 6 ] && [ "$(count_of "$d/pinned.counts" cuMemcpyDtoHAsync_v2)" = 6 ] &&
    [ -z "$(count_of "$d/pinned.counts" cuMemAllocHost_v2)" ] ||
    fail "pinned: the server ran $(count_of "$d/pinned.counts" cuMemcpyHtoD_v2) HtoD and $(count_of "$d/pinned.counts" cuMemcpyDtoHAsync_v2) DtoHAsync (6 each: one per copy) and $(count_of "$d/pinned.counts" cuMemAllocHost_v2) cuMemAllocHost (none: the client's)"
start_server "$d/pinned-sock.counts" --once
opts=,shm=0 client "$fast" pinned > "$d/pinned-sock.out" 2> "$d/pinned-sock.err" || fail "pinned, shm=0: $(cat "$d/pinned-sock.err")"
wait "$server"
diff "$d/pinned-local.out" "$d/pinned-sock.out" > /dev/null && [ "$(stat_of "$d/pinned-sock.err" "zero-copy")" = 0 ] ||
    fail "pinned, shm=0: $(diff "$d/pinned-local.out" "$d/pinned-sock.out"; grep 'driver calls' "$d/pinned-sock.err")"
start_server "$d/batch.counts"
client "$fast" batch > "$d/batch.out" 2> "$d/batch.err" || fail "batches: $(cat "$d/batch.err")"
[ "$(stat_of "$d/batch.err" "batches")" -ge 4 ] 2>/dev/null || fail "batches: $(grep 'driver calls' "$d/batch.err")"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
start_server "$d/launch.counts" --once
client "$fast" launches 1000 > "$d/launch.out" 2> "$d/launch.err" || fail "launches: $(cat "$d/launch.err")"
wait "$server"
[ "$(count_of "$d/launch.counts" cuLaunchKernel)" = 1000 ] && [ "$(stat_of "$d/launch.err" "batches")" -ge 4 ] ||
    fail "1000 launches of over 1 KiB each: the server ran $(count_of "$d/launch.counts" cuLaunchKernel), $(grep 'driver calls' "$d/launch.err") (a batch holds at most 256 KiB)"
start_server "$d/threads.counts" --once
client "$fast" threads > "$d/threads.out" 2> "$d/threads.err" || fail "client threads: $(cat "$d/threads.err")"
wait "$server"
LD_LIBRARY_PATH="$fake" "$fast" threads > "$d/threads-local.out" 2>&1 || fail "threads locally: $(cat "$d/threads-local.out")"
start_server "$d/exit.counts" --once
client "$fast" exit 5 > "$d/exit.out" 2> "$d/exit.err" || fail "exit: $(cat "$d/exit.err")"
wait "$server"
[ "$(count_of "$d/exit.counts" cuMemsetD32Async)" = 5 ] ||
    fail "calls queued at exit: the server ran $(count_of "$d/exit.counts" cuMemsetD32Async) of 5"
start_server "$d/cache.counts" --once
client "$fast" cache > "$d/cache.out" 2> "$d/cache.err" || fail "cache: $(cat "$d/cache.err")"
wait "$server"
LD_LIBRARY_PATH="$fake" "$fast" cache > "$d/cache-local.out" 2>&1 || fail "cache locally: $(cat "$d/cache-local.out")"
# but CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS (89): 0 through the remoting (docs/remote.md, "Managed memory")
diff <(grep -v '^attr 89:' "$d/cache-local.out") <(grep -v '^attr 89:' "$d/cache.out") > "$d/cache.diff" ||
    fail "cached answers differ: $(head "$d/cache.diff")"
[ "$(grep -c '^attr 89: 0 0$' "$d/cache.out")" = "$(grep -c '^attr 89:' "$d/cache-local.out")" ] ||
    fail "the concurrent-managed-access attribute: $(grep '^attr 89:' "$d/cache.out" | head -n 2)"
for api in cuDeviceGetAttribute cuGetErrorName cuDeviceGetCount; do
    want=$(sed -n "s/^expect $api //p" "$d/cache.out")
    [ -n "$want" ] && [ "$(count_of "$d/cache.counts" $api)" = "$want" ] ||
        fail "$api: the server was asked $(count_of "$d/cache.counts" $api) times, $want if only what cannot change is kept"
done

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

# 2b. the back end dies in the middle of copies through the shared area
rm -f "$d/go3"
client_bg "$d/lossc.out" "$d/lossc.err" "$loss" "$d/go3" copy
cl=$!
for _ in $(seq 100); do grep -q ready "$d/lossc.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.2
be=$(pgrep -P "$server" | head -1)
[ -n "$be" ] && kill -9 "$be" || fail "no back end to kill (copies)"
touch "$d/go3"
wait "$cl" || fail "the copying client did not fail cleanly: $(cat "$d/lossc.out" "$d/lossc.err")"
grep -q "lost the connection" "$d/lossc.err" || fail "no message about the lost connection (copies): $(cat "$d/lossc.err")"

# 2c. the back end dies while the client makes synchronous calls through the doorbell
rm -f "$d/go5"
client_bg "$d/losss.out" "$d/losss.err" "$loss" "$d/go5" sync
cl=$!
for _ in $(seq 100); do grep -q ready "$d/losss.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.1
be=$(pgrep -P "$server" | head -1)
[ -n "$be" ] && kill -9 "$be" || fail "no back end to kill (doorbell)"
touch "$d/go5"
wait "$cl" || fail "the client at the doorbell did not fail cleanly: $(cat "$d/losss.out" "$d/losss.err")"
grep -q "lost the connection" "$d/losss.err" || fail "no message about the lost connection (doorbell): $(cat "$d/losss.err")"

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
# 3b. a client dies in the middle of copies through the shared area
rm -f "$d/go4"
client_bg "$d/killc.out" "$d/killc.err" "$loss" "$d/go4" copy
cl=$!
for _ in $(seq 100); do grep -q ready "$d/killc.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.2
kill -9 "$cl"
wait "$cl" 2>/dev/null
for _ in $(seq 100); do [ "$(pgrep -P "$server" | wc -l)" = 0 ] && break; sleep 0.05; done
[ "$(pgrep -P "$server" | wc -l)" = 0 ] || fail "the back end of the client killed while copying is still running"
client "$vecadd" 100 > "$d/after3.out" 2>&1 || fail "the server did not serve a client after a copying one was killed"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
[ $status = 0 ] && echo "run_remote.sh: vecadd remote = local; back end and client deaths handled"
exit $status
