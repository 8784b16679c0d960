# oversub.sh - GPU check of memlimit's oversubscription (plugins/memlimit/ml_oversub.c, docs/plugins/memlimit.md
# "Oversubscription"). Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu oversub` runs it (one GPU,
# about two minutes).
#
#   oversub native     tests/gpu/oversub/ov_train.py without the shim: its losses, its peak (what PyTorch's caching
#                      allocator reserved) and its time
#   oversub train      the same under memlimit with a quota of 2/3 of that peak (the run needs 1.5x its quota) and
#                      oversubscribe=2, PyTorch's default allocator (PYTORCH_CUDA_ALLOC_CONF without expandable
#                      segments): PASS when it finishes with losses and parameters identical to the native run and
#                      memlimit logged host-backed allocations; the detail reports the slowdown
#   oversub refused    information: the same quota without oversubscription ends in PyTorch's own OOM (the quota
#                      binds, so the train case's success is the oversubscription's)
#
# Check 'oversubvmm' (`bash tests/gpu/run.sh build-gpu oversubvmm`, about two minutes): the VMM path.
#   oversubvmm native  ov_train.py with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch maps cuMemCreate
#                      handles) without the shim: losses, peak, time
#   oversubvmm train   the same under a quota of 2/3 of that peak with oversubscribe=2: PASS when the losses and
#                      parameters are identical to that native run and memlimit logged cuMemCreate handles created
#                      in host memory; the detail reports the slowdown
#   oversubvmm refused information: the same quota without oversubscription ends in PyTorch's OOM
#
# Check 'oversubbw' (`bash tests/gpu/run.sh build-gpu oversubbw`, under a minute): tests/gpu/oversub/ov_bw.cu, built
# here with nvcc: a kernel reading and writing 1 GiB of managed memory advised to the CPU (the cuMemAlloc path)
# against VMM memory at a host location (the cuMemCreate path) and device memory, interleaved repetitions, CUDA
# events; the medians in GB/s are reported (information: the figure docs/plugins/memlimit.md "Managed memory or
# host-located VMM memory" waits for). SKIP where the device supports no host location for VMM memory.

# One oversubscription check (oversub, oversubvmm): ov_train.py without the shim, under memlimit with a quota of 2/3
# of its peak and oversubscribe=2, then under the quota alone. $1: the check's name (its results, $WORK/$1 and
# $LOGS/$1-*.err); $2: PYTORCH_CUDA_ALLOC_CONF ('': unset, PyTorch's default allocator); $3: the detail's label
# ('' for none); $4: the memlimit log line (a grep -E pattern) that counts a host-backed allocation; $5: what those
# lines are, in the detail.
oversub_case() {
    local name=$1 conf=$2 label=$3 pattern=$4 noun=$5 plugin=$BUILD_DIR/plugins/memlimit.so d=$WORK/$1
    local peak quota tn tq backed slower where="" why=""
    local -a pyenv=(-u PYTORCH_CUDA_ALLOC_CONF)
    [ -z "$conf" ] || pyenv=(PYTORCH_CUDA_ALLOC_CONF="$conf")
    mkdir -p "$d"
    if [ ! -f "$plugin" ]; then
        result "$name train" FAIL "$plugin not built (tools/build-gpu-bundle.sh)"
        return
    fi
    tmo 300 env "${pyenv[@]}" "$PY" "$HERE/oversub/ov_train.py" >"$d/native" 2>"$LOGS/$name-native.err"
    if grep -q '^skip' "$d/native"; then
        result "$name train" SKIP "$(sed -n 's/^skip //p' "$d/native")"
        return
    fi
    peak=$(sed -n 's/^peak //p' "$d/native")
    tn=$(sed -n 's/^seconds //p' "$d/native")
    if [ -z "$peak" ] || [ -z "$tn" ]; then
        result "$name native" FAIL "no figures: $(tail -n 2 "$LOGS/$name-native.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    result "$name native" PASS "${label:+$label: }peak $((peak >> 20)) MiB reserved, $tn s"
    quota=$(( (peak * 2 / 3) >> 20 ))MiB
    tmo 600 env "${pyenv[@]}" LD_PRELOAD="$SHIM" CUSHIM_LOG=info CUSHIM_PLUGINS="$plugin:limit=$quota,oversubscribe=2" \
        "$PY" "$HERE/oversub/ov_train.py" >"$d/quota" 2>"$LOGS/$name-train.err"
    backed=$(grep -cE "$pattern" "$LOGS/$name-train.err")
    tq=$(sed -n 's/^seconds //p' "$d/quota")
    [ -n "$(grep '^loss ' "$d/native")" ] || why+="no native losses; "
    [ "$(grep -E '^(loss|params) ' "$d/quota")" = "$(grep -E '^(loss|params) ' "$d/native")" ] ||
        why+="losses differ from the unlimited run ($(grep -c '^loss ' "$d/quota") steps under the quota); "
    [ "$backed" -gt 0 ] || why+="no $noun (the quota $quota did not bind? $(grep -m1 'could not be backed' "$LOGS/$name-train.err" | cut -c1-160)); "
    if [ -z "$why" ]; then
        slower=$(awk -v a="$tq" -v b="$tn" 'BEGIN { printf "%.2fx", a / b }')
        [ -z "$conf" ] ||   # VMM: where cuMemCreate put them
            where=" ($(grep -m1 -o 'location host[a-z_:0-9]*' "$LOGS/$name-train.err" || echo "location not logged"))"
        result "$name train" PASS "${label:+$label, }quota $quota for a $((peak >> 20)) MiB peak: losses identical, $backed $noun$where, $tq s against $tn s ($slower slower)"
    else
        result "$name train" FAIL "$why$(tail -n 1 "$LOGS/$name-train.err" | cut -c1-160)"
    fi
    tmo 300 env "${pyenv[@]}" LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=$quota" \
        "$PY" "$HERE/oversub/ov_train.py" >"$d/refused" 2>"$LOGS/$name-refused.err"
    if grep -q 'OutOfMemoryError' "$LOGS/$name-refused.err"; then
        result "$name refused" PASS "without oversubscription the quota $quota ends in torch.OutOfMemoryError"
    else
        result "$name refused" FAIL "without oversubscription the run did not end in PyTorch's OOM: $(tail -n 1 "$LOGS/$name-refused.err" | cut -c1-160)"
    fi
}

check_oversub() {
    oversub_case oversub "" "" 'backed by host memory' "host-backed allocations"
}

gpu_check oversub check_oversub

check_oversub_vmm() {
    oversub_case oversubvmm expandable_segments:True "expandable segments" 'cuMemCreate: .* backed by host memory' \
        "cuMemCreate handles in host memory"
}

gpu_check oversubvmm check_oversub_vmm

check_oversub_bw() {
    local nv=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc exe=$BIN/ov_bw out=$LOGS/oversubbw.out cuda=${CUDA_HOME:-/usr/local/cuda}
    command -v "$nv" >/dev/null 2>&1 || nv=nvcc
    mkdir -p "$BIN"
    if ! tmo 180 "$nv" -arch="${GPU_ARCH:-sm_90}" -O2 -o "$exe" "$HERE/oversub/ov_bw.cu" -L"$cuda/lib64" \
            -L"$cuda/lib64/stubs" -L"$cuda/targets/x86_64-linux/lib/stubs" -lcuda >"$LOGS/oversubbw-build.log" 2>&1; then
        result "oversubbw" FAIL "nvcc failed: $(tail -n 3 "$LOGS/oversubbw-build.log" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    tmo 180 "$exe" 1024 9 >"$out" 2>"$LOGS/oversubbw.err"
    if grep -q '^skip' "$out"; then
        result "oversubbw" SKIP "$(sed -n 's/^skip //p' "$out")"
    elif grep -q '^ratio ' "$out"; then
        result "oversubbw" PASS "1 GiB read+written, medians of 9 (min-max): location $(sed -n 's/^location //p' "$out"); $(awk '/^gbps/ { printf "%s %s GB/s (%s-%s); ", $2, $3, $4, $5 } /^ratio/ { printf "hostvmm/managed %s", $3 }' "$out")"
    else
        result "oversubbw" FAIL "no figures: $(tail -n 2 "$LOGS/oversubbw.err" | tr '\n' ' ' | cut -c1-200)"
    fi
}

gpu_check oversubbw check_oversub_bw
