# lua.sh - GPU checks of the lua plugin (docs/lua-policies.md), sourced by tests/gpu/run.sh.
#   lua quota oom     plugins/lua/examples/quota.lua with limit=512MiB: PyTorch's 1 GiB allocation fails in
#                     the policy and PyTorch raises its own torch.OutOfMemoryError (tests/gpu/torch_oom.py)
#   lua quota train   the same policy with limit=64GiB (never reached): the training losses are bitwise
#                     identical to native (tests/gpu/torch_train.py)
#   lua launches      launches.lua counts kernel launches per kernel name over the training run; its total
#                     must equal the shim's own CUSHIM_COUNTS of cuLaunchKernel*/cuLaunchKernelEx*/
#                     cuLaunchCooperativeKernel*, and the names must come from the driver (cuFuncGetName /
#                     cuKernelGetName)
#   lua launches trace  when the build has the trace plugin: the same run with the trace plugin too; the count
#                     of every kernel name equals the trace file's (tests/gpu/lua/compare_launches.py)
#   lua bench cost    bench/lua/run.sh on the real driver: a Lua before+after hook reading one parameter
#                     costs <= 300 ns more per cuCtxGetCurrent than an empty C hook (same run)
#   lua bench scale   the Lua-hooked cuCtxGetCurrent from 16 threads reaches >= 8x the 1-thread rate, or,
#                     where the machine's ceiling (an empty C hook on the same call, same run) is below 8x,
#                     90% of that ceiling
# liblua5.4.so.0 is not installed on the GPU machine: tools/build-gpu-bundle.sh puts a copy next to the
# plugin (build-gpu/plugins/), where the plugin looks after the system's.

check_lua() {
    local ex=$ROOT/plugins/lua/examples rc out err line
    if [ ! -f "$BUILD_DIR/plugins/lua.so" ]; then
        result "lua" FAIL "$BUILD_DIR/plugins/lua.so missing (tools/build-gpu-bundle.sh builds it)"
        return
    fi
    # quota: an allocation past the quota raises PyTorch's own OOM
    out=$DATA/lua-quota-oom.out err=$LOGS/lua-quota-oom.err
    tmo 120 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run --lua="$ex/quota.lua:limit=512MiB" \
        -- "$PY" "$HERE/torch_oom.py" oom >"$out" 2>"$err"
    rc=$?
    line=$(grep -h '^oom_check:' "$out" | tail -n 1)
    if [ $rc -eq 0 ] && [[ "$line" == "oom_check: PASS"* ]]; then
        result "lua quota oom" PASS "limit=512MiB: ${line#oom_check: PASS }"
    else
        result "lua quota oom" FAIL "rc $rc; ${line:-no oom_check line}; $(tail -n 3 "$err" | tr '\n' ' ' | cut -c1-240)"
    fi
    # quota not reached: identical losses
    [ -s "$DATA/torch.native.out" ] || tmo 150 "$PY" "$HERE/torch_train.py" 40 >"$DATA/torch.native.out" 2>"$LOGS/torch.native.err"
    out=$DATA/lua-quota-train.out err=$LOGS/lua-quota-train.err
    tmo 150 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run --lua="$ex/quota.lua:limit=64GiB" \
        -- "$PY" "$HERE/torch_train.py" 40 >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne 0 ]; then
        result "lua quota train" FAIL "rc $rc: $(tail -n 3 "$err" | tr '\n' ' ' | cut -c1-240)"
    elif ! cmp -s "$DATA/torch.native.out" "$out"; then
        result "lua quota train" FAIL "losses differ from native: $(diff "$DATA/torch.native.out" "$out" | head -n 3 | tr '\n' ' ')"
    else
        result "lua quota train" PASS "40 steps, losses and parameters bitwise identical to native"
    fi
    # launches per kernel name against the shim's own counts
    local rep=$DATA/lua-launches.txt counts=$DATA/lua-launches.counts total shim names generic
    out=$DATA/lua-launches.out err=$LOGS/lua-launches.err
    rm -f "$rep" "$counts" "$counts".*
    tmo 150 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run --counts="$counts" \
        --lua="$ex/launches.lua:report=$rep" -- "$PY" "$HERE/torch_train.py" 10 >"$out" 2>"$err"
    rc=$?
    total=$(awk -F'\t' '$1 == "launches" && $3 == "total" { print $2 }' "$rep" 2>/dev/null | tail -n 1)
    shim=$(cat "$counts" 2>/dev/null | awk -F'\t' '$1 ~ /^(cuLaunchKernel|cuLaunchKernelEx|cuLaunchCooperativeKernel)(_ptsz)?$/ { s += $2 } END { print s + 0 }')
    names=$(awk -F'\t' '$1 == "launches" && $3 != "total"' "$rep" 2>/dev/null | wc -l)
    generic=$(awk -F'\t' '$1 == "launches" && $3 ~ /^<function/' "$rep" 2>/dev/null | wc -l)
    if [ $rc -ne 0 ]; then
        result "lua launches" FAIL "rc $rc: $(tail -n 3 "$err" | tr '\n' ' ' | cut -c1-240)"
    elif [ -z "$total" ] || [ "$total" -lt 10 ] || [ "$total" != "$shim" ]; then
        result "lua launches" FAIL "policy total ${total:-none} vs CUSHIM_COUNTS cuLaunch* $shim"
    elif [ "$generic" -gt 0 ]; then
        result "lua launches" FAIL "$generic of $names kernels without a driver-given name"
    else
        result "lua launches" PASS "$total launches of $names kernels = CUSHIM_COUNTS cuLaunch* $shim; top: $(awk -F'\t' '$1 == "launches" && $3 != "total" { print $2 " " substr($3, 1, 50); exit }' "$rep")"
    fi
    # the same per kernel name against the trace plugin, when the build has it (same process, both plugins)
    if [ -f "$BUILD_DIR/plugins/trace.so" ]; then
        local trf=$DATA/lua-launches-trace.json rep2=$DATA/lua-launches-trace.txt
        rm -f "$trf" "$rep2"
        out=$DATA/lua-launches-trace.out err=$LOGS/lua-launches-trace.err
        tmo 150 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run --trace="$trf" \
            --trace-filter='cuLaunchKernel,cuLaunchKernelEx,cuLaunchCooperativeKernel' \
            --lua="$ex/launches.lua:report=$rep2" -- "$PY" "$HERE/torch_train.py" 10 >"$out" 2>"$err"
        rc=$?
        line=$(tmo 60 "$PY" "$HERE/lua/compare_launches.py" "$rep2" "$trf" 2>&1 | tail -n 1)
        if [ $rc -eq 0 ] && [[ "$line" == PASS* ]]; then
            result "lua launches trace" PASS "${line#PASS }"
        else
            result "lua launches trace" FAIL "rc $rc; ${line:-no comparison}; $(tail -n 2 "$err" | tr '\n' ' ' | cut -c1-200)"
        fi
    else
        result "lua launches trace" SKIP "no trace plugin in $BUILD_DIR/plugins (compared with CUSHIM_COUNTS above)"
    fi
    # benchmarks: per-call cost and 16-thread scaling on the real driver
    out=$DATA/lua-bench.md
    tmo 120 env BENCH_REAL=1 bash "$ROOT/bench/lua/run.sh" "$BUILD_DIR" 16 >"$out" 2>"$LOGS/lua-bench.err"
    rc=$?
    local diff s16 c16 phys
    diff=$(awk -F'|' '/difference/ { gsub(/ /, "", $3); print $3 }' "$out")
    s16=$(awk -F'|' '$2 ~ /^ *16 *$/ { gsub(/ /, "", $4); print $4 }' "$out")
    c16=$(awk -F'|' '$2 ~ /^ *16 *$/ { gsub(/ /, "", $6); print $6 }' "$out")
    phys=$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | wc -l)
    if [ $rc -ne 0 ] || [ -z "$diff" ]; then
        result "lua bench cost" FAIL "rc $rc: $(tail -n 2 "$LOGS/lua-bench.err" | tr '\n' ' ' | cut -c1-200)"
    elif awk -v d="$diff" 'BEGIN { exit !(d <= 300) }'; then
        result "lua bench cost" PASS "Lua before+after hook reading one parameter: +$diff ns/call over an empty C hook ($(awk -F'|' '/^\| empty C/ { gsub(/ /, "", $3); print $3 }' "$out") ns)"
    else
        result "lua bench cost" FAIL "+$diff ns/call over an empty C hook (target <= 300)"
    fi
    if [ -z "$s16" ]; then
        result "lua bench scale" FAIL "no 16-thread row: $(tail -n 2 "$LOGS/lua-bench.err" | tr '\n' ' ' | cut -c1-200)"
    elif awk -v s="$s16" -v c="${c16:-0}" 'BEGIN { exit !(s >= 8 || (c > 0 && c < 8 && s >= 0.9 * c)) }'; then
        # 8x is issue 8's target; where the machine itself does not scale that far (an empty C hook on the same
        # driver call is the ceiling: SMT siblings, the driver), Lua must reach 90% of that ceiling: no lock of its own
        result "lua bench scale" PASS "16 threads: ${s16}x the 1-thread calls/s; an empty C hook ${c16}x ($(nproc) CPUs, $phys physical cores)"
    else
        result "lua bench scale" FAIL "16 threads: ${s16}x the 1-thread calls/s (target >= 8, or >= 0.9 x the empty C hook's ${c16}x; $(nproc) CPUs, $phys physical cores)"
    fi
}

gpu_check lua check_lua
