# typemeta: the generated type metadata (enum tables, struct field descriptors, pointee kinds,
# counts behind a pointer) against the GPU machine's CUDA 13.0 headers and a real driver.
# tests/gpu/typemeta/typemeta_check.c, built here with gcc, run with the shim preloaded:
#   typemeta layouts      every field of every listed struct sits where host->struct_by_name says
#                         (offsetof() on this machine's headers)
#   typemeta enums        enum_constant / enum_by_name / enum_value_name on two known values
#   typemeta memcpy2d     a hook decodes a real cuMemcpy2D's CUDA_MEMCPY2D through the metadata only
#   typemeta graph-count  a post hook reads cuGraphGetNodes' count behind its pointer (count_indirect)
check_typemeta() {
    local cuda=${CUDA_HOME:-/usr/local/cuda} src=$HERE/typemeta exe=$BIN/typemeta_check rc st name detail
    local out=$LOGS/typemeta.txt err=$LOGS/typemeta.err
    if [ ! -f "$cuda/include/cuda.h" ]; then result "typemeta" SKIP "no $cuda/include/cuda.h"; return; fi
    if ! tmo 90 "${CC:-gcc}" -std=gnu11 -O1 -Wall -Wno-deprecated-declarations -I"$ROOT/sdk/include" \
            -I"$ROOT/generated/cuda-13.0" -I"$cuda/include" "$src/typemeta_check.c" "$src/typemeta_layouts.c" \
            -o "$exe" -L"$cuda/lib64/stubs" -L"$cuda/lib64" -lcuda -ldl >"$LOGS/typemeta.build" 2>&1; then
        result "typemeta" FAIL "build: $(tail -n 3 "$LOGS/typemeta.build" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    tmo 60 env LD_PRELOAD="$SHIM" "$exe" >"$out" 2>"$err"
    rc=$?
    while read -r st name detail; do
        case $st in PASS|FAIL) result "typemeta $name" "$st" "$detail" ;; esac
    done <"$out"
    grep -q '^PASS memcpy2d' "$out" && grep -q '^PASS graph-count' "$out" && grep -q '^PASS layouts' "$out" ||
        result "typemeta" FAIL "rc $rc; not every part passed: $(grep -v '^PASS' "$out" "$err" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
}
gpu_check typemeta check_typemeta
