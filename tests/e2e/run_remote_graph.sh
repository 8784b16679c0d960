#!/usr/bin/env bash
# run_remote_graph.sh - stream capture and graphs over remoting (docs/remote.md, "Graphs"), against cushim-serve on
# the fake driver, whose FAKE_CUDA_WORK_LOG records every copy, memset and kernel it runs, from a stream or a graph:
#   1. e2e_remote_graph capture 5: a captured memset, launches and a device copy, the capture's state asked on the
#      way, the graph launched 5 times with stream work between, a second instantiation: the same output as a local
#      run, and the server's driver ran the same work in the same order (its work log equal to the local one: 12
#      kernels and 6 memsets from graphs, none while capturing);
#   2. knode: a kernel node with arguments added, changed in the instantiation and in the graph: output and work
#      equal to a local run (the arguments marshalled as a launch's);
#   3. error: a launch refused inside a capture returns its error at that call (not at a later synchronising call:
#      nothing is batched while capturing), the capture is invalidated as locally, nothing is left over;
#   4. pinned 3: a capture of copies from and to pinned host memory: each graph launch reads and writes the
#      program's pages as locally (zero copy through the shared memory); with shm=0 the copies are refused
#      (CUDA_ERROR_NOT_SUPPORTED): the graph would replay the server's staging copy;
#   5. deps: cuStreamGetCaptureInfo's dependencies (the driver's array, copied back and kept in the client) name
#      the node to add a memset node after, in the graph being captured: equal to a local run;
#   6. refused: host nodes, memcpy nodes of host or unified memory, a kernel node's parameters read back or given
#      by 'extra', pageable host copies and host functions into a capture and the capture's edge data are CUDA_ERROR_NOT_SUPPORTED
#      (801) and never reach the server's driver; the capture stays valid;
#   7. 'cushim apis --remote' lists the kernel node forms as hand-written;
#   8. e2e_remote_graph_rt: the runtime's forms (cudaStreamBeginCapture, cudaStreamIsCapturing,
#      cudaStreamGetCaptureInfo with its dependencies, cudaStreamEndCapture, cudaGraphInstantiate, cudaGraphUpload,
#      cudaGraphLaunch) around a cudaMemcpyAsync the client makes a driver copy, and a refused copy inside a capture
#      (its error at the call, the capture invalidated): the same output as a local run; the server's fake runtime
#      received the graph calls.
# Usage: run_remote_graph.sh BUILD_DIR PROGRAM OUT_DIR RT_PROGRAM
set -u
build=$1 prog=$2 out=$3 rtprog=$4
d=$out/remote_graph
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
start_server() {   # start_server NAME: one client; its counts and work log in $d/NAME.counts, .work.remote
    serve_fakes --once FAKE_CUDA_COUNTS="$d/$1.counts" FAKE_CUDA_WORK_LOG="$d/$1.work.remote"
}
# compare NAME OPTIONS ARGS...: local and remote output and work equal
compare() {
    local name=$1 opts=$2
    shift 2
    FAKE_CUDA_WORK_LOG="$d/$name.work.local" LD_LIBRARY_PATH="$fake" "$prog" "$@" > "$d/$name.local" \
        2> "$d/$name.local.err" || fail "$name failed locally: $(cat "$d/$name.local.err")"
    start_server "$name"
    client "$opts" "$prog" "$@" > "$d/$name.remote" 2> "$d/$name.remote.err" ||
        fail "$name failed remotely: $(cat "$d/$name.remote.err")"
    wait "$server" || fail "$name: the server's back end exited with $?"
    diff "$d/$name.local" "$d/$name.remote" > "$d/$name.diff" || fail "$name: output differs: $(cat "$d/$name.diff")"
    diff "$d/$name.work.local" "$d/$name.work.remote" > "$d/$name.work.diff" ||
        fail "$name: the server's driver ran other work: $(head -20 "$d/$name.work.diff")"
}

# 1. capture, graph launches
compare capture "" capture 5
[ "$(grep -c '^graph kernel' "$d/capture.work.remote")" = 12 ] && [ "$(grep -c '^graph set' "$d/capture.work.remote")" = 6 ] ||
    fail "capture: not 12 kernels and 6 memsets from graphs: $(sort "$d/capture.work.remote" | uniq -c)"
[ "$(count "$d/capture.counts" cuGraphLaunch)" = 6 ] || fail "capture: cuGraphLaunch $(count "$d/capture.counts" cuGraphLaunch) times"
grep -qx 'b: 113 113 113' "$d/capture.remote" || fail "capture: $(cat "$d/capture.remote")"

# 2. kernel nodes
compare knode "" knode
grep -qx 'node set: 6 5 5' "$d/knode.remote" || fail "knode: $(cat "$d/knode.remote")"

# 3. an error inside a capture, at its own call
compare error "" error
grep -qx 'launch_add(a, 1, 2048): 1' "$d/error.remote" || fail "error: $(cat "$d/error.remote")"

# 4. pinned memory in a graph: zero copy through the shared memory; refused without it
compare pinned "" pinned 3
grep -qx 'launch 2: 1002 3001 3255' "$d/pinned.remote" || fail "pinned: $(cat "$d/pinned.remote")"
start_server pinned_noshm
client ",shm=0" "$prog" pinned 1 > "$d/pinned_noshm.remote" 2>&1 || fail "pinned, shm=0: $(cat "$d/pinned_noshm.remote")"
wait "$server" || fail "pinned, shm=0: the server's back end exited with $?"
grep -qx 'cuMemcpyHtoDAsync(a, h, WORDS \* 4, s): 801' "$d/pinned_noshm.remote" &&
    grep -qx 'cuMemcpyDtoHAsync(h, a, WORDS \* 4, s): 801' "$d/pinned_noshm.remote" ||
    fail "pinned, shm=0: not refused: $(cat "$d/pinned_noshm.remote")"
grep -q '^graph copy' "$d/pinned_noshm.work.remote" && fail "pinned, shm=0: the server's graph copied"

# 5. the capture's dependencies by pointer, used to add a node to the graph being captured
compare deps "" deps
grep -qx 'dependencies: 1, set' "$d/deps.remote" && grep -qx 'b: 9 9 9' "$d/deps.remote" ||
    fail "deps: $(cat "$d/deps.remote")"

# 6. refused
start_server refused
client "" "$prog" refused > "$d/refused.remote" 2> "$d/refused.remote.err" ||
    fail "refused failed remotely: $(cat "$d/refused.remote.err")"
wait "$server" || fail "refused: the server's back end exited with $?"
cat > "$d/refused.expected" <<'END'
cuGraphAddHostNode(&out, g, NULL, 0, &hp): 801
cuGraphAddMemcpyNode(&out, g, NULL, 0, &c, ctx): 801
cuGraphAddMemcpyNode(&out, g, NULL, 0, &c, ctx): 801
cuGraphKernelNodeGetParams(kn, &k): 801
cuGraphKernelNodeSetParams(kn, &k): 801
cuMemcpyHtoDAsync(a, host, sizeof host, s): 801
cuMemcpyDtoHAsync(host, a, sizeof host, s): 801
cuStreamGetCaptureInfo_v3(s, &st, NULL, NULL, &deps, &edges, &ndeps): 801
cuLaunchHostFunc(s, host_fn, NULL): 801
cuStreamEndCapture(s, &cg): 0
END
diff "$d/refused.expected" "$d/refused.remote" > "$d/refused.diff" || fail "refused: $(cat "$d/refused.diff")"
for f in cuGraphAddHostNode cuGraphAddMemcpyNode cuGraphKernelNodeGetParams_v2 cuMemcpyHtoDAsync_v2 cuMemcpyDtoHAsync_v2 \
    cuLaunchHostFunc cuStreamSynchronize; do
    [ "$(count "$d/refused.counts" $f)" = 0 ] || fail "refused: the server's driver saw $f"
done

# 7. what 'cushim apis --remote' says
"$build/tools/cushim" apis --remote > "$d/apis.tsv" 2>&1 || fail "cushim apis --remote: $(cat "$d/apis.tsv")"
[ "$(awk -F'\t' '$2 ~ /^cuGraph(Add|Exec)?KernelNode(SetParams)?(_v2)?$/ && $4 == "hand-written"' "$d/apis.tsv" |
    wc -l)" = 6 ] || fail "cushim apis --remote: $(grep -E 'KernelNode' "$d/apis.tsv")"

# 8. the runtime's forms: the shim and the plugin preloaded, no driver
FAKE_CUDA_WORK_LOG="$d/rt.work.local" LD_LIBRARY_PATH="$fake" "$rtprog" > "$d/rt.local" 2> "$d/rt.local.err" ||
    fail "rt failed locally: $(cat "$d/rt.local.err")"
serve_fakes --once FAKE_CUDA_WORK_LOG="$d/rt.work.remote" FAKE_CUDART_COUNTS="$d/rt.server.runtime"
env -u LD_LIBRARY_PATH LD_PRELOAD="$shim $plugin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
    CUSHIM_PLUGINS="$plugin:server=unix:$sock" "$rtprog" > "$d/rt.remote" 2> "$d/rt.remote.err" ||
    fail "rt failed remotely: $(cat "$d/rt.remote.err")"
wait "$server" || fail "rt: the server's back end exited with $?"
diff "$d/rt.local" "$d/rt.remote" > "$d/rt.diff" || fail "rt: output differs: $(cat "$d/rt.diff")"
diff "$d/rt.work.local" "$d/rt.work.remote" > "$d/rt.work.diff" ||
    fail "rt: the server's driver ran other work: $(head -20 "$d/rt.work.diff")"
grep -qx 'launch 2: 102 1023' "$d/rt.remote" || fail "rt: $(cat "$d/rt.remote")"
for f in cudaStreamBeginCapture cudaStreamEndCapture cudaGraphInstantiate cudaGraphLaunch; do
    [ "$(count "$d/rt.server.runtime" $f)" != 0 ] || fail "rt: the server's runtime did not receive $f"
done

[ $status = 0 ] && echo "run_remote_graph.sh: graphs remote = local"
exit $status
