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

check_oversub() {
    local plugin=$BUILD_DIR/plugins/memlimit.so d=$WORK/oversub peak quota tn tq backed why=""
    mkdir -p "$d"
    if [ ! -f "$plugin" ]; then
        result "oversub train" FAIL "$plugin not built (tools/build-gpu-bundle.sh)"
        return
    fi
    tmo 300 env -u PYTORCH_CUDA_ALLOC_CONF "$PY" "$HERE/oversub/ov_train.py" >"$d/native" 2>"$LOGS/oversub-native.err"
    if grep -q '^skip' "$d/native"; then
        result "oversub train" SKIP "$(sed -n 's/^skip //p' "$d/native")"
        return
    fi
    peak=$(sed -n 's/^peak //p' "$d/native")
    tn=$(sed -n 's/^seconds //p' "$d/native")
    if [ -z "$peak" ] || [ -z "$tn" ]; then
        result "oversub native" FAIL "no figures: $(tail -n 2 "$LOGS/oversub-native.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    result "oversub native" PASS "peak $((peak >> 20)) MiB reserved, $tn s"
    quota=$(( (peak * 2 / 3) >> 20 ))MiB
    tmo 600 env -u PYTORCH_CUDA_ALLOC_CONF LD_PRELOAD="$SHIM" CUSHIM_LOG=info \
        CUSHIM_PLUGINS="$plugin:limit=$quota,oversubscribe=2" \
        "$PY" "$HERE/oversub/ov_train.py" >"$d/quota" 2>"$LOGS/oversub-train.err"
    backed=$(grep -c 'backed by host memory' "$LOGS/oversub-train.err")
    tq=$(sed -n 's/^seconds //p' "$d/quota")
    [ -n "$(grep '^loss ' "$d/native")" ] || why+="no native losses; "
    [ "$(grep -E '^(loss|params) ' "$d/quota")" = "$(grep -E '^(loss|params) ' "$d/native")" ] ||
        why+="losses differ from the unlimited run ($(grep -c '^loss ' "$d/quota") steps under the quota); "
    [ "$backed" -gt 0 ] || why+="no allocation was host-backed (the quota $quota did not bind?); "
    if [ -z "$why" ]; then
        result "oversub train" PASS "quota $quota for a $((peak >> 20)) MiB peak: losses identical, $backed host-backed allocations, $tq s against $tn s ($(awk -v a="$tq" -v b="$tn" 'BEGIN { printf "%.2fx", a / b }') slower)"
    else
        result "oversub train" FAIL "$why$(tail -n 1 "$LOGS/oversub-train.err" | cut -c1-160)"
    fi
    tmo 300 env -u PYTORCH_CUDA_ALLOC_CONF LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=$quota" \
        "$PY" "$HERE/oversub/ov_train.py" >"$d/refused" 2>"$LOGS/oversub-refused.err"
    if grep -q 'OutOfMemoryError' "$LOGS/oversub-refused.err"; then
        result "oversub refused" PASS "without oversubscription the quota $quota ends in torch.OutOfMemoryError"
    else
        result "oversub refused" FAIL "without oversubscription the run did not end in PyTorch's OOM: $(tail -n 1 "$LOGS/oversub-refused.err" | cut -c1-160)"
    fi
}

gpu_check oversub check_oversub
