# shellcheck shell=bash
# trace: the trace plugin (cushim run --trace) on real programs and the real driver.
#   trace torch            the PyTorch training loop traced: the JSON loads (Python), the program's output equals
#                          the native run's
#   trace counts-shim      per API, the trace's events equal the shim's own counts of the same run
#   trace kernel-names     every driver launch in the trace names its kernel (cuFuncGetName on the real driver)
#   trace counts-cupti     the trace's per-API counts against the CUPTI callback counter of the same run
#                          (compare_counts.py, the same reasons as the suite's (c) check)
#   trace static           a static-cudart program (app_static) traced end to end: counts equal the shim's,
#                          launches named
#   trace nvtx             torch.cuda.nvtx.range_push ranges appear on the launching thread (NVTX injection)
#   trace nvtxsum-file / nvtxsum-exit (and tracenccl's)
#                          cushim stats' nvtx_sum: each range of the file once, with its time (joined in Python
#                          apart from the tools' code), and the table at exit equal to cushim stats'
#   trace memops           with --trace-gpu: cushim stats' memory tables (count, bytes per operation) equal the file's copies
#                          and sets, and the table was printed at exit too
#   trace gpu-once / gpu-linked / gpu-witness
#                          with --trace-gpu: kernels on GPU tracks, each once, each linked to its launching call
#                          by a flow; as many kernels launched inside the NVTX range as the PyTorch profiler
#                          (CUPTI activity, a run without the shim) sees for the same steps
#   (check 'tracegpu': the gpu-once / gpu-linked / gpu-witness part alone)
#   trace overhead         median step time: native, --trace, --trace --trace-gpu, 2 interleaved rounds (reported;
#                          skipped when 'tracebench' is selected too, e.g. by 'all')
#   (check 'tracebench': the overhead figures of issue 11: TRACE_BENCH_ROUNDS (5) rounds of native, --trace,
#    [TRACE_BENCH_EXTRA="shim hooks": the shim alone, the shim with empty-ish hooks on every API (callcount.so)]
#    --trace --trace-gpu, CUPTI activity tracing alone (tests/gpu/trace/cupti_activity.c) and `nsys profile`
#    when nsys is found (TRACE_BENCH_NSYS=path|none), each a fresh process of TRACE_BENCH_STEPS (500) steps,
#    order rotated per round; medians, min..max, paired per-round percentages and the verdicts, reported as
#    PASS ("target met"/"target missed" in the text; tests/gpu/trace/tracebench.py))
#   (check 'tracedetach': --trace-gpu --trace-unhook with capture ranges: CUPTI detached in the pause and attached
#    again for the next range, against --trace-gpu-detach=0; see check_trace_detach)
#   (check 'tracefork': --trace-gpu and a forked child that makes driver calls and exits; see check_trace_fork)
#   (check 'traceprofiler': torch.profiler started inside a program traced with and without --trace-gpu; see
#    check_trace_profiler)
# 3. GPU activity and NVTX, against the PyTorch profiler as witness (a separate run: one CUPTI client each);
# also alone as check 'tracegpu'
trace_gpu_part() {
    local L=$ROOT/tools/cushim T=$HERE/trace p=$DATA/trace rc st name detail
    local -a env_l=(CUSHIM_BUILD_DIR="$BUILD_DIR")
    tmo 120 "$PY" "$T/trace_gpu.py" witness 5 "$p.witness" >/dev/null 2>"$LOGS/trace.witness.err"
    tmo 150 env "${env_l[@]}" "$L" run --trace="$p.gpu.json" --trace-gpu -- "$PY" "$T/trace_gpu.py" run 5 \
        >/dev/null 2>"$LOGS/trace.gpu.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        result "trace gpu" FAIL "rc $rc: $(tail -n 3 "$LOGS/trace.gpu.err" | tr '\n' ' ' | cut -c1-200)"
    elif [ ! -s "$p.witness" ]; then
        result "trace gpu" FAIL "the profiler witness failed: $(tail -n 2 "$LOGS/trace.witness.err" | tr '\n' ' ' | cut -c1-200)"
    else
        "$PY" "$T/trace_check.py" gpu "$p.gpu.json" "$p.witness" >"$LOGS/trace.gpu.txt" 2>&1
        tc_nvtxsum "$p.gpu.json" "$LOGS/trace.gpu.err" >>"$LOGS/trace.gpu.txt" 2>&1
        while read -r st name detail; do
            case $st in PASS|FAIL) result "trace $name" "$st" "$detail" ;; esac
        done <"$LOGS/trace.gpu.txt"
        grep -q '^PASS\|^FAIL' "$LOGS/trace.gpu.txt" ||
            result "trace gpu" FAIL "trace_check.py: $(tail -n 2 "$LOGS/trace.gpu.txt" | tr '\n' ' ' | cut -c1-200)"
        # the memory tables (cuda_gpu_mem_time_sum, _size_sum) of cushim stats against the file's copies and sets
        if env "${env_l[@]}" "$L" stats "$p.gpu.json" >"$LOGS/trace.gpu.stats" 2>&1 &&
            grep -q 'cuda_gpu_mem_time_sum' "$LOGS/trace.gpu.err" &&
            "$PY" "$T/trace_check.py" memops "$p.gpu.json" "$LOGS/trace.gpu.stats" >"$LOGS/trace.memops.txt" 2>&1; then
            result "trace memops" PASS "$(cut -d' ' -f3- "$LOGS/trace.memops.txt" | cut -c1-200)"
        else
            result "trace memops" FAIL "$(tail -n 1 "$LOGS/trace.memops.txt" "$LOGS/trace.gpu.stats" 2>/dev/null | cut -c1-200) (at exit: $(grep -c 'cuda_gpu_mem' "$LOGS/trace.gpu.err") tables)"
        fi
    fi
}

check_trace_gpu() {
    want trace && return   # 'trace' runs this part too
    if [ ! -f "$BUILD_DIR/plugins/trace.so" ]; then result "trace" FAIL "no $BUILD_DIR/plugins/trace.so"; return; fi
    rm -f "$DATA"/trace.gpu.json "$DATA"/trace.witness
    trace_gpu_part
}

check_trace() {
    local L=$ROOT/tools/cushim T=$HERE/trace p=$DATA/trace rc line st name detail
    local -a env_l=(CUSHIM_BUILD_DIR="$BUILD_DIR")
    if [ ! -f "$BUILD_DIR/plugins/trace.so" ]; then result "trace" FAIL "no $BUILD_DIR/plugins/trace.so"; return; fi
    rm -f "$p".*
    # 1. PyTorch traced, with the CUPTI callback counter in the same process (the counter uses the callback
    #    API, the tracer without --trace-gpu no CUPTI at all)
    tmo 180 env "${env_l[@]}" "${CUPTI_ENV[@]}" CUPTI_COUNTER_OUT="$p.torch.cupti" "$L" run \
        --trace="$p.torch.json" --counts="$p.torch.counts" -- "$PY" "$HERE/torch_train.py" 40 \
        >"$p.torch.out" 2>"$LOGS/trace.torch.err"
    rc=$?
    [ -s "$DATA/torch.native.out" ] || tmo 150 "$PY" "$HERE/torch_train.py" 40 >"$DATA/torch.native.out" 2>/dev/null
    if [ $rc -ne 0 ]; then
        result "trace torch" FAIL "rc $rc: $(tail -n 3 "$LOGS/trace.torch.err" | tr '\n' ' ' | cut -c1-200)"
    elif ! "$PY" -c "import json,sys; json.load(open(sys.argv[1]))" "$p.torch.json" 2>"$LOGS/trace.json.err"; then
        result "trace torch" FAIL "the trace does not load: $(tail -n 1 "$LOGS/trace.json.err")"
    elif [ -s "$DATA/torch.native.out" ] && ! cmp -s "$p.torch.out" "$DATA/torch.native.out"; then
        result "trace torch" FAIL "output differs from the native run's"
    else
        result "trace torch" PASS "$(du -k "$p.torch.json" | cut -f1) KiB trace; output equals native; $(grep -m1 'calls written' "$LOGS/trace.torch.err" | cut -c1-80)"
    fi
    "$PY" "$T/trace_check.py" api "$p.torch.json" "$p.torch.counts" >"$LOGS/trace.api.txt" 2>&1
    while read -r st name detail; do
        case $st in PASS|FAIL) result "trace $name" "$st" "$detail" ;; esac
    done <"$LOGS/trace.api.txt"
    # against CUPTI: the trace's counts in CUSHIM_COUNTS form; the run without the counter gives
    # compare_counts.py its shim-alone counts (CUPTI's own calls)
    if [ ${#CUPTI_ENV[@]} -gt 0 ] && [ $rc -eq 0 ]; then
        tmo 150 env "${env_l[@]}" "$L" run --trace="$p.alone.json" -- "$PY" "$HERE/torch_train.py" 40 \
            >/dev/null 2>"$LOGS/trace.alone.err"
        "$PY" "$T/trace_check.py" tsv "$p.torch.json" "$p.torch.tcounts" &&
            "$PY" "$T/trace_check.py" tsv "$p.alone.json" "$p.alone.tcounts"
        "$PY" "$HERE/compare_counts.py" --shim "$p.torch.tcounts" --cupti "$p.torch.cupti" \
            --shim-alone "$p.alone.tcounts" --apis "$APIS" --label trace-torch --calib "$CALIB" \
            --require-prefix cuLaunchKernel --plugin-own cuFuncGetName --plugin-own cuKernelGetName \
            >"$LOGS/trace.cupti.txt" 2>&1
        local crc=$?
        line=$(grep '^RESULT' "$LOGS/trace.cupti.txt" | tail -n 1)
        line=${line#RESULT PASS }
        line=${line#RESULT FAIL }
        if [ $crc -eq 0 ]; then result "trace counts-cupti" PASS "$line"
        else result "trace counts-cupti" FAIL "${line:-see logs/trace.cupti.txt} $(grep -m 3 '^UNEXPLAINED' "$LOGS/trace.cupti.txt" | awk '{print $2}' | tr '\n' ' ')"; fi
    else
        result "trace counts-cupti" SKIP "no CUPTI counter, or the traced run failed"
    fi
    # 2. a static-cudart program
    if [ -x "$BIN/app_static" ]; then
        tmo 90 env "${env_l[@]}" "$L" run --trace="$p.static.json.gz" --counts="$p.static.counts" -- \
            "$BIN/app_static" "$BIN/kern.cubin" "$BIN/kern.ptx" >"$p.static.out" 2>"$LOGS/trace.static.err"
        rc=$?
        "$PY" "$T/trace_check.py" api "$p.static.json.gz" "$p.static.counts" >"$LOGS/trace.static.txt" 2>&1
        if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$LOGS/trace.static.txt" && grep -q '^PASS' "$LOGS/trace.static.txt"; then
            result "trace static" PASS "$(grep -h '^PASS' "$LOGS/trace.static.txt" | cut -d' ' -f2- | cut -c1-90 | tr '\n' ';')"
        else
            result "trace static" FAIL "rc $rc; $(grep -h '^FAIL' "$LOGS/trace.static.txt" "$LOGS/trace.static.err" | head -n 2 | tr '\n' ' ' | cut -c1-200)"
        fi
    else
        result "trace static" FAIL "app_static not built"
    fi
    trace_gpu_part
    # 4. overhead of a training step (reported, not asserted); the full comparison is the check 'tracebench'
    want tracebench || trace_bench "trace overhead" 2 0
}

# tb_nsys: the nsys to compare with (TRACE_BENCH_NSYS=path, or =none for none), else nothing
tb_nsys() {
    local c
    case ${TRACE_BENCH_NSYS:-} in
    none) return 1 ;;
    ?*) [ -x "$TRACE_BENCH_NSYS" ] && echo "$TRACE_BENCH_NSYS"; return ;;
    esac
    c=$(command -v nsys 2>/dev/null) && { echo "$c"; return; }
    for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nsys" /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys \
             /opt/nvidia/nsight-systems*/*/bin/nsys /usr/local/cuda*/nsight-systems-*/bin/nsys; do
        [ -x "$c" ] && { echo "$c"; return; }
    done
    return 1
}

# tb_run CONFIG ROUND STEPS DIR: one process of the step benchmark (tests/gpu/trace/trace_gpu.py bench) in
# CONFIG; prints 'MEDIAN_NS<TAB>NOTES' (MEDIAN_NS empty when the run failed); stderr to $LOGS/tracebench.CONFIG.err
tb_run() {
    local cfg=$1 r=$2 steps=$3 d=$4 L=$ROOT/tools/cushim B=$HERE/trace/trace_gpu.py out err v note=""
    local -a env_l=(CUSHIM_BUILD_DIR="$BUILD_DIR") pin=()
    # TRACE_BENCH_PIN=CPUS (default 2-9 where taskset exists; "none" for no pinning): every process of every
    # configuration on the same cores, so that where the scheduler puts a process is not part of the figures
    case ${TRACE_BENCH_PIN:-2-9} in
    none) ;;
    *) command -v taskset >/dev/null 2>&1 && taskset -c "${TRACE_BENCH_PIN:-2-9}" true 2>/dev/null &&
        pin=(taskset -c "${TRACE_BENCH_PIN:-2-9}") ;;
    esac
    out=$d/$cfg.$r.out err=$d/$cfg.$r.err
    case $cfg in
    native) tmo 120 "${pin[@]}" "$PY" "$B" bench "$steps" ;;
    trace) tmo 120 "${pin[@]}" env "${env_l[@]}" CUSHIM_LOG=info "$L" run --trace="$d/t.json" -- "$PY" "$B" bench "$steps" ;;
    trace-gpu) tmo 120 "${pin[@]}" env "${env_l[@]}" CUSHIM_LOG=info "$L" run --trace="$d/t.json" --trace-gpu -- "$PY" "$B" bench "$steps" ;;
    cupti-act) tmo 120 "${pin[@]}" env CUDA_INJECTION64_PATH="$BIN/libcupti_activity.so" CUPTI_ACTIVITY_OUT="$d/cupti.$r" \
        "$PY" "$B" bench "$steps" ;;
    shim) tmo 120 "${pin[@]}" env LD_PRELOAD="$SHIM" "$PY" "$B" bench "$steps" ;;
    hooks) tmo 120 "${pin[@]}" env LD_PRELOAD="$SHIM" \
        CUSHIM_PLUGINS="$BUILD_DIR/sdk-examples/c-plugin/callcount.so:select=all,top=3,output=$d/callcount.$r" \
        "$PY" "$B" bench "$steps" ;;
    nsys) tmo 180 "${pin[@]}" "$TB_NSYS" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
        --output="$d/rep.$r" "$PY" "$B" bench "$steps" ;;
    esac >"$out" 2>"$err"
    v=$(awk '/^median_step_ns/ { print $2 }' "$out" | tail -n 1)
    case $cfg in
    trace|trace-gpu)   # the plugin's cost line (plugins/trace/tr_writer.c)
        note=$(sed -n 's/^cushim trace: \([0-9.]*\) record bytes and \([0-9.]*\) file bytes per call; writer \([0-9.]*\) M calls.*/rec=\1;file=\2;rate=\3/p' "$err" | tail -n 1)
        rm -f "$d/t.json" ;;
    cupti-act) note="kernel=$(awk '$1 == "kernel" { print $2 }' "$d/cupti.$r" 2>/dev/null)" ;;
    nsys) rm -f "$d/rep.$r".* ;;
    esac
    { echo "== $cfg round $r: rc/median '${v}'"; tail -n 40 "$err"; } >>"$LOGS/tracebench.$cfg.err"
    printf '%s\t%s\n' "$v" "$note"
}

# trace_bench NAME ROUNDS COMPARE: the step time of the PyTorch loop natively, with --trace and with --trace
# --trace-gpu (and with COMPARE=1 under nsys profile when found, and with CUPTI activity tracing alone), each
# round every configuration once in a fresh process, the order rotated per round; stops early when the next
# round would not fit the suite's time left. Reports result NAME PASS with the figures (tracebench.py).
trace_bench() {
    local name=$1 rounds=$2 compare=$3 steps=${TRACE_BENCH_STEPS:-500} d=$WORK/tracebench tsv=$LOGS/tracebench.tsv
    local -a cfgs=(native trace trace-gpu)
    # TRACE_BENCH_EXTRA="shim hooks": also the shim alone and the shim with the SDK example plugin counting
    # every call (a pre hook on every API): where a step's overhead comes from
    # shellcheck disable=SC2206
    cfgs+=(${TRACE_BENCH_EXTRA:-})
    local r k n t0 took=0 cut="" line
    rm -rf "$d"
    mkdir -p "$d"
    : >"$tsv"
    rm -f "$LOGS"/tracebench.*.err
    TB_NSYS=""
    if [ "$compare" = 1 ]; then
        if [ -f "$BIN/libcupti_activity.so" ]; then cfgs+=(cupti-act)
        else cut="no libcupti_activity.so (build.log); "; fi
        TB_NSYS=$(tb_nsys) && cfgs+=(nsys)
        echo "nsys: ${TB_NSYS:-none found}" >"$LOGS/tracebench.nsys.txt"
        [ -n "$TB_NSYS" ] && "$TB_NSYS" --version >>"$LOGS/tracebench.nsys.txt" 2>&1
    fi
    n=${#cfgs[@]}
    for ((r = 0; r < rounds; r++)); do
        if [ "$r" -gt 0 ] && [ "$(time_left)" -lt $((took + 20)) ]; then
            cut="${cut}stopped after $r of $rounds rounds (suite time budget); "
            break
        fi
        t0=$(date +%s)
        for ((k = 0; k < n; k++)); do
            local cfg=${cfgs[$(((k + r) % n))]}
            printf '%d\t%s\t%s\n' "$r" "$cfg" "$(tb_run "$cfg" "$r" "$steps" "$d")" >>"$tsv"
        done
        took=$(($(date +%s) - t0))
    done
    "$PY" "$HERE/trace/tracebench.py" "$tsv" --md "$LOGS/tracebench.md" >"$LOGS/tracebench.txt" 2>&1
    local prc=$?
    line=$(grep -m1 '^DETAIL ' "$LOGS/tracebench.txt")
    line=${line#DETAIL }
    if [ $prc -eq 0 ] && [ -n "$line" ]; then
        result "$name" PASS "$cut$steps steps/process, ${took}s a round; $line"
    else
        result "$name" FAIL "$cut${line:-tracebench.py rc $prc: $(tail -n 2 "$LOGS/tracebench.txt" | tr '\n' ' ' | cut -c1-200)} (logs/tracebench.*.err)"
    fi
    rm -rf "$d"
}

# tracebench: the overhead figures of issue 11 alone, TRACE_BENCH_ROUNDS (5) rounds
check_trace_bench() {
    if [ ! -f "$BUILD_DIR/plugins/trace.so" ]; then result "tracebench" FAIL "no $BUILD_DIR/plugins/trace.so"; return; fi
    trace_bench "tracebench" "${TRACE_BENCH_ROUNDS:-5}" 1
}
# traceab: the recording's cost on the PyTorch step inside one process (trace_gpu.py abbench under
# --trace-toggle=USR2: ABBA blocks recording / paused; the paused blocks still pay the shim's hook dispatch,
# which the 'hooks' configuration of tracebench and bench/gpu's shim+hooks measure). TRACE_AB_RUNS (3)
# processes of TRACE_AB_BLOCKS (24) blocks of TRACE_AB_STEPS (50) steps; reported, never asserted.
# TRACE_AB_ARGS: more launcher options (e.g. "--trace-defer --trace-buffer=2GiB"); "--trace-unhook" makes the
# paused blocks drop the hooks: the ratio is then the whole cost of --trace against the shim with no plugin.
# TRACE_AB_MODEL=mlp|transformer (trace_gpu.py's TRACE_GPU_MODEL): the launch-bound MLP step (default) or a
# larger transformer step (~21 ms, ~9,100 calls a step on an H200).
# TRACE_AB_BASE=DIR (DIR/runtime/libcushim.so, DIR/plugins/trace.so: another build, e.g. the last commit's):
# each round runs that build's process too, in alternating order, and its median ratio is reported beside.
check_trace_ab() {
    local L=$ROOT/tools/cushim B=$HERE/trace/trace_gpu.py d=$WORK/traceab r v k all="" base_all="" which
    local -a env_l=(CUSHIM_BUILD_DIR="$BUILD_DIR") env_b env_r order
    if [ ! -f "$BUILD_DIR/plugins/trace.so" ]; then result "traceab" FAIL "no $BUILD_DIR/plugins/trace.so"; return; fi
    if [ -n "${TRACE_AB_BASE:-}" ]; then
        if [ ! -f "$TRACE_AB_BASE/runtime/libcushim.so" ] || [ ! -f "$TRACE_AB_BASE/plugins/trace.so" ]; then
            result "traceab" FAIL "TRACE_AB_BASE=$TRACE_AB_BASE has no runtime/libcushim.so and plugins/trace.so"
            return
        fi
        env_b=(CUSHIM_BUILD_DIR="$BUILD_DIR" CUSHIM_LIB="$(cd "$TRACE_AB_BASE" && pwd)/runtime/libcushim.so")
    fi
    mkdir -p "$d"
    for ((r = 0; r < ${TRACE_AB_RUNS:-3}; r++)); do
        order=(new)
        [ -n "${TRACE_AB_BASE:-}" ] && { if ((r % 2)); then order=(base new); else order=(new base); fi; }
        for which in "${order[@]}"; do
            k=$r env_r=("${env_l[@]}")
            [ "$which" = base ] && k=base.$r env_r=("${env_b[@]}")
            # shellcheck disable=SC2086  # TRACE_AB_ARGS: more launcher options, word-split on purpose
            tmo 150 env "${env_r[@]}" TRACE_GPU_MODEL="${TRACE_AB_MODEL:-mlp}" "$L" run --trace="$d/t.json" --trace-toggle=USR2 ${TRACE_AB_ARGS:-} -- \
                "$PY" "$B" abbench "${TRACE_AB_BLOCKS:-24}" "${TRACE_AB_STEPS:-50}" >"$LOGS/traceab.$k.out" \
                2>"$LOGS/traceab.$k.err"
            v=$(awk '/^ab_ratio/ {print $2}' "$LOGS/traceab.$k.out")
            if [ "$which" = base ]; then base_all+="${v:-fail} "; else all+="${v:-fail} "; fi
            rm -f "$d/t.json"
        done
    done
    local med base_med=""
    med=$(printf '%s\n' $all | grep -v fail | median)
    [ -n "${TRACE_AB_BASE:-}" ] &&
        base_med=$(printf '%s\n' $base_all | grep -v fail | median)
    if [ -z "$med" ]; then
        result "traceab" FAIL "no run gave a ratio: $(tail -n 2 "$LOGS/traceab.0.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    result "traceab" PASS "recording / paused step time in one process (model ${TRACE_AB_MODEL:-mlp})${TRACE_AB_ARGS:+ ($TRACE_AB_ARGS)}, median of runs: $med (runs: $all); \
$(awk '/^ab_on_ns|^ab_off_ns/ {printf "%s %s ", $1, $2}' "$LOGS/traceab.0.out")(run 0)\
${TRACE_AB_BASE:+; base build $TRACE_AB_BASE, same rounds interleaved: ${base_med:-no ratio} (runs: $base_all)}"
}
# tracegpuab: --trace-gpu against CUPTI activity tracing alone inside one process (issue 11's third target, which
# separate processes cannot resolve: tracebench's ±15% between processes). build-gpu/gpuab holds a trace plugin
# built with bench/gpu/trace_gpuab.c (tools/build-gpu-bundle.sh; plugins/trace/tr_cupti_int.h) that trace_gpu.py abbench runs under
# --trace --trace-gpu --trace-toggle=USR2 --trace-unhook: the recording blocks are --trace-gpu as shipped (every
# call recorded, the GPU work linked through CUPTI callbacks on the launch, copy and set functions); in the paused
# blocks the trace's hooks are removed, its CUPTI callbacks turned off and CUPTI records every driver and runtime
# call as activity instead (the kinds tests/gpu/trace/cupti_activity.c enables: what a CUPTI activity tracer
# pays); CUPTI's kernel, copy and set records stay on in both. CUPTI keeps part of the API records' per-call cost
# after they are disabled, so on resuming the plugin detaches CUPTI (cuptiFinalize) and attaches it again as at
# start. Each switch is followed twice by TRACE_AB_SETTLE_MS (200) ms of sleep and an untimed step. TRACE_GPUAB_RUNS (3)
# processes of TRACE_AB_BLOCKS (24, a multiple of 4) blocks of TRACE_AB_STEPS (50) steps, TRACE_AB_MODEL as for
# traceab. Checked: every block change switched CUPTI without a failure, every resume detached and attached it
# again, and CUPTI recorded API activity while paused; the recording blocks' call times are in the detail (against
# bench/gpu/cupti_cost.sh's trace-gpu column: nothing of CUPTI's API records left in them); the ratio (recording /
# paused) is reported, never asserted.
check_trace_gpu_ab() {
    local L=$ROOT/tools/cushim B=$HERE/trace/trace_gpu.py d=$WORK/tracegpuab G=$BUILD_DIR/gpuab r v all="" line
    local blocks=${TRACE_AB_BLOCKS:-24} bad="" rec sw fl ra
    tc_begin tracegpuab "$d" torch "no torch" || return
    if [ ! -f "$G/plugins/trace.so" ] || [ ! -f "$G/runtime/libcushim.so" ]; then
        result tracegpuab FAIL "no $G/plugins/trace.so (tools/build-gpu-bundle.sh builds it)"
        return
    fi
    for ((r = 0; r < ${TRACE_GPUAB_RUNS:-3}; r++)); do
        tmo 240 env CUSHIM_BUILD_DIR="$G" TRACE_AB_SETTLE_MS="${TRACE_AB_SETTLE_MS:-200}" \
            TRACE_GPU_MODEL="${TRACE_AB_MODEL:-mlp}" "$L" run --trace="$d/t.json" --trace-gpu --trace-toggle=USR2 \
            --trace-unhook -- "$PY" "$B" abbench "$blocks" "${TRACE_AB_STEPS:-50}" >"$LOGS/tracegpuab.$r.out" \
            2>"$LOGS/tracegpuab.$r.err"
        v=$(awk '/^ab_ratio/ {print $2}' "$LOGS/tracegpuab.$r.out")
        all+="${v:-fail} "
        line=$(grep -m 1 '^cushim trace gpu-ab:' "$LOGS/tracegpuab.$r.err")
        read -r rec sw fl ra < <(printf '%s\n' "$line" | sed -E 's/^cushim trace gpu-ab: ([0-9]+) API activity records while paused, ([0-9]+) switches, ([0-9]+) failed, [0-9]+ callbacks switched, ([0-9]+) detached.*/\1 \2 \3 \4/')
        # ABBA blocks: the state changes before every odd block, a resume before every fourth from the fourth
        if [ -z "$line" ] || [ "${sw:-0}" != $((blocks / 2)) ] || [ "${fl:-1}" != 0 ] || [ "${rec:-0}" -le 0 ] ||
           [ "${ra:-0}" != $((blocks / 4)) ]; then
            bad+="run $r: ${line:-no gpu-ab line ($(tail -n 1 "$LOGS/tracegpuab.$r.err" | cut -c1-120))}, expected $((blocks / 2)) switches and $((blocks / 4)) attached again; "
        fi
        rm -f "$d/t.json"
    done
    local med
    med=$(printf '%s\n' $all | grep -v fail | median)
    if [ -n "$bad" ] || [ -z "$med" ]; then
        result tracegpuab FAIL "${bad:-no run gave a ratio: $(tail -n 2 "$LOGS/tracegpuab.0.err" | tr '\n' ' ' | cut -c1-200)}"
        return
    fi
    # the recording blocks' calls as the table at exit times them: CUPTI work left in them after a switch shows here
    local meds
    meds=$(awk '$NF == "cuCtxGetCurrent" || $NF == "cudaGetDevice" {if (NF == 9) printf "%s med %s ns, ", $NF, $5}' "$LOGS/tracegpuab.0.err")
    result tracegpuab PASS "--trace-gpu / CUPTI activity tracing, step time in one process (model ${TRACE_AB_MODEL:-mlp}), median of runs: $med (runs: $all; no slower: $(awk -v m="$med" 'BEGIN {print (m <= 1.0) ? "shown" : "not shown"}')); $(awk '/^ab_on_ns|^ab_off_ns/ {printf "%s %s ", $1, $2}' "$LOGS/tracegpuab.0.out")(run 0); recording blocks: ${meds}(run 0); $(grep -m 1 '^cushim trace gpu-ab:' "$LOGS/tracegpuab.0.err" | cut -d: -f2 | cut -c1-150)"
}
# tracedetach: --trace-gpu --trace-unhook --trace-capture=cudaProfilerApi on trace_gpu.py detach (two capture
# ranges with a pause of TRACE_DETACH_PAUSE (3) s between): with the default gpu_detach (1 s) CUPTI is detached
# in the pause and attached again for the second range - every launch of both ranges has its kernel, none are
# seen late in the pause, the file and the summary count it ('detached'); with --trace-gpu-detach=0 kernels are
# seen all through the pause ('attached'). The paused steps' cost: per process, the median step of the pause's
# late part over that of its early part (CUPTI attached in both parts with gpu_detach=0), TRACE_DETACH_RUNS (2)
# processes of each, interleaved; and the same for a burst of launches after each step ('launch-cost': the
# launches' CPU time, which a step's GPU time and Python hide); reported, not asserted.
check_trace_detach() {
    local L=$ROOT/tools/cushim B=$HERE/trace/trace_gpu.py d=$WORK/tracedetach r c e l pause=${TRACE_DETACH_PAUSE:-3}
    local -A ratios=([detach]= [attached]=) early=([detach]= [attached]=) bratios=([detach]= [attached]=) bearly=([detach]= [attached]=)
    tc_begin tracedetach "$d" torch "no torch" || return
    for ((r = 0; r < ${TRACE_DETACH_RUNS:-2}; r++)); do
        for c in detach attached; do
            local -a extra=()
            [ "$c" = attached ] && extra=(--trace-gpu-detach=0)
            if ! tc_traced "tracedetach $c" "${TRACE_DETACH_TMO:-150}" "$LOGS/tracedetach.$c.$r.out" "$LOGS/tracedetach.$c.$r.err" \
                --trace="$d/$c.$r.json" --trace-gpu --trace-unhook --trace-capture=cudaProfilerApi "${extra[@]}" -- \
                "$PY" "$B" detach 20 "$pause" 1; then
                ratios[$c]+="fail "
                continue
            fi
            if [ "$r" = 0 ]; then
                "$PY" "$HERE/trace/trace_check.py" detach "$d/$c.$r.json" "$LOGS/tracedetach.$c.$r.err" \
                    "$([ "$c" = detach ] && echo 1 || echo 0)" >"$LOGS/tracedetach.$c.txt" 2>&1
                tc_results "tracedetach $c" "$LOGS/tracedetach.$c.txt" "tracedetach $c"
            fi
            read -r e l < <(td_ratio "$LOGS/tracedetach.$c.$r.out" pause 1)
            ratios[$c]+="$e "
            early[$c]+="$l "
            read -r e l < <(td_ratio "$LOGS/tracedetach.$c.$r.out" burst 0)
            bratios[$c]+="$e "
            bearly[$c]+="$l "
            rm -f "$d/$c.$r.json"
        done
    done
    td_result "tracedetach cost" "paused steps" "${ratios[detach]}" "${ratios[attached]}" \
        "ns early/late: detached ${early[detach]}, attached ${early[attached]}"
    td_result "tracedetach launch-cost" "paused launch bursts" "${bratios[detach]}" "${bratios[attached]}" \
        "ns a launch early/late: detached ${bearly[detach]}, attached ${bearly[attached]}"
}
# td_ratio OUT KEY STEP: from trace_gpu.py detach's output OUT, 'RATIO EARLY/LATE': the late part's median over the
# early part's ('KEY_early_ns MEDIAN N', 'KEY_late_ns ...'), and the two medians (STEP 1), or each over its N (0: a
# burst's N launches); 'fail' for what is missing
td_ratio() {
    awk -v k="$2" -v step="$3" '$1 == k "_early_ns" {e = $2} $1 == k "_late_ns" {l = $2; n = $3}
        END {if (e > 0 && l > 0 && (step || n > 0)) {d = step ? 1 : n; printf "%.4f %.0f/%.0f\n", l / e, e / d, l / d}
             else print "fail fail"}' "$1"
}
# td_result NAME WHAT DETACHED ATTACHED MORE: NAME's result from the processes' late / early ratios of each
# configuration (median; SKIP when a configuration has none)
td_result() {
    local md ma
    md=$(printf '%s\n' $3 | grep -v fail | median)
    ma=$(printf '%s\n' $4 | grep -v fail | median)
    if [ -z "$md" ] || [ -z "$ma" ]; then
        result "$1" SKIP "a configuration gave no figures (detached: $3; attached: $4)"
        return
    fi
    result "$1" PASS "$2, late / early part of the pause (median of processes): CUPTI detached $md ($3), kept attached $ma ($4); $5"
}
# tracefork: --trace-gpu on trace_gpu.py fork: a child forked after the parent's GPU work was traced (CUPTI started)
# calls three driver functions and exits normally; it must end by itself (a CUPTI flush at its exit could wait on
# the parent's threads, gone in the child), write its own file saying GPU tracing is off there, and leave the
# parent's tracing whole. 'paused': with --trace-unhook --trace-capture=cudaProfilerApi, the fork 1.5 s into a
# pause (CUPTI detached in the parent), the parent's second range attached again.
check_trace_fork() {
    local B=$HERE/trace/trace_gpu.py d=$WORK/tracefork v
    tc_begin tracefork "$d" torch "no torch" || return
    for v in plain paused; do
        local -a extra=()
        [ "$v" = paused ] && extra=(--trace-unhook --trace-capture=cudaProfilerApi)
        tc_traced "tracefork $v" "${TRACE_FORK_TMO:-150}" "$LOGS/tracefork.$v.out" "$LOGS/tracefork.$v.err" \
            --trace="$d/$v.json" --trace-gpu "${extra[@]}" -- "$PY" "$B" fork 5 "$([ "$v" = paused ] && echo paused)" ||
            continue
        "$PY" "$HERE/trace/trace_check.py" fork "$d/$v.json" "$LOGS/tracefork.$v.out" \
            "$([ "$v" = paused ] && echo 1 || echo 0)" >"$LOGS/tracefork.$v.txt" 2>&1
        tc_results "tracefork $v" "$LOGS/tracefork.$v.txt" "tracefork $v"
    done
}
# traceprofiler: other CUPTI clients in a program traced with --trace-gpu (trace_gpu.py profiler: torch.profiler
# over its middle range 'profiled'). gpu: the trace starts CUPTI at the program's first CUDA call and keeps its one
# callback subscriber (CUPTI before 13.3): every launch before, during and after the profiler keeps its kernel, and
# what the profiler saw is reported. inject: the same with a CUPTI injection library loaded by the driver at cuInit
# (libcupti_activity.so, CUPTI_ACTIVITY_KINDS=gpu+cb: a subscriber and activity buffers, as Nsight's injection
# has) - still every launch linked, and what the library said. first: the profiler entered before the program's
# first CUDA work (trace_gpu.py profilerfirst) - the same. nogpu: --trace alone leaves CUPTI to the program: the
# profiler sees what it sees untraced.
check_trace_profiler() {
    local B=$HERE/trace/trace_gpu.py d=$WORK/traceprofiler v
    tc_begin traceprofiler "$d" torch.profiler "no torch.profiler" || return
    tmo 120 "$PY" "$B" profiler 5 >"$d/native.out" 2>"$LOGS/traceprofiler.native.err"
    tmo 120 "$PY" "$B" profilerfirst 5 >"$d/native.first.out" 2>"$LOGS/traceprofiler.native.first.err"
    for v in gpu inject first nogpu; do
        local -a extra=() inj=()
        local mode=profiler nat=$d/native.out
        [ "$v" = first ] && mode=profilerfirst nat=$d/native.first.out
        [ "$v" = nogpu ] || extra=(--trace-gpu)
        if [ "$v" = inject ]; then
            [ -f "$BIN/libcupti_activity.so" ] ||
                { result "traceprofiler inject" SKIP "no libcupti_activity.so (build.log)"; continue; }
            inj=(CUDA_INJECTION64_PATH="$BIN/libcupti_activity.so" CUPTI_ACTIVITY_KINDS=gpu+cb
                 CUPTI_ACTIVITY_OUT="$d/inject.cnt")
        fi
        tc_traced "traceprofiler $v" 150 "$d/$v.out" "$LOGS/traceprofiler.$v.err" --trace="$d/$v.json" \
            "${extra[@]}" -- env "${inj[@]}" "$PY" "$B" "$mode" 5 || continue
        "$PY" "$HERE/trace/trace_check.py" profiler "$d/$v.json" "$d/$v.out" "$LOGS/traceprofiler.$v.err" "$v" \
            "$nat" >"$LOGS/traceprofiler.$v.txt" 2>&1
        tc_results traceprofiler "$LOGS/traceprofiler.$v.txt" "traceprofiler $v"
    done
}
# tc_begin CHECK DIR MODULE WHY: the plugin is built (else CHECK fails) and Python imports MODULE (else CHECK is
# skipped for WHY): 0, and DIR made empty; else 1
tc_begin() {
    if [ ! -f "$BUILD_DIR/plugins/trace.so" ]; then result "$1" FAIL "no $BUILD_DIR/plugins/trace.so"; return 1; fi
    "$PY" -c "import $3" 2>/dev/null || { result "$1" SKIP "$4"; return 1; }
    rm -rf "$2"
    mkdir -p "$2"
}
# traceranks: a torchrun job of two ranks on one GPU (ranks.py, gloo for its barriers) traced with
# --trace=t.%q{RANK}.json (one file per rank, named by the rank) and with one fixed name (the ranks write at the
# same time: the first holds it, the other writes it with its pid before .json and says so); every file loads,
# each rank's launches are in its own file.
check_trace_ranks() {
    local L=$ROOT/tools/cushim d=$WORK/traceranks rc f n
    local -a env_l=(CUSHIM_BUILD_DIR="$BUILD_DIR")
    tc_begin traceranks "$d" torch.distributed.run "no torch (torchrun)" || return
    tmo 180 env "${env_l[@]}" "$L" run --trace="$d/r.%q{RANK}.json" -- "$PY" -m torch.distributed.run --standalone \
        --nproc_per_node=2 "$HERE/trace/ranks.py" >"$LOGS/traceranks.q.out" 2>"$LOGS/traceranks.q.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        result "traceranks q" FAIL "rc $rc: $(tail -n 3 "$LOGS/traceranks.q.err" | tr '\n' ' ' | cut -c1-200)"
    elif "$PY" "$HERE/trace/trace_check.py" ranks --all "$d/r.0.json" "$d/r.1.json" >"$LOGS/traceranks.q.txt" 2>&1; then
        result "traceranks q" PASS "r.0.json, r.1.json: $(tail -n 1 "$LOGS/traceranks.q.txt")"
    else
        result "traceranks q" FAIL "$(ls "$d" | tr '\n' ' '): $(tail -n 2 "$LOGS/traceranks.q.txt" | tr '\n' ' ' | cut -c1-200)"
    fi
    tmo 180 env "${env_l[@]}" "$L" run --trace="$d/s.json" -- "$PY" -m torch.distributed.run --standalone \
        --nproc_per_node=2 "$HERE/trace/ranks.py" >"$LOGS/traceranks.s.out" 2>"$LOGS/traceranks.s.err"
    rc=$?
    n=$(grep -c "is being written by another process" "$LOGS/traceranks.s.err")
    local -a files=("$d"/s.*json)
    if [ $rc -ne 0 ]; then
        result "traceranks shared" FAIL "rc $rc: $(tail -n 3 "$LOGS/traceranks.s.err" | tr '\n' ' ' | cut -c1-200)"
    elif [ "$n" -lt 1 ] || [ ! -f "$d/s.json" ]; then
        result "traceranks shared" FAIL "no rank found s.json held ($n warnings): $(ls "$d" | tr '\n' ' ')"
    elif "$PY" "$HERE/trace/trace_check.py" ranks "${files[@]}" >"$LOGS/traceranks.s.txt" 2>&1; then
        result "traceranks shared" PASS "$(for f in "${files[@]}"; do printf '%s ' "${f##*/}"; done)($n said held): $(tail -n 1 "$LOGS/traceranks.s.txt")"
    else
        result "traceranks shared" FAIL "$(tail -n 2 "$LOGS/traceranks.s.txt" | tr '\n' ' ' | cut -c1-200)"
    fi
}
# tracecapture: capture ranges on PyTorch (capture.py: 8 steps, steps 3 and 4 inside torch.cuda.profiler.start()/
# stop() and an NVTX range 'capture'): --trace-capture=cudaProfilerApi, and nvtx:capture with --trace-unhook (the
# hooks added at the range's start on the pushing thread); only steps 3 and 4's calls recorded, the same launches
# in each; the loss lines equal an untraced run's.
check_trace_capture() {
    local L=$ROOT/tools/cushim d=$WORK/tracecapture rc kind name
    local -a env_l=(CUSHIM_BUILD_DIR="$BUILD_DIR")
    tc_begin tracecapture "$d" torch "no torch" || return
    tmo 120 "$PY" "$HERE/trace/capture.py" >"$d/native.out" 2>"$LOGS/tracecapture.native.err"
    for kind in cudaProfilerApi nvtx:capture; do
        name=${kind%%:*}
        local -a extra=()
        [ "$name" = nvtx ] && extra=(--trace-unhook)
        tmo 150 env "${env_l[@]}" "$L" run --trace="$d/$name.json" --trace-capture="$kind" "${extra[@]}" -- \
            "$PY" "$HERE/trace/capture.py" >"$d/$name.out" 2>"$LOGS/tracecapture.$name.err"
        rc=$?
        if [ $rc -ne 0 ]; then
            result "tracecapture $name" FAIL "rc $rc: $(tail -n 3 "$LOGS/tracecapture.$name.err" | tr '\n' ' ' | cut -c1-200)"
            continue
        fi
        [ -s "$d/native.out" ] && ! cmp -s "$d/native.out" "$d/$name.out" &&
            result "tracecapture $name output" FAIL "the losses differ from the untraced run's"
        "$PY" "$HERE/trace/trace_check.py" capture "$d/$name.json" "$kind" >"$LOGS/tracecapture.$name.txt" 2>&1
        if grep -q '^FAIL' "$LOGS/tracecapture.$name.txt" || ! grep -q '^PASS' "$LOGS/tracecapture.$name.txt"; then
            result "tracecapture $name" FAIL "$(grep -h '^FAIL' "$LOGS/tracecapture.$name.txt" | head -n 2 | tr '\n' ' ' | cut -c1-220)$(tail -n 1 "$LOGS/tracecapture.$name.txt" | cut -c1-100)"
        else
            result "tracecapture $name" PASS "$(grep -h 'capture-inside' "$LOGS/tracecapture.$name.txt" | cut -d' ' -f3- | cut -c1-110); $(grep -o '[0-9]* calls written' "$LOGS/tracecapture.$name.err")"
        fi
    done
}
# tc_nvtxsum TRACE EXIT_ERR: the nvtx_sum table of cushim stats against the file's ranges and the table at exit
# (trace_check.py nvtxsum); prints its PASS/FAIL lines
tc_nvtxsum() {
    local L=$ROOT/tools/cushim s=${1%.json}
    if env CUSHIM_BUILD_DIR="$BUILD_DIR" "$L" stats --format=json "$1" >"$s.stats.json" 2>"$s.stats.err" &&
        env CUSHIM_BUILD_DIR="$BUILD_DIR" "$L" stats "$1" >"$s.stats.txt" 2>>"$s.stats.err"; then
        "$PY" "$HERE/trace/trace_check.py" nvtxsum "$1" "$s.stats.json" "$2"
    else
        echo "FAIL nvtxsum cushim stats failed: $(tail -n 2 "$s.stats.err" | tr '\n' ' ' | cut -c1-160)"
    fi
}

# tc_traced NAME TMO OUT ERR RUNARGS...: 'cushim run RUNARGS' within TMO seconds, stdout to OUT, stderr to ERR;
# when it fails, a FAIL result NAME with its status and the end of ERR, and status 1
tc_traced() {
    local name=$1 t=$2 out=$3 err=$4 rc
    shift 4
    tmo "$t" env CUSHIM_BUILD_DIR="$BUILD_DIR" "$ROOT/tools/cushim" run "$@" >"$out" 2>"$err"
    rc=$?
    [ $rc -eq 0 ] && return 0
    result "$name" FAIL "rc $rc: $(tail -n 3 "$err" | tr '\n' ' ' | cut -c1-200)"
    return 1
}

# tc_results PREFIX FILE [NAME]: each 'PASS|FAIL CHECK DETAIL' line of FILE (trace_check.py's) as the result
# 'PREFIX CHECK'; with NAME, a FAIL result NAME when FILE has none
tc_results() {
    local st check detail
    while read -r st check detail; do
        case $st in PASS|FAIL) result "$1 $check" "$st" "$(printf '%s' "$detail" | cut -c1-220)" ;; esac
    done <"$2"
    [ -z "${3:-}" ] || grep -q '^PASS\|^FAIL' "$2" ||
        result "$3" FAIL "trace_check.py: $(tail -n 2 "$2" | tr '\n' ' ' | cut -c1-200)"
}

# tracenccl: NCCL's own NVTX ranges (domain "NCCL": nccl_nvtx.py, 5 all-gathers of one rank inside a default-domain
# range) under --trace: they carry args.domain, and every B/E nests per thread; then --trace-capture=NAME@NCCL
# (NAME: the collective's range message as the first run found it) records inside each collective only.
check_trace_nccl() {
    local d=$WORK/tracenccl name
    tc_begin tracenccl "$d" torch.distributed "no torch.distributed" || return
    tc_traced tracenccl 120 "$d/t.out" "$LOGS/tracenccl.err" --trace="$d/t.json" -- "$PY" "$HERE/trace/nccl_nvtx.py" ||
        return
    "$PY" "$HERE/trace/trace_check.py" nccl "$d/t.json" >"$LOGS/tracenccl.txt" 2>&1
    tc_nvtxsum "$d/t.json" "$LOGS/tracenccl.err" >>"$LOGS/tracenccl.txt" 2>&1
    tc_results tracenccl "$LOGS/tracenccl.txt"
    name=$(sed -n 's/^NAME //p' "$LOGS/tracenccl.txt")
    [ -n "$name" ] || { result "tracenccl capture" FAIL "no NCCL range found to capture"; return; }
    tc_traced "tracenccl capture" 120 "$d/c.out" "$LOGS/tracenccl.c.err" --trace="$d/c.json" \
        --trace-capture="nvtx:$name@NCCL" -- "$PY" "$HERE/trace/nccl_nvtx.py" || return
    "$PY" "$HERE/trace/trace_check.py" nccl "$d/c.json" "nvtx:$name@NCCL" >"$LOGS/tracenccl.c.txt" 2>&1
    tc_results tracenccl "$LOGS/tracenccl.c.txt" "tracenccl capture"
}
# tracenvtx: PyTorch's emit_nvtx (emit_nvtx.py: a range for every operator, on the main thread and autograd's
# backward thread, nested, numbered names): the losses equal an untraced run's, cushim stats' nvtx_sum has every
# range of the file with its time, and the table at exit equals it (tc_nvtxsum)
check_trace_nvtx() {
    local d=$WORK/tracenvtx
    tc_begin tracenvtx "$d" torch "no torch" || return
    tmo 120 "$PY" "$HERE/trace/emit_nvtx.py" >"$d/native.out" 2>"$LOGS/tracenvtx.native.err"
    tc_traced tracenvtx 150 "$d/t.out" "$LOGS/tracenvtx.err" --trace="$d/t.json" -- "$PY" "$HERE/trace/emit_nvtx.py" ||
        return
    if [ -s "$d/native.out" ] && cmp -s "$d/native.out" "$d/t.out"; then
        result "tracenvtx output" PASS "the losses equal the untraced run's ($(wc -l <"$d/t.out") steps)"
    else
        result "tracenvtx output" FAIL "the losses differ from the untraced run's (or it failed)"
    fi
    tc_nvtxsum "$d/t.json" "$LOGS/tracenvtx.err" >"$LOGS/tracenvtx.txt" 2>&1
    tc_results tracenvtx "$LOGS/tracenvtx.txt" "tracenvtx nvtxsum"
}

# traceperfetto: PyTorch steps (trace_gpu.py run 5) with --trace-gpu, traced once to JSON and once to a
# .perfetto-trace (Perfetto's protobuf format): the Perfetto file decodes with the tests' independent walker
# (tests/e2e/pftrace.py: every field against the schema, every interned id defined before its use, every slice
# ended), holds as many CUDA API calls as the JSON run, cushim stats reads it (the same APIs and counts in
# cuda_api_sum); the walker's event comparison (per thread: names, arguments with addresses masked, nesting, flows)
# and both files' bytes per call are reported
check_trace_perfetto() {
    local d=$WORK/traceperfetto T=$HERE/trace L=$ROOT/tools/cushim nj np bj bp
    tc_begin traceperfetto "$d" torch "no torch" || return
    tc_traced traceperfetto 150 "$d/j.out" "$LOGS/traceperfetto.json.err" --trace="$d/t.json" --trace-gpu -- \
        "$PY" "$T/trace_gpu.py" run 5 || return
    tc_traced traceperfetto 150 "$d/p.out" "$LOGS/traceperfetto.pf.err" --trace="$d/t.perfetto-trace" --trace-gpu -- \
        "$PY" "$T/trace_gpu.py" run 5 || return
    nj=$("$PY" -c "import json, sys; print(sum(1 for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('ph') == 'X' and e.get('cat') in ('cuda_driver', 'cuda_runtime', 'cuda_api_unfinished')))" "$d/t.json")
    if ! np=$(tmo 300 "$PY" "$ROOT/tests/e2e/pftrace.py" --count "$d/t.perfetto-trace" 2>"$LOGS/traceperfetto.walk.err"); then
        result "traceperfetto decode" FAIL "$(tail -n 2 "$LOGS/traceperfetto.walk.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    bj=$(awk -v s="$(stat -c %s "$d/t.json")" -v n="$nj" 'BEGIN {printf "%.1f", s / n}')
    bp=$(awk -v s="$(stat -c %s "$d/t.perfetto-trace")" -v n="$np" 'BEGIN {printf "%.1f", s / n}')
    if [ "$np" = "$nj" ] && [ "$np" -gt 0 ]; then
        result "traceperfetto calls" PASS "$np calls in both files; file bytes per call (all events): JSON $bj, Perfetto $bp"
    else
        result "traceperfetto calls" FAIL "the Perfetto file decodes with $np calls, the JSON run wrote $nj"
    fi
    if env CUSHIM_BUILD_DIR="$BUILD_DIR" "$L" stats --format=json "$d/t.json" >"$d/j.stats" 2>>"$LOGS/traceperfetto.stats.err" &&
        env CUSHIM_BUILD_DIR="$BUILD_DIR" "$L" stats --format=json "$d/t.perfetto-trace" >"$d/p.stats" 2>>"$LOGS/traceperfetto.stats.err" &&
        "$PY" -c "import json, sys; a, b = ({r['name']: r['count'] for r in json.load(open(f))['cuda_api_sum']} for f in sys.argv[1:]); sys.exit(a != b or not a)" "$d/j.stats" "$d/p.stats"; then
        result "traceperfetto stats" PASS "cushim stats: the same APIs and counts from both files"
    else
        result "traceperfetto stats" FAIL "cushim stats: $(tail -n 2 "$LOGS/traceperfetto.stats.err" | tr '\n' ' ' | cut -c1-160) (or the APIs and counts differ)"
    fi
    if tmo 300 "$PY" "$ROOT/tests/e2e/pftrace.py" --compare "$d/t.perfetto-trace" "$d/t.json" >"$LOGS/traceperfetto.compare" 2>&1; then
        result "traceperfetto events" PASS "$(head -n 1 "$LOGS/traceperfetto.compare")"
    else
        result "traceperfetto events" FAIL "$(tail -n 3 "$LOGS/traceperfetto.compare" | tr '\n' ' ' | cut -c1-220)"
    fi
    # Google's own parser beside our walker (tests/e2e/pfraw.py: protoc --decode_raw, where protobuf-compiler is
    # installed): the whole file parses, its packets and fields are Perfetto's protos', as many packets
    local npk rc=0
    npk=$(sed -n 's/^\([0-9]*\) packets$/\1/p' "$LOGS/traceperfetto.compare")
    tmo 300 "$PY" "$ROOT/tests/e2e/pfraw.py" "$d/t.perfetto-trace" $npk >"$LOGS/traceperfetto.raw" 2>&1 || rc=$?
    case $rc in
    0) result "traceperfetto protoc" PASS "protoc --decode_raw: $(head -n 1 "$LOGS/traceperfetto.raw")" ;;
    77) result "traceperfetto protoc" SKIP "$(head -n 1 "$LOGS/traceperfetto.raw")" ;;
    *) result "traceperfetto protoc" FAIL "$(tail -n 2 "$LOGS/traceperfetto.raw" | tr '\n' ' ' | cut -c1-220)" ;;
    esac
}

gpu_check trace check_trace
gpu_check tracenvtx check_trace_nvtx
gpu_check tracenccl check_trace_nccl
gpu_check tracecapture check_trace_capture
gpu_check traceranks check_trace_ranks
gpu_check tracegpu check_trace_gpu
gpu_check tracebench check_trace_bench
gpu_check traceab check_trace_ab
gpu_check tracegpuab check_trace_gpu_ab
gpu_check tracedetach check_trace_detach
gpu_check tracefork check_trace_fork
gpu_check traceprofiler check_trace_profiler
gpu_check traceperfetto check_trace_perfetto
