# remotert: runtime-API, NVML and PyTorch programs over remoting on the real driver (docs/remote.md, "Runtime-API
# programs"; tests/gpu/checks/remote.sh checks the deployment: cushim serve, TCP, quotas). cushim-serve runs on
# this machine's driver; each client runs with the remote plugin and, where this machine allows a mount namespace
# (root or user namespaces), with every libcuda.so* file hidden behind /dev/null, so that the client could not
# use a driver even by mistake; LD_DEBUG=files shows which objects each client initialised.
#   remotert vecadd    examples/vecadd (driver API) through the drop-in: the same output as natively
#   remotert runtime   tests/gpu/remote/rt_vecadd.cu (nvcc -cudart shared, no -lcuda; <<<>>>, copies up to
#                      48 MiB, events, a refused launch, cudaGetFuncBySymbol and cudaGetKernel used with the driver's
#                      launch and the runtime's, cudaFuncGetName, cudaFuncGetParamInfo, cudaLaunchKernelEx with a
#                      cluster of 2 on sm_90, a cooperative launch, cudaFuncSetCacheConfig, dynamic shared memory and
#                      cluster occupancy, a kernel node): the shim and the plugin preloaded; the same output
#   remotert nvml      nvidia-smi -L through the forwarded NVML: the same output as natively
#   remotert torch     tests/gpu/remote/torch_small.py (elementwise kernels, copies, reductions): the same
#                      output as natively (SKIP without torch)
#   remotert blas      tests/gpu/remote/torch_blas.py (mm in f32/TF32/f64/f16, bmm, addmm with bias, linear and its
#                      backward: cuBLAS and cuBLASLt): the results' bytes equal to native
#   remotert train     tests/gpu/torch_train.py: 40 losses and the parameters bitwise identical to native; cuBLAS
#                      and cuBLASLt forwarded at their APIs (docs/remote.md, "cuBLAS and cuBLASLt": CUSHIM_LIBS
#                      interposes them in the client, the server runs PyTorch's own copies, CUSHIM_SERVE_CUBLAS*)
#   remotert liar      tests/e2e/e2e_remote_liar against the real cuBLAS and cuBLASLt: scalar-way lies, made-up and
#                      destroyed handles, descriptor numbers not given or of another kind, a made-up emulation
#                      descriptor attribute - each refused before the library sees it, the back end serving after
# The server's log is $LOGS/remote.serve.log; each client's output and stderr are under $DATA and $LOGS.
remote_hide_drivers() {   # remote_hide_drivers PATTERN: the files of the libraries matching PATTERN, one a line
    { ldconfig -p 2>/dev/null | awk -v p="$1" '$1 ~ p { print $NF }'
      find /usr/lib/x86_64-linux-gnu /usr/lib64 /lib64 -maxdepth 1 -regex ".*/$1.*" 2>/dev/null
    } | while read -r f; do [ -e "$f" ] && readlink -f "$f" && echo "$f"; done | sort -u
}

# remote_client TAG HIDE_PATTERN ENV... -- CMD...: runs CMD in a mount namespace where the files matching
# HIDE_PATTERN read as empty (when one can be made), output in $DATA/remote.TAG.out, stderr in $LOGS
remote_client() {
    local tag=$1 hide=$2 files
    shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    files=$(remote_hide_drivers "$hide" | tr '\n' ' ')
    echo "$files" > "$LOGS/remote.$tag.hidden"
    local script='for f in $HIDDEN; do mount --bind /dev/null "$f" 2>/dev/null || exit 97; done; exec "$@"'
    if [ -n "$REMOTE_NS" ]; then
        tmo 300 env "${envs[@]}" HIDDEN="$files" LD_DEBUG=files LD_DEBUG_OUTPUT="$LOGS/remote.$tag.ld" \
            $REMOTE_NS sh -c "$script" sh "$@" > "$DATA/remote.$tag.out" 2> "$LOGS/remote.$tag.err"
    else
        tmo 300 env "${envs[@]}" LD_DEBUG=files LD_DEBUG_OUTPUT="$LOGS/remote.$tag.ld" "$@" \
            > "$DATA/remote.$tag.out" 2> "$LOGS/remote.$tag.err"
    fi
}

# the real driver objects a client initialised (LD_DEBUG=files: 'calling init: PATH'), the drop-in aside
remote_loaded_driver() {
    cat "$LOGS/remote.$1.ld".* 2>/dev/null | grep -o 'calling init: .*libcuda\.so.*' | grep -v "$DROPIN" | sort -u |
        tr '\n' ' '
}

remote_compare() {   # remote_compare NAME TAG RC NATIVE_FILE [SED]: PASS when the outputs are equal
    local name=$1 tag=$2 rc=$3 nat=$4 sedx=${5:-s/^//} drv ns
    drv=$(remote_loaded_driver "$tag")
    ns=$([ -n "$REMOTE_NS" ] && echo "driver files hidden" || echo "no mount namespace: driver files visible")
    if [ "$rc" != 0 ]; then
        result "$name" FAIL "rc $rc ($ns): $(tail -n 3 "$LOGS/remote.$tag.err" | tr '\n' ' ' | cut -c1-300)"
    elif ! diff <(sed -E "$sedx" "$nat") <(sed -E "$sedx" "$DATA/remote.$tag.out") > "$LOGS/remote.$tag.diff"; then
        result "$name" FAIL "outputs differ ($ns): $(head -n 4 "$LOGS/remote.$tag.diff" | tr '\n' ' ' | cut -c1-300)"
    elif [ -n "$drv" ]; then
        result "$name" FAIL "the same output, but the client loaded a driver: $drv"
    else
        # the counts (stats=1), and where the synchronous round trips go: the APIs with the most of them
        result "$name" PASS "$(wc -l < "$DATA/remote.$tag.out") lines equal to native ($ns); $(grep -o '[0-9]* driver calls, [0-9]* round trips.*' "$LOGS/remote.$tag.err" | sed 's/ to [^ ]* / /' | head -n 1); sync: $(sed -n 's/^remote: pid [0-9]*: sync: //p' "$LOGS/remote.$tag.err" | head -n 1)"
    fi
}

# remote_server_env CUDA_HOME: what remotert and remotegraphs start their servers and clients with - REMOTE_NS, a
# mount namespace where a bind mount works (root, else a user namespace; empty: none), RS_CUDART, the server's
# runtime (the toolkit's, else the one PyTorch's wheels bring; empty: the back end opens libcudart.so.13 by name).
remote_server_env() {
    local cuda=$1 ns site
    REMOTE_NS=""
    : > "$WORK/remote.ns.probe"
    for ns in "unshare -m" "unshare -rm"; do
        if $ns sh -c "mount --bind /dev/null '$WORK/remote.ns.probe'" 2> /dev/null; then
            REMOTE_NS=$ns
            break
        fi
    done
    RS_CUDART=$(ls "$cuda"/lib64/libcudart.so.13* "$cuda"/targets/x86_64-linux/lib/libcudart.so.13* 2>/dev/null | head -n 1)
    if [ -z "$RS_CUDART" ]; then
        site=$(tmo 60 "$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
        [ -n "$site" ] && RS_CUDART=$(find "$site/nvidia" -name 'libcudart.so.13*' 2>/dev/null | head -n 1)
    fi
}

# remote_server_blas CUDA_HOME: the cuBLAS and cuBLASLt a server runs for its clients, in RS_BLAS and RS_BLASLT -
# PyTorch's own (a client's results must equal a native run's, which uses them), else the toolkit's, else empty
# (the server then loads them by name). remotert and remotegraphs start their servers with them.
remote_server_blas() {
    local cuda=$1 tsite
    RS_BLAS="" RS_BLASLT=""
    tsite=$(tmo 60 "$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
    if [ -n "$tsite" ]; then
        RS_BLAS=$(find "$tsite/nvidia" -name 'libcublas.so.13*' 2>/dev/null | head -n 1)
        RS_BLASLT=$(find "$tsite/nvidia" -name 'libcublasLt.so.13*' 2>/dev/null | head -n 1)
    fi
    [ -n "$RS_BLAS" ] || RS_BLAS=$(ls "$cuda"/lib64/libcublas.so.13* "$cuda"/targets/x86_64-linux/lib/libcublas.so.13* 2>/dev/null | head -n 1)
    [ -n "$RS_BLASLT" ] || RS_BLASLT=$(ls "$cuda"/lib64/libcublasLt.so.13* "$cuda"/targets/x86_64-linux/lib/libcublasLt.so.13* 2>/dev/null | head -n 1)
}

# remote_serve LISTEN LOG [SERVE_ARG...]: $BUILD_DIR's cushim-serve in the background on this machine's driver, with
# the runtime and cuBLAS of remote_server_env and remote_server_blas (RS_CUDART, RS_BLAS, RS_BLASLT; empty: by
# name), listening at LISTEN (unix:PATH or tcp://HOST:PORT; SERVE_ARG e.g. --token-file=F), its stderr in LOG and
# its pid in RS_SERVER. Returns 0 once it says it listens, 1 when it exits or has not said so after 5 s (the
# caller kills RS_SERVER either way).
remote_serve() {
    local listen=$1 log=$2
    shift 2
    case $listen in unix:*) rm -f "${listen#unix:}" ;; esac
    CUSHIM_SERVE_CUDART=${RS_CUDART:-} CUSHIM_SERVE_CUBLAS=${RS_BLAS:-} CUSHIM_SERVE_CUBLASLT=${RS_BLASLT:-} \
        "$BUILD_DIR/remote/cushim-serve" --listen="$listen" "$@" > "$log" 2>&1 &
    RS_SERVER=$!
    for _ in $(seq 100); do
        grep -q 'listening on' "$log" 2>/dev/null && return 0
        kill -0 "$RS_SERVER" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

check_remotert() {
    local serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so sock=$WORK/remote.sock
    local cuda=${CUDA_HOME:-/usr/local/cuda} rc cudart nvcc ns
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remotert" FAIL "$serve or $plugin missing (build-gpu lacks the remoting)"
        return
    fi
    remote_server_env "$cuda"
    cudart=$RS_CUDART
    echo "server runtime: ${cudart:-none found here: the back end opens libcudart.so.13 by name}" > "$LOGS/remote.cudart"
    # the server's cuBLAS and cuBLASLt: PyTorch's own (the training's losses must equal a native run's, which uses
    # them), else the toolkit's
    local blas blaslt
    remote_server_blas "$cuda"
    blas=$RS_BLAS blaslt=$RS_BLASLT
    echo "server cuBLAS: ${blas:-by name} ${blaslt:-by name}" >> "$LOGS/remote.cudart"
    rm -f "$sock"
    CUSHIM_SERVE_CUDART=$cudart CUSHIM_SERVE_CUBLAS=$blas CUSHIM_SERVE_CUBLASLT=$blaslt \
        "$serve" --listen="unix:$sock" --verbose > "$LOGS/remote.serve.log" 2>&1 &
    local server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
    if [ ! -S "$sock" ]; then
        result "remotert" FAIL "cushim-serve did not listen: $(head -c 300 "$LOGS/remote.serve.log")"
        kill "$server" 2>/dev/null
        return
    fi
    local opts="server=unix:$sock,stats=1"
    # the drop-in first on the library path, as `cushim run --remote` sets it (tools/launcher/start.c): a library
    # that dlopens libcuda.so.1 by name (PyTorch's c10) gets the shim, not a real driver
    local dlp="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # 1. vecadd through the drop-in
    local v=$BUILD_DIR/examples/vecadd
    tmo 60 "$v" > "$DATA/remote.vecadd.native" 2> "$LOGS/remote.vecadd.native.err"
    remote_client vecadd 'libcuda\.so' LD_LIBRARY_PATH="$DROPIN" CUSHIM_REAL_LIBCUDA=none \
        CUSHIM_PLUGINS="$plugin:$opts" -- "$v"
    rc=$?
    remote_compare "remotert vecadd" vecadd $rc "$DATA/remote.vecadd.native" 's/kernel [0-9.]+ ms/kernel T ms/'
    # 2. a runtime-API program
    nvcc=$cuda/bin/nvcc
    command -v "$nvcc" > /dev/null 2>&1 || nvcc=nvcc
    if tmo 180 "$nvcc" -arch="${GPU_ARCH:-sm_90}" -O2 -cudart shared -o "$BIN/rt_vecadd" "$HERE/remote/rt_vecadd.cu" \
        -Xlinker -rpath -Xlinker "$(dirname "${cudart:-$cuda/lib64/x}")" > "$LOGS/remote.build.log" 2>&1; then
        tmo 60 "$BIN/rt_vecadd" > "$DATA/remote.runtime.native" 2> "$LOGS/remote.runtime.native.err"
        remote_client runtime 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
            CUSHIM_REAL_LIBCUDA=none \
            CUSHIM_PLUGINS="$plugin:$opts" -- "$BIN/rt_vecadd"
        rc=$?
        remote_compare "remotert runtime" runtime $rc "$DATA/remote.runtime.native"
    else
        result "remotert runtime" FAIL "rt_vecadd.cu did not build: $(tail -n 3 "$LOGS/remote.build.log" | tr '\n' ' ' | cut -c1-200)"
    fi
    # 3. NVML: nvidia-smi -L (it needs libnvidia-ml.so.1 to load; every call goes to the server)
    local smi
    smi=$(command -v nvidia-smi || true)
    if [ -n "$smi" ]; then
        tmo 30 "$smi" -L > "$DATA/remote.nvml.native" 2>&1
        remote_client nvml 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
            CUSHIM_REAL_LIBCUDA=none \
            CUSHIM_PLUGINS="$plugin:$opts" -- "$smi" -L
        rc=$?
        remote_compare "remotert nvml" nvml $rc "$DATA/remote.nvml.native"
    else
        result "remotert nvml" SKIP "no nvidia-smi here"
    fi
    # 4. PyTorch
    if tmo 60 "$PY" -c 'import torch' 2> /dev/null; then
        tmo 120 "$PY" "$HERE/remote/torch_small.py" > "$DATA/remote.torch.native" 2> "$LOGS/remote.torch.native.err"
        remote_client torch 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
            CUSHIM_REAL_LIBCUDA=none CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
            CUSHIM_PLUGINS="$plugin:$opts" -- "$PY" "$HERE/remote/torch_small.py"
        rc=$?
        remote_compare "remotert torch" torch $rc "$DATA/remote.torch.native"
        # 5. PyTorch's cuBLAS and cuBLASLt paths (tests/gpu/remote/torch_blas.py): the results' bytes as native
        tmo 120 "$PY" "$HERE/remote/torch_blas.py" > "$DATA/remote.blas.native" 2> "$LOGS/remote.blas.native.err"
        remote_client blas 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
            CUSHIM_REAL_LIBCUDA=none CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
            CUSHIM_PLUGINS="$plugin:$opts" -- "$PY" "$HERE/remote/torch_blas.py"
        rc=$?
        remote_compare "remotert blas" blas $rc "$DATA/remote.blas.native"
        # 6. PyTorch training (tests/gpu/torch_train.py: cuBLAS, autograd, the caching allocator): losses and
        # parameters bitwise identical to native
        [ -s "$DATA/torch.native.out" ] || tmo 150 "$PY" "$HERE/torch_train.py" 40 >"$DATA/torch.native.out" 2>"$LOGS/torch.native.err"
        # cuBLAS and cuBLASLt interposed, as `cushim run --remote=` sets it: the server's run every call
        remote_client train 'libcuda\.so' LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" \
            CUSHIM_REAL_LIBCUDA=none CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
            CUSHIM_PLUGINS="$plugin:$opts" -- "$PY" "$HERE/torch_train.py" 40
        rc=$?
        remote_compare "remotert train" train $rc "$DATA/torch.native.out"
        # the server ran cuBLAS: its back end's log names the library it loaded (--verbose)
        grep -q "libcublas.*loaded" "$LOGS/remote.serve.log" ||
            result "remotert train cublas" FAIL "the server loaded no cuBLAS: $(grep -i cublas "$LOGS/remote.serve.log" | head -n 2 | tr '\n' ' ')"
    else
        result "remotert torch" SKIP "no torch for $PY"
    fi
    # 7. a hostile client speaking the wire itself, against the server's real cuBLAS and cuBLASLt (rm_num.c: objects
    # by number; rb_cublas.c: scalar ways): a made-up handle would make the real library read through it
    local liar=$BUILD_DIR/tests/e2e/e2e_remote_liar
    if [ -x "$liar" ]; then
        tmo 60 "$liar" "unix:$sock" > "$DATA/remote.liar.out" 2> "$LOGS/remote.liar.err"
        rc=$?
        if [ "$rc" = 0 ] && ! grep -q UNEXPECTED "$DATA/remote.liar.out"; then
            result "remotert liar" PASS "$(grep -c 'as expected' "$DATA/remote.liar.out") steps as expected on the real cuBLAS"
        else
            result "remotert liar" FAIL "exit $rc: $(grep UNEXPECTED "$DATA/remote.liar.out" | head -n 3 | tr '\n' ' ') $(head -c 200 "$LOGS/remote.liar.err")"
        fi
    else
        result "remotert liar" SKIP "$liar not built"
    fi
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
}
gpu_check remotert check_remotert

# remotewitness: issue 43's "per-API counts on the server equal a CUPTI witness in the server process".
# cushim-serve on the real driver with CUSHIM_COUNTS (each back end, a forked child, writes FILE.<pid>) and
# CUPTI's counter injected (tests/gpu/cupti_counter.c: every driver API call the driver itself sees, per back
# end); clients: vecadd through the drop-in and tests/gpu/remote/torch_small.py (PyTorch: the runtime's calls
# and the driver calls PyTorch makes). A second server without CUPTI tells CUPTI's own calls apart
# (compare_counts.py --shim-alone). PASS: every driver API's count on the server equals CUPTI's, or the difference
# has one of compare_counts.py's documented reasons.
check_remote_witness() {
    local serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so sock=$WORK/rw.sock
    local cupti=$BIN/libcupti_counter.so cuda=${CUDA_HOME:-/usr/local/cuda} cudart tag server rc line
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remotewitness" FAIL "$serve or $plugin missing"; return
    fi
    if [ ! -f "$cupti" ]; then result "remotewitness" FAIL "CUPTI counter not built (see build.log)"; return; fi
    cudart=$(ls "$cuda"/lib64/libcudart.so.13* "$cuda"/targets/x86_64-linux/lib/libcudart.so.13* 2>/dev/null | head -n 1)
    local dlp="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" opts="server=unix:$sock"
    local have_torch=0
    tmo 60 "$PY" -c 'import torch' 2>/dev/null && have_torch=1
    for tag in both alone; do
        rm -f "$sock" "$DATA/rw.$tag.counts"* "$DATA/rw.$tag.cupti"*
        local inj=()
        [ $tag = both ] && inj=(CUDA_INJECTION64_PATH="$cupti" CUPTI_COUNTER_OUT="$DATA/rw.$tag.cupti")
        env CUSHIM_SERVE_CUDART="$cudart" CUSHIM_REAL_LIBCUDA="$REAL_LIBCUDA" CUSHIM_COUNTS="$DATA/rw.$tag.counts" \
            "${inj[@]}" "$serve" --listen="unix:$sock" > "$LOGS/rw.$tag.serve.log" 2>&1 &
        server=$!
        for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
        tmo 60 env -u LD_PRELOAD LD_LIBRARY_PATH="$dlp" CUSHIM_REAL_LIBCUDA=none \
            CUSHIM_PLUGINS="$plugin:$opts" "$BUILD_DIR/examples/vecadd" > "$DATA/rw.$tag.vecadd" 2> "$LOGS/rw.$tag.vecadd.err"
        if [ $have_torch = 1 ]; then
            tmo 120 env LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" CUSHIM_REAL_LIBCUDA=none \
                CUSHIM_PLUGINS="$plugin:$opts" "$PY" "$HERE/remote/torch_small.py" > "$DATA/rw.$tag.torch" 2> "$LOGS/rw.$tag.torch.err"
        fi
        sleep 1   # the back ends exit when their clients go, writing their counts
        kill "$server" 2>/dev/null
        wait "$server" 2>/dev/null
    done
    if ! ls "$DATA"/rw.both.counts* >/dev/null 2>&1; then
        result "remotewitness" FAIL "the server wrote no counts ($(head -c 200 "$LOGS/rw.both.serve.log" | tr '\n' ' '))"; return
    fi
    # compare_counts.py sums FILE and FILE.<pid>; a server that wrote only children's files gets an empty FILE
    [ -e "$DATA/rw.both.counts" ] || : > "$DATA/rw.both.counts"
    [ -e "$DATA/rw.alone.counts" ] || : > "$DATA/rw.alone.counts"
    local calib=()
    [ -s "$CALIB" ] && calib=(--calib "$CALIB")
    "$PY" "$HERE/compare_counts.py" --shim "$DATA/rw.both.counts" --cupti "$DATA/rw.both.cupti" \
        --shim-alone "$DATA/rw.alone.counts" --apis "$APIS" --label remotewitness "${calib[@]}" \
        --server-own cuFuncGetParamInfo --server-own cuMemHostRegister_v2 --server-own cuMemHostUnregister \
        > "$LOGS/rw.counts.txt" 2>&1
    rc=$?
    line=$(grep '^RESULT' "$LOGS/rw.counts.txt" | tail -n 1)
    line=${line#RESULT PASS }
    line=${line#RESULT FAIL }
    local clients="vecadd $(grep -c . "$DATA/rw.both.vecadd") lines"
    [ $have_torch = 1 ] && clients+=", torch_small $(grep -c . "$DATA/rw.both.torch") lines"
    if [ $rc -eq 0 ]; then
        result "remotewitness" PASS "$line ($clients)"
    else
        result "remotewitness" FAIL "${line:-compare_counts.py failed, see logs/rw.counts.txt} $(grep -m 3 '^UNEXPLAINED' "$LOGS/rw.counts.txt" | awk '{print $2}' | tr '\n' ' ')"
    fi
}
gpu_check remotewitness check_remote_witness
