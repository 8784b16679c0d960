# memlimit.sh - GPU checks of the memory quota plugin (plugins/memlimit, docs/plugins/memlimit.md).
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu memlimit` (one GPU) and
# `... memlimit2` (two GPUs, the nvidia-h200-x2 kind) run them. Quota ML_QUOTA_GIB (4) GiB.
#
# memlimit (about 3.5 minutes; bench-inproc about 45 s of it):
#   memlimit torch-default, torch-expandable, torch-async (PYTORCH_CUDA_ALLOC_CONF
#            backend:cudaMallocAsync), cupy, jax (XLA_PYTHON_CLIENT_PREALLOCATE=true, fraction 0.75),
#            cublas (cuBLAS + cuDNN through PyTorch): the framework's memory query reports the quota,
#            allocating 1.5 x the quota raises the framework's own out-of-memory error, and the results
#            below the quota (and after the refusal) are bit-identical to a native run. torch-default
#            runs with HAMi-core's CUDA_DEVICE_MEMORY_LIMIT alone (the shim loads memlimit itself).
#   memlimit nvml-agree   the shim's figure for 2 GiB of cuMemAlloc within 2% of NVML's process figure
#                         minus the context's own overhead (which it reports)
#   memlimit nvidia-smi   memory.total under the shim is the quota (SKIP where this build does not
#                         interpose NVML)
#   memlimit bench        information: cuMemAlloc/cuMemFree pairs, native, shim alone and shim + quota, medians
#                         of 7 interleaved rounds of 50 000 pairs, with the native rounds' spread (the real
#                         pair varies by microseconds; the quota's cost is measured on CPU: bench/cpu/memlimit.sh)
#   memlimit bench-inproc information: the same pair in one process, through the shim's hooked wrappers against
#                         libcuda's own functions, with the quota and with the shim alone (ml_bench_inproc):
#                         the quota's cost per pair with its spread, against the 100 ns target
#   memlimit hami-*       information only: the same framework cases under HAMi-core's libvgpu.so when
#                         tests/gpu/hami_stack.sh built it in this run ($WORK/hami/libvgpu.so)
# memlimit2 (two GPUs; SKIP with one):
#   memlimit2 per-device  limit=0:4GiB,1:2GiB: each device reports its own quota; 3 GiB fits on 0, not on 1
#   memlimit2 reordered   the same limits (and HAMi's CUDA_DEVICE_MEMORY_LIMIT_0/_1) under CUDA_VISIBLE_DEVICES=1,0:
#                         by physical GPU, so ordinal 0 (GPU 1) has 2 GiB and ordinal 1 (GPU 0) 4 GiB
#   memlimit2 nccl        a two-process NCCL all-reduce (torch.distributed, NCCL_CUMEM_ENABLE=1: NCCL's
#                         cuMemCreate path) under CUDA_DEVICE_MEMORY_LIMIT=8g gives 1 + 2 = 3 on both ranks

ML_QUOTA_GIB=${ML_QUOTA_GIB:-4}

# ml_fw NAME KIND MODE: one framework run into $ML_D/NAME.MODE (MODE native | quota | hami)
ml_fw() {
    local name=$1 kind=$2 mode=$3 plugin=$BUILD_DIR/plugins/memlimit.so
    local -a env=(XLA_PYTHON_CLIENT_PREALLOCATE=false)
    case $name in
        torch-expandable) env+=(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) ;;
        torch-async) env+=(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) ;;
        jax) env=(XLA_PYTHON_CLIENT_PREALLOCATE=true XLA_PYTHON_CLIENT_MEM_FRACTION=0.75) ;;
    esac
    case $mode in
        quota)
            if [ "$name" = torch-default ]; then
                env+=(LD_PRELOAD="$SHIM" CUDA_DEVICE_MEMORY_LIMIT="${ML_QUOTA_GIB}g")
            else
                env+=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=${ML_QUOTA_GIB}GiB")
            fi ;;
        hami) env+=(LD_PRELOAD="$ML_HAMI" CUDA_DEVICE_MEMORY_LIMIT="${ML_QUOTA_GIB}g"
                    CUDA_DEVICE_MEMORY_SHARED_CACHE="$WORK/memlimit-hami.$RANDOM.cache") ;;
    esac
    tmo 120 env "${env[@]}" "$PY" "$HERE/memlimit/ml_frameworks.py" "$kind" "$ML_QUOTA_GIB" \
        >"$ML_D/$name.$mode" 2>"$LOGS/memlimit-$name.$mode.err"
}

# ml_fw_result NAME: judge $ML_D/NAME.quota against NAME.native
ml_fw_result() {
    local name=$1 q=$ML_D/$1.quota n=$ML_D/$1.native quota=$((ML_QUOTA_GIB << 30)) total oom why=""
    total=$(sed -n 's/^total //p' "$q" | head -n 1)
    oom=$(sed -n 's/^oom //p' "$q" | head -n 1)
    if [ -z "$total" ] || [ -z "$oom" ]; then
        result "memlimit $name" FAIL "no output under the quota: $(tail -n 2 "$LOGS/memlimit-$name.quota.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    if [ "$name" = jax ]; then
        # XLA's limit is its preallocation: a fraction of what the device reports (the quota)
        [ "$total" -gt 0 ] && [ "$total" -le "$quota" ] || why+="XLA bytes_limit $total not within the quota $quota; "
    else
        [ "$total" = "$quota" ] || why+="memory query reports $total, the quota is $quota; "
    fi
    grep -q "^props $quota\$" "$q" || ! grep -q '^props ' "$q" || why+="totalGlobalMem $(sed -n 's/^props //p' "$q"); "
    [ "$oom" = own ] || why+="past the quota: '$oom', not the framework's own OOM; "
    [ -n "$(sed -n 's/^result //p' "$n")" ] || why+="no native result; "
    [ "$(sed -n 's/^result //p' "$q")" = "$(sed -n 's/^result //p' "$n")" ] || why+="results differ from native; "
    [ "$(sed -n 's/^after //p' "$q")" = "$(sed -n 's/^result //p' "$n")" ] || why+="results after the refusal differ; "
    if [ -z "$why" ]; then
        result "memlimit $name" PASS "query $total, own OOM past the quota, results = native (native past it: $(sed -n 's/^oom //p' "$n"))"
    else
        result "memlimit $name" FAIL "$why"
    fi
}

check_memlimit() {
    local plugin=$BUILD_DIR/plugins/memlimit.so c kind out
    ML_D=$WORK/memlimit
    rm -rf "$ML_D"
    mkdir -p "$ML_D"
    if [ ! -f "$plugin" ]; then
        result "memlimit" FAIL "$plugin not built (tools/build-gpu-bundle.sh)"
        return
    fi
    # 1. frameworks, each native then under the quota
    for c in torch-default:torch torch-expandable:torch torch-async:torch cupy:cupy jax:jax cublas:cublas; do
        kind=${c#*:}
        if ! "$PY" -c "import ${kind/cublas/torch}" 2>/dev/null; then
            result "memlimit ${c%%:*}" SKIP "no ${kind/cublas/torch} module"
            continue
        fi
        ml_fw "${c%%:*}" "$kind" native
        ml_fw "${c%%:*}" "$kind" quota
        ml_fw_result "${c%%:*}"
    done
    # 2. the shim's figure vs NVML's for this process
    out=$ML_D/nvml-agree
    tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=8GiB" "$PY" "$HERE/memlimit/ml_nvml_agree.py" \
        $((8 << 30)) >"$out" 2>"$LOGS/memlimit-nvml.err"
    if grep -q '^skip' "$out"; then
        result "memlimit nvml-agree" SKIP "$(sed -n 's/^skip //p' "$out")"
    else
        awk '/^overhead/{o=$2} /^nvml/{n=$2} /^shim/{s=$2} END {
            if (s == "" || n == "") { print "FAIL no figures"; exit }
            d = (n - s) / s; if (d < 0) d = -d
            printf "%s NVML %d MiB (after %d MiB of context overhead), shim %d MiB: %.2f%% apart\n",
                   (d <= 0.02 ? "PASS" : "FAIL"), n / 1048576, o / 1048576, s / 1048576, 100 * d }' "$out" |
            { read -r st rest; result "memlimit nvml-agree" "$st" "$rest"; }
    fi
    # 3. nvidia-smi under the shim (needs NVML interposed)
    if grep -q 'nvmlDeviceGetMemoryInfo' "$APIS" 2>/dev/null; then
        local t
        t=$(tmo 30 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=${ML_QUOTA_GIB}GiB" nvidia-smi -i 0 \
            --query-gpu=memory.total --format=csv,noheader,nounits 2>>"$LOGS/memlimit-smi.err" | head -n 1 | tr -d ' ')
        [ "$t" = $((ML_QUOTA_GIB * 1024)) ] && result "memlimit nvidia-smi" PASS "memory.total $t MiB" ||
            result "memlimit nvidia-smi" FAIL "memory.total '${t}' MiB, the quota is $((ML_QUOTA_GIB * 1024))"
    else
        result "memlimit nvidia-smi" SKIP "this build does not interpose NVML (no nvmlDeviceGetMemoryInfo in apis.tsv)"
    fi
    # 4. benchmark: shim alone vs shim + quota, interleaved rounds
    local cuda=${CUDA_HOME:-/usr/local/cuda} r v
    if tmo 60 "${CC:-gcc}" -O2 -I"$cuda/include" "$ROOT/bench/gpu/memlimit_bench.c" -o "$BIN/ml_bench" \
            -L"$cuda/lib64/stubs" -lcuda >"$LOGS/memlimit-bench.build" 2>&1; then
        : >"$ML_D/bench.shim"; : >"$ML_D/bench.quota"; : >"$ML_D/bench.native"
        for r in 1 2 3 4 5 6 7; do
            v=$(tmo 30 "$BIN/ml_bench" 50000 | sed -n 's/^pair_ns //p')
            [ -n "$v" ] && echo "$v" >>"$ML_D/bench.native"
            v=$(tmo 30 env LD_PRELOAD="$SHIM" "$BIN/ml_bench" 50000 | sed -n 's/^pair_ns //p')
            [ -n "$v" ] && echo "$v" >>"$ML_D/bench.shim"
            v=$(tmo 30 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=64GiB" "$BIN/ml_bench" 50000 |
                sed -n 's/^pair_ns //p')
            [ -n "$v" ] && echo "$v" >>"$ML_D/bench.quota"
        done
        cp "$ML_D"/bench.* "$DATA/" 2>/dev/null
        local med_s med_q med_n
        med_n=$(sort -g "$ML_D/bench.native" | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}')
        med_s=$(sort -g "$ML_D/bench.shim" | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}')
        med_q=$(sort -g "$ML_D/bench.quota" | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}')
        if [ -z "$med_s" ] || [ -z "$med_q" ]; then
            result "memlimit bench" FAIL "no measurement (see $LOGS/memlimit-bench.build)"
        else
            # the real driver's pair takes ~60-80 us and varies by several us between rounds: a 100 ns target
            # cannot be resolved here. Reported with its spread; the quota's own cost (target <= 100 ns) is
            # measured by instruction-stable medians on CPU (bench/cpu/memlimit.sh, docs/benchmarks.md).
            local spread
            spread=$(sort -g "$ML_D/bench.native" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }')
            awk -v s="$med_s" -v q="$med_q" -v n="$med_n" -v r="$spread" 'BEGIN { d = q - s;
                printf "information: cuMemAlloc+cuMemFree pair medians: native %s ns (rounds %s), shim %s ns, shim+quota %s ns: %+.1f ns; the quota'"'"'s cost is measured on CPU (bench/cpu/memlimit.sh)\n", n, r, s, q, d }' |
                { read -r rest; result "memlimit bench" SKIP "$rest"; }
        fi
        ml_bench_inproc
    else
        result "memlimit bench" FAIL "build: $(tail -n 2 "$LOGS/memlimit-bench.build" | tr '\n' ' ' | cut -c1-200)"
    fi
    # 5. HAMi-core on the same cases, for docs/isolation.md (information only)
    # (HAMi-core enforces only when loaded from its fixed path, where hami_stack.sh installs it when it can)
    ML_HAMI=$WORK/hami/libvgpu.so
    [ -f /usr/local/vgpu/libvgpu.so ] && ML_HAMI=/usr/local/vgpu/libvgpu.so
    if [ -f "$ML_HAMI" ]; then
        for c in torch-default:torch torch-async:torch cupy:cupy; do
            ml_fw "${c%%:*}" "${c#*:}" hami
            result "memlimit hami-${c%%:*}" SKIP "information: HAMi-core total $(sed -n 's/^total //p' "$ML_D/${c%%:*}.hami" | head -n 1), past the quota '$(sed -n 's/^oom //p' "$ML_D/${c%%:*}.hami" | head -n 1)'$(tail -n 1 "$LOGS/memlimit-${c%%:*}.hami.err" 2>/dev/null | cut -c1-80 | sed 's/^/; /')"
        done
    fi
    cp "$ML_D"/* "$DATA/" 2>/dev/null
}

# memlimit bench-inproc: the quota's cost per cuMemAlloc+cuMemFree pair measured in one process (the driver's
# pair varies by microseconds between processes, more than the 100 ns target): memlimit_bench's
# MEMLIMIT_BENCH_INPROC times the pair through the shim's hooked wrappers against libcuda's own functions (from
# its .dynsym) in 21 alternating block pairs of 2000 pairs. ML_INPROC_ROUNDS (3) processes with the quota
# (limit=64GiB, private budget) interleaved with as many with the shim alone (no hook: the floor, ~0), each
# giving its block pairs' median difference; reported: the medians of both kinds, their range, and the quota's
# cost as the difference of the two medians against the issue's 100 ns (information: it fails only when no
# figure came).
# ml_inproc_field NAME FILE: "median min max" of field NAME over FILE's lines that measured (same_pointer 0)
ml_inproc_field() {
    awk -v f="$1" '$NF == 0 { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$2" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

ml_bench_inproc() {
    local plugin=$BUILD_DIR/plugins/memlimit.so r line q s
    : >"$ML_D/inproc.quota"; : >"$ML_D/inproc.shim"
    for r in $(seq 1 "${ML_INPROC_ROUNDS:-3}"); do
        line=$(tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=64GiB" MEMLIMIT_BENCH_INPROC=21 \
            "$BIN/ml_bench" 42000 2>>"$LOGS/memlimit-inproc.err" | grep '^inproc ')
        [ -n "$line" ] && echo "$line" >>"$ML_D/inproc.quota"
        line=$(tmo 60 env LD_PRELOAD="$SHIM" MEMLIMIT_BENCH_INPROC=21 "$BIN/ml_bench" 42000 \
            2>>"$LOGS/memlimit-inproc.err" | grep '^inproc ')
        [ -n "$line" ] && echo "$line" >>"$ML_D/inproc.shim"
    done
    cp "$ML_D"/inproc.* "$DATA/" 2>/dev/null
    # same_pointer 0: the wrappers were told from the driver's functions (else nothing was measured)
    if ! grep -q 'same_pointer 0' "$ML_D/inproc.quota" || ! grep -q 'same_pointer 0' "$ML_D/inproc.shim"; then
        result "memlimit bench-inproc" FAIL "no in-process figure (see $LOGS/memlimit-inproc.err)"
        return
    fi
    # per kind: "median min max" of the processes' diff_med, then the median driver pair
    q=$(ml_inproc_field diff_med "$ML_D/inproc.quota")
    s=$(ml_inproc_field diff_med "$ML_D/inproc.shim")
    q="$q $(ml_inproc_field driver_med "$ML_D/inproc.quota" | cut -d' ' -f1)"
    set -- $q $s
    awk -v qm="$1" -v qlo="$2" -v qhi="$3" -v drv="$4" -v sm="$5" -v slo="$6" -v shi="$7" \
        -v n="$(wc -l <"$ML_D/inproc.quota")" 'BEGIN { c = qm - sm;
        printf "same process, pair vs the driver'"'"'s own functions (driver %.1f us a pair): shim + quota %+.1f ns (processes %+.1f..%+.1f), shim alone %+.1f ns (%+.1f..%+.1f); the quota %+.1f ns a pair: target (100 ns) %s; %d processes each, 21 block pairs of 2000\n",
            drv / 1000, qm, qlo, qhi, sm, slo, shi, c, (c <= 100 ? "met" : "missed"), n }' |
        { read -r rest; result "memlimit bench-inproc" PASS "$rest"; }
}

check_memlimit2() {
    local plugin=$BUILD_DIR/plugins/memlimit.so n out why port
    ML_D=$WORK/memlimit2
    rm -rf "$ML_D"
    mkdir -p "$ML_D"
    n=$("$PY" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null)
    if [ "${n:-0}" -lt 2 ]; then
        result "memlimit2" SKIP "${n:-no} GPU(s): needs two (the nvidia-h200-x2 kind)"
        return
    fi
    # per-device limits
    out=$ML_D/devices
    tmo 120 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=0:4GiB\\,1:2GiB" CUDA_VISIBLE_DEVICES=0,1 \
        "$PY" "$HERE/memlimit/ml_devices.py" >"$out" 2>"$LOGS/memlimit2-devices.err"
    why=""
    grep -q "^dev 0 total $((4 << 30)) oom none\$" "$out" || why+="device 0: '$(grep '^dev 0' "$out")' (want 4 GiB, 3 GiB fits); "
    grep -q "^dev 1 total $((2 << 30)) oom own\$" "$out" || why+="device 1: '$(grep '^dev 1' "$out")' (want 2 GiB, own OOM); "
    [ -z "$why" ] && result "memlimit2 per-device" PASS "device 0 at 4 GiB, device 1 at 2 GiB" ||
        result "memlimit2 per-device" FAIL "$why"
    # the same limits by physical device under a reordered CUDA_VISIBLE_DEVICES=1,0 (HAMi-core #319, #225): the
    # process's ordinal 0 is GPU 1 (2 GiB, its own OOM), ordinal 1 is GPU 0 (4 GiB, 3 GiB fits); by the option and
    # by HAMi's variables
    why=""
    for how in option hami; do
        out=$ML_D/devices-reordered-$how
        if [ $how = option ]; then
            tmo 120 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=0:4GiB\\,1:2GiB" CUDA_VISIBLE_DEVICES=1,0 \
                "$PY" "$HERE/memlimit/ml_devices.py" >"$out" 2>"$LOGS/memlimit2-reordered-$how.err"
        else
            tmo 120 env LD_PRELOAD="$SHIM" CUDA_DEVICE_MEMORY_LIMIT_0=4g CUDA_DEVICE_MEMORY_LIMIT_1=2g \
                CUDA_VISIBLE_DEVICES=1,0 "$PY" "$HERE/memlimit/ml_devices.py" >"$out" 2>"$LOGS/memlimit2-reordered-$how.err"
        fi
        grep -q "^dev 0 total $((2 << 30)) oom own\$" "$out" ||
            why+="$how: ordinal 0 (GPU 1): '$(grep '^dev 0' "$out")' (want 2 GiB, own OOM); "
        grep -q "^dev 1 total $((4 << 30)) oom none\$" "$out" ||
            why+="$how: ordinal 1 (GPU 0): '$(grep '^dev 1' "$out")' (want 4 GiB, 3 GiB fits); "
    done
    [ -z "$why" ] && result "memlimit2 reordered" PASS "CUDA_VISIBLE_DEVICES=1,0: ordinal 0 at GPU 1's 2 GiB, ordinal 1 at GPU 0's 4 GiB (option and HAMi's variables)" ||
        result "memlimit2 reordered" FAIL "$why"
    # two-process NCCL all-reduce under quotas (HAMi's variable; NCCL's cuMem path)
    port=$((29500 + RANDOM % 1000))
    tmo 150 env LD_PRELOAD="$SHIM" CUDA_DEVICE_MEMORY_LIMIT=8g NCCL_CUMEM_ENABLE=1 CUDA_VISIBLE_DEVICES=0,1 \
        "$PY" "$HERE/memlimit/ml_nccl.py" 0 2 "$port" >"$ML_D/nccl.0" 2>"$LOGS/memlimit2-nccl.0.err" &
    local p0=$!
    tmo 150 env LD_PRELOAD="$SHIM" CUDA_DEVICE_MEMORY_LIMIT=8g NCCL_CUMEM_ENABLE=1 CUDA_VISIBLE_DEVICES=0,1 \
        "$PY" "$HERE/memlimit/ml_nccl.py" 1 2 "$port" >"$ML_D/nccl.1" 2>"$LOGS/memlimit2-nccl.1.err"
    wait $p0
    why=""
    for r in 0 1; do
        grep -q "^rank $r sum 3 uniform 1 total $((8 << 30))\$" "$ML_D/nccl.$r" ||
            why+="rank $r: '$(cat "$ML_D/nccl.$r" 2>/dev/null)' $(tail -n 1 "$LOGS/memlimit2-nccl.$r.err" 2>/dev/null | cut -c1-120); "
    done
    [ -z "$why" ] && result "memlimit2 nccl" PASS "all-reduce 1 + 2 = 3 on both ranks, each seeing its 8 GiB quota" ||
        result "memlimit2 nccl" FAIL "$why"
    cp "$ML_D"/* "$DATA/" 2>/dev/null
}

gpu_check memlimit check_memlimit
gpu_check memlimit2 check_memlimit2
