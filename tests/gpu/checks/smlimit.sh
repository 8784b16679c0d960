# smlimit.sh - GPU check of the compute-time limiter (plugins/smlimit, docs/plugins/smlimit.md).
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu smlimit` runs it.
#
# Each measurement is one process running tests/gpu/smlimit/matmul_loop.py (or the cooperative sample)
# for SML_WARM s unmeasured, then SML_SECS s measured. Configurations are run interleaved, SML_ROUNDS
# rounds, and compared by their medians:
#   matmul-25c/50c/75c, train-25c/50c/75c   the same with clock_ref_mhz = the native runs' SM clock: a share
#                                     of throughput (docs/plugins/smlimit.md, "Time or throughput")
#   matmul-25/50/75, train-25/50/75   time shares (no clock_ref_mhz): the share of GPU time, within +-5
#                                     points of the target: the share of the native rate, scaled by the
#                                     native runs' SM clock over the limited runs' when the clock rose
#                                     (a power-capped GPU clocks higher while it idles part of the time;
#                                     sml_share_result)
#   graph-50c                         the CUDA-graph replay loop, the same way
# SML_SET=clock runs only the clock_ref_mhz part (SML_KINDS="matmul train graph" picks its loads),
# SML_SET=time only the rest (SML_PARTS="matmul train pair graph coop probe hami" picks its parts).
#   matmul-100, matmul-noarg          limit=100 and the plugin loaded with no limit: within 1% of native
#   pair-30-70                        two matmul loops at 30 and 70 at once: rate ratio within 10% of 30:70
#   pair-30-70-turns                  the same with turns=1 (the processes' bursts take turns)
#   graph-50                          a CUDA-graph replay loop at 50: within +-5 points
#   coop-50                           cudaLaunchCooperativeKernel loop at 50: within +-5 points
#   probe (information only)          how the GPU time-shares between two processes: slice length, idle
#                                     time a context switch (tests/gpu/smlimit/slice_probe.cu)
#   hami-25/50 (information only)     HAMi-core's libvgpu.so at CUDA_DEVICE_SM_LIMIT=25/50, when
#                                     tests/gpu/hami_stack.sh built it in this run ($WORK/hami/libvgpu.so)
# About 5 minutes of GPU time with the defaults (SML_SECS=3, SML_WARM=1, SML_ROUNDS=3).

SML_SECS=${SML_SECS:-3}
SML_WARM=${SML_WARM:-1}
SML_ROUNDS=${SML_ROUNDS:-3}

# sml_run KIND CONFIG: one measurement; prints the rate or nothing. KIND = matmul|graph|train|coop,
# CONFIG = native | noarg | a limit in percent | hami-N
sml_run() {
    local kind=$1 cfg=$2 plugin=$BUILD_DIR/plugins/smlimit.so
    local -a env=() cmd
    if [ "$kind" = coop ]; then
        cmd=("$SML_BIN/coop" "$SML_SECS" "$SML_WARM" 1000)
    else
        cmd=("$PY" "$HERE/smlimit/matmul_loop.py" "$kind" --seconds "$SML_SECS" --warmup "$SML_WARM" --clocks)
    fi
    case $cfg in
        native) ;;
        noarg) env=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin") ;;
        hami-*) env=(LD_PRELOAD="$SML_HAMI" CUDA_REDIRECT="$SML_HAMI" CUDA_DEVICE_SM_LIMIT="${cfg#hami-}"
                     CUDA_DEVICE_MEMORY_SHARED_CACHE="$WORK/smlimit-hami.$RANDOM.cache") ;;
        *c) env=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=${cfg%c},shared=0,clock_ref_mhz=$(sml_ref "$kind")") ;;
        *) env=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=$cfg,shared=0") ;;
    esac
    env "${env[@]}" timeout -k 5 $((SML_SECS + SML_WARM + 60)) "${cmd[@]}" 2>>"$LOGS/smlimit.err" >"$SML_D/last.out"
    # the SM clock and power of the measured part, next to the rate (docs/isolation.md reads them)
    sed -n 's/^clocks /'"$kind $cfg"' /p' "$SML_D/last.out" >>"$SML_D/clocks.txt"
    sed -n 's/^rate //p' "$SML_D/last.out" | tail -n 1
}

# sml_ref KIND: the SM clock (MHz) of KIND's native runs so far (their median): clock_ref_mhz for the
# NNc configurations (the GPU's clock under this load at full speed)
sml_ref() {
    awk -v k="$1" '$1 == k && $2 == "native" { print $4 }' "$SML_D/clocks.txt" 2>/dev/null | sort -n |
        awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else print v[int((NR + 1) / 2)] }'
}

# sml_nvcc: the toolkit's nvcc ($CUDA_HOME, else /usr/local/cuda), else the one on PATH
sml_nvcc() {
    local n=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
    command -v "$n" >/dev/null 2>&1 || n=nvcc
    echo "$n"
}

# sml_build NAME RESULT: builds tests/gpu/smlimit/NAME.cu into $SML_BIN/NAME (log smlimit-NAME-build.log);
# on failure reports RESULT as FAIL with the log's end and returns 1
sml_build() {
    local log=$LOGS/smlimit-$1-build.log
    "$(sml_nvcc)" -arch="${GPU_ARCH:-sm_90}" -O2 -o "$SML_BIN/$1" "$HERE/smlimit/$1.cu" >"$log" 2>&1 && return 0
    result "$2" FAIL "nvcc failed: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-200)"
    return 1
}

# sml_part NAME: whether SML_PARTS (default: all of them) names this part of the time-share set
sml_part() {
    case " ${SML_PARTS:-matmul train pair graph coop probe hami} " in *" $1 "*) return 0 ;; esac
    return 1
}

# sml_median FILE
sml_median() {
    median <"$1"
}

# sml_measure KIND CONFIG...: SML_ROUNDS interleaved rounds into $SML_D/KIND.CONFIG
sml_measure() {
    local kind=$1 r c v
    shift
    for r in $(seq 1 "$SML_ROUNDS"); do
        for c in "$@"; do
            [ "$(time_left)" -gt $((SML_SECS + SML_WARM + 20)) ] || { budget_out; return 0; }
            v=$(sml_run "$kind" "$c")
            [ -n "$v" ] && echo "$v" >>"$SML_D/$kind.$c"
            echo "smlimit: $kind $c round $r: ${v:-no result}" >>"$LOGS/smlimit.txt"
        done
    done
}

# sml_clock KIND CONFIG: the median SM clock (MHz) of KIND's CONFIG runs (clocks.txt), or nothing
sml_clock() {
    awk -v k="$1" -v c="$2" '$1 == k && $2 == c && $4 > 0 { print $4 }' "$SML_D/clocks.txt" 2>/dev/null | median
}

# sml_share_result KIND LIMIT [TOLERANCE=5]: the limited runs' share vs the target. A throughput share (LIMIT
# NNc, clock_ref_mhz) is their rate over native's. A time share (LIMIT NN, the default) is what the limiter holds
# (docs/isolation.md): on a power-capped GPU a throttled load runs at a higher clock than at full speed (an
# H200's bf16 matmul: ~1965 MHz at 25%, ~1460 native) and does more work a busy second, so its rate share
# overshoots the time it got; the share of GPU time is then the rate share scaled by native's clock over the
# limited runs' (their medians, NVML samples of the measured part; the rate share itself when a load has no
# clock samples, or the clock did not rise by more than 3%). Both shares are printed. CPU test:
# tests/gpu_smlimit_verdict.sh.
sml_share_result() {
    local kind=$1 lim=$2 tol=${3:-5} nat got cn="" cl=""
    nat=$(sml_median "$SML_D/$kind.native" 2>/dev/null)
    got=$(sml_median "$SML_D/$kind.$lim" 2>/dev/null)
    if [ -z "$nat" ] || [ -z "$got" ]; then
        result "smlimit $kind-$lim" FAIL "no measurement (native '${nat}', limited '${got}'; see $LOGS/smlimit.err)"
        return
    fi
    case $lim in *c) ;; *) cn=$(sml_clock "$kind" native); cl=$(sml_clock "$kind" "$lim") ;; esac
    awk -v n="$nat" -v g="$got" -v l="${lim%c}" -v t="$tol" -v cn="$cn" -v cl="$cl" 'BEGIN {
        s = 100 * g / n; v = s; how = ""
        if (cn > 0 && cl > cn * 1.03) {
            v = s * cn / cl
            how = sprintf("time share %.1f%% (the rate %.1f%% of native at %d MHz against %d: x %.3f); ", v, s, cl, cn, cn / cl)
        }
        d = v - l; if (d < 0) d = -d
        if (how == "") how = sprintf("achieved %.1f%% of native", s) (cn > 0 && cl > 0 ? sprintf(" (%d MHz against %d)", cl, cn) : "") "; "
        printf "%s %starget %s+-%s; medians %.2f / %.2f\n", (d <= t ? "PASS" : "FAIL"), how, l, t, g, n }' |
        { read -r st rest; result "smlimit $kind-$lim" "$st" "$rest"; }
}

# sml_native_result KIND CONFIG: within 1% of native
sml_native_result() {
    local kind=$1 c=$2 nat got
    nat=$(sml_median "$SML_D/$kind.native" 2>/dev/null)
    got=$(sml_median "$SML_D/$kind.$c" 2>/dev/null)
    if [ -z "$nat" ] || [ -z "$got" ]; then
        result "smlimit $kind-$c" FAIL "no measurement"
        return
    fi
    awk -v n="$nat" -v g="$got" 'BEGIN { r = 100 * g / n; printf "%s %.2f%% of native (target >= 99%%; medians %.2f / %.2f)\n", (r >= 99 ? "PASS" : "FAIL"), r, g, n }' |
        { read -r st rest; result "smlimit $kind-$c" "$st" "$rest"; }
}

check_smlimit() {
    local plugin=$BUILD_DIR/plugins/smlimit.so
    SML_D=$WORK/smlimit
    SML_BIN=$WORK/smlimit-bin
    rm -rf "$SML_D"
    mkdir -p "$SML_D" "$SML_BIN"
    if [ ! -f "$plugin" ]; then
        result "smlimit" FAIL "$plugin not built (tools/build-gpu-bundle.sh)"
        return
    fi
    if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
        result "smlimit" SKIP "no PyTorch with CUDA"
        return
    fi
    # 0. throughput shares (clock_ref_mhz = the native runs' SM clock): SML_SET=clock runs only these
    if [ "${SML_SET:-all}" != time ]; then
        local k
        for k in ${SML_KINDS:-matmul train graph}; do
            case $k in
                graph) sml_measure graph native 50c; sml_share_result graph 50c ;;
                matmul|train) sml_measure "$k" native 25c 50c 75c
                              for l in 25 50 75; do sml_share_result "$k" ${l}c; done ;;
            esac
        done
        if [ "${SML_SET:-all}" = clock ]; then
            cp "$SML_D/clocks.txt" "$LOGS/smlimit-clocks.txt" 2>/dev/null
            return
        fi
    fi
    # 1. matmul: native, the three limits, limit 100 and no limit, interleaved
    if sml_part matmul; then
        sml_measure matmul native 25 50 75 100 noarg
        for l in 25 50 75; do sml_share_result matmul $l; done
        sml_native_result matmul 100
        sml_native_result matmul noarg
    fi
    # 2. training loop
    if sml_part train; then
        sml_measure train native 25 50 75
        for l in 25 50 75; do sml_share_result train $l; done
    fi
    # 3. two processes at 30 and 70 on one GPU, in a fresh group (shared region), as they are (pair-30-70)
    # and taking turns (pair-30-70-turns, the option turns=1); not started past the budget
    # (SML_PAIR_VARIANTS="plain turns" picks). Both measure the same wall-clock window (--start-at, after
    # their warmups) and keep loading the GPU 2 s after it (--linger), so neither runs alone in it.
    local pv
    for pv in ${SML_PAIR_VARIANTS:-plain turns}; do
        sml_part pair || break
        local grp="gpucheck$$$pv" a b late t0 busy name=pair-30-70 opts=""
        [ "$pv" = turns ] && { name=pair-30-70-turns; opts=",turns=1"; }
        if [ "$(time_left)" -le $((SML_SECS * 2 + 50)) ]; then
            budget_out
            result "smlimit $name" FAIL "not run (the suite's time budget)"
            continue
        fi
        rm -f "/dev/shm/cushim-smlimit4-$(id -u)-$grp"
        t0=$(awk -v n="$(date +%s)" -v w="$SML_WARM" 'BEGIN { printf "%d", n + 25 + w }')
        env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=30,group=$grp,report=1$opts" timeout -k 5 120 \
            "$PY" "$HERE/smlimit/matmul_loop.py" matmul --seconds $((SML_SECS * 2)) --warmup "$SML_WARM" \
            --start-at "$t0" --linger 2 --clocks >"$SML_D/$name.a" 2>"$SML_D/$name.a.err" &
        local pa=$!
        env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=70,group=$grp,report=1$opts" timeout -k 5 120 \
            "$PY" "$HERE/smlimit/matmul_loop.py" matmul --seconds $((SML_SECS * 2)) --warmup "$SML_WARM" \
            --start-at "$t0" --linger 2 >"$SML_D/$name.b" 2>"$SML_D/$name.b.err"
        wait $pa
        cat "$SML_D/$name.a.err" "$SML_D/$name.b.err" >>"$LOGS/smlimit.err"
        rm -f "/dev/shm/cushim-smlimit4-$(id -u)-$grp"
        sed -n 's/^clocks /'"$name"' a+b /p' "$SML_D/$name.a" >>"$SML_D/clocks.txt"
        a=$(sed -n 's/^rate //p' "$SML_D/$name.a"); b=$(sed -n 's/^rate //p' "$SML_D/$name.b")
        late=$(cat "$SML_D/$name.a" "$SML_D/$name.b" | sed -n 's/^late //p' | tr '\n' ' ')
        # the plugin's own account of each process's GPU time (report=1), for the record
        busy=$(cat "$SML_D/$name.a.err" "$SML_D/$name.b.err" | sed -n 's/.*smlimit: device 0: limit \([0-9]*\)%: busy .*(\([0-9.]*%\)).*/\1:\2/p' | tr '\n' ' ')
        if [ -z "$a" ] || [ -z "$b" ]; then
            result "smlimit $name" FAIL "no measurement (a '$a', b '$b')"
        elif [ -n "$late" ]; then
            result "smlimit $name" FAIL "the windows did not align: a warmup ended after the start time (late by $late s)"
        else
            awk -v a="$a" -v b="$b" -v busy="$busy" 'BEGIN { r = a / b; w = 30 / 70; d = (r - w) / w; if (d < 0) d = -d;
                printf "%s ratio %.3f (target %.3f+-10%%; %.2f and %.2f TFLOP/s over one window, together %.2f; busy by the plugin: %s)\n",
                    (d <= 0.10 ? "PASS" : "FAIL"), r, w, a, b, a + b, (busy == "" ? "not reported" : busy) }' |
                { read -r st rest; result "smlimit $name" "$st" "$rest"; }
        fi
        cp "$SML_D/$name.a" "$SML_D/$name.b" "$LOGS/" 2>/dev/null
    done
    # 4. CUDA graph replay
    if sml_part graph; then
        sml_measure graph native 50
        sml_share_result graph 50
    fi
    # 5. cooperative launches (built here with nvcc)
    if sml_part coop; then
        if sml_build coop "smlimit coop-50"; then
            sml_measure coop native 50
            sml_share_result coop 50
        fi
    fi
    # 6. how the GPU time-shares between processes (information, docs/isolation.md): two spinning
    #    processes (slice_probe.cu: gaps in one's run = the other's slice + two context switches), and one
    #    next to a native bf16 matmul loop (the switch cost with a heavy kernel's state)
    if sml_part probe; then
        local pd=$SML_D/probe
        mkdir -p "$pd"
        if [ "$(time_left)" -le 60 ]; then
            budget_out
            result "smlimit probe" FAIL "not run (the suite's time budget)"
        elif sml_build slice_probe "smlimit probe"; then
            "$SML_BIN/slice_probe" 3000 20 >"$pd/a" 2>&1 &
            local pp=$!
            "$SML_BIN/slice_probe" 3000 20 >"$pd/b" 2>&1
            wait $pp
            # the loop loads the GPU from its start (PyTorch's import and CUDA's start: a few seconds) for
            # 12 s; the probe runs 2 s from the 8th
            "$PY" "$HERE/smlimit/matmul_loop.py" matmul --seconds 4 --warmup 8 >"$pd/m" 2>&1 &
            pp=$!
            sleep 8
            "$SML_BIN/slice_probe" 2000 20 >"$pd/c" 2>&1
            wait $pp
            { echo "== two spinning processes"; cat "$pd/a" "$pd/b"; echo "== one next to the matmul loop"; cat "$pd/c" "$pd/m"; } >"$LOGS/smlimit-probe.txt"
            awk 'FNR == 1 { f++ } $1 == "gaps" { g[f] = $7 } $1 == "runs" { r[f] = $7 }
                 END { if (g[1] == "" || r[2] == "" || g[3] == "") { print "FAIL no gaps measured (see smlimit-probe.txt)"; exit }
                       printf "SKIP information: slices of %.2f ms between two busy processes, %.0f us idle a switch (light kernels); ",
                           r[2] / 1000, (g[1] - r[2]) / 2
                       if (g[3] > r[2]) printf "next to a bf16 matmul loop: out for %.2f ms a time (%.0f us a switch)\n", g[3] / 1000, (g[3] - r[2]) / 2
                       else printf "next to a bf16 matmul loop: not measured (gaps of %.2f ms: the loop was not running then)\n", g[3] / 1000 }' "$pd/a" "$pd/b" "$pd/c" |
                { read -r st rest; result "smlimit probe" "$st" "$rest"; }
        fi
    fi
    # 7. HAMi-core at the same settings, for docs/isolation.md (information: no PASS/FAIL on HAMi)
    if sml_part hami; then
        SML_HAMI=$WORK/hami/libvgpu.so
        if [ -f "$SML_HAMI" ]; then
            local h
            SML_ROUNDS=1 sml_measure matmul hami-25 hami-50
            for h in 25 50; do
                local nat got
                nat=$(sml_median "$SML_D/matmul.native"); got=$(sml_median "$SML_D/matmul.hami-$h" 2>/dev/null)
                result "smlimit hami-$h" SKIP "information: HAMi-core CUDA_DEVICE_SM_LIMIT=$h gives ${got:-no result} TFLOP/s vs native $nat"
            done
        else
            result "smlimit hami" SKIP "HAMi-core not built in this run (check 'hami' or 'hamibuild' builds it)"
        fi
    fi
    cp "$SML_D/clocks.txt" "$LOGS/smlimit-clocks.txt" 2>/dev/null
}

gpu_check smlimit check_smlimit
