#!/usr/bin/env bash
# bench/remote/run.sh BUILD_DIR - the remoting's costs on the fake driver, and the transports beneath them
# (docs/remote.md, "Transport" and "Measurements"): a synchronous call and 1 MiB copies locally, through the
# remote plugin to cushim-serve over a unix socket, then the raw unix-socket and TCP-loopback ping-pongs and,
# where libucx-dev is installed, UCX active messages over shared memory and TCP. Everything is built here
# with gcc; nothing runs in CI.
#   ROUNDS=20000 SIZE=1048576 bash bench/remote/run.sh build
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rounds=${ROUNDS:-20000} size=${SIZE:-1048576}
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
server=
inc=$(sed -n 's/^CUSHIM_CUDA_INCLUDE:PATH=//p' "$build/CMakeCache.txt")
gcc -O2 -o "$tmp/calls" "$here/bench_remote_calls.c" -I"$inc" -L"$build/tests/fake" -l:libcuda.so.1
gcc -O2 -o "$tmp/pingpong" "$here/pingpong.c"
echo "== local (fake driver)"
LD_LIBRARY_PATH="$build/tests/fake" "$tmp/calls" "$rounds" "$size"
echo "== remote (drop-in + remote plugin -> cushim-serve, unix socket)"
LD_LIBRARY_PATH="$build/tests/fake" "$build/remote/cushim-serve" --listen="unix:$tmp/s.sock" 2> "$tmp/serve.log" &
server=$!
for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.05; done
env -u LD_PRELOAD LD_LIBRARY_PATH="$build/dropin" CUSHIM_REAL_LIBCUDA=/nonexistent CUSHIM_LOG=error \
    CUSHIM_PLUGINS="$build/plugins/remote.so:server=unix:$tmp/s.sock" "$tmp/calls" "$rounds" "$size"
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
