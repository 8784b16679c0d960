# remotenccl: torch.distributed's NCCL back end and CUDA IPC over remoting on the real driver (docs/remote.md,
# "NCCL", "IPC"). One cushim-serve on this machine's driver serves every process: each rank, and each process of a
# torch.multiprocessing pair, is a client of its own (a back end each), with the remote plugin and NCCL interposed
# (CUSHIM_LIBS ... nccl, as `cushim run --remote=` sets it); the server runs PyTorch's own libnccl
# (CUSHIM_SERVE_NCCL), whose ranks meet through NCCL's transports on this host. tests/gpu/remote/torch_dist.py:
#   remotenccl one     one rank on GPU 0 (NCCL takes one rank per GPU per communicator, so one GPU allows one):
#                      all-reduce, broadcast, all-gather, reduce-scatter, a send/recv group to itself, barrier: the
#                      same output as natively
#   remotenccl ipc     a CUDA tensor sent through a torch.multiprocessing queue to a spawned child (cudaIpc*
#                      between two clients of one identity): the child reads it and adds 1, the parent sees it, as
#                      natively
#   remotenccl two     two ranks on GPUs 0 and 1 (needs a 2-GPU machine, nvidia-h100-x2: SKIP with one GPU): the
#                      same output as natively
#   remotenccl server  the server loaded libnccl and no back end refused an IPC open
# Uses remotert.sh's helpers (remote_server_env, remote_server_blas, remote_client, remote_compare).
check_remotenccl() {
    local serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so sock=$WORK/rn.sock
    local cuda=${CUDA_HOME:-/usr/local/cuda} rc tsite nccl ngpu
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remotenccl" FAIL "$serve or $plugin missing (build-gpu lacks the remoting)"
        return
    fi
    if ! tmo 60 "$PY" -c 'import torch.distributed' 2> /dev/null; then
        result "remotenccl" SKIP "no torch for $PY"
        return
    fi
    remote_server_env "$cuda"
    remote_server_blas "$cuda"
    tsite=$(tmo 60 "$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
    nccl=$(find "$tsite/nvidia" -name 'libnccl.so.2*' 2>/dev/null | head -n 1)
    echo "server NCCL: ${nccl:-by name (libnccl.so.2)}" > "$LOGS/rn.libs"
    rm -f "$sock"
    CUSHIM_SERVE_CUDART=$RS_CUDART CUSHIM_SERVE_CUBLAS=$RS_BLAS CUSHIM_SERVE_CUBLASLT=$RS_BLASLT \
        CUSHIM_SERVE_NCCL=$nccl "$serve" --listen="unix:$sock" --verbose > "$LOGS/rn.serve.log" 2>&1 &
    local server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
    if [ ! -S "$sock" ]; then
        result "remotenccl" FAIL "cushim-serve did not listen: $(head -c 300 "$LOGS/rn.serve.log")"
        kill "$server" 2>/dev/null
        return
    fi
    local dlp="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" opts="server=unix:$sock,stats=1"
    local cl=(LD_PRELOAD="$SHIM $plugin" LD_LIBRARY_PATH="$dlp" CUSHIM_REAL_LIBCUDA=none
              CUSHIM_LIBS=driver,runtime,nvml,nccl,cublas,cublaslt CUSHIM_PLUGINS="$plugin:$opts" NCCL_DEBUG=WARN)
    # 1. one rank
    tmo 180 "$PY" "$HERE/remote/torch_dist.py" nccl1 29611 > "$DATA/rn.one.native" 2> "$LOGS/rn.one.native.err"
    remote_client rn-one 'libcuda\.so' "${cl[@]}" -- "$PY" "$HERE/remote/torch_dist.py" nccl1 29612
    rc=$?
    remote_compare "remotenccl one" rn-one $rc "$DATA/rn.one.native"
    # 2. CUDA IPC through torch.multiprocessing
    tmo 180 "$PY" "$HERE/remote/torch_dist.py" ipc > "$DATA/rn.ipc.native" 2> "$LOGS/rn.ipc.native.err"
    remote_client rn-ipc 'libcuda\.so' "${cl[@]}" -- "$PY" "$HERE/remote/torch_dist.py" ipc
    rc=$?
    remote_compare "remotenccl ipc" rn-ipc $rc "$DATA/rn.ipc.native"
    # 3. two ranks on two GPUs
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    if [ "${ngpu:-0}" -ge 2 ]; then
        mkdir -p "$WORK/rn.two.native" "$WORK/rn.two.remote"
        tmo 240 "$PY" "$HERE/remote/torch_dist.py" nccl2 29613 "$WORK/rn.two.native" > "$DATA/rn.two.native" \
            2> "$LOGS/rn.two.native.err"
        remote_client rn-two 'libcuda\.so' "${cl[@]}" -- "$PY" "$HERE/remote/torch_dist.py" nccl2 29614 "$WORK/rn.two.remote"
        rc=$?
        remote_compare "remotenccl two" rn-two $rc "$DATA/rn.two.native"
    else
        result "remotenccl two" SKIP "$ngpu GPU(s): two ranks need two GPUs (the nvidia-h100-x2 kind)"
    fi
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    # 4. the server side: libnccl loaded by a back end, no IPC open refused (both processes are this uid's)
    if ! grep -q "libnccl.*loaded" "$LOGS/rn.serve.log"; then
        result "remotenccl server" FAIL "no back end loaded libnccl: $(grep -i nccl "$LOGS/rn.serve.log" | head -n 2 | tr '\n' ' ')"
    elif grep -q "Ipc.*refused" "$LOGS/rn.serve.log"; then
        result "remotenccl server" FAIL "an IPC open was refused: $(grep "Ipc.*refused" "$LOGS/rn.serve.log" | head -n 2 | tr '\n' ' ')"
    else
        result "remotenccl server" PASS "libnccl loaded ($(cat "$LOGS/rn.libs")); $(grep -c "ncclCommInitRank\|ncclAllReduce" "$LOGS/rn.serve.log") NCCL calls logged; no IPC refusal"
    fi
}
gpu_check remotenccl check_remotenccl
