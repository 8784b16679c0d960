#!/usr/bin/env bash
# run_remote_hostfn.sh - host functions over remoting (docs/remote.md, "Host functions"): cuLaunchHostFunc,
# cuStreamAddCallback and the runtime's forms run in the client once their stream drained on the server.
#   1. e2e_remote_hostfn order: two streams, memsets, launches and copies interleaved with host functions and
#      callbacks (and the per-thread and legacy default streams): the functions' order, data and statuses equal a
#      local run's; with the server's kernels taking 20 ms (FAKE_CUDA_KERNEL_US), none ran before the launch
#      before it on its stream could have ended; the server's driver never saw a host function (the client ran
#      them) and synchronised each stream once per function; the capture queries of the special streams are
#      answered in the client but the first (no capture is open);
#   2. e2e_remote_hostfn null: a NULL function or callback, a callback with flags: CUDA_ERROR_INVALID_VALUE, as
#      locally;
#   3. e2e_remote_hostfn status: the server's cuStreamSynchronize fails (a server-side faultinject rule): the
#      callback gets CUDA_ERROR_LAUNCH_FAILED (719) as its status, cuLaunchHostFunc returns it and its function is
#      not called;
#   4. e2e_remote_rt hostfn: the runtime's forms, the same output as a local run;
#   5. 'cushim apis --remote' lists the eight APIs as hand-written.
# Usage: run_remote_hostfn.sh BUILD_DIR HOSTFN_PROGRAM RT_PROGRAM OUT_DIR
set -u
build=$1 prog=$2 rt=$3 out=$4
d=$out/remote_hostfn
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"

# 1. order and data, remote = local; nothing ran early
LD_LIBRARY_PATH="$fake" "$prog" order > "$d/order.local" 2> "$d/order.local.err" ||
    fail "order failed locally: $(cat "$d/order.local.err")"
serve_fakes --once FAKE_CUDA_COUNTS="$d/order.counts" FAKE_CUDA_KERNEL_US=20000
client "" "$prog" order 20000 > "$d/order.remote" 2> "$d/order.remote.err" ||
    fail "order failed remotely: $(cat "$d/order.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
grep -v '^late:' "$d/order.remote" | diff "$d/order.local" - > "$d/order.diff" ||
    fail "host functions differ from a local run: $(cat "$d/order.diff")"
[ "$(grep -c 'data as copied, status 0' "$d/order.remote")" = 15 ] ||
    fail "not 15 functions with their data: $(cat "$d/order.remote")"
grep -qx 'late: 0' "$d/order.remote" || fail "a function ran before its stream drained: $(grep late "$d/order.remote")"
for f in cuLaunchHostFunc cuLaunchHostFunc_ptsz cuStreamAddCallback cuStreamAddCallback_ptsz; do
    [ "$(count "$d/order.counts" $f)" = 0 ] || fail "the server's driver saw $f"
done
# one synchronisation per function: 6 + 6 rounds and the legacy stream, two on the per-thread stream
[ "$(count "$d/order.counts" cuStreamSynchronize)" = 13 ] ||
    fail "cuStreamSynchronize on the server: $(count "$d/order.counts" cuStreamSynchronize), not 13"
[ "$(count "$d/order.counts" cuStreamSynchronize_ptsz)" = 2 ] ||
    fail "cuStreamSynchronize_ptsz on the server: $(count "$d/order.counts" cuStreamSynchronize_ptsz), not 2"
# a capture query per function on the created streams (12); the special streams' are answered in the client once
# the server answered the first (the per-thread stream's first; its second and the legacy stream's not sent: no
# capture is open, rp_graph.c)
[ "$(count "$d/order.counts" cuStreamIsCapturing)" = 12 ] ||
    fail "cuStreamIsCapturing on the server: $(count "$d/order.counts" cuStreamIsCapturing), not 12"
[ "$(count "$d/order.counts" cuStreamIsCapturing_ptsz)" = 1 ] ||
    fail "cuStreamIsCapturing_ptsz on the server: $(count "$d/order.counts" cuStreamIsCapturing_ptsz), not 1"

# 2. NULL functions
LD_LIBRARY_PATH="$fake" "$prog" null > "$d/null.local" 2>&1 || fail "null failed locally: $(cat "$d/null.local")"
serve_fakes --once FAKE_CUDA_COUNTS="$d/null.counts"
client "" "$prog" null > "$d/null.remote" 2> "$d/null.remote.err" || fail "null failed remotely: $(cat "$d/null.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
diff "$d/null.local" "$d/null.remote" > "$d/null.diff" || fail "NULL functions: $(cat "$d/null.diff")"
[ "$(grep -c ': 1$' "$d/null.remote")" = 3 ] || fail "not three CUDA_ERROR_INVALID_VALUE: $(cat "$d/null.remote")"

# 3. a stream whose synchronisation fails
serve_fakes --once FAKE_CUDA_COUNTS="$d/status.counts" \
    CUSHIM_PLUGINS="$build/plugins/faultinject.so:rule=cuStreamSynchronize:CUDA_ERROR_LAUNCH_FAILED,summary=0"
client "" "$prog" status > "$d/status.remote" 2> "$d/status.remote.err" ||
    fail "status failed remotely: $(cat "$d/status.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
printf '%s\n' 'cuStreamAddCallback: 0' 'cuLaunchHostFunc: 719' \
    'callback stream 0 round 0: data as copied, status 719' | diff - "$d/status.remote" > "$d/status.diff" ||
    fail "a failed synchronisation: $(cat "$d/status.diff")"

# 4. the runtime's forms
LD_LIBRARY_PATH="$fake" "$rt" hostfn > "$d/rt.local" 2> "$d/rt.local.err" || fail "rt hostfn failed locally"
serve_fakes --once FAKE_CUDA_COUNTS="$d/rt.counts"
env -u LD_LIBRARY_PATH LD_PRELOAD="$shim $plugin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
    CUSHIM_PLUGINS="$plugin:server=unix:$sock" "$rt" hostfn > "$d/rt.remote" 2> "$d/rt.remote.err" ||
    fail "rt hostfn failed remotely: $(cat "$d/rt.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
diff "$d/rt.local" "$d/rt.remote" > "$d/rt.diff" || fail "runtime host functions differ: $(cat "$d/rt.diff")"
[ "$(grep -c 'data as copied, cudaSuccess' "$d/rt.remote")" = 6 ] || fail "runtime: $(cat "$d/rt.remote")"
[ "$(count "$d/rt.counts" cuStreamSynchronize)" = 6 ] ||
    fail "runtime: cuStreamSynchronize on the server: $(count "$d/rt.counts" cuStreamSynchronize), not 6"

# 5. what 'cushim apis --remote' says
"$build/tools/cushim" apis --remote > "$d/apis.tsv" 2>&1 || fail "cushim apis --remote: $(cat "$d/apis.tsv")"
[ "$(awk -F'\t' '$2 ~ /^cu(da)?(LaunchHostFunc|StreamAddCallback)(_ptsz)?$/ && $4 == "hand-written"' "$d/apis.tsv" |
    wc -l)" = 8 ] || fail "cushim apis --remote: $(grep -E 'HostFunc|AddCallback' "$d/apis.tsv")"

[ $status = 0 ] && echo "run_remote_hostfn.sh: host functions remote = local"
exit $status
