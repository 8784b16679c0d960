# remote.sh - GPU checks of remote GPUs deployed with the launcher (docs/remote-deploy.md): 'cushim serve' on
# this machine's real driver, clients with 'cushim run --remote=' and no driver on their path.
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu remote` runs them (about 30 s).
#   remote unix      examples/vecadd over the unix socket: 'result OK' (vecadd checks its result on a GPU)
#   remote tcp       the same over TCP loopback with a token; a wrong token refused
#   remote quota     'serve --mem-limit=1GiB': cuMemGetInfo reports 1 GiB and the 5th 256 MiB block is
#                    CUDA_ERROR_OUT_OF_MEMORY (tests/e2e/e2e_remote_quota, built here when the build has no tests)
#   remote four      issue 43's four clients: 'serve --mem-limit=2GiB', four PyTorch clients at once through
#                    'cushim run --remote=' (tests/gpu/remote/torch_fill.py), each filling 256 MiB tensors until
#                    PyTorch's own torch.OutOfMemoryError; the fourth is SIGKILLed while the other three hold their
#                    memory; then the three verify every block on the GPU. PASS: three 'verify OK', each stopped
#                    at its own quota (at most 8 blocks, and the three together more than one quota)

rm_client() {   # rm_client OUT ERR ARGS...: cushim run with no driver reachable
    local o=$1 e=$2
    shift 2
    tmo 60 env -u LD_PRELOAD -u CUSHIM_PLUGINS CUSHIM_LIB="$SHIM" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        bash "$ROOT/tools/cushim" run "$@" >"$o" 2>"$e"
}

rm_serve() {   # rm_serve LOG ARGS...: in the background; RM_SERVER its pid once it listens
    local log=$1 i
    shift
    env CUSHIM_LIB="$SHIM" CUSHIM_REAL_LIBCUDA="$REAL_LIBCUDA" bash "$ROOT/tools/cushim" serve "$@" >"$log" 2>&1 &
    RM_SERVER=$!
    for i in $(seq 100); do grep -q listening "$log" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}

rm_stop() { kill "$RM_SERVER" 2>/dev/null; wait "$RM_SERVER" 2>/dev/null; }

check_remote() {
    local v=$BUILD_DIR/examples/vecadd q=$BUILD_DIR/tests/e2e/e2e_remote_quota d=$WORK/remote
    local sock=$d/s.sock tok=$d/token bad=$d/bad port=$((20000 + RANDOM % 20000))
    mkdir -p "$d"
    if [ ! -x "$v" ]; then result "remote unix" FAIL "$v missing"; return; fi
    if rm_serve "$LOGS/remote-unix.log" --listen="unix:$sock"; then
        rm_client "$d/unix.out" "$LOGS/remote-unix.err" --remote="unix:$sock" -- "$v"
        local rc=$?
        if [ $rc -eq 0 ] && grep -q 'result OK' "$d/unix.out"; then
            result "remote unix" PASS "$(head -n 1 "$d/unix.out" | cut -c1-120)"
        else
            result "remote unix" FAIL "rc $rc: $(head -c 300 "$d/unix.out" "$LOGS/remote-unix.err" | tr '\n' ' ')"
        fi
        rm_stop
    else
        result "remote unix" FAIL "cushim serve did not listen: $(head -c 300 "$LOGS/remote-unix.log")"
    fi
    head -c 32 /dev/urandom | base64 >"$tok" && chmod 600 "$tok"
    head -c 32 /dev/urandom | base64 >"$bad" && chmod 600 "$bad"
    if rm_serve "$LOGS/remote-tcp.log" --listen="tcp://127.0.0.1:$port" --token-file="$tok"; then
        rm_client "$d/tcp.out" "$LOGS/remote-tcp.err" --remote="tcp://127.0.0.1:$port" --remote-token-file="$tok" -- "$v"
        local rc=$? why=""
        [ $rc -eq 0 ] && grep -q 'result OK' "$d/tcp.out" || why+="rc $rc: $(head -c 300 "$d/tcp.out" "$LOGS/remote-tcp.err" | tr '\n' ' '); "
        rm_client "$d/bad.out" "$LOGS/remote-bad.err" --remote="tcp://127.0.0.1:$port" --remote-token-file="$bad" -- "$v" &&
            why+="a wrong token was accepted; "
        grep -q "refused this client's token" "$LOGS/remote-bad.err" || why+="no refusal message for a wrong token; "
        if [ -z "$why" ]; then
            result "remote tcp" PASS "$(head -n 1 "$d/tcp.out" | cut -c1-120); wrong token refused"
        else
            result "remote tcp" FAIL "$why"
        fi
        rm_stop
    else
        result "remote tcp" FAIL "cushim serve did not listen: $(head -c 300 "$LOGS/remote-tcp.log")"
    fi
    if [ ! -x "$q" ]; then   # a build without tests (the GPU bundle): built here against the drop-in
        q=$BIN/e2e_remote_quota
        if ! tmo 60 "${CC:-gcc}" -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" "$ROOT/tests/e2e/e2e_remote_quota.c" \
                -o "$q" -L"$DROPIN" -l:libcuda.so.1 >"$LOGS/remote-quota.build" 2>&1; then
            result "remote quota" FAIL "build: $(tail -n 3 "$LOGS/remote-quota.build" | tr '\n' ' ' | cut -c1-200)"
            return
        fi
    fi
    if rm_serve "$LOGS/remote-quota.log" --listen="unix:$sock" --mem-limit=1GiB; then
        rm_client "$d/quota.out" "$LOGS/remote-quota.err" --remote="unix:$sock" -- "$q" 268435456
        if grep -q '^total 1073741824 ' "$d/quota.out" && grep -qx 'allocated 4 then 2' "$d/quota.out"; then
            result "remote quota" PASS "$(tr '\n' ' ' <"$d/quota.out")"
        else
            result "remote quota" FAIL "$(tr '\n' ' ' <"$d/quota.out") $(head -c 300 "$LOGS/remote-quota.err" | tr '\n' ' ')"
        fi
        rm_stop
    else
        result "remote quota" FAIL "cushim serve did not listen: $(head -c 300 "$LOGS/remote-quota.log")"
    fi
    check_remote_four "$d"
}

check_remote_four() {
    local d=$1 sock=$1/four.sock go=$1/four.go i pids=() why="" n tot=0
    if ! tmo 60 "$PY" -c 'import torch' 2>/dev/null; then
        result "remote four" SKIP "no torch for $PY"; return
    fi
    rm -f "$go"
    if ! rm_serve "$LOGS/remote-four.log" --listen="unix:$sock" --mem-limit=2GiB; then
        result "remote four" FAIL "cushim serve did not listen: $(head -c 300 "$LOGS/remote-four.log")"; return
    fi
    for i in 1 2 3 4; do
        # no timeout(1) in front: the fourth's pid must be the program's (torch_fill.py waits at most 120 s)
        env -u LD_PRELOAD -u CUSHIM_PLUGINS CUSHIM_LIB="$SHIM" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
            bash "$ROOT/tools/cushim" run --remote="unix:$sock" -- "$PY" "$HERE/remote/torch_fill.py" \
            "c$i" "$go" >"$d/four.$i.out" 2>"$LOGS/remote-four.$i.err" &
        pids+=($!)
    done
    for _ in $(seq 1200); do   # every client filled (or failed)
        n=0
        for i in 1 2 3 4; do grep -q '^fill ' "$d/four.$i.out" 2>/dev/null && n=$((n + 1)); done
        [ $n = 4 ] && break
        sleep 0.1
    done
    # the fourth client SIGKILLed while the others hold their memory (the launcher execs: its pid is python's)
    kill -KILL "${pids[3]}" 2>/dev/null
    wait "${pids[3]}" 2>/dev/null
    sleep 1
    touch "$go"
    for i in 0 1 2; do wait "${pids[$i]}"; done
    for i in 1 2 3; do
        grep -q "^verify c$i: OK" "$d/four.$i.out" || why+="client $i: $(tr '\n' ' ' <"$d/four.$i.out" | cut -c1-120) $(tail -n 2 "$LOGS/remote-four.$i.err" | tr '\n' ' ' | cut -c1-160); "
        n=$(sed -nE 's/^fill c[0-9]: ([0-9]+) blocks.*/\1/p' "$d/four.$i.out")
        [ -n "$n" ] && { [ "$n" -le 8 ] || why+="client $i held $n blocks, past its 2 GiB; "; tot=$((tot + n)); }
    done
    [ "$tot" -gt 8 ] || why+="the three held $tot blocks together: the quotas are not per client; "
    grep -q "OOM OutOfMemoryError" "$d/four.4.out" 2>/dev/null || why+="the fourth never filled before its kill; "
    rm_stop
    if [ -z "$why" ]; then
        result "remote four" PASS "$(cat "$d"/four.[123].out | grep '^fill' | tr '\n' ' '); the fourth SIGKILLed; the three verified"
    else
        result "remote four" FAIL "$why"
    fi
}

gpu_check remote check_remote
