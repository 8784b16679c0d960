# copies: two majors of the CUDA runtime in one process on the real GPU (docs/runtime.md, "Several loaded
# copies of one library"). tests/gpu/copies: copies_main is linked against the toolkit's libcudart.so.13 and
# opens (RTLD_LOCAL) a library linked against a libcudart.so.12: COPIES_CUDART12, else the one
# tools/build-gpu-bundle.sh put in build-gpu/cu12 (the pinned PyPI wheel nvidia-cuda-runtime-cu12 12.9.79), else
# one found on the machine (SKIP when there is none). Natively and under the shim: each copy answers with its own version, a device round trip
# through the 12 copy is correct, the 12 library's reference is bound to its own copy, dlsym on the 12 copy's
# handle reaches it. Under the shim, the counts file holds only the program's own runtime calls
# (cudaRuntimeGetVersion 2, cudaMalloc 1: the 12 copy's callers bind past the shim) and the warning naming both
# copies is logged once.
check_copies() {
    local cuda=${CUDA_HOME:-/usr/local/cuda} src=$HERE/copies rt12 dir12 rc n
    rt12=${COPIES_CUDART12:-}
    [ -z "$rt12" ] && [ -f "$BUILD_DIR/cu12/libcudart.so.12" ] && rt12=$BUILD_DIR/cu12/libcudart.so.12
    [ -z "$rt12" ] && rt12=$(tmo 60 find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcudart.so.12*' \
        -type f -print 2>/dev/null | head -n 1)
    if [ -z "$rt12" ]; then result "copies" SKIP "no libcudart.so.12 on this machine"; return; fi
    dir12=$(dirname "$rt12")
    if ! tmo 90 "${CC:-gcc}" -shared -fPIC -O1 -I"$cuda/include" "$src/copies_lib.c" -o "$BIN/libcopies12.so" \
            "$rt12" -Wl,-rpath,"$dir12" >"$LOGS/copies.build" 2>&1 ||
       ! tmo 90 "${CC:-gcc}" -O1 -I"$cuda/include" "$src/copies_main.c" -o "$BIN/copies_main" \
            -L"$cuda/lib64" -lcudart -ldl -Wl,-rpath,"$cuda/lib64" >>"$LOGS/copies.build" 2>&1; then
        result "copies" FAIL "build: $(tail -n 3 "$LOGS/copies.build" | tr '\n' ' ' | cut -c1-200)"; return
    fi
    tmo 60 "$BIN/copies_main" "$BIN/libcopies12.so" >"$LOGS/copies.native" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        result "copies native" FAIL "rc $rc: $(grep FAIL "$LOGS/copies.native" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    else
        result "copies native" PASS "$(grep -c PASS "$LOGS/copies.native") parts; 12 copy $rt12"
    fi
    rm -f "$DATA/copies.counts" "$LOGS/copies.shim.log"
    tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$DATA/copies.counts" CUSHIM_LOG_FILE="$LOGS/copies.shim.log" \
        "$BIN/copies_main" "$BIN/libcopies12.so" >"$LOGS/copies.shim" 2>&1
    rc=$?
    local ver mal warn
    ver=$(awk -F'\t' '$1 == "cudaRuntimeGetVersion" {print $2}' "$DATA/copies.counts" 2>/dev/null)
    mal=$(awk -F'\t' '$1 == "cudaMalloc" {print $2}' "$DATA/copies.counts" 2>/dev/null)
    warn=$(grep -c 'copies of the runtime library are loaded' "$LOGS/copies.shim.log" 2>/dev/null)
    if [ $rc -eq 0 ] && [ "${ver:-0}" = 2 ] && [ "${mal:-0}" = 1 ] && [ "${warn:-0}" = 1 ]; then
        result "copies shim" PASS "both copies reached; counted cudaRuntimeGetVersion $ver, cudaMalloc $mal (the program's only); warned once"
    else
        result "copies shim" FAIL "rc $rc; counted cudaRuntimeGetVersion ${ver:-none} (want 2), cudaMalloc ${mal:-none} (want 1), warnings ${warn:-0} (want 1); $(grep FAIL "$LOGS/copies.shim" | head -n 2 | tr '\n' ' ' | cut -c1-160)"
    fi
}
gpu_check copies check_copies
