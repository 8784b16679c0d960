# badptrs: pointers into memory that cannot be read, passed to the real driver (tests/gpu/badptrs/badptrs.c, one
# case a process): natively, then under the shim with the trace, a Lua policy reading the pointers
# (tests/e2e/lua/badptrs.lua), memlimit and smlimit. Each case must end as it does natively: the same result
# where the driver answers an error (the plugins read such pointers safely, cushim_read_mem), and where the
# driver itself faults on the pointer (it reads it first), the same fault is no plugin's. Under a seccomp filter
# the plugins' reads are rt_sigprocmask probes and copies instead of process_vm_readv (README): the same cases
# hold; the detail names the machine's Seccomp mode.
check_badptrs() {
    local cuda=${CUDA_HOME:-/usr/local/cuda} exe=$BIN/badptrs k spec name nat got rc bad detail sc
    # under a seccomp filter (a container's default profile) cushim_read_mem probes instead (README)
    sc=$(awk '$1 == "Seccomp:" {print $2}' /proc/self/status)
    local -a specs=("" "$BUILD_DIR/plugins/trace.so:file=$WORK/badptrs.json" "$BUILD_DIR/plugins/memlimit.so:limit=1GiB"
                    "$BUILD_DIR/plugins/smlimit.so:limit=50")
    if ! tmo 60 "${CC:-gcc}" -std=gnu11 -O1 -Wall -I"$cuda/include" "$HERE/badptrs/badptrs.c" -o "$exe" \
            -L"$cuda/lib64/stubs" -L"$cuda/lib64" -lcuda >"$LOGS/badptrs.build" 2>&1; then
        result "badptrs" FAIL "build: $(tail -n 3 "$LOGS/badptrs.build" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    for k in 0 1 2 3 4 5 6 7; do
        nat=$(tmo 30 "$exe" "$k" 2>>"$LOGS/badptrs.err"; echo "rc $?")
        bad= detail=
        for spec in "${specs[@]}" lua; do
            name=$(basename "${spec%%:*}" .so)
            if [ "$spec" = lua ]; then
                got=$(tmo 30 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run --lua="$ROOT/tests/e2e/lua/badptrs.lua" \
                      -- "$exe" "$k" 2>>"$LOGS/badptrs.err"; echo "rc $?")
            else
                got=$(tmo 30 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$spec" "$exe" "$k" 2>>"$LOGS/badptrs.err"; echo "rc $?")
            fi
            [ "$got" = "$nat" ] || bad+="${name:-shim}: $(echo $got) "
        done
        detail="native: $(echo $nat)"
        case $nat in *"rc 139"*) detail+=" (the driver faults on it itself)" ;; esac
        if [ -n "$bad" ]; then
            result "badptrs case$k" FAIL "$detail; differs under $bad"
        else
            result "badptrs case$k" PASS "$detail; the same under the shim, trace, lua, memlimit, smlimit (Seccomp: ${sc:-?})"
        fi
    done
}
gpu_check badptrs check_badptrs
