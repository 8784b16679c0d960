# remotefast: API forwarding's fast paths on the real GPU (docs/remote.md, "Fast paths" and "Measurements").
# cushim-serve runs the real driver on this machine; the clients have the drop-in shim and the remote plugin and
# no driver (CUSHIM_REAL_LIBCUDA=/nonexistent). vecadd remotely prints what it prints natively (the kernel time
# aside) with fewer round trips than calls plus the kernel's parameter asks; 256 MiB copies round-trip
# byte-exact (e2e_remote_fast copies, built here against the toolkit's headers); bench_remote_calls gives the
# synchronous round trip, the cached query, the empty-launch rate and the copies, locally and remotely, in the
# same run (kept in $DATA/remotefast.bench: the numbers docs/remote.md's Measurements lack for a GPU).
check_remotefast() {
    local cuda=${CUDA_HOME:-/usr/local/cuda} serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so
    local sock=$WORK/remotefast.sock server rc trips calls
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remotefast" SKIP "no cushim-serve or remote.so in $BUILD_DIR"; return
    fi
    if ! tmo 90 "${CC:-gcc}" -O2 -I"$cuda/include" "$ROOT/bench/remote/bench_remote_calls.c" -o "$BIN/rf_calls" \
            -L"$DROPIN" -l:libcuda.so.1 >"$LOGS/remotefast.build" 2>&1 ||
       ! tmo 90 "${CC:-gcc}" -O2 -I"$cuda/include" "$ROOT/tests/e2e/e2e_remote_fast.c" -o "$BIN/rf_fast" \
            -L"$DROPIN" -l:libcuda.so.1 >>"$LOGS/remotefast.build" 2>&1; then
        result "remotefast" FAIL "build: $(tail -n 3 "$LOGS/remotefast.build" | tr '\n' ' ' | cut -c1-200)"; return
    fi
    rm -f "$sock"
    CUSHIM_REAL_LIBCUDA="$REAL_LIBCUDA" tmo 300 "$serve" --listen="unix:$sock" >"$LOGS/remotefast.serve" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
    local cl=(env -u LD_PRELOAD LD_LIBRARY_PATH="$DROPIN" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 CUSHIM_LOG=error
              CUSHIM_PLUGINS="$plugin:server=unix:$sock,stats=1")
    LD_LIBRARY_PATH=$(dirname "$REAL_LIBCUDA") tmo 60 "$BUILD_DIR/examples/vecadd" 100000 >"$LOGS/remotefast.vecadd.native" 2>&1
    tmo 60 "${cl[@]}" "$BUILD_DIR/examples/vecadd" 100000 >"$LOGS/remotefast.vecadd" 2>"$LOGS/remotefast.vecadd.err"
    rc=$?
    calls=$(sed -nE 's/.* ([0-9]+) driver calls.*/\1/p' "$LOGS/remotefast.vecadd.err")
    trips=$(sed -nE 's/.* ([0-9]+) round trips.*/\1/p' "$LOGS/remotefast.vecadd.err")
    if [ $rc -eq 0 ] && diff <(sed -E 's/[0-9.]+ ms/T ms/' "$LOGS/remotefast.vecadd.native") \
            <(sed -E 's/[0-9.]+ ms/T ms/' "$LOGS/remotefast.vecadd") >/dev/null; then
        result "remotefast vecadd" PASS "same output as native; $calls driver calls, $trips round trips"
    else
        result "remotefast vecadd" FAIL "rc $rc; $(head -c 300 "$LOGS/remotefast.vecadd.err" | tr '\n' ' ')"
    fi
    tmo 120 "${cl[@]}" "$BIN/rf_fast" copies 8388608 >"$LOGS/remotefast.copies" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        result "remotefast copies" PASS "$(grep -c copied "$LOGS/remotefast.copies") copies up to 256 MiB byte-exact"
    else
        result "remotefast copies" FAIL "rc $rc; $(grep -v '^copied' "$LOGS/remotefast.copies" | head -c 300 | tr '\n' ' ')"
    fi
    {
        echo "== local"
        LD_LIBRARY_PATH=$(dirname "$REAL_LIBCUDA") tmo 120 "$BIN/rf_calls" 20000 1048576 1000
        LD_LIBRARY_PATH=$(dirname "$REAL_LIBCUDA") tmo 120 "$BIN/rf_calls" 1000 268435456 9 | grep Memcpy
        echo "== remote"
        tmo 120 "${cl[@]}" "$BIN/rf_calls" 20000 1048576 1000
        tmo 120 "${cl[@]}" "$BIN/rf_calls" 1000 268435456 9 | grep Memcpy
    } >"$DATA/remotefast.bench" 2>&1
    rc=$?
    if grep -q "failed" "$DATA/remotefast.bench" || [ $rc -ne 0 ]; then
        result "remotefast bench" FAIL "$(grep -m2 failed "$DATA/remotefast.bench" | tr '\n' ' ')"
    else
        result "remotefast bench" PASS "$(grep -m2 'cuLaunchKernel' "$DATA/remotefast.bench" | tr -s ' ' | tr '\n' ';')"
    fi
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
}
gpu_check remotefast check_remotefast
