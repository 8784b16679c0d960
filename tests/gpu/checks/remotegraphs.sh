# remotegraphs: CUDA graphs and the frameworks that use them, over remoting on the real driver (docs/remote.md,
# "Graphs"). cushim-serve on this machine's driver, a unix socket (shared memory on); each client as in remotert
# (remotert.sh's remote_client and remote_compare: the shim and the plugin preloaded, the drop-in first on the
# library path, every libcuda.so* file hidden where a mount namespace can be made), its output compared with the
# same script run natively:
#   remotegraphs torch-graph     tests/gpu/remote/torch_graph.py elementwise: torch.cuda.CUDAGraph of elementwise
#                                kernels and copies, replayed 10 times with new inputs
#   remotegraphs torch-mlp       torch_graph.py mlp: a small MLP's training step captured (torch.cuda.graph) and
#                                replayed 20 times: losses and parameters (needs cuBLAS forwarded)
#   remotegraphs torch-compile   torch_graph.py compile: torch.compile(mode="reduce-overhead") of a small model
#                                (Triton: TRITON_LIBCUDA_PATH names the drop-in's folder)
#   remotegraphs triton-tma      tests/gpu/remote/triton_tma.py: a Triton kernel through host-side TMA descriptors
#                                (cuTensorMapEncodeTiled over remoting; SKIP where Triton or the GPU has none)
#   remotegraphs cupy            tests/gpu/remote/cupy_graph.py: elementwise, a RawKernel, a captured stream
#                                launched as a graph 5 times (SKIP without cupy)
#   remotegraphs jax             tests/gpu/remote/jax_small.py: a jitted step called 5 times (SKIP without jax)
#   remotegraphs tcp-torch-graph, tcp-cupy   the first and the CuPy case again over TCP loopback with a token (no
#                                shared memory)
# Every run is under tmo (remote_client: 300 s; the native runs 300 s). The server's log is
# $LOGS/remote.graphs.serve.log.
remotegraphs_case() {   # remotegraphs_case NAME TAG REMOTE_ENV... -- PYTHON_ARGS...: native, then remote, compared
    local name=$1 tag=$2 rc
    shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    tmo 300 "$PY" "$@" > "$DATA/remote.$tag.native" 2> "$LOGS/remote.$tag.native.err"
    rc=$?
    if [ $rc != 0 ]; then
        result "$name" FAIL "natively: rc $rc: $(tail -n 3 "$LOGS/remote.$tag.native.err" | tr '\n' ' ' | cut -c1-300)"
        return
    fi
    remote_client "$tag" 'libcuda\.so' "${envs[@]}" LD_PRELOAD="$SHIM $RG_PLUGIN" LD_LIBRARY_PATH="$RG_DLP" \
        CUSHIM_REAL_LIBCUDA=none CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
        CUSHIM_PLUGINS="$RG_PLUGIN:$RG_OPTS" -- "$PY" "$@"
    rc=$?
    remote_compare "$name" "$tag" $rc "$DATA/remote.$tag.native"
}

check_remotegraphs() {
    local serve=$BUILD_DIR/remote/cushim-serve sock=$WORK/remote.graphs.sock cuda=${CUDA_HOME:-/usr/local/cuda}
    local cudart ns server
    RG_PLUGIN=$BUILD_DIR/plugins/remote.so
    if [ ! -x "$serve" ] || [ ! -f "$RG_PLUGIN" ]; then
        result "remotegraphs" FAIL "$serve or $RG_PLUGIN missing (build-gpu lacks the remoting)"
        return
    fi
    remote_server_env "$cuda"   # remotert.sh: REMOTE_NS, RS_CUDART
    cudart=$RS_CUDART
    remote_server_blas "$cuda"   # remotert.sh: PyTorch's cuBLAS on the server; the clients interpose cuBLAS
    echo "server cuBLAS: ${RS_BLAS:-by name} ${RS_BLASLT:-by name}" > "$LOGS/remote.graphs.blas"
    rm -f "$sock"
    CUSHIM_SERVE_CUDART=$cudart CUSHIM_SERVE_CUBLAS=$RS_BLAS CUSHIM_SERVE_CUBLASLT=$RS_BLASLT "$serve" --listen="unix:$sock" --verbose > "$LOGS/remote.graphs.serve.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
    if [ ! -S "$sock" ]; then
        result "remotegraphs" FAIL "cushim-serve did not listen: $(head -c 300 "$LOGS/remote.graphs.serve.log")"
        kill "$server" 2>/dev/null
        return
    fi
    RG_OPTS="server=unix:$sock,stats=1"
    # the same caches and allocator settings for the native and the remote run of each script
    export TORCHINDUCTOR_CACHE_DIR="$WORK/inductor.graphs" CUPY_CACHE_DIR="$WORK/cupy.graphs"
    export XLA_PYTHON_CLIENT_PREALLOCATE=false
    RG_DLP="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if tmo 60 "$PY" -c 'import torch' 2> /dev/null; then
        remotegraphs_case "remotegraphs torch-graph" graph.torch -- "$HERE/remote/torch_graph.py" elementwise
        remotegraphs_case "remotegraphs torch-mlp" graph.mlp -- "$HERE/remote/torch_graph.py" mlp
        # Triton links its launcher with -lcuda -L$TRITON_LIBCUDA_PATH: remotely a folder where libcuda.so and
        # libcuda.so.1 are the drop-in (the shim), never a driver
        mkdir -p "$WORK/remote.triton" && ln -sf "$DROPIN/libcuda.so.1" "$WORK/remote.triton/libcuda.so.1" &&
            ln -sf "$DROPIN/libcuda.so.1" "$WORK/remote.triton/libcuda.so"
        remotegraphs_case "remotegraphs torch-compile" graph.compile TRITON_LIBCUDA_PATH="$WORK/remote.triton" \
            -- "$HERE/remote/torch_graph.py" compile
        if tmo 120 "$PY" "$HERE/remote/triton_tma.py" probe > "$LOGS/remote.graph.tma.probe" 2>&1; then
            remotegraphs_case "remotegraphs triton-tma" graph.tma TRITON_LIBCUDA_PATH="$WORK/remote.triton" \
                -- "$HERE/remote/triton_tma.py" run
        else
            result "remotegraphs triton-tma" SKIP "$(head -c 200 "$LOGS/remote.graph.tma.probe")"
        fi
    else
        result "remotegraphs torch-graph" SKIP "no torch for $PY"
    fi
    if tmo 60 "$PY" -c 'import cupy' 2> /dev/null; then
        remotegraphs_case "remotegraphs cupy" graph.cupy -- "$HERE/remote/cupy_graph.py"
    else
        result "remotegraphs cupy" SKIP "no cupy for $PY"
    fi
    if tmo 60 "$PY" -c 'import jax' 2> /dev/null; then
        remotegraphs_case "remotegraphs jax" graph.jax -- "$HERE/remote/jax_small.py"
    else
        result "remotegraphs jax" SKIP "no jax for $PY"
    fi
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    # TCP loopback with a token
    local port=$((20000 + RANDOM % 20000)) tok=$WORK/remote.graphs.token
    head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
    CUSHIM_SERVE_CUDART=$cudart CUSHIM_SERVE_CUBLAS=$RS_BLAS CUSHIM_SERVE_CUBLASLT=$RS_BLASLT "$serve" --listen="tcp://127.0.0.1:$port" --token-file="$tok" --verbose \
        > "$LOGS/remote.graphs.tcp.serve.log" 2>&1 &
    server=$!
    sleep 1
    RG_OPTS="server=tcp://127.0.0.1:$port,token_file=$tok,stats=1"
    if tmo 60 "$PY" -c 'import torch' 2> /dev/null; then
        remotegraphs_case "remotegraphs tcp-torch-graph" graph.tcp.torch -- "$HERE/remote/torch_graph.py" elementwise
    fi
    if tmo 60 "$PY" -c 'import cupy' 2> /dev/null; then
        remotegraphs_case "remotegraphs tcp-cupy" graph.tcp.cupy -- "$HERE/remote/cupy_graph.py"
    fi
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
}
gpu_check remotegraphs check_remotegraphs
