# dlchurn: the CPU suite's tests/e2e/e2e_dlchurn.c against the real driver, the real runtime (the PyTorch
# wheel's libcudart.so.13) and the driver's NVML: libcuda, libcudart and libnvidia-ml opened and closed on some
# threads, a library of no interest opened and closed on another, while two more look driver names up with
# RTLD_DEFAULT/RTLD_NEXT and call what they find. Built by tools/build-gpu-bundle.sh into build-gpu/dlchurn
# (the program includes CUDA's GL/EGL/VDPAU interop headers through the generated params header; the GPU machine
# has none of their dependencies' headers).
#   dlchurn native   without the shim: the program's checks hold for the real libraries themselves
#   dlchurn shim     with the shim preloaded: every function found is the shim's and answers as the real one
#                    (the driver's version as the real driver gives it; the runtime's and NVML's calls succeed)
# Uses rel_find (checks/release.sh) to find the wheel's libcudart.so.13.
check_dlchurn() {
    local exe=$BUILD_DIR/dlchurn/e2e_dlchurn lib=$BUILD_DIR/dlchurn/libe2e_dlchurn_lib.so
    local rt rtdir mode pre want rc rounds=${DLCHURN_ROUNDS:-200}
    if [ ! -x "$exe" ] || [ ! -f "$lib" ]; then
        result "dlchurn" SKIP "no $exe (tools/build-gpu-bundle.sh builds it: this machine lacks the GL headers)"; return
    fi
    rt=$(rel_find libcudart.so.13) || { result "dlchurn" SKIP "no libcudart.so.13 in Python's site-packages"; return; }
    rtdir=$(dirname "$rt")
    for mode in native shim; do
        if [ "$mode" = shim ]; then pre=$SHIM want=1; else pre= want=0; fi
        tmo 120 env ${pre:+LD_PRELOAD="$pre"} LD_LIBRARY_PATH="$rtdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            E2E_EXPECT_SHIM=$want E2E_DLCHURN_REAL=1 E2E_DLCHURN_LIB="$lib" E2E_OUT="$WORK" "$exe" "$rounds" \
            >"$LOGS/dlchurn-$mode.txt" 2>&1
        rc=$?
        if [ $rc = 0 ] && grep -q "^e2e_dlchurn: ok" "$LOGS/dlchurn-$mode.txt"; then
            local whose="the library's"
            [ "$mode" = shim ] && whose="the shim's"
            result "dlchurn $mode" PASS "$(grep -o '[0-9]* threads, [0-9]* rounds each' "$LOGS/dlchurn-$mode.txt"): every function found was $whose, every answer right"
        else
            result "dlchurn $mode" FAIL "rc $rc: $(grep -v '^e2e_dlchurn: FAILED' "$LOGS/dlchurn-$mode.txt" | tail -n 3 | tr '\n' ' ' | cut -c1-240)"
        fi
    done
}
gpu_check dlchurn check_dlchurn
