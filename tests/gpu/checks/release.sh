# shellcheck shell=bash
# release12, release11: the shim built from an earlier release's tree (generated/cuda-12.9, generated/cuda-11.8) on
# the real driver, with a program of that release (tests/gpu/release/rt_main.c against that release's headers,
# linked against the pinned wheel's libcudart.so.12 / libcudart.so.11.0; tools/build-gpu-bundle.sh builds them into
# BUILD_DIR/r12.9, BUILD_DIR/r11.8 with the runtimes in BUILD_DIR/cu12, BUILD_DIR/cu11). README "One CUDA release
# per build".
#   releaseNN native      the program passes alone (its kernel's result checked, a runtime of that major)
#   releaseNN traced      under `cushim run --trace --counts` with that tree's shim: it passes; every runtime
#                         function it calls is counted exactly as often as it says it called it; the trace's
#                         events equal the shim's counts per API and its launch names the kernel
#                         (trace_check.py api)
#   releaseNN 13.0-shim   under the 13.0 shim the same program's runtime calls are not seen (they bind past it
#                         to their own copy, as the README says) while its driver calls are, and the shim says
#                         so once (the runtime "of another major than this build's")
#   releaseNN nvidia-smi  nvidia-smi under that tree's shim and memlimit (4 GiB): memory.total is the quota
#                         (the 12.9 and 11.8 trees interpose NVML since the thirteenth session)
#   release12 libs        (check release12libs) a CUDA 12 program using NVML, cuBLAS and NCCL
#                         (tests/gpu/release/libs_main.c) under the 12.9 tree's shim with every library
#                         interposed and memlimit's quota: passes; NVML's total memory is the quota; traced,
#                         the trace's events equal the shim's counts, and each library function it calls is
#                         an outermost event of its main thread as often as it says (trace_check.py own). cuBLAS and NCCL where the machine has a libcublas.so.12 /
#                         libnccl.so.2 in a Python package (nvidia-cublas-cu12, nvidia-nccl-cu*), else those
#                         parts are left out and named.
# rel_uncounted COUNTS OUT: each 'calls NAME N' line of a program's output OUT whose NAME the shim's COUNTS
# (CUSHIM_COUNTS) does not hold N times, as "NAME counted/called "; empty when all agree. (Until the thirteenth
# session the check matched '$1 == "calls"' on tab-separated fields of a space-separated line: it compared nothing.)
rel_uncounted() {
    awk -F'\t' 'NR == FNR { c[$1] = $2; next } /^calls / { split($0, f, " ");
        if (c[f[2]] + 0 != f[3] + 0) printf "%s %s/%s ", f[2], c[f[2]] + 0, f[3] }' "$1" "$2" 2>/dev/null
}

# check_release NAME TREE: NAME release12|release11, TREE 12.9|11.8
check_release() {
    local name=$1 r=$BUILD_DIR/r$2 cuda=${CUDA_HOME:-/usr/local/cuda} ptx=$BIN/scale.ptx p=$DATA/$1 rc bad
    local exe=$r/rt_main L=$ROOT/tools/cushim
    if [ ! -x "$exe" ] || [ ! -f "$r/runtime/libcushim.so" ]; then
        result "$name" SKIP "no $exe or $2 shim (tools/build-gpu-bundle.sh was offline?)"; return
    fi
    if [ ! -s "$ptx" ] && ! tmo 90 "$cuda/bin/nvcc" -ptx -arch=compute_80 "$HERE/release/scale.cu" -o "$ptx" \
            >"$LOGS/$name.build" 2>&1; then
        result "$name" FAIL "nvcc -ptx: $(tail -n 2 "$LOGS/$name.build" | tr '\n' ' ' | cut -c1-200)"; return
    fi
    tmo 60 "$exe" "$ptx" >"$p.native" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -qx PASS "$p.native"; then
        result "$name native" PASS "$(head -n 1 "$p.native")"
    else
        result "$name native" FAIL "rc $rc: $(grep FAIL "$p.native" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    fi
    rm -f "$p.counts" "$p.json"
    tmo 60 env CUSHIM_LIB="$r/runtime/libcushim.so" "$L" run --trace="$p.json" --counts="$p.counts" -- \
        "$exe" "$ptx" >"$p.traced" 2>"$LOGS/$name.traced.err"
    rc=$?
    bad=$(rel_uncounted "$p.counts" "$p.traced")
    "$PY" "$HERE/trace/trace_check.py" api "$p.json" "$p.counts" >"$LOGS/$name.trace.txt" 2>&1
    if [ $rc -eq 0 ] && grep -qx PASS "$p.traced" && [ -z "$bad" ] && [ "$(grep -c '^calls ' "$p.traced")" -ge 16 ] &&
       ! grep -q '^FAIL' "$LOGS/$name.trace.txt" && grep -q '^PASS' "$LOGS/$name.trace.txt"; then
        result "$name traced" PASS "$(grep -c '^calls ' "$p.traced") runtime functions counted as called; $(grep -h '^PASS' "$LOGS/$name.trace.txt" | cut -d' ' -f2- | cut -c1-110 | tr '\n' ';')"
    else
        result "$name traced" FAIL "rc $rc; counted/called: ${bad:-equal}; $(grep -h '^FAIL' "$p.traced" "$LOGS/$name.trace.txt" "$LOGS/$name.traced.err" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    fi
    rm -f "$p.13.counts"
    tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$p.13.counts" "$exe" "$ptx" >"$p.13.out" 2>&1
    rc=$?
    local rt drv warn
    rt=$(awk -F'\t' '$1 ~ /^cuda/ && $2 > 0 { n += $2 } END { print n + 0 }' "$p.13.counts" 2>/dev/null)
    drv=$(awk -F'\t' '$1 == "cuLaunchKernel" { print $2 + 0 }' "$p.13.counts" 2>/dev/null)
    warn=$(grep -c "of another major than this build's" "$p.13.out")
    if [ $rc -eq 0 ] && grep -qx PASS "$p.13.out" && [ "${rt:-x}" = 0 ] && [ "${drv:-0}" -ge 1 ] && [ "$warn" = 1 ]; then
        result "$name 13.0-shim" PASS "runtime calls seen 0 (they bind past a 13 shim), cuLaunchKernel $drv; said once: $(grep -o "is the loaded runtime library, of another major[^:]*" "$p.13.out" | head -n 1)"
    else
        result "$name 13.0-shim" FAIL "rc $rc; runtime calls seen ${rt:-none} (want 0), cuLaunchKernel ${drv:-none} (want >= 1), warnings $warn (want 1)"
    fi
    local smi t
    if ! smi=$(command -v nvidia-smi); then
        result "$name nvidia-smi" SKIP "no nvidia-smi"
    elif [ ! -f "$r/plugins/memlimit.so" ] || ! grep -q nvmlDeviceGetMemoryInfo "$r/apis.tsv" 2>/dev/null; then
        result "$name nvidia-smi" SKIP "the $2 bundle has no memlimit.so or no NVML (tools/build-gpu-bundle.sh)"
    else
        t=$(tmo 30 env LD_PRELOAD="$r/runtime/libcushim.so" CUSHIM_PLUGINS="$r/plugins/memlimit.so:limit=4GiB" "$smi" \
            -i 0 --query-gpu=memory.total --format=csv,noheader,nounits 2>"$LOGS/$name.smi.err" | head -n 1 | tr -d ' ')
        [ "$t" = 4096 ] && result "$name nvidia-smi" PASS "memory.total $t MiB under the $2 shim and a 4 GiB quota" ||
            result "$name nvidia-smi" FAIL "memory.total '$t' MiB under the $2 shim, the quota is 4096"
    fi
}
check_release12() { check_release release12 12.9; }

# rel_find SONAME: the first such library in the Python packages of $PY and the usual site folders
rel_find() {
    local d dirs
    dirs=$("$PY" -c 'import site, sysconfig; print("\n".join(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]))' 2>/dev/null)
    for d in $dirs /usr/local/lib/python3*/dist-packages /usr/lib/python3/dist-packages; do
        [ -d "$d/nvidia" ] || continue
        find "$d/nvidia" -maxdepth 3 -name "$1" \( -type f -o -type l \) 2>/dev/null | head -n 1 | grep . && return 0
    done
    return 1
}

check_release12libs() {
    local r=$BUILD_DIR/r12.9 p=$DATA/release12-libs rc bad cb nc q=4 L=$ROOT/tools/cushim
    local exe=$r/libs_main libs=driver,runtime,nvml,nccl,cublas,cublaslt
    if [ ! -x "$exe" ] || [ ! -f "$r/plugins/memlimit.so" ]; then
        result "release12 libs" SKIP "no $exe or the 12.9 tree's memlimit.so (tools/build-gpu-bundle.sh)"; return
    fi
    cb=$(rel_find libcublas.so.12) nc=$(rel_find libnccl.so.2)
    echo "cuBLAS 12: ${cb:-none}; NCCL: ${nc:-none}" >"$LOGS/release12-libs.found"
    rm -f "$p.counts" "$p.tcounts" "$p.json"
    tmo 120 env LD_PRELOAD="$r/runtime/libcushim.so" CUSHIM_LIBS=$libs CUSHIM_COUNTS="$p.counts" \
        CUSHIM_PLUGINS="$r/plugins/memlimit.so:limit=${q}GiB" LIBS_CUBLAS="$cb" LIBS_NCCL="$nc" "$exe" \
        >"$p.out" 2>"$LOGS/release12-libs.err"
    rc=$?
    local mib n skips
    mib=$(awk '$1 == "nvml_total_mib" { print $2 }' "$p.out")
    n=$(grep -c '^calls ' "$p.out")
    skips=$(grep '^skip ' "$p.out" | cut -d' ' -f2 | tr '\n' ' ')
    # (its calls are compared below, in the trace: the shim's counts also hold what the libraries call themselves
    # through its exports - NCCL's own ncclGetVersion and nvmlInit_v2 - run 92)
    if [ $rc -eq 0 ] && grep -qx PASS "$p.out" && [ "$mib" = $((q * 1024)) ] && [ "$n" -ge 4 ]; then
        result "release12 libs" PASS "$n library functions called ($(grep -h '_version ' "$p.out" | tr '\n' ' ')); NVML total ${mib} MiB = the ${q} GiB quota${skips:+; left out (not on this machine): $skips}"
    else
        result "release12 libs" FAIL "rc $rc; NVML total ${mib:-none} MiB (want $((q * 1024))); $(grep -h '^FAIL' "$p.out" "$LOGS/release12-libs.err" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    fi
    tmo 120 env CUSHIM_LIB="$r/runtime/libcushim.so" LIBS_CUBLAS="$cb" LIBS_NCCL="$nc" "$L" run --libs=$libs \
        --trace="$p.json" --counts="$p.tcounts" -- "$exe" >"$p.tout" 2>"$LOGS/release12-libs.traced.err"
    rc=$?
    # kernel names are checked where there are launches (cuBLAS's and NCCL's); NVML alone makes none
    "$PY" "$HERE/trace/trace_check.py" api "$p.json" "$p.tcounts" 2>&1 | grep -v '^FAIL kernel-names 0 of 0 ' \
        >"$LOGS/release12-libs.trace.txt"
    "$PY" "$HERE/trace/trace_check.py" own "$p.json" "$p.tout" >>"$LOGS/release12-libs.trace.txt" 2>&1
    local lib_events
    lib_events=$(awk -F'\t' '$1 ~ /^(nvml|cublas|nccl)/ && $2 > 0 { n += $2 } END { print n + 0 }' "$p.tcounts" 2>/dev/null)
    if [ $rc -eq 0 ] && grep -qx PASS "$p.tout" && grep -q '^PASS' "$LOGS/release12-libs.trace.txt" &&
       ! grep -q '^FAIL' "$LOGS/release12-libs.trace.txt" && [ "${lib_events:-0}" -ge 4 ]; then
        result "release12 libs traced" PASS "$lib_events NVML/cuBLAS/NCCL calls traced; $(grep -h '^PASS' "$LOGS/release12-libs.trace.txt" | cut -d' ' -f2- | cut -c1-110 | tr '\n' ';')"
    else
        result "release12 libs traced" FAIL "rc $rc; library calls counted ${lib_events:-none}; $(grep -h '^FAIL' "$p.tout" "$LOGS/release12-libs.trace.txt" "$LOGS/release12-libs.traced.err" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    fi
}
check_release11() { check_release release11 11.8; }
gpu_check release12 check_release12
gpu_check release12libs check_release12libs
gpu_check release11 check_release11
