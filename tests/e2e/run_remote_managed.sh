#!/usr/bin/env bash
# run_remote_managed.sh - managed memory over remoting (docs/remote.md, "Managed memory"), on the fakes. The server's
# fake driver places managed memory in a range of its own (FAKE_CUDA_MANAGED_BASE, as the real driver's unified
# range); the client preloads the shim and the remote plugin and finds no libcuda.so.1:
#   1. e2e_remote_managed main (cuMemAllocManaged and cudaMallocManaged written on the host, kernels, memsets and
#      copies on them, read after cuCtxSynchronize, cuStreamSynchronize, an event query, synchronous copies,
#      cudaMemcpyDefault, cudaMemAdvise and cudaMemPrefetchAsync) prints the same as a local run, every check ok, over the unix socket (shared memory) and
#      over TCP with a token; the stats line counts the pushes and pulls, and a partial host write pushed one 4 KiB
#      piece, not the block;
#   2. e2e_remote_managed attr: the concurrent-managed-access attribute is 1 on the fake driver, 0 through the
#      remoting (driver, runtime and cudaDeviceProp);
#   3. e2e_remote_managed taken: the mirror at the server's address, unmapped by cuMemFree; an address the program
#      mapped is asked again (another address, the program's mapping untouched); when all are taken, out of memory
#      (2, driver and runtime) with the reason logged, and the server's free memory as before; a forked child reads
#      its parent's block and allocates, sets and reads one of its own through a back end of its own.
# Usage: run_remote_managed.sh BUILD_DIR PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_managed
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
base=0x200000000000
client() {   # client SERVER OUT ERR ARGS...: the shim and the plugin preloaded, no driver
    local srv=$1 o=$2 e=$3
    shift 3
    env -u LD_LIBRARY_PATH LD_PRELOAD="$shim $plugin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=$srv,stats=1" "$prog" "$@" > "$o" 2> "$e"
}
stat_managed() { grep -o "[0-9]* $2 ([0-9]* bytes)" "$1" | head -1 | tr -d '()' | awk '{ print $1, $3 }'; }

# 1. main: local, unix socket, TCP
LD_LIBRARY_PATH="$fake" "$prog" main > "$d/main.local" 2> "$d/main.local.err" ||
    fail "main failed locally: $(cat "$d/main.local" "$d/main.local.err")"
serve_fakes --once FAKE_CUDA_MANAGED_BASE=$base FAKE_CUDA_COUNTS="$d/main.unix.counts"
client "unix:$sock" "$d/main.unix" "$d/main.unix.err" main ||
    fail "main failed over the unix socket: $(cat "$d/main.unix" "$d/main.unix.err")"
wait "$server" || fail "the server's back end exited with $?"
diff "$d/main.local" "$d/main.unix" > "$d/main.unix.diff" || fail "unix socket differs from local: $(cat "$d/main.unix.diff")"
# 12 checks from a CUDA 13 runtime, 11 from 12.x (no cudaMemLocation forms of advice and prefetch)
nchecks=11
grep -q '^cudaMemAdvise:' "$d/main.local" && nchecks=12
[ "$(grep -c ': ok$' "$d/main.unix")" = "$nchecks" ] || fail "not $nchecks checks ok: $(cat "$d/main.unix")"
grep -q ': WRONG$' "$d/main.unix" && fail "a check failed: $(grep WRONG "$d/main.unix")"
grep -qx 'cuPointerGetAttribute(IS_MANAGED): 0 1' "$d/main.unix" || fail "IS_MANAGED: $(grep IS_MANAGED "$d/main.unix")"
# the runtime's advice and prefetch reached the server's driver with the managed address (and the one that is not
# managed: its error as locally)
if [ "$nchecks" = 12 ]; then
  [ "$(count "$d/main.unix.counts" cuMemAdvise_v2)" = 1 ] && [ "$(count "$d/main.unix.counts" cuMemPrefetchAsync_v2)" = 2 ] ||
    fail "the server's driver saw cuMemAdvise_v2 $(count "$d/main.unix.counts" cuMemAdvise_v2) and cuMemPrefetchAsync_v2 $(count "$d/main.unix.counts" cuMemPrefetchAsync_v2) times (1, 2)"
fi
# the partial write (two ints in two 4 KiB pieces) went as two pieces: some push of 4096 bytes exists, and far
# fewer bytes pushed than whole blocks at every push
pushes=$(stat_managed "$d/main.unix.err" pushes) pulls=$(stat_managed "$d/main.unix.err" pulls)
[ -n "$pushes" ] && [ -n "$pulls" ] || fail "no managed-memory stats: $(cat "$d/main.unix.err")"
read -r npush bpush <<< "$pushes"
read -r npull bpull <<< "$pulls"
[ "${npush:-0}" -ge 4 ] && [ "${bpush:-0}" -lt $((npush * 16384)) ] && [ "${npull:-0}" -ge 8 ] ||
    fail "pushes $pushes, pulls $pulls: $(grep managed "$d/main.unix.err")"
tok=$d/token port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
env LD_LIBRARY_PATH="$fake" FAKE_CUDA_MANAGED_BASE=$base "$serve" --listen="tcp://127.0.0.1:$port" \
    --token-file="$tok" --once > "$d/tcp.log" 2>&1 &
tcpserver=$!
for _ in $(seq 100); do grep -q listening "$d/tcp.log" && break; sleep 0.05; done
client "tcp://127.0.0.1:$port,token_file=$tok" "$d/main.tcp" "$d/main.tcp.err" main ||
    fail "main failed over TCP: $(cat "$d/main.tcp" "$d/main.tcp.err")"
wait "$tcpserver" || fail "the TCP back end exited with $?"
diff "$d/main.local" "$d/main.tcp" > "$d/main.tcp.diff" || fail "TCP differs from local: $(cat "$d/main.tcp.diff")"

# 2. the attributes
LD_LIBRARY_PATH="$fake" "$prog" attr > "$d/attr.local" 2>&1 || fail "attr failed locally: $(cat "$d/attr.local")"
grep -q '^concurrent managed access: driver 0 1, runtime 0 1, properties 0 1;' "$d/attr.local" ||
    fail "the fake does not say 1 locally: $(cat "$d/attr.local")"
serve_fakes --once FAKE_CUDA_MANAGED_BASE=$base
client "unix:$sock" "$d/attr.remote" "$d/attr.remote.err" attr || fail "attr failed remotely: $(cat "$d/attr.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
grep -q '^concurrent managed access: driver 0 0, runtime 0 0, properties 0 0;' "$d/attr.remote" ||
    fail "the remoting does not say 0: $(cat "$d/attr.remote")"

# 3. taken addresses
serve_fakes "" FAKE_CUDA_MANAGED_BASE=$base
client "unix:$sock" "$d/taken.remote" "$d/taken.remote.err" taken ||
    fail "taken failed: $(cat "$d/taken.remote" "$d/taken.remote.err")"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
printf '%s\n' 'cuMemAllocManaged: 0' 'the mirror is mapped at the server'"'"'s address: ok' 'cuMemFree: 0' \
    'cuMemFree unmaps it: ok' 'cuMemAllocManaged: 0' 'another address, past the program'"'"'s mapping: ok' \
    'the program'"'"'s mapping untouched: ok' 'cuMemFree: 0' 'cuMemAllocManaged, all taken: 2' \
    'cudaMallocManaged, all taken: 2' 'cudaGetLastError: 2' 'the server'"'"'s blocks given back: ok' \
    'cudaMallocManaged: 0' 'a forked child: its parent'"'"'s block readable, one of its own: ok' 'cudaFree: 0' |
    diff - "$d/taken.remote" > "$d/taken.diff" || fail "taken: $(cat "$d/taken.diff")"
grep -q 'cuMemAllocManaged(1048576 bytes): the 4 addresses the server gave are taken in this process' \
    "$d/taken.remote.err" || fail "no reason logged: $(cat "$d/taken.remote.err")"

[ $status = 0 ] && echo "run_remote_managed.sh: managed memory remote = local over unix and TCP, attributes 0, taken addresses refused"
exit $status
