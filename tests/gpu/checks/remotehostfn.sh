# remotehostfn.sh - GPU check of host functions over remoting (docs/remote.md, "Host functions"): cushim-serve on
# this machine's real driver, the client with no driver on its path.
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu remotehostfn` runs it (a few seconds).
#   remotehostfn order   tests/e2e/e2e_remote_hostfn order (two streams of memsets, a real kernel and copies back,
#                        cuLaunchHostFunc and cuStreamAddCallback, the per-thread and legacy streams) natively and
#                        remotely: each stream's functions in the same order with the data their stream's copies
#                        produced and status 0 (15 lines); the order across streams may differ natively, so lines
#                        are compared per stream
#   remotehostfn null    NULL functions and flags: the same answers as the real driver's

check_remotehostfn() {
    local cuda=${CUDA_HOME:-/usr/local/cuda} serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so
    local sock=$WORK/remotehostfn.sock server d=$WORK/remotehostfn
    mkdir -p "$d"
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remotehostfn" SKIP "no cushim-serve or remote.so in $BUILD_DIR"; return
    fi
    if ! tmo 90 "${CC:-gcc}" -O2 -I"$cuda/include" "$ROOT/tests/e2e/e2e_remote_hostfn.c" -o "$BIN/rh_hostfn" \
            -L"$DROPIN" -l:libcuda.so.1 -lpthread >"$LOGS/remotehostfn.build" 2>&1; then
        result "remotehostfn" FAIL "build: $(tail -n 3 "$LOGS/remotehostfn.build" | tr '\n' ' ' | cut -c1-200)"; return
    fi
    local lo=(env LD_LIBRARY_PATH="$(dirname "$REAL_LIBCUDA")")
    local cl=(env -u LD_PRELOAD LD_LIBRARY_PATH="$DROPIN" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 CUSHIM_LOG=error
              CUSHIM_PLUGINS="$plugin:server=unix:$sock")
    rm -f "$sock"
    CUSHIM_REAL_LIBCUDA="$REAL_LIBCUDA" tmo 120 "$serve" --listen="unix:$sock" >"$LOGS/remotehostfn.serve" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
    for m in order null; do
        tmo 60 "${lo[@]}" "$BIN/rh_hostfn" $m >"$d/$m.native" 2>"$LOGS/remotehostfn.$m.native.err"
        local rn=$?
        tmo 60 "${cl[@]}" "$BIN/rh_hostfn" $m >"$d/$m.remote" 2>"$LOGS/remotehostfn.$m.remote.err"
        local rr=$?
        # per stream, in each stream's order (sort -s keeps it)
        sort -s -t' ' -k3,3n "$d/$m.native" >"$d/$m.native.sorted"
        sort -s -t' ' -k3,3n "$d/$m.remote" >"$d/$m.remote.sorted"
        if [ $rn -ne 0 ] || [ $rr -ne 0 ]; then
            result "remotehostfn $m" FAIL "native rc $rn, remote rc $rr: $(head -c 300 "$LOGS/remotehostfn.$m.native.err" \
                "$LOGS/remotehostfn.$m.remote.err" | tr '\n' ' ')"
        elif ! diff "$d/$m.native.sorted" "$d/$m.remote.sorted" >"$d/$m.diff"; then
            result "remotehostfn $m" FAIL "native and remote differ: $(head -c 300 "$d/$m.diff" | tr '\n' ' ')"
        elif [ $m = order ] && [ "$(grep -c 'data as copied, status 0' "$d/$m.remote")" != 15 ]; then
            result "remotehostfn $m" FAIL "not 15 functions with their data: $(head -c 300 "$d/$m.remote" | tr '\n' ' ')"
        else
            result "remotehostfn $m" PASS "$(wc -l <"$d/$m.remote") lines equal per stream: $(head -n 2 "$d/$m.remote" | tr '\n' ' ')"
        fi
    done
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
}

gpu_check remotehostfn check_remotehostfn
