# remotemanaged.sh - GPU check of managed memory over remoting (docs/remote.md, "Managed memory"): cushim-serve on
# this machine's real driver, the client with no driver (remotert.sh's helpers: remote_client hides the driver files
# where a mount namespace can be made, remote_compare diffs against the native run).
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu remotemanaged` runs it (well under a minute).
#   remotemanaged cuda       tests/gpu/remote/managed.cu (nvcc -cudart shared): cudaMallocManaged, host writes, <<<>>>
#                            launches, cudaDeviceSynchronize and cudaStreamSynchronize, cudaMemcpyDefault both ways:
#                            the same output as natively; the client's concurrent-managed-access attribute 0
#   remotemanaged tcp        the same over TCP loopback with a token
#   remotemanaged cupy       tests/gpu/remote/cupy_managed.py: CuPy's managed allocator (SKIP without cupy)

check_remotemanaged() {
    local serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so sock=$WORK/remote.managed.sock
    local cuda=${CUDA_HOME:-/usr/local/cuda} nvcc server tserver rc port tok=$WORK/remote.managed.token
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remotemanaged" FAIL "$serve or $plugin missing (build-gpu lacks the remoting)"
        return
    fi
    remote_server_env "$cuda"   # remotert.sh: REMOTE_NS, RS_CUDART
    rm -f "$sock"
    CUSHIM_SERVE_CUDART=$RS_CUDART "$serve" --listen="unix:$sock" > "$LOGS/remote.managed.serve.log" 2>&1 &
    server=$!
    head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    CUSHIM_SERVE_CUDART=$RS_CUDART "$serve" --listen="tcp://127.0.0.1:$port" --token-file="$tok" \
        > "$LOGS/remote.managed.tcp.log" 2>&1 &
    tserver=$!
    for _ in $(seq 100); do [ -S "$sock" ] && grep -q listening "$LOGS/remote.managed.tcp.log" && break; sleep 0.05; done
    local dlp="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    nvcc=$cuda/bin/nvcc
    command -v "$nvcc" > /dev/null 2>&1 || nvcc=nvcc
    if tmo 180 "$nvcc" -arch="${GPU_ARCH:-sm_90}" -O2 -cudart shared -o "$BIN/rm_managed" "$HERE/remote/managed.cu" \
        -Xlinker -rpath -Xlinker "$(dirname "${RS_CUDART:-$cuda/lib64/x}")" > "$LOGS/remote.managed.build" 2>&1; then
        tmo 60 "$BIN/rm_managed" > "$DATA/remote.managed.native" 2> "$LOGS/remote.managed.native.err"
        for t in cuda tcp; do
            local srv="server=unix:$sock,stats=1"
            [ $t = tcp ] && srv="server=tcp://127.0.0.1:$port,token_file=$tok,stats=1"
            remote_client managed.$t 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
                CUSHIM_REAL_LIBCUDA=none CUSHIM_PLUGINS="$plugin:$srv" -- "$BIN/rm_managed"
            rc=$?
            if ! grep -qx 'concurrent managed access: 0' "$LOGS/remote.managed.$t.err"; then
                result "remotemanaged $t" FAIL "the client's attribute: $(grep concurrent "$LOGS/remote.managed.$t.err")"
            else
                remote_compare "remotemanaged $t" managed.$t $rc "$DATA/remote.managed.native"
            fi
        done
    else
        result "remotemanaged cuda" FAIL "managed.cu did not build: $(tail -n 3 "$LOGS/remote.managed.build" | tr '\n' ' ' | cut -c1-200)"
    fi
    if tmo 60 "$PY" -c 'import cupy' 2> /dev/null; then
        export CUPY_CACHE_DIR="$WORK/cupy.managed"
        tmo 300 "$PY" "$HERE/remote/cupy_managed.py" > "$DATA/remote.managed.cupy.native" \
            2> "$LOGS/remote.managed.cupy.native.err"
        remote_client managed.cupy 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
            CUSHIM_REAL_LIBCUDA=none CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
            CUSHIM_PLUGINS="$plugin:server=unix:$sock,stats=1" -- "$PY" "$HERE/remote/cupy_managed.py"
        rc=$?
        remote_compare "remotemanaged cupy" managed.cupy $rc "$DATA/remote.managed.cupy.native"
    else
        result "remotemanaged cupy" SKIP "no cupy for $PY"
    fi
    kill "$server" "$tserver" 2>/dev/null
    wait "$server" "$tserver" 2>/dev/null
}

gpu_check remotemanaged check_remotemanaged
