#!/usr/bin/env bash
# bench/remote/run.sh BUILD_DIR - the remoting's costs on the fake driver, and the transports beneath them
# (docs/remote.md, "Transport" and "Measurements"): a synchronous call and 1 MiB copies locally, through the
# remote plugin to cushim-serve over a unix socket, then the raw unix-socket and TCP-loopback ping-pongs and,
# where libucx-dev is installed, UCX active messages over shared memory and TCP. Everything is built here
# with gcc; nothing runs in CI. Copies are measured at SIZE (COPIES of them) and at BIG (BIG_COPIES), the big
# ones from pageable and from pinned host memory (cuMemAllocHost). The remote rows come twice: over the socket
# alone (the plugin's shm=0) and through the shared memory of one host (the default on a unix socket: the
# doorbell for synchronous calls, the staging area and zero copy for pinned memory; docs/remote.md).
# BEFORE=<another build tree> runs the remote part with that tree's drop-in, plugin and server too, in the same
# run (before/after a change).
# ALTERNATE=N instead runs only the synchronous round trip (from the first client thread and from a second one)
# against one server, N times over the socket (shm=0) and through the doorbell alternately (a loaded host moves
# both between runs).
#   ROUNDS=20000 SIZE=1048576 BIG=268435456 BEFORE=/path/to/main/build bash bench/remote/run.sh build
#   ALTERNATE=2 bash bench/remote/run.sh build
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rounds=${ROUNDS:-20000} size=${SIZE:-1048576} big=${BIG:-268435456} copies=${COPIES:-1000} big_copies=${BIG_COPIES:-9}
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
server=
inc=$(sed -n 's/^CUSHIM_CUDA_INCLUDE:PATH=//p' "$build/CMakeCache.txt")
gcc -O2 -o "$tmp/calls" "$here/bench_remote_calls.c" -I"$inc" -L"$build/tests/fake" -l:libcuda.so.1 -lpthread
gcc -O2 -o "$tmp/pingpong" "$here/pingpong.c"
if [ -n "${ALTERNATE:-}" ]; then
    LD_LIBRARY_PATH="$build/tests/fake" "$build/remote/cushim-serve" --listen="unix:$tmp/s.sock" 2> "$tmp/serve.log" &
    server=$!
    for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.05; done
    for _ in $(seq "$ALTERNATE"); do
        for opts in ,shm=0 ,shm=1; do
            printf '%-7s ' "${opts#,}"
            env -u LD_PRELOAD LD_LIBRARY_PATH="$build/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
                CUSHIM_PLUGINS="$build/plugins/remote.so:server=unix:$tmp/s.sock$opts" "$tmp/calls" "$rounds" 4096 10 \
                thread | grep cuStreamQuery
        done
    done
    exit 0
fi
echo "== local (fake driver)"
LD_LIBRARY_PATH="$build/tests/fake" "$tmp/calls" "$rounds" "$size" "$copies"
LD_LIBRARY_PATH="$build/tests/fake" "$tmp/calls" 1000 "$big" "$big_copies" | grep Memcpy
LD_LIBRARY_PATH="$build/tests/fake" "$tmp/calls" 1000 "$big" "$big_copies" pinned | grep Memcpy
remote() {   # remote BUILD_TREE [OPTIONS [pinned]]: the same through that tree's drop-in, remote plugin and server
    local b=$1 opts=${2:-} pinned=${3:-}
    LD_LIBRARY_PATH="$build/tests/fake" "$b/remote/cushim-serve" --listen="unix:$tmp/s.sock" 2> "$tmp/serve.log" &
    server=$!
    for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.05; done
    env -u LD_PRELOAD LD_LIBRARY_PATH="$b/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
        CUSHIM_PLUGINS="$b/plugins/remote.so:server=unix:$tmp/s.sock,stats=1$opts" "$tmp/calls" "$rounds" "$size" \
        "$copies"
    env -u LD_PRELOAD LD_LIBRARY_PATH="$b/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
        CUSHIM_PLUGINS="$b/plugins/remote.so:server=unix:$tmp/s.sock$opts" "$tmp/calls" 1000 "$big" "$big_copies" |
        grep Memcpy
    [ -z "$pinned" ] || env -u LD_PRELOAD LD_LIBRARY_PATH="$b/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
        CUSHIM_PLUGINS="$b/plugins/remote.so:server=unix:$tmp/s.sock$opts" "$tmp/calls" 1000 "$big" "$big_copies" \
        pinned | grep Memcpy
    kill $server
    wait $server 2>/dev/null || true
    rm -f "$tmp/s.sock"
}
if [ -n "${BEFORE:-}" ]; then
    echo "== remote, before: $BEFORE (drop-in + remote plugin -> cushim-serve, unix socket)"
    remote "$(cd "$BEFORE" && pwd)"
fi
echo "== remote over the socket: $build (drop-in + remote plugin -> cushim-serve, unix socket, shm=0)"
remote "$build" ,shm=0 pinned
echo "== remote through shared memory: $build (the same, shm=1: doorbell, staging area, zero copy)"
remote "$build" "" pinned
echo "== transports (16-byte payload + 16-byte header; 1 MiB messages each acknowledged)"
"$tmp/pingpong" unix 16 "$rounds"
"$tmp/pingpong" tcp 16 "$rounds"
if pkg-config --exists ucx; then
    gcc -O2 -o "$tmp/ucx" "$here/ucx_pingpong.c" $(pkg-config --cflags --libs ucx)
    for tls in posix,sysv,cma,self posix,sysv,self tcp,self; do
        UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n UCX_TLS=$tls timeout -s KILL 60 "$tmp/ucx" 16 "$rounds" 2>&1 |
            grep -v DIAG || echo "ucx $tls: failed"
    done
else
    echo "(no libucx-dev: UCX not measured)"
fi
