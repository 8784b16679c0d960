#!/usr/bin/env bash
# run_remote_rt.sh - runtime-API and NVML programs over remoting, on the fakes (docs/remote.md, "Runtime-API
# programs"). cushim-serve serves the fake driver, runtime and NVML; the clients preload the shim and the remote
# plugin (which exports nvcc's registration functions) and find no libcuda.so.1 anywhere:
#   1. e2e_remote_rt (registration, <<<>>> launches the CUDA 12 and 13 ways on two devices, a kernel's
#      attributes and occupancy, a stub's function by cudaGetFuncBySymbol launched with the driver's cuLaunchKernel
#      and by cudaGetKernel's kernel (the driver's cuKernelGetFunction of it, the runtime's launch of it) - the
#      fake's work log shows that kernel with its arguments, on the server as locally -, its name and parameters,
#      copies in pieces, streams, events, errors) prints the same as a local run; the server's fake runtime
#      received the runtime calls the local one did (less the copies, launches, attributes, occupancy, a stub's
#      function, kernel, name and parameters, cudaLaunchKernelExC, cooperative launches, the cache and shared memory
#      configurations, the cluster and dynamic shared memory occupancy and the kernel nodes, which the client answers
#      with driver calls - the fake's work log shows their kernels with their arguments, on the server as locally -,
#      and the driver entry points, answered in the client
#      from the shim's own functions, plus one cudaFree(NULL) per device that makes the
#      runtime's context current before the module is loaded there and two cudaPointerGetAttributes for each
#      cudaMemcpyDefault) and the client's received only the error
#      texts; the server's fake driver loaded the fat binary once per device and made the driver calls the
#      local runtime made for launches (but the one whose configuration the client refuses, as the real runtime
#      does), attributes and occupancy;
#   2. a forked child of it allocates and launches through a back end of its own; the program through
#      'cushim run --remote=' prints the same as locally;
#   3. e2e_remote_nvml (what nvidia-smi asks) prints the same as a local run; the client's fake NVML received
#      only nvmlErrorString.
# Usage: run_remote_rt.sh BUILD_DIR RT_PROGRAM OUT_DIR [NVML_PROGRAM]
set -u
build=$1 rt=$2 out=$3 nvml=${4:-}
d=$out/remote_rt
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
client() {   # client OUT ERR PROGRAM...: the shim and the plugin preloaded, no driver
    local o=$1 e=$2
    shift 2
    env -u LD_LIBRARY_PATH LD_PRELOAD="$shim $plugin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock,stats=1" E2E_NO_DRIVER=1 "$@" > "$o" 2> "$e"
}
start_server() {   # start_server TAG: one client, counts under $d/TAG.server.*
    rm -f "$d/$1.server.shim"*
    serve_fakes --once FAKE_CUDA_COUNTS="$d/$1.server.driver" FAKE_CUDART_COUNTS="$d/$1.server.runtime" \
        FAKE_NVML_COUNTS="$d/$1.server.nvml" CUSHIM_COUNTS="$d/$1.server.shim" FAKE_CUDA_WORK_LOG="$d/$1.server.work"
}

# 1. the runtime program
start_server rt
FAKE_CUDART_COUNTS="$d/rt.client.runtime" client "$d/rt.remote.out" "$d/rt.remote.err" "$rt" ||
    fail "e2e_remote_rt failed remotely: $(cat "$d/rt.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
# the server's witness: every driver call the server's fake driver received passed the shim in the back end and
# was counted there (its own FILE.<pid>) - the runtime's own driver calls too, the shim being the driver the
# back end's runtime opened (its drop-in copy) - but the back end's own calls (call_real, not counted: kernel
# parameter sizes, the shared area's registration)
ls "$d"/rt.server.shim.* > /dev/null 2>&1 || fail "the back end wrote no CUSHIM_COUNTS file of its own (FILE.<pid>)"
cat "$d"/rt.server.shim.* 2>/dev/null > "$d/rt.server.shimall"
while IFS=$'\t' read -r api n; do
    case $api in cuFuncGetParamInfo|cuMemHostRegister*|cuMemHostUnregister) continue ;; esac
    [ "$(count "$d/rt.server.shimall" "$api")" = "$n" ] ||
        fail "the server's shim counted $api $(count "$d/rt.server.shimall" "$api") times, its driver received $n"
done < "$d/rt.server.driver"
LD_LIBRARY_PATH="$fake" FAKE_CUDA_COUNTS="$d/rt.local.driver" FAKE_CUDART_COUNTS="$d/rt.local.runtime" \
    FAKE_CUDA_WORK_LOG="$d/rt.local.work" "$rt" \
    > "$d/rt.local.out" 2> "$d/rt.local.err" || fail "e2e_remote_rt failed locally: $(cat "$d/rt.local.err")"
diff "$d/rt.local.out" "$d/rt.remote.out" > "$d/rt.diff" || fail "outputs differ: $(cat "$d/rt.diff")"
grep -q "^round trip: equal" "$d/rt.remote.out" || fail "no data round trip in $(cat "$d/rt.remote.out")"
grep -q "^pinned round trip: equal" "$d/rt.remote.out" || fail "no pinned round trip in $(cat "$d/rt.remote.out")"
grep -q "^default copies: equal" "$d/rt.remote.out" || fail "cudaMemcpyDefault: $(grep -i default "$d/rt.remote.out")"
grep -q "driver calls, .* round trips" "$d/rt.remote.err" || fail "no stats line: $(cat "$d/rt.remote.err")"
# the runtime calls: on the server's runtime, not the client's
translated=$'^(cudaMemcpy|cudaMemcpyAsync|cudaLaunchKernel|cudaLaunchKernelExC(_ptsz)?|cudaLaunchCooperativeKernel(_ptsz)?|cudaFuncGetAttributes|cudaFuncSetAttribute|cudaFuncSetCacheConfig|cudaFuncSetSharedMemConfig|cudaOccupancy[A-Za-z]*|cudaGetFuncBySymbol|cudaGetKernel|cudaFuncGetName|cudaFuncGetParamInfo|cudaGraphAddKernelNode|cudaGraphKernelNodeSetParams|cudaGraphExecKernelNodeSetParams|cudaMallocHost|cudaHostAlloc|cudaFreeHost|cudaGetErrorName|cudaGetErrorString|cudaGetDriverEntryPoint[A-Za-z_]*)\t'
# cudaGetDevice after a successful cudaSetDevice is answered in the client (rc_cudart.c), after cudaDeviceReset
# asked again: of 3, 1 reaches the server; cudaSetDevice(0) of the device set is too, but after the reset
grep -Ev "$translated" "$d/rt.local.runtime" |
    awk -F'\t' -v OFS='\t' '$1 == "cudaGetDevice" { $2 = $2 - 2 } $1 == "cudaSetDevice" { $2 = $2 - 1 }
        $2 != 0 { print }' | sort > "$d/rt.want"
# a cudaFree(NULL) per client thread and device where the client makes driver calls for the program (the
# runtime's context made current on that thread's server thread): the main thread on 2 devices, one more thread
loads=3
# and two cudaPointerGetAttributes for each cudaMemcpyDefault (4 of them), which side is which
awk -F'\t' -v OFS='\t' -v n="$loads" '$1 == "cudaFree" { $2 = $2 - n } $1 == "cudaPointerGetAttributes" { $2 = $2 - 8 }
    { print }' "$d/rt.server.runtime" | sort > "$d/rt.got"
diff "$d/rt.want" "$d/rt.got" > "$d/rt.counts.diff" ||
    fail "the server's runtime saw other calls than a local run's: $(cat "$d/rt.counts.diff")"
mallocs=$(count "$d/rt.local.runtime" cudaMalloc)   # 4, and 5 with cudaGetKernel's part (CUDA 12 on)
if [ "$mallocs" -lt 4 ] || [ "$(count "$d/rt.server.runtime" cudaMalloc)" != "$mallocs" ]; then
    fail "the server's runtime did not see the $mallocs cudaMalloc"
fi
[ -z "$(grep -Ev $'^(cudaGetErrorName|cudaGetErrorString)\t' "$d/rt.client.runtime")" ] ||
    fail "the client's own runtime was called: $(cat "$d/rt.client.runtime")"
for f in cuModuleLoadData cuModuleGetFunction cuFuncSetAttribute \
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags; do   # modules: once per device (two), functions per kernel
    [ "$(count "$d/rt.server.driver" $f)" = "$(count "$d/rt.local.driver" $f)" ] ||
        fail "$f: server $(count "$d/rt.server.driver" $f), local $(count "$d/rt.local.driver" $f)"
done
[ "$(count "$d/rt.server.driver" cuModuleLoadData)" = 2 ] || fail "the fat binary was not loaded once per device"
[ "$(count "$d/rt.server.driver" cuFuncGetAttribute)" -ge 1 ] || fail "no cuFuncGetAttribute on the server"
# the two launches with a block of 0 threads (by a stub and by a kernel handle) are refused by the client, as the
# real runtime does (the fake sends them)
[ "$(count "$d/rt.server.driver" cuLaunchKernel)" = "$(($(count "$d/rt.local.driver" cuLaunchKernel) - 2))" ] ||
    fail "launches: server $(count "$d/rt.server.driver" cuLaunchKernel), local $(count "$d/rt.local.driver" cuLaunchKernel)"
# the kernel launched by the function cudaGetFuncBySymbol gave (the driver's cuLaunchKernel): the right one, with
# its arguments, on the server as locally
want_work=$'kernel fk_add_i32__pii 1x1x1 64x1x1 p 64 5'
# and cudaGetKernel's kernel (CUDA 12 on), by the driver's function of it (7) and by the runtime's launch of it (9)
kernel_part=$(grep -c '^cudaGetKernel: cudaSuccess' "$d/rt.local.out")
for w in rt.local.work rt.server.work; do
    [ "$(grep -c "$want_work\$" "$d/$w")" = 1 ] || fail "$w: no one launch of '$want_work': $(grep fk_add "$d/$w")"
    for v in 7 9; do
        [ "$(grep -c "kernel fk_add_i32__pii 1x1x1 64x1x1 p 64 $v\$" "$d/$w")" = "$kernel_part" ] ||
            fail "$w: not $kernel_part launch(es) by cudaGetKernel's kernel with $v: $(grep fk_add "$d/$w")"
    done
done
# the other calls that take a stub (CUDA 12 on): each the driver's form on the server as locally - but the launch of 0
# threads by cudaLaunchKernelExC and the cooperative one of 2048, which the client refuses as the runtime does -, and
# their kernels ran with their arguments: cudaLaunchKernelExC (3, _ptsz 100), cooperative (4, _ptsz 200), kernel
# nodes (10, 20 twice, 30)
if grep -q '^cudaLaunchKernelExC: ' "$d/rt.local.out"; then
    for f in cuFuncSetCacheConfig cuFuncSetSharedMemConfig cuOccupancyAvailableDynamicSMemPerBlock \
        cuOccupancyMaxPotentialClusterSize cuOccupancyMaxActiveClusters cuGraphAddKernelNode_v2 \
        cuGraphKernelNodeSetParams_v2 cuGraphExecKernelNodeSetParams_v2; do
        [ "$(count "$d/rt.server.driver" $f)" != 0 ] && [ "$(count "$d/rt.server.driver" $f)" = "$(count "$d/rt.local.driver" $f)" ] ||
            fail "$f: server $(count "$d/rt.server.driver" $f), local $(count "$d/rt.local.driver" $f)"
    done
    for f in cuLaunchKernelEx_ptsz cuLaunchCooperativeKernel_ptsz; do
        [ "$(count "$d/rt.server.driver" $f)" = 1 ] && [ "$(count "$d/rt.local.driver" $f)" = 1 ] ||
            fail "$f: server $(count "$d/rt.server.driver" $f), local $(count "$d/rt.local.driver" $f) (1 each)"
    done
    for f in cuLaunchKernelEx cuLaunchCooperativeKernel; do
        [ "$(count "$d/rt.server.driver" $f)" = 1 ] && [ "$(count "$d/rt.local.driver" $f)" = 2 ] ||
            fail "$f: server $(count "$d/rt.server.driver" $f) (1), local $(count "$d/rt.local.driver" $f) (2)"
    done
    for w in rt.local.work rt.server.work; do
        for want in 'stream kernel fk_add_i32__pii 2x1x1 32x1x1 p 64 3' 'stream kernel fk_add_i32__pii 2x1x1 32x1x1 p 64 4' \
            'stream kernel fk_add_i32__pii 2x1x1 32x1x1 p 64 100' 'stream kernel fk_add_i32__pii 2x1x1 32x1x1 p 64 200' \
            'graph kernel fk_add_i32__pii 1x1x1 64x1x1 p 64 10' 'graph kernel fk_add_i32__pii 1x1x1 64x1x1 p 64 30'; do
            [ "$(grep -c "$want\$" "$d/$w")" = 1 ] || fail "$w: not one '$want': $(grep fk_add "$d/$w")"
        done
        [ "$(grep -c 'graph kernel fk_add_i32__pii 1x1x1 64x1x1 p 64 20$' "$d/$w")" = 2 ] ||
            fail "$w: not two kernel node launches with 20: $(grep fk_add "$d/$w")"
    done
fi
[ "$(count "$d/rt.server.driver" cuLibraryLoadData)" = "$kernel_part" ] ||
    fail "cudaGetKernel: the fat binary loaded $(count "$d/rt.server.driver" cuLibraryLoadData) times as a library"
[ "$(count "$d/rt.server.driver" cuMemcpyHtoD_v2)" -ge 3 ] ||   # the 36 MiB in pieces, and cudaMemcpyDefault's
    fail "the 36 MiB copy did not go in pieces: $(count "$d/rt.server.driver" cuMemcpyHtoD_v2) cuMemcpyHtoD_v2"

# 2. a forked child gets a back end of its own, where the kernel is loaded again (remote only: locally a context
#    does not survive fork)
rm -f "$sock"
LD_LIBRARY_PATH="$fake" "$serve" --listen="unix:$sock" >> "$d/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
client "$d/fork.out" "$d/fork.err" "$rt" fork || fail "e2e_remote_rt fork failed: $(cat "$d/fork.out" "$d/fork.err")"
grep -q '^child: cudaSuccess' "$d/fork.out" || fail "the forked child's launch: $(grep child "$d/fork.out")"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null

# 2b. the same program through the launcher: 'cushim run --remote=' preloads the shim and the plugin (a
#     runtime-API program's calls come before libcudart's) besides the drop-in
start_server launcher
env -u LD_PRELOAD -u CUSHIM_PLUGINS -u LD_LIBRARY_PATH CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 E2E_NO_DRIVER=1 \
    "$build/tools/cushim" run --remote="unix:$sock" -- "$rt" > "$d/launcher.out" 2> "$d/launcher.err" ||
    fail "e2e_remote_rt through 'cushim run --remote=' failed: $(cat "$d/launcher.err")"
wait "$server" || fail "the server's back end exited with $?"
diff "$d/rt.local.out" "$d/launcher.out" > "$d/launcher.diff" ||
    fail "through the launcher, outputs differ: $(cat "$d/launcher.diff")"

# 3. NVML
if [ -n "$nvml" ]; then
    start_server nvml
    FAKE_NVML_COUNTS="$d/nvml.client.nvml" client "$d/nvml.remote.out" "$d/nvml.remote.err" "$nvml" ||
        fail "e2e_remote_nvml failed remotely: $(cat "$d/nvml.remote.err")"
    wait "$server" || fail "the server's back end exited with $?"
    LD_LIBRARY_PATH="$fake" "$nvml" > "$d/nvml.local.out" 2> "$d/nvml.local.err" || fail "e2e_remote_nvml failed locally"
    diff "$d/nvml.local.out" "$d/nvml.remote.out" > "$d/nvml.diff" || fail "NVML outputs differ: $(cat "$d/nvml.diff")"
    grep -q "devices: 2" "$d/nvml.remote.out" || fail "no devices: $(cat "$d/nvml.remote.out")"
    [ "$(count "$d/nvml.server.nvml" nvmlDeviceGetMemoryInfo_v2)" = 2 ] ||
        fail "the server's NVML did not answer the memory queries: $(cat "$d/nvml.server.nvml")"
    [ -z "$(grep -Ev $'^nvmlErrorString\t' "$d/nvml.client.nvml" | awk -F'\t' '$2 != 0')" ] ||
        fail "the client's own NVML was called: $(cat "$d/nvml.client.nvml")"
fi
[ $status = 0 ] && echo "run_remote_rt.sh: runtime${nvml:+ and NVML} programs remote = local"
exit $status
