# flight: the flight recorder on the real driver (plugins/flight, docs/plugins/flight.md), with
# tests/gpu/flight/flight_bad.cu (runtime API, built here with nvcc):
#   flight sticky   a kernel writes 256 GiB past its allocation; the program finds CUDA_ERROR_ILLEGAL_ADDRESS at its
#                   next synchronisation: one line names the dump; 'cushim flight dump' lists the culprit kernel
#                   and the launch before it (not the synchronised ones) and attributes the culprit's pointer
#                   argument to the allocation cudaMalloc made (the program's call: the runtime's, at depth 0)
#   flight hang     a kernel spins 4 s under hang=1: one line, a hang dump whose calls not returned hold the
#                   blocked synchronisation
#   flight kill     SIGKILL after a launch: the ring survives and 'cushim flight dump PID' renders the kernel
#   flight train    tests/gpu/torch_train.py under the recorder: losses and parameters bitwise identical to native
#   flight bench    trace_gpu.py bench (the launch-bound MLP step) native / shim / shim+flight, interleaved rounds:
#                   the medians, reported as information (never asserted)
# (check 'flightab': the recorder's cost inside one process, issue 45's benchmarks; see check_flight_ab)
check_flight() {
    local nv=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc exe=$BIN/flight_bad d=$WORK/flight tool=$BUILD_DIR/tools/cushim-flight
    local fl=$BUILD_DIR/plugins/flight.so out err line f dump rc
    command -v "$nv" >/dev/null 2>&1 || nv=nvcc
    rm -rf "$d" && mkdir -p "$d"
    if ! tmo 120 "$nv" -arch="${GPU_ARCH:-sm_90}" -O2 -cudart shared -o "$exe" "$HERE/flight/flight_bad.cu" \
            >"$LOGS/flight-build.log" 2>&1; then
        result "flight" FAIL "nvcc failed: $(tail -n 3 "$LOGS/flight-build.log" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    # sticky
    out=$LOGS/flight-sticky.out err=$LOGS/flight-sticky.err
    tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$fl:dir=$d" "$exe" sticky >"$out" 2>"$err"; rc=$?
    line=$(grep -m1 'flight: .*sticky' "$err")
    f=$(printf '%s\n' "$line" | grep -o '/[^ ]*-sticky\.ring' | head -n 1)
    if [ "$rc" != 3 ] || [ -z "$f" ] || [ ! -f "$f" ]; then
        result "flight sticky" FAIL "rc $rc (3 expected: the sync returns cudaErrorIllegalAddress); line '${line:-none}'; $(tail -n 2 "$err" | tr '\n' ' ' | cut -c1-200)"
    else
        dump=$LOGS/flight-sticky.txt
        tmo 30 "$tool" dump "$f" >"$dump" 2>&1
        # the pending part: from 'launches, copies' to 'live allocations'
        local pend
        pend=$(awk '/^launches, copies and sets since/ {p = 1} /^live allocations/ {p = 0} p' "$dump")
        if ! printf '%s\n' "$pend" | grep -q 'culprit'; then
            result "flight sticky" FAIL "the culprit kernel is not among the pending launches ($dump)"
        elif ! printf '%s\n' "$pend" | grep -Eq 'Z3add|add\('; then
            result "flight sticky" FAIL "the launch before the culprit (add) is not listed ($dump)"
        elif printf '%s\n' "$pend" | grep -Eq 'Z4fill|fill\('; then
            result "flight sticky" FAIL "a synchronised launch (fill) is listed as pending ($dump)"
        elif ! printf '%s\n' "$pend" | grep -A3 'culprit' | grep -Eq 'arg 0 = .*inside .* made by .*(cudaMalloc|cuMemAlloc)'; then
            result "flight sticky" FAIL "the culprit's pointer argument is not attributed to its allocation ($dump)"
        else
            result "flight sticky" PASS "one line, one dump; pending: $(printf '%s\n' "$pend" | grep -c 'cuLaunchKernel') launches incl. culprit, its arg 0 $(printf '%s\n' "$pend" | grep -A3 culprit | grep -m1 -o 'inside [^ ]* ([0-9]* bytes, offset [0-9]*)')"
        fi
    fi
    # hang
    out=$LOGS/flight-hang.out err=$LOGS/flight-hang.err
    tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$fl:dir=$d,hang=1" "$exe" hang 4 >"$out" 2>"$err"; rc=$?
    line=$(grep -m1 'has been blocked' "$err")
    f=$(printf '%s\n' "$line" | grep -o '/[^ ]*-hang\.ring' | head -n 1)
    if [ "$rc" != 0 ] || [ -z "$f" ] || [ ! -f "$f" ]; then
        result "flight hang" FAIL "rc $rc; line '${line:-none}'; $(tail -n 2 "$err" | tr '\n' ' ' | cut -c1-200)"
    else
        tmo 30 "$tool" dump "$f" >"$LOGS/flight-hang.txt" 2>&1
        if awk '/^calls not returned/ {p = 1; next} /^[a-z]/ {p = 0} p' "$LOGS/flight-hang.txt" | grep -q 'Synchronize'; then
            result "flight hang" PASS "$(printf '%s\n' "$line" | cut -c1-160)"
        else
            result "flight hang" FAIL "the blocked synchronisation is not among the calls not returned ($LOGS/flight-hang.txt)"
        fi
    fi
    # kill
    out=$LOGS/flight-kill.out
    (exec env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$fl:dir=$d" "$exe" sleep >"$out" 2>"$LOGS/flight-kill.err") &
    local pid=$! i
    for i in $(seq 300); do grep -q READY "$out" 2>/dev/null && break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    tmo 30 "$tool" dump --dir="$d" "$pid" >"$LOGS/flight-kill.txt" 2>&1; rc=$?
    if [ "$rc" = 0 ] && grep -Eq 'Z3add|add\(' "$LOGS/flight-kill.txt"; then
        result "flight kill" PASS "the ring of the SIGKILLed process renders: $(grep -c 'cuLaunchKernel' "$LOGS/flight-kill.txt") launches named"
    else
        result "flight kill" FAIL "rc $rc; $(head -n 3 "$LOGS/flight-kill.txt" | tr '\n' ' ' | cut -c1-200)"
    fi
    # train: bitwise identical
    [ -s "$DATA/torch.native.out" ] || tmo 150 "$PY" "$HERE/torch_train.py" 40 >"$DATA/torch.native.out" 2>"$LOGS/torch.native.err"
    tmo 150 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$fl:dir=$d" "$PY" "$HERE/torch_train.py" 40 \
        >"$DATA/flight-train.out" 2>"$LOGS/flight-train.err"; rc=$?
    if [ "$rc" = 0 ] && [ -s "$DATA/torch.native.out" ] && cmp -s "$DATA/torch.native.out" "$DATA/flight-train.out"; then
        result "flight train" PASS "40 losses + params bitwise identical to native; no line on stderr: $(grep -c 'flight:' "$LOGS/flight-train.err")"
    else
        result "flight train" FAIL "rc $rc; differs from native or failed: $(tail -n 2 "$LOGS/flight-train.err" | tr '\n' ' ' | cut -c1-200)"
    fi
    # bench: interleaved rounds, information only
    local r cfg v nat="" shm="" flt=""
    for r in $(seq "${FLIGHT_BENCH_ROUNDS:-3}"); do
        for cfg in native shim flight; do
            case $cfg in
                native) v=$(tmo 120 "$PY" "$HERE/trace/trace_gpu.py" bench 300 2>>"$LOGS/flight-bench.err") ;;
                shim) v=$(tmo 120 env LD_PRELOAD="$SHIM" "$PY" "$HERE/trace/trace_gpu.py" bench 300 2>>"$LOGS/flight-bench.err") ;;
                flight) v=$(tmo 120 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$fl:dir=$d" "$PY" "$HERE/trace/trace_gpu.py" bench 300 2>>"$LOGS/flight-bench.err") ;;
            esac
            v=$(printf '%s\n' "$v" | awk '/^median_step_ns/ {print $2}')
            echo "flight bench round $r $cfg ${v:-none}" >>"$LOGS/flight-bench.txt"
            case $cfg in native) nat+=" $v" ;; shim) shm+=" $v" ;; flight) flt+=" $v" ;; esac
        done
    done
    local mn ms mf
    med() { printf '%s\n' $1 | sort -n | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }
    mn=$(med "$nat") ms=$(med "$shm") mf=$(med "$flt")
    if [ -n "$mn" ] && [ -n "$mf" ]; then
        result "flight bench" SKIP "information: MLP step medians of ${FLIGHT_BENCH_ROUNDS:-3} interleaved rounds (300 steps each): native $mn ns ($nat), shim $ms ns ($shm), shim+flight $mf ns ($flt): flight/native $(awk -v a="$mf" -v b="$mn" 'BEGIN {printf "%.3f", a / b}'), flight/shim $(awk -v a="$mf" -v b="$ms" 'BEGIN {printf "%.3f", a / b}')"
    else
        result "flight bench" FAIL "no measurement ($LOGS/flight-bench.err)"
    fi
    rm -f "$d"/* 2>/dev/null
}
gpu_check flight check_flight

# flightab: what --flight adds, measured inside one process against the shim with no hook (issue 45's targets: at
# most 30 ns on a cuCtxGetCurrent, 1% on the launch-bound MLP step and on the transformer step), with the A/B copy
# of the recorder (<build>/plugins-ab/flight.so, bench/gpu/flight_ab.c: each SIGUSR2 removes or adds again the
# shipped recorder's hooks). Information rows only (PASS: measured; never a timed assertion):
#   flightab calls        bench/gpu/launch_bench.c BENCH_AB_VS (cycles none, flight, CUPTI, floor, floor, CUPTI,
#                         flight, none): the added ns a cuCtxGetCurrent and an empty launch (per burst of 256 and
#                         the median launch timed alone) of the recorder, the empty CUPTI callback and the floor
#                         of any recorder (bench/floor.h), medians over FLIGHT_AB_RUNS (4) processes, min..max
#   flightab mlp / transformer
#                         trace_gpu.py abbench (ABBA blocks recording / hooks out, TRACE_AB_SETTLE_MS=20 after
#                         each switch): the median over processes of each process's median pair ratio,
#                         min..max, and each process's median on/off step
# FLIGHT_AB_RUNS (4) processes each; FLIGHT_AB_BLOCKS (32: 4 cycles; the ring is made in the first recorded block)
# launch_bench blocks; FLIGHT_AB_STEP_BLOCKS (48) and
# FLIGHT_AB_STEPS (50) for the MLP step, FLIGHT_AB_TF_BLOCKS (16) and FLIGHT_AB_TF_STEPS (20) for the transformer.
# FLIGHT_AB_OPTS: more options of the recorder (clock=host: the host's clocks instead of the TSC read in the hooks,
# docs/plugins/flight.md "Time"), named in the rows.
check_flight_ab() {
    local ab=$BUILD_DIR/plugins-ab/flight.so d=/dev/shm/cushim-flightab.$$ lb=$WORK/launch_bench_flight
    local cuda=${CUDA_HOME:-/usr/local/cuda} lib=${BENCH_CUPTI_LIB:-} r out k v line model blocks steps
    local runs=${FLIGHT_AB_RUNS:-4}
    if [ ! -f "$ab" ]; then
        result "flightab" FAIL "no $ab (the A/B copy: a build with CUSHIM_BUILD_GPUAB=ON)"
        return
    fi
    mkdir -p "$d" || { result "flightab" FAIL "cannot make $d"; return; }
    if [ -z "$lib" ]; then
        for c in "$cuda/extras/CUPTI/lib64/libcupti.so" "$cuda/lib64/libcupti.so" \
                 "$cuda/targets/x86_64-linux/lib/libcupti.so" "$cuda/lib/libcupti.so"; do
            if [ -e "$c" ]; then lib=$c; break; fi
        done
    fi
    # 1. calls: launch_bench's paired cycles
    if ! tmo 120 gcc -std=gnu11 -O2 -Wall -Wextra -I"$cuda/include" -I"$ROOT/sdk/include" -I"$ROOT/bench" -o "$lb" \
            "$ROOT/bench/gpu/launch_bench.c" -L"$cuda/lib64" -L"$cuda/lib64/stubs" -lcuda -ldl -lm \
            >"$LOGS/flightab-build.log" 2>&1; then
        result "flightab calls" FAIL "launch_bench did not build: $(tail -n 2 "$LOGS/flightab-build.log" | tr '\n' ' ' | cut -c1-200)"
    else
        : >"$LOGS/flightab-calls.txt"
        for ((r = 0; r < runs; r++)); do
            tmo 150 env BENCH_LABEL=flightab BENCH_CUPTI=1 BENCH_CUPTI_LIB="${lib:-libcupti.so.13}" \
                BENCH_AB="${FLIGHT_AB_BLOCKS:-32}" BENCH_AB_VS=1 BENCH_AB_GAP_MS="${BENCH_AB_GAP_MS:-150}" \
                LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$ab:dir=$d,signal=off,ab_paused=1${FLIGHT_AB_OPTS:+,$FLIGHT_AB_OPTS}" \
                "$lb" 200000 1000000 >>"$LOGS/flightab-calls.txt" 2>>"$LOGS/flightab-calls.err"
            rm -f "$d"/cushim-flight-* 2>/dev/null
        done
        # ab_vs_trace_*: the plugin that SIGUSR2 switches - the recorder here
        line=""
        for k in trace_ctx_ns cupti_ctx_ns floor_ctx_ns trace_burst_ns cupti_burst_ns trace_lmed_ns cupti_lmed_ns \
                 ratio_ctx ratio_burst ratio_lmed; do
            v=$(grep -o "ab_vs_$k=[-0-9.naif]*" "$LOGS/flightab-calls.txt" | cut -d= -f2 | grep -v nan)
            [ -n "$v" ] || continue
            line+="${k/trace/flight} $(printf '%s\n' "$v" | median) ($(printf '%s\n' "$v" | sort -g | head -n 1)..$(printf '%s\n' "$v" | sort -g | tail -n 1)); "
        done
        if grep -q 'ab_vs_trace_ctx_ns' "$LOGS/flightab-calls.txt"; then
            result "flightab calls" PASS "information${FLIGHT_AB_OPTS:+ ($FLIGHT_AB_OPTS)}: added ns, medians of $(grep -c ab_vs_trace_ctx_ns "$LOGS/flightab-calls.txt") processes (min..max), recorder / CUPTI ratios as ratio_*: ${line% }"
        else
            result "flightab calls" FAIL "no measurement: $(tail -n 2 "$LOGS/flightab-calls.err" | tr '\n' ' ' | cut -c1-200)"
        fi
    fi
    # 2. the PyTorch steps: recording / hooks out, ABBA blocks in one process
    for model in mlp transformer; do
        if [ "$model" = mlp ]; then blocks=${FLIGHT_AB_STEP_BLOCKS:-48} steps=${FLIGHT_AB_STEPS:-50}
        else blocks=${FLIGHT_AB_TF_BLOCKS:-16} steps=${FLIGHT_AB_TF_STEPS:-20}; fi
        local all="" ons="" offs=""
        for ((r = 0; r < runs; r++)); do
            out=$LOGS/flightab.$model.$r.out
            tmo 240 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$ab:dir=$d,signal=off${FLIGHT_AB_OPTS:+,$FLIGHT_AB_OPTS}" TRACE_AB_SETTLE_MS=20 \
                TRACE_GPU_MODEL=$model "$PY" "$HERE/trace/trace_gpu.py" abbench "$blocks" "$steps" >"$out" \
                2>"$LOGS/flightab.$model.$r.err"
            rm -f "$d"/cushim-flight-* 2>/dev/null
            v=$(awk '/^ab_ratio/ {print $2}' "$out")
            all+="${v:-fail} "
            ons+="$(awk '/^ab_on_ns/ {print $2}' "$out") " offs+="$(awk '/^ab_off_ns/ {print $2}' "$out") "
        done
        v=$(printf '%s\n' $all | grep -v fail | median)
        if [ -z "$v" ]; then
            result "flightab $model" FAIL "no run gave a ratio: $(tail -n 2 "$LOGS/flightab.$model.0.err" | tr '\n' ' ' | cut -c1-200)"
        else
            result "flightab $model" PASS "information${FLIGHT_AB_OPTS:+ ($FLIGHT_AB_OPTS)}: step recording / hooks out in one process, median of processes $v ($(printf '%s\n' $all | grep -v fail | sort -g | head -n 1)..$(printf '%s\n' $all | grep -v fail | sort -g | tail -n 1); runs: $all); each process's median step on/off ns: $ons/ $offs(target: at most 1.01)"
        fi
    done
    rm -rf "$d"
}
gpu_check flightab check_flight_ab
