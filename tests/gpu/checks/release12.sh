# shellcheck shell=bash
# release12: the shim built from an earlier release's tree (generated/cuda-12.9) on the real driver, with a
# CUDA 12 program (tests/gpu/release12/rt12_main.c, linked against the pinned wheel's libcudart.so.12; both
# built by tools/build-gpu-bundle.sh into BUILD_DIR/r12.9 and BUILD_DIR/cu12). README "One CUDA release per build".
#   release12 native      the program passes alone (its kernel's result checked, a CUDA 12 runtime)
#   release12 traced      under `cushim run --trace --counts` with the 12.9 shim: it passes; every runtime
#                         function it calls is counted exactly as often as it says it called it; the trace's
#                         events equal the shim's counts per API and its launch names the kernel
#                         (trace_check.py api)
#   release12 13.0-shim   under the 13.0 shim the same program's runtime calls are not seen (they bind past it
#                         to their own copy, as the README says) while its driver calls are
check_release12() {
    local r=$BUILD_DIR/r12.9 cuda=${CUDA_HOME:-/usr/local/cuda} ptx=$BIN/scale.ptx p=$DATA/release12 rc bad
    local exe=$r/rt12_main L=$ROOT/tools/cushim
    if [ ! -x "$exe" ] || [ ! -f "$r/runtime/libcushim.so" ] || [ ! -f "$BUILD_DIR/cu12/libcudart.so.12" ]; then
        result release12 SKIP "no $exe, 12.9 shim or cu12 runtime (tools/build-gpu-bundle.sh was offline?)"; return
    fi
    if ! tmo 90 "$cuda/bin/nvcc" -ptx -arch=compute_80 "$HERE/release12/scale.cu" -o "$ptx" >"$LOGS/release12.build" 2>&1; then
        result release12 FAIL "nvcc -ptx: $(tail -n 2 "$LOGS/release12.build" | tr '\n' ' ' | cut -c1-200)"; return
    fi
    tmo 60 "$exe" "$ptx" >"$p.native" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -qx PASS "$p.native"; then
        result "release12 native" PASS "$(head -n 1 "$p.native")"
    else
        result "release12 native" FAIL "rc $rc: $(grep FAIL "$p.native" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    fi
    rm -f "$p.counts" "$p.json"
    tmo 60 env CUSHIM_LIB="$r/runtime/libcushim.so" "$L" run --trace="$p.json" --counts="$p.counts" -- \
        "$exe" "$ptx" >"$p.traced" 2>"$LOGS/release12.traced.err"
    rc=$?
    # every 'calls NAME N' line of the program against the shim's count of NAME
    bad=$(awk -F'\t' 'NR == FNR { c[$1] = $2; next } $1 == "calls" { split($0, f, " ");
            if (c[f[2]] + 0 != f[3] + 0) printf "%s %s/%s ", f[2], c[f[2]] + 0, f[3] }' "$p.counts" "$p.traced" 2>/dev/null)
    "$PY" "$HERE/trace/trace_check.py" api "$p.json" "$p.counts" >"$LOGS/release12.trace.txt" 2>&1
    if [ $rc -eq 0 ] && grep -qx PASS "$p.traced" && [ -z "$bad" ] && [ "$(grep -c '^calls ' "$p.traced")" -ge 16 ] &&
       ! grep -q '^FAIL' "$LOGS/release12.trace.txt" && grep -q '^PASS' "$LOGS/release12.trace.txt"; then
        result "release12 traced" PASS "$(grep -c '^calls ' "$p.traced") runtime functions counted as called; $(grep -h '^PASS' "$LOGS/release12.trace.txt" | cut -d' ' -f2- | cut -c1-110 | tr '\n' ';')"
    else
        result "release12 traced" FAIL "rc $rc; counted/called: ${bad:-equal}; $(grep -h '^FAIL' "$p.traced" "$LOGS/release12.trace.txt" "$LOGS/release12.traced.err" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
    fi
    rm -f "$p.13.counts"
    tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$p.13.counts" "$exe" "$ptx" >"$p.13.out" 2>&1
    rc=$?
    local rt drv
    rt=$(awk -F'\t' '$1 ~ /^cuda/ && $2 > 0 { n += $2 } END { print n + 0 }' "$p.13.counts" 2>/dev/null)
    drv=$(awk -F'\t' '$1 == "cuLaunchKernel" { print $2 + 0 }' "$p.13.counts" 2>/dev/null)
    if [ $rc -eq 0 ] && grep -qx PASS "$p.13.out" && [ "${rt:-x}" = 0 ] && [ "${drv:-0}" -ge 1 ]; then
        result "release12 13.0-shim" PASS "runtime calls seen 0 (they bind past a 13 shim), cuLaunchKernel $drv"
    else
        result "release12 13.0-shim" FAIL "rc $rc; runtime calls seen ${rt:-none} (want 0), cuLaunchKernel ${drv:-none} (want >= 1)"
    fi
}
gpu_check release12 check_release12
