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
#   trace gpu-once / gpu-linked / gpu-witness
#                          with --trace-gpu: kernels on GPU tracks, each once, each linked to its launching call
#                          by a flow; as many kernels launched inside the NVTX range as the PyTorch profiler
#                          (CUPTI activity, a run without the shim) sees for the same steps
#   (check 'tracegpu': the gpu-once / gpu-linked / gpu-witness part alone)
#   trace overhead         median step time: native, --trace, --trace --trace-gpu, interleaved runs (reported)
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
        while read -r st name detail; do
            case $st in PASS|FAIL) result "trace $name" "$st" "$detail" ;; esac
        done <"$LOGS/trace.gpu.txt"
        grep -q '^PASS\|^FAIL' "$LOGS/trace.gpu.txt" ||
            result "trace gpu" FAIL "trace_check.py: $(tail -n 2 "$LOGS/trace.gpu.txt" | tr '\n' ' ' | cut -c1-200)"
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
    # 4. overhead of a training step (reported, not asserted): interleaved runs, medians
    local -a nat=() tr=() trg=()
    local v
    for _ in 1 2; do
        v=$(tmo 60 "$PY" "$T/trace_gpu.py" bench 200 2>/dev/null | awk '/^median_step_ns/ {print $2}')
        nat+=("${v:-0}")
        v=$(tmo 60 env "${env_l[@]}" "$L" run --trace="$p.bench.json" -- "$PY" "$T/trace_gpu.py" bench 200 \
            2>/dev/null | awk '/^median_step_ns/ {print $2}')
        tr+=("${v:-0}")
        v=$(tmo 60 env "${env_l[@]}" "$L" run --trace="$p.benchg.json" --trace-gpu -- "$PY" "$T/trace_gpu.py" bench 200 \
            2>/dev/null | awk '/^median_step_ns/ {print $2}')
        trg+=("${v:-0}")
    done
    detail=$("$PY" - "${nat[*]}" "${tr[*]}" "${trg[*]}" <<'PY'
import statistics, sys
n, t, g = ([int(x) for x in a.split()] for a in sys.argv[1:4])
m = lambda v: statistics.median(v) if v and min(v) > 0 else 0
mn, mt, mg = m(n), m(t), m(g)
pct = lambda x: "%+.1f%%" % (100.0 * (x - mn) / mn) if mn and x else "n/a"
print("median step: native %d ns, --trace %d ns (%s), --trace-gpu %d ns (%s); runs %s / %s / %s" % (
    mn, mt, pct(mt), mg, pct(mg), n, t, g))
PY
)
    result "trace overhead" PASS "$detail"
}
gpu_check trace check_trace
gpu_check tracegpu check_trace_gpu
