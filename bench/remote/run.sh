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
# Then, over TCP loopback (a token, as a TCP server needs): tcp_vs_raw.c, the remote round trip and BIG_COPIES
# copies of BIG bytes each way against a raw TCP exchange of the same messages (and against that exchange with
# the peer copying each chunk as the fake driver does), interleaved in one process: TCP_BLOCKS (100) blocks of
# ROUNDS/TCP_BLOCKS round trips each side; the "ratio" in its lines is issue 43's (for the round trip, the
# median block's is the robust one on a loaded host). And at a simulated distance (the plugin's delay_us=DELAY,
# default 1000: a 1 ms round trip; DELAY=0 skips it), local and remote in the same run: the synchronous round trip, the empty-launch rate (batched), a launch-bound step (100 empty launches, cuStreamSynchronize)
# and a compute-bound step (10 kernels of 5 ms: the fake's FAKE_CUDA_KERNEL_US=5000, then a sync). The
# "ratio" lines at the end put those beside local. NET_ONLY=1 runs only these TCP parts.
#   ROUNDS=20000 SIZE=1048576 BIG=268435456 BEFORE=/path/to/main/build bash bench/remote/run.sh build
#   ALTERNATE=2 bash bench/remote/run.sh build
#   NET_ONLY=1 DELAY=1000 bash bench/remote/run.sh build
#   NET_ONLY=1 DELAY=0 BIG_COPIES=5 BEFORE=/path/to/main/build bash bench/remote/run.sh build   # the TCP targets
# With BEFORE the TCP part runs tcp_vs_raw a second time with BEFORE's server, plugin and drop-in.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rounds=${ROUNDS:-20000} size=${SIZE:-1048576} big=${BIG:-268435456} copies=${COPIES:-1000} big_copies=${BIG_COPIES:-9}
delay=${DELAY:-1000}
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
server=
inc=$(sed -n 's/^CUSHIM_CUDA_INCLUDE:PATH=//p' "$build/CMakeCache.txt")
gcc -O2 -o "$tmp/calls" "$here/bench_remote_calls.c" -I"$inc" -L"$build/tests/fake" -l:libcuda.so.1 -lpthread
gcc -O2 -o "$tmp/pingpong" "$here/pingpong.c"
gcc -O2 -o "$tmp/vs" "$here/tcp_vs_raw.c" -I"$inc" -L"$build/tests/fake" -l:libcuda.so.1
tcp_blocks=${TCP_BLOCKS:-100}
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
net() {   # the TCP rows: raw socket beside the remote, and at a simulated distance
    local port tok=$tmp/token
    head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
    tcp_server() {   # tcp_server [ENV=VALUE...]: cushim-serve on a free loopback port (its pid in $server)
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        env LD_LIBRARY_PATH="$build/tests/fake" "$@" "${tree:-$build}/remote/cushim-serve" --listen="tcp://127.0.0.1:$port" \
            --token-file="$tok" 2>> "$tmp/serve.log" &
        server=$!
        for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
    }
    tclient() {   # tclient OPTIONS ARGS...: the benchmark through the drop-in and the plugin, over TCP
        local o=$1
        shift
        env -u LD_PRELOAD LD_LIBRARY_PATH="$build/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
            CUSHIM_PLUGINS="$build/plugins/remote.so:server=tcp://127.0.0.1:$port,token_file=$tok$o" "$tmp/calls" "$@"
    }
    local_() { LD_LIBRARY_PATH="$build/tests/fake" "$tmp/calls" "$@"; }
    tclient_vs() {   # tclient_vs OPTIONS ARGS...: tcp_vs_raw through the drop-in and the plugin, over TCP
        local o=$1
        shift
        env -u LD_PRELOAD LD_LIBRARY_PATH="${tree:-$build}/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
            CUSHIM_PLUGINS="${tree:-$build}/plugins/remote.so:server=tcp://127.0.0.1:$port,token_file=$tok$o" \
            "$tmp/vs" "$@"
    }
    tcp_server
    echo "== remote over TCP loopback against raw TCP with the same messages, interleaved in one process (tcp_vs_raw.c)"
    tclient_vs "" "$tcp_blocks" $(( rounds / tcp_blocks > 0 ? rounds / tcp_blocks : 1 )) "$big" "$big_copies"
    if [ -n "${BEFORE:-}" ]; then   # the same with BEFORE's server, plugin and drop-in (the raw side is this run's)
        kill "$server"; wait "$server" 2>/dev/null || true
        local tree
        tree=$(cd "$BEFORE" && pwd)
        tcp_server
        echo "== the same, before: $tree"
        tclient_vs "" "$tcp_blocks" $(( rounds / tcp_blocks > 0 ? rounds / tcp_blocks : 1 )) "$big" "$big_copies"
        kill "$server"; wait "$server" 2>/dev/null || true
        tree=
        tcp_server
    fi
    if [ "$delay" = 0 ]; then
        kill "$server"; wait "$server" 2>/dev/null || true
        return 0
    fi
    echo "== simulated ${delay} us round trip (delay_us=$delay, TCP loopback) and local, the same run"
    local dr=$(( rounds / 20 > 200 ? 200 : rounds / 20 )) lr=$(( rounds / 20 > 1000 ? 1000 : rounds / 20 ))
    { echo "local:"; local_ "$dr" 4096 1 | grep cuStreamQuery; } | tee "$tmp/d.local"
    { echo "remote:"; tclient ",delay_us=$delay" "$dr" 4096 1 | grep cuStreamQuery; } | tee "$tmp/d.remote"
    { echo "local:"; local_ "$lr" 4096 1 | grep cuLaunchKernel; } | tee -a "$tmp/d.local"
    { echo "remote:"; tclient ",delay_us=$delay" "$lr" 4096 1 | grep cuLaunchKernel; } | tee -a "$tmp/d.remote"
    { echo "local:"; local_ 50 4096 1 step 100 0; } | tee -a "$tmp/d.local"
    { echo "remote:"; tclient ",delay_us=$delay" 50 4096 1 step 100 0; } | tee -a "$tmp/d.remote"
    kill "$server"; wait "$server" 2>/dev/null || true
    tcp_server FAKE_CUDA_KERNEL_US=5000
    { echo "local:"; FAKE_CUDA_KERNEL_US=5000 local_ 11 4096 1 step 10 5000; } | tee -a "$tmp/d.local"
    { echo "remote:"; tclient ",delay_us=$delay" 11 4096 1 step 10 5000; } | tee -a "$tmp/d.remote"
    { echo "remote, no delay:"; tclient "" 11 4096 1 step 10 5000; } | tee -a "$tmp/d.nodelay"
    kill "$server"; wait "$server" 2>/dev/null || true
    # the ratios at a distance: medians of the same run (p10/p90 above); the TCP ones are tcp_vs_raw's lines
    paste <(grep -v : "$tmp/d.local") <(grep -v : "$tmp/d.remote") |
        awk -F'\t' '{ split($1, l, " +"); split($2, r, " +"); n = split($1, w, "median"); name = w[1]; sub(/ +$/, "", name)
                      for (i = 1; i in l; i++) if (l[i] == "median") lm = l[i + 1]
                      for (i = 1; i in r; i++) if (r[i] == "median") rm = r[i + 1]
                      printf "ratio at a '"$delay"' us round trip: %-24s remote %10.2f us / local %10.2f us = %.2fx\n", name, rm, lm, rm / lm }'
}
if [ -n "${NET_ONLY:-}" ]; then
    net
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
net
